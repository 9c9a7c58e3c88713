"""The engine compiled before the clock starts.

numba compiles a kernel on its first call and keeps it in its on-disk cache (``njit(cache=True)``:
``boopexp/engine/__pycache__``, or ``$NUMBA_CACHE_DIR``). On a fresh machine the first game of a
process therefore compiles the engine, about a minute, and that minute was counted as the game's
(its seconds, its record's host CPU time, a run's rate and ETA) and paid again by every pool
worker at once. :func:`compile_engine` pays it first, in the process that starts the games, with
a line before and one after: the pool's workers then load the kernels from the cache.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path


def engine_is_compiled() -> bool:
    """Whether numba's on-disk cache holds the search kernels (otherwise the first game of each
    process compiles them, about a minute).

    numba keeps its cache in ``$NUMBA_CACHE_DIR`` when that is set, else beside the kernels.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        folder = Path(os.environ["NUMBA_CACHE_DIR"])
    else:
        folder = Path(__file__).resolve().parent.parent / "engine" / "__pycache__"
    return folder.is_dir() and any(folder.rglob("mcts.*.nbi"))


def compile_engine(say: Callable[[str], None], kinds: Iterable[str] = ()) -> float | None:
    """Compile the engine here if numba's cache lacks it, saying so before and after.

    Args:
        say: receives the two lines ("compiling the engine …", "compiled the engine in N s").
        kinds: the kinds of agent the games have (:attr:`AgentSpec.kind`): a ``plugin`` adds the
            kernels of the Position API.

    Returns:
        The wall seconds the compilation took, or None if the cache already held the engine.
    """
    if engine_is_compiled():
        return None
    from boopexp.play.match import compile_kernels  # loads numba

    say("compiling the engine (first run only, ~1 min)")
    start = time.perf_counter()
    compile_kernels(plugins="plugin" in set(kinds))
    seconds = time.perf_counter() - start
    say(f"compiled the engine in {seconds:.0f} s")
    return seconds
