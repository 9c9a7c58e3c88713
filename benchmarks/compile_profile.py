"""Where a cold cache's compile time goes: CPU seconds of each numba kernel compiled by
``compile_kernels`` (what ``run``/``game``/``play`` compile before their first game), split into
numba's IR inlining, typing, lowering (wrappers included) and LLVM (optimisation and machine code).

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_profile.py [--kinds mcts,heuristics] [--top 30]

Run it with an empty ``NUMBA_CACHE_DIR`` (else it mostly loads). A kernel's seconds are exclusive:
the kernels it calls (compiled while it is typed) are counted as theirs. LLVM is counted where it
runs: a kernel's library links in the code of every kernel it calls and optimises and compiles it
all again, so kernels high in a call chain (``init_root``, ``run_iterations``) pay mostly LLVM.
CPU time (``time.process_time``), not wall time, so a loaded machine inflates it less; still take
medians of several runs. docs/cluster.md "Compile once" has the figures this printed.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from numba.core import codegen, compiler_machinery, event

PHASES = ("inline_inlinables", "nopython_type_inference", "native_lowering", "llvm")


class _Frame:
    def __init__(self, name: str) -> None:
        self.name, self.start, self.children, self.llvm = name, time.process_time(), 0.0, 0.0


def profile(kinds: list[str]) -> tuple[float, dict[str, dict[str, float]]]:
    """compile_kernels(kinds) with numba's compile events: (its CPU seconds, per kernel the
    exclusive seconds ``total`` and of each of :data:`PHASES`)."""
    stack: list[_Frame] = []
    seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    class Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            func = ev.data["dispatcher"].py_func
            stack.append(_Frame(f"{func.__module__.rsplit('.', 1)[-1]}.{func.__name__}"))

        def on_end(self, ev: event.Event) -> None:
            frame = stack.pop()
            spent = time.process_time() - frame.start
            seconds[frame.name]["total"] += spent - frame.children
            if stack:
                stack[-1].children += spent

    run_pass = compiler_machinery.PassManager._runPass

    def timed_pass(self, index, pss, state):  # a pass's own seconds: nested compiles and LLVM apart
        if not stack:
            return run_pass(self, index, pss, state)
        frame = stack[-1]
        children, llvm, start = frame.children, frame.llvm, time.process_time()
        try:
            return run_pass(self, index, pss, state)
        finally:
            spent = time.process_time() - start - (frame.children - children) - (frame.llvm - llvm)
            seconds[frame.name][pss.name()] += spent

    def timed_llvm(method):
        def wrapper(self, *args, **kwargs):
            start = time.process_time()
            try:
                return method(self, *args, **kwargs)
            finally:
                if stack:
                    spent = time.process_time() - start
                    stack[-1].llvm += spent
                    seconds[stack[-1].name]["llvm"] += spent
        return wrapper

    setattr(compiler_machinery.PassManager, "_runPass", timed_pass)  # noqa: B010 (mypy: no assigning to a method)
    llvm_steps = ((codegen.CPUCodeLibrary, "_optimize_functions"), (codegen.CPUCodeLibrary, "_optimize_final_module"),
                  (codegen.JITCodeLibrary, "_finalize_specific"))
    for cls, name in llvm_steps:
        setattr(cls, name, timed_llvm(getattr(cls, name)))
    event.register("numba:compile", Listener())

    from boopexp.play.match import compile_kernels

    start = time.process_time()
    compile_kernels(kinds)
    return time.process_time() - start, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default="mcts,heuristics", help="agent kinds, comma-separated")
    parser.add_argument("--top", type=int, default=30, help="kernels listed (the most expensive first)")
    args = parser.parse_args()
    total, seconds = profile(args.kinds.split(","))
    sums = {phase: sum(s[phase] for s in seconds.values()) for phase in ("total", *PHASES)}
    print(f"compile_kernels({args.kinds}): {total:.1f} s CPU, {len(seconds)} kernels compiled; "
          + ", ".join(f"{phase} {sums[phase]:.1f} s" for phase in PHASES))
    print(f"{'kernel':<34} {'total':>6} {'inline':>7} {'typing':>7} {'lower':>6} {'llvm':>6}")
    for name in sorted(seconds, key=lambda n: -seconds[n]["total"])[:args.top]:
        s = seconds[name]
        print(f"{name:<34} {s['total']:6.2f} " + " ".join(f"{s[p]:6.2f}" for p in PHASES))


if __name__ == "__main__":
    main()
