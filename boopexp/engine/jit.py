"""**The** decorator of a kernel that only other kernels call (``inner``: compiled without numba's
Python wrapper, a Python call runs a twin that has one; docs/cluster.md "Compile once").

numba gives every compiled function a wrapper that unboxes its arguments from Python objects so
that Python can call it. Most of the engine's kernels are only ever called by other kernels (a
search's ``iterate``, ``playout``, the solver, the heuristic's line scans), and their wrappers are
pure cost on a cold cache: with arguments like a search's tree and work buffers (tuples of a dozen
arrays) a wrapper is large, and lowering and optimising ~40 of them was ~1.6 s of CPU of a first
game's ~13 s of compiling (docs/cluster.md "Compile once"). :func:`inner` compiles a kernel
without it (numba's ``no_cpython_wrapper``, as numba does for its own ``@overload``
implementations); a kernel called from Python keeps ``njit``.

An inner kernel is still callable from Python (the tests call many directly): the first such call
compiles a twin with the wrapper (its own entry in numba's cache) and runs that; production code
never calls one, so a game never compiles a twin. The compiled code a kernel runs is the same
either way: only whether a wrapper exists changes.
"""

from __future__ import annotations

import types

from numba import njit
from numba.core import config
from numba.core.registry import CPUDispatcher

__all__ = ["inner", "InnerKernel"]

#: the options that make numba leave out the Python (and C-callback) wrappers
_NO_WRAPPERS = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


class InnerKernel(CPUDispatcher):
    """A kernel compiled without a Python wrapper (:func:`inner`); a call from Python runs its
    twin with one (compiled on the first such call)."""

    _twin = None

    def __call__(self, *args, **kwargs):
        twin = self._twin
        if twin is None:
            twin = self._twin = _python_twin(self)
        return twin(*args, **kwargs)


def _python_twin(kernel: InnerKernel):
    """The same function under ``njit`` with the same options, the Python wrapper included. Its
    qualified name differs (``<name>__python``), so numba caches it apart from the kernel (the
    cache's file names hold the name, and its index does not tell the two kinds apart)."""
    func = kernel.py_func
    twin = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    twin.__qualname__ = f"{func.__qualname__}__python"
    twin.__module__, twin.__doc__, twin.__kwdefaults__ = func.__module__, func.__doc__, func.__kwdefaults__
    options = {key: value for key, value in kernel.targetoptions.items() if key not in (*_NO_WRAPPERS, "nopython")}
    return njit(cache=True, **options)(twin)


def inner(**options):
    """``njit(cache=True, **options)`` for a kernel that only other kernels call: compiled without
    numba's Python wrapper (module docstring). Keep ``njit`` for a kernel Python code calls (an
    entry point of :data:`boopexp.play.warmup.KERNELS`, the Position API's)."""

    def decorate(func):
        if getattr(config, "DISABLE_JIT", False):  # NUMBA_DISABLE_JIT: plain Python, as njit does
            return func
        kernel = InnerKernel(py_func=func, locals={}, targetoptions={**options, **_NO_WRAPPERS, "nopython": True})
        kernel.enable_caching()
        return kernel

    return decorate
