"""The engine compiled before the clock starts, only what the games' kinds of agent need
(``KERNELS``; ``compile_engine``: in the process that starts the games, with a line before and
after; ``engine_is_compiled``, numba's cache probed by file name; ``warm``: ``boopexp warmup``, what
numba compiled and what it loaded).

numba compiles a kernel on its first call and keeps it in its on-disk cache (``njit(cache=True)``:
``boopexp/engine/__pycache__``, or ``$NUMBA_CACHE_DIR``). On a fresh machine the first game of a
process therefore compiles the engine (10-60 s of CPU; docs/cluster.md "Compile once"), and that
time was counted as the game's (its seconds, its record's host CPU time, a run's rate and ETA)
and paid again by every pool worker at once. :func:`compile_engine` pays it first, in the process
that starts the games, with a line before and one after, for the kinds of agent the games have:
the pool's workers then load the kernels from the cache. ``boopexp warmup`` compiles every kind.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from boopexp.agents.specs import AGENT_KINDS, MCTSConfig

#: The kernels that the games of each kind of agent call from Python, as (module of
#: boopexp.engine, function): numba's cache holds one index file per kernel
#: (``<module>.<function>-<line>.py311.nbi``), and the kernels they call are compiled into
#: theirs. ``"game"``: the moves of every game. :func:`boopexp.play.match.compile_kernels` calls
#: these; tests/test_warmup.py holds the two equal.
KERNELS: dict[str, tuple[tuple[str, str], ...]] = {
    "game": (("rules", "apply_move_inplace"),),
    "mcts": (("mcts", "init_root"), ("mcts", "run_iterations"), ("mcts", "final_choice")),
    "heuristics": (("mcts", "solver_best_move"), ("rules", "random_move")),
    "random": (("rules", "random_move"),),
    # the Position API a plugin is given (boopexp.game.position.compile_position_api)
    "plugin": (("rules", "apply_move"), ("rules", "legal_move_codes"), ("objective", "objective_ws"),
               ("objective", "best_move_ws"), ("objective", "best_m_moves_ws")),
    "alphabeta": (("alphabeta", "search_depth"),),
    # an engine agent plays in its own process (docs/protocol.md): the host checks its moves only
    "engine": (),
}
_ENGINE = Path(__file__).resolve().parent.parent / "engine"
#: the line said before numba compiles the engine
#: measured (issue 33): ~11 s of CPU for `make run`'s agents and ~35 s for every agent's on an idle
#: 2-core machine; a loaded one took 30 s of CPU and minutes of wall time for the first
COMPILING = "compiling the engine (first run only: from ~10 s to ~1 min, longer on a busy machine)"


def cache_folders() -> list[Path]:
    """The folders numba keeps the engine's cache in: ``$NUMBA_CACHE_DIR`` alone when it is set;
    else beside the kernels (``boopexp/engine/__pycache__``) or, where the package cannot be
    written (an install owned by another user), numba's folder in the user's cache."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [Path(os.environ["NUMBA_CACHE_DIR"])]
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    return [_ENGINE / "__pycache__", user]


def kernels_of(kinds: Iterable[str]) -> list[tuple[str, str]]:
    """The kernels (module, function) games of these kinds of agent call from Python, each once."""
    return list(dict.fromkeys(kernel for kind in ("game", *kinds) for kernel in KERNELS[kind]))


def engine_is_compiled(kinds: Iterable[str] = AGENT_KINDS) -> bool:
    """Whether numba's on-disk cache holds the kernels that games of these kinds of agent call
    (otherwise the first game of each process compiles them). Reads file names only: numba
    is not imported (an index left by another copy of the package, or by older sources, passes:
    numba then compiles without the notice)."""
    wanted = {f"{module}.{name}-" for module, name in kernels_of(kinds)}
    for folder in cache_folders():
        if folder.is_dir():
            wanted -= {prefix for prefix in wanted if any(folder.rglob(f"{prefix}*.nbi"))}
    return not wanted


