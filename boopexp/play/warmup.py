"""Whether the engine is compiled: numba compiles a kernel on its first call and keeps it in its
on-disk cache (``njit(cache=True)``: ``boopexp/engine/__pycache__``, or ``$NUMBA_CACHE_DIR``), so
the first game of a process on a fresh machine compiles the engine, about a minute.
"""

from __future__ import annotations

import os
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