@dataclass(frozen=True)
class Warmed:
    """What :func:`warm` did: the kernels numba compiled (and stored in its cache) and those it
    loaded from its cache, as ``module.function``, and the wall seconds it took."""

    compiled: tuple[str, ...]
    loaded: tuple[str, ...]
    seconds: float
    cache: str  # the folder numba keeps the engine's kernels in


def warm(kinds: Iterable[str] = AGENT_KINDS, searches: Iterable[MCTSConfig] = ()) -> Warmed:
    """Call every kernel games of these kinds of agent call (numba compiles what its cache lacks
    and stores it there, and loads the rest), and tell which were compiled: numba's own count of
    cache misses, not a guess from file names. ``searches``: the MCTS configurations whose
    features to compile beside mcts-co's (:func:`boopexp.play.match.compile_kernels`)."""
    from boopexp.play.match import compile_kernels  # loads numba

    start = time.perf_counter()
    compile_kernels(kinds, searches)
    seconds = time.perf_counter() - start
    compiled: list[str] = []
    loaded: list[str] = []
    cache = ""
    for module, name in kernels_of(kinds):
        stats = getattr(importlib.import_module(f"boopexp.engine.{module}"), name).stats
        (compiled if sum(stats.cache_misses.values()) else loaded).append(f"{module}.{name}")
        cache = stats.cache_path
    return Warmed(tuple(compiled), tuple(loaded), seconds, cache)


def agent_kinds(names: Iterable[str]) -> tuple[str, ...]:
    """The kinds of agent (:data:`AGENT_KINDS`, in that order) of built-in agent names (their
    aliases too) and ``plugin``.

    Raises:
        ConfigError: an unknown name (the known ones listed).
    """
    from boopexp.agents.specs import AGENT_NAMES, resolve_agent
    from boopexp.errors import ConfigError

    kinds = set()
    for name in (name.strip() for name in names):
        try:
            kinds.add("plugin" if name == "plugin" else resolve_agent(name).kind)
        except ConfigError:
            raise ConfigError(f"--agents {name!r} is not an agent: use {', '.join(AGENT_NAMES)} or plugin") from None
    return tuple(kind for kind in AGENT_KINDS if kind in kinds)


def agent_searches(names: Iterable[str]) -> tuple[MCTSConfig, ...]:
    """The MCTS configurations of the built-in agents among ``names`` (``plugin`` has none), for
    :func:`warm`: each set of search features they use is compiled."""
    from boopexp.agents.specs import resolve_agent

    specs = (resolve_agent(name.strip()) for name in names if name.strip() != "plugin")
    return tuple(spec.mcts for spec in specs if spec.mcts is not None)


def compile_engine(say: Callable[[str], None], kinds: Iterable[str] = (),
                   searches: Iterable[MCTSConfig | None] = ()) -> float | None:
    """Compile here the kernels games of these kinds of agent need if numba's cache lacks them,
    saying so before and after.

    Args:
        say: receives the two lines ("compiling the engine …", "compiled the engine in N s").
        kinds: the kinds of agent the games have (:attr:`AgentSpec.kind`): ``mcts`` the search,
            ``heuristics`` the solver, ``random`` the random move, ``plugin`` the Position API.
        searches: the MCTS configurations of the games' agents (None: an agent without one): a
            search compiles the code of the features its parameters use (co_lookahead, prior,
            solver), and only those. With an engine already compiled, a search with other
            features than those compiles them in its first move (the cache's file names cannot
            tell which features it holds).

    Returns:
        The wall seconds the compilation took, or None if the cache already held those kernels.
    """
    kinds = tuple(sorted(set(kinds)))
    if engine_is_compiled(kinds):
        return None
    from boopexp.play.match import compile_kernels  # loads numba

    say(COMPILING)
    start = time.perf_counter()
    compile_kernels(kinds, [cfg for cfg in searches if cfg is not None])
    seconds = time.perf_counter() - start
    say(f"compiled the engine in {seconds:.0f} s")
    return seconds
