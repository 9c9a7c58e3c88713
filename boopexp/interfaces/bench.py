"""``boopexp bench``: compiled measurement loops over the position sample.

Engine throughput benchmarks (``boopexp bench``, ``benchmarks/bench_engine.py``).

Every measurement is a compiled loop over a fixed, seeded set of realistic positions, so Python
overhead is not measured. Each loop is compiled and calibrated first, then timed with
:func:`time.process_time` for about ``seconds``; the run is repeated and the median reported.
The kernels are single-threaded (plain ``njit``), so every figure is for ONE core.

Adding a measurement (e.g. the MCTS iteration rates) is one decorated function::

    @metric("vanilla_iterations_per_s")
    def _vanilla(ctx: BenchContext, seconds: float) -> float:
        return timed_rate(lambda reps: <run reps iterations, return the count>, seconds)

and it appears in the CLI output and the JSON object with no other change.

Another game (``boopexp bench --game G``, docs/games.md "Speed") is measured by the same metrics,
under the same names, through its kernels (:data:`GAME_METRICS`, :class:`GameBenchContext`): the
loops take the game's compiled kernels as arguments, so one loop serves every game, and boop.'s
own loops above are untouched by them.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numba
import numpy as np
from numba import njit

from boopexp import __version__
from boopexp.agents.budget import MAX_ITERATIONS, Budget, device_costs
from boopexp.agents.specs import AlphaBetaConfig
from boopexp.engine import alphabeta
from boopexp.engine.buffers import new_work, solver_buffers
from boopexp.engine.heuristic import heuristic
from boopexp.engine.objective import best_move_ws, new_context, objective_context, objective_inc, objective_promotion
from boopexp.engine.rng import new_rng_state
from boopexp.engine.rules import PROMO_HEURISTIC, TREE, apply_move_inplace, decode_move, legal_move_codes, random_move
from boopexp.engine.state import N_MOVE_CODES, STATE_SIZE, TO_MOVE
from boopexp.errors import BoopError, ConfigError
from boopexp.game.positions import N_POSITIONS, PLY_RANGE, SAMPLE_SEED, SOLVER_PROB, sample_positions
from boopexp.games.registry import DEFAULT_GAME, Game
from boopexp.play.throttle import host_iteration_rate

#: the fraction of ``seconds`` a calibration run should last before the timed run is sized
_CALIBRATION_FRACTION = 0.1


def all_legal_moves(states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position index, size, square) of every legal move of every position, flattened."""
    codes = np.empty(N_MOVE_CODES, dtype=np.int64)
    pidx, sizes, squares = [], [], []
    for i, s in enumerate(states):
        n = legal_move_codes(s, codes)
        pidx += [i] * n
        moves = [decode_move(int(c)) for c in codes[:n]]
        sizes += [size for size, _ in moves]
        squares += [sq for _, sq in moves]
    return (np.array(pidx, dtype=np.int64), np.array(sizes, dtype=np.int64), np.array(squares, dtype=np.int64))


# ------------------------------------------------------------------------------------------
# Compiled measurement loops: each returns a checksum so the work cannot be optimised away.
# They are NOT cached on purpose: numba's cache does not notice edits to the engine kernels a
# cached caller has inlined, and a benchmark must measure the engine as it is now (~3 s of
# compilation per run of the bench).

@njit(cache=False)
def heuristic_loop(states, reps):
    """``reps`` passes of H from both sides on every position: 2 * reps * n evaluations."""
    acc = 0.0
    for _ in range(reps):
        for i in range(states.shape[0]):
            acc += heuristic(states[i], -1)
            acc += heuristic(states[i], 1)
    return acc


@njit(cache=False)
def objective_loop(states, pidx, sizes, squares, reps, rng, groups, scores, ties, ctx):
    """``reps`` passes of f over every (position, legal move): reps * len(pidx) evaluations,
    as the solver makes them: a position's context once (counted), then each of its moves."""
    acc = 0.0
    for _ in range(reps):
        last = -1
        for j in range(pidx.shape[0]):
            st = states[pidx[j]]
            if pidx[j] != last:
                objective_context(st, ctx)
                last = pidx[j]
            value = objective_inc(st, ctx, sizes[j], squares[j])
            if value != value:
                value = objective_promotion(ctx, rng, groups, scores, ties)
            acc += value
    return acc


@njit(cache=False)
def solver_loop(states, reps, rng, mask, ctx, groups, scores, ties, codes, values, tie_moves):
    """``reps`` passes of best_move (score every legal move + argmax) on every position."""
    acc = 0
    for _ in range(reps):
        for i in range(states.shape[0]):
            code, nt = best_move_ws(states[i], mask, rng, ctx, groups, scores, ties, codes, values, tie_moves)
            acc += code + nt
    return acc


@njit(cache=False)
def random_plies_loop(states, n_plies, rng, work, groups, scores, ties, mask, squares):
    """``n_plies`` random plies as in a vanilla playout (AGENTS.md §B.8-B.9).

    The playout's random move (:func:`boopexp.engine.rules.random_move`), the TREE move (both
    victories tested, heuristic promotion) and the ply's reward H(state, persp). A finished game
    restarts from the next sample position.
    """
    n = states.shape[0]
    idx = 0
    for k in range(STATE_SIZE):
        work[k] = states[0, k]
    persp = work[TO_MOVE]
    acc = 0.0
    for _ in range(n_plies):
        code = random_move(work, mask, rng, squares)
        size, sq = decode_move(code)
        winner, _, _ = apply_move_inplace(work, size, sq, TREE, PROMO_HEURISTIC, rng, groups, scores, ties)
        if winner != 0:
            acc += winner
            idx = (idx + 1) % n
            for k in range(STATE_SIZE):
                work[k] = states[idx, k]
            persp = work[TO_MOVE]
        else:
            acc += heuristic(work, persp)
    return acc


# ------------------------------------------------------------------------------------------
# Timing and the metric registry

def timed_rate(run: Callable[[int], int], seconds: float) -> float:
    """Units per CPU second of ``run(reps)`` (which returns the units it did), timed for
    ~``seconds``.

    ``run(1)`` first compiles/warms up; then ``reps`` is doubled until a run lasts a tenth of
    ``seconds``, and the timed run is sized from that to last about ``seconds``. The clock is
    the process's CPU time (as the MCTS rates'): on a quiet machine it is the wall time of
    these single-threaded loops, and on a busy one it leaves out the time other processes
    hold the core (their cache traffic still shows: compare runs made back to back).
    """
    run(1)  # warm-up: compilation and caches, never timed
    reps = 1
    target = max(seconds * _CALIBRATION_FRACTION, 1e-3)
    while True:
        t0 = time.process_time()
        run(reps)
        dt = time.process_time() - t0
        if dt >= target or reps >= 1 << 30:
            break
        reps *= 2
    reps = max(1, int(reps * seconds / max(dt, 1e-9)))
    t0 = time.process_time()
    units = run(reps)
    dt = time.process_time() - t0
    return units / dt


@dataclass
class BenchContext:
    """The fixed position set and the work buffers shared by the measurements."""

    states: np.ndarray = field(default_factory=sample_positions)
    seed: int = SAMPLE_SEED

    def __post_init__(self) -> None:
        self.pidx, self.sizes, self.squares = all_legal_moves(self.states)
        self.rng = new_rng_state(self.seed)
        self.work = new_work()
        self.ctx = new_context()


MetricFn = Callable[[BenchContext, float], float]
#: name -> function(context, seconds) returning one measured rate (units per second)
METRICS: dict[str, MetricFn] = {}


_Fn = TypeVar("_Fn")


def _registrar(table: dict[str, _Fn], name: str) -> Callable[[_Fn], _Fn]:
    """A decorator that registers its function in ``table`` under ``name`` (:func:`metric`,
    :func:`game_metric`)."""

    def deco(fn: _Fn) -> _Fn:
        table[name] = fn
        return fn

    return deco


def metric(name: str) -> Callable[[MetricFn], MetricFn]:
    """Register a measurement under ``name`` (its key in the report)."""
    return _registrar(METRICS, name)


@metric("heuristic_per_s")
def _heuristic(ctx: BenchContext, seconds: float) -> float:
    n = ctx.states.shape[0]

    def run(reps: int) -> int:
        heuristic_loop(ctx.states, reps)
        return 2 * reps * n

    return timed_rate(run, seconds)


@metric("objective_per_s")
def _objective(ctx: BenchContext, seconds: float) -> float:
    n = ctx.pidx.shape[0]
    w = ctx.work

    def run(reps: int) -> int:
        objective_loop(ctx.states, ctx.pidx, ctx.sizes, ctx.squares, reps, ctx.rng, w.groups, w.scores, w.ties, ctx.ctx)
        return reps * n

    return timed_rate(run, seconds)


@metric("solver_calls_per_s")
def _solver(ctx: BenchContext, seconds: float) -> float:
    n = ctx.states.shape[0]

    def run(reps: int) -> int:
        solver_loop(ctx.states, reps, ctx.rng, ctx.work.mask, *solver_buffers(ctx.work))
        return reps * n

    return timed_rate(run, seconds)


@metric("random_plies_per_s")
def _random_plies(ctx: BenchContext, seconds: float) -> float:
    w = ctx.work

    def run(reps: int) -> int:
        plies = 1000 * reps
        random_plies_loop(ctx.states, plies, ctx.rng, w.playout, w.groups, w.scores, w.ties, w.mask, w.squares)
        return plies

    return timed_rate(run, seconds)


# ------------------------------------------------------------------------------------------
# Report

#: The MCTS agents whose iteration rate the bench measures (whole searches), by metric name.
ITERATION_AGENTS: dict[str, str] = {
    "vanilla_iterations_per_s": "vanilla",
    "mcts_co_iterations_per_s": "mcts-co",
    "mcts_solver_iterations_per_s": "mcts-solver",
    "mcts_prior_iterations_per_s": "mcts-prior",
}


def _iterations_metric(agent: str) -> MetricFn:
    """The measurement of ``agent``'s iterations per CPU second (:func:`host_iteration_rate`)."""

    def measure(ctx: BenchContext, seconds: float) -> float:
        return host_iteration_rate(agent, seconds, positions=ctx.states)

    return measure


for _name, _agent in ITERATION_AGENTS.items():
    metric(_name)(_iterations_metric(_agent))


#: the depth of the bench's alpha-beta searches: about what the agent reaches in 1 device-second
ALPHABETA_BENCH_DEPTH = 4


@metric("alphabeta_nodes_per_s")
def _alphabeta_nodes(ctx: BenchContext, seconds: float) -> float:
    return alphabeta_rate(alphabeta, ctx.states, ctx.rng, ALPHABETA_BENCH_DEPTH, seconds)


def alphabeta_rate(searcher: Any, states: np.ndarray, rng: np.ndarray, depth: int, seconds: float) -> float:
    """Nodes per CPU second of whole alpha-beta moves of ``searcher`` (:mod:`boopexp.engine.alphabeta`
    or another game's bound copy; the driver, the table cleared per move): fixed-depth searches on
    the positions in turn."""
    cfg = AlphaBetaConfig(max_depth=depth)
    budget = Budget(mode="iterations", iterations=MAX_ITERATIONS)  # no node limit short of the cap: depth-bound
    costs = device_costs("android-2023")
    search = searcher.new_search()
    n = states.shape[0]
    at = [0]

    def run(reps: int) -> int:
        nodes = 0
        for _ in range(reps):
            _, _, tel = searcher.search(states[at[0] % n], cfg, budget, costs, rng, search)
            at[0] += 1
            nodes += tel["search_nodes"]
        return nodes

    return timed_rate(run, seconds)


# ------------------------------------------------------------------------------------------
# Another game: the same metrics through its kernels (``boopexp bench --game G``)
#
# The loops take the game's kernels (numba dispatchers) as arguments: numba compiles a loop once
# per kernel it is given, a direct call as in the game's own search. Not cached, as boop.'s loops
# are not (and a dispatcher argument is not cached anyway).

@njit(cache=False)
def game_heuristic_loop(states, reps, heuristic):
    """``reps`` passes of H from both sides on every position: 2 * reps * n evaluations."""
    acc = 0.0
    for _ in range(reps):
        for i in range(states.shape[0]):
            acc += heuristic(states[i], -1)
            acc += heuristic(states[i], 1)
    return acc


@njit(cache=False)
def game_objective_loop(states, pidx, codes, reps, rng, work, objective):
    """``reps`` passes of f over every (position, legal move): reps * len(pidx) evaluations."""
    acc = 0.0
    for _ in range(reps):
        for j in range(pidx.shape[0]):
            acc += objective(states[pidx[j]], codes[j], rng, work)
    return acc


@njit(cache=False)
def game_solver_loop(states, reps, rng, mask, work, solve):
    """``reps`` passes of the solver (every legal move scored by f, a draw among the optima) on
    every position."""
    acc = 0
    for _ in range(reps):
        for i in range(states.shape[0]):
            code, nt, _, _ = solve(states[i], mask, rng, work)
            acc += code + nt
    return acc


@njit(cache=False)
def game_random_plies_loop(states, n_plies, rng, work, random_move, apply_move, heuristic, to_move):
    """``n_plies`` random plies as in a vanilla playout (:func:`boopexp.engine.mcts.playout`): the
    random move, the move played, and the ply's reward H(state, persp) while the game goes on. A
    finished game restarts from the next sample position."""
    n = states.shape[0]
    st = work.playout
    idx = 0
    for k in range(states.shape[1]):
        st[k] = states[0, k]
    persp = st[to_move]
    acc = 0.0
    for _ in range(n_plies):
        code = random_move(st, work.mask, rng, work)
        outcome, _ = apply_move(st, code, rng, work)
        if outcome != 0:
            acc += outcome
            idx = (idx + 1) % n
            for k in range(states.shape[1]):
                st[k] = states[idx, k]
            persp = st[to_move]
        else:
            acc += heuristic(st, persp)
    return acc


def game_positions(game: Game, n: int = N_POSITIONS, seed: int = SAMPLE_SEED) -> np.ndarray:
    """``n`` positions of ``game`` in play (an ``(n, STATE_SIZE)`` array), drawn as boop.'s
    :func:`boopexp.game.positions.sample_positions` are: seeded games in which each side plays the
    solver's best move (f, ties drawn) with probability 1/2, else a random legal move, up to five
    positions kept per game at plies of :data:`PLY_RANGE` it reached before its end.

    Raises:
        ConfigError: the game's seeded games did not reach those plies (a game shorter than 5 plies).
    """
    kernels = game.kernels()
    gen = np.random.default_rng(seed)
    words = new_rng_state(seed)
    work = kernels.new_work()
    codes = np.zeros(kernels.N_MOVE_CODES, dtype=np.int64)
    lo, hi = PLY_RANGE
    out: list[np.ndarray] = []
    for _attempt in range(100 * n):
        st = np.asarray(game.initial_state(int(gen.integers(2**31))), dtype=kernels.STATE_DTYPE).copy()
        reached: list[np.ndarray] = []
        for ply in range(hi + 1):
            if ply >= lo:
                reached.append(st.copy())
            legal = codes[:kernels.legal_move_codes(st, codes)]
            if gen.random() < SOLVER_PROB:
                values = np.array([kernels.objective(st, int(c), words, work) for c in legal])
                legal = legal[values == values.max()]
            outcome, _ = kernels.apply_move(st, int(legal[gen.integers(len(legal))]), words, work)
            if outcome != 0:
                break
        keep = sorted(gen.choice(len(reached), size=min(5, len(reached)), replace=False)) if reached else []
        out += [reached[i] for i in keep]
        if len(out) >= n:
            return np.ascontiguousarray(np.stack(out[:n]))
    raise ConfigError(f"game {game.name!r}: {100 * n} seeded games gave {len(out)} positions of plies {lo}-{hi}, "
                      f"fewer than the bench's {n}")


@dataclass
class GameBenchContext:
    """Another game's position sample, its kernels (the contract's, defaults included: the bound
    search's globals) and work buffers."""

    game: Game
    seed: int = SAMPLE_SEED

    def __post_init__(self) -> None:
        self.engine = self.game.engine()  # the search bound to the game: its globals are the contract's kernels
        self.states = game_positions(self.game, seed=self.seed)
        self.rng = new_rng_state(self.seed)
        self.work = self.engine.new_work()
        codes = np.zeros(self.engine.N_MOVE_CODES, dtype=np.int64)
        pidx: list[int] = []
        moves: list[int] = []
        for i, st in enumerate(self.states):
            n = int(self.engine.legal_move_codes(st, codes))
            pidx += [i] * n
            moves += [int(c) for c in codes[:n]]
        self.pidx, self.codes = np.array(pidx, dtype=np.int64), np.array(moves, dtype=np.int64)


GameMetricFn = Callable[[GameBenchContext, float], float]
#: another game's measurements, under boop.'s names (the same quantity, through the game's kernels)
GAME_METRICS: dict[str, GameMetricFn] = {}


def game_metric(name: str) -> Callable[[GameMetricFn], GameMetricFn]:
    """Register another game's measurement under ``name`` (boop.'s name of the same quantity)."""
    return _registrar(GAME_METRICS, name)


@game_metric("heuristic_per_s")
def _game_heuristic(ctx: GameBenchContext, seconds: float) -> float:
    n = ctx.states.shape[0]

    def run(reps: int) -> int:
        game_heuristic_loop(ctx.states, reps, ctx.engine.heuristic)
        return 2 * reps * n

    return timed_rate(run, seconds)


@game_metric("objective_per_s")
def _game_objective(ctx: GameBenchContext, seconds: float) -> float:
    def run(reps: int) -> int:
        game_objective_loop(ctx.states, ctx.pidx, ctx.codes, reps, ctx.rng, ctx.work, ctx.engine.objective)
        return reps * ctx.pidx.shape[0]

    return timed_rate(run, seconds)


@game_metric("solver_calls_per_s")
def _game_solver(ctx: GameBenchContext, seconds: float) -> float:
    def run(reps: int) -> int:
        game_solver_loop(ctx.states, reps, ctx.rng, ctx.work.mask, ctx.work, ctx.engine.solve)
        return reps * ctx.states.shape[0]

    return timed_rate(run, seconds)


@game_metric("random_plies_per_s")
def _game_random_plies(ctx: GameBenchContext, seconds: float) -> float:
    e = ctx.engine

    def run(reps: int) -> int:
        plies = 1000 * reps
        game_random_plies_loop(ctx.states, plies, ctx.rng, ctx.work, e.random_move, e.apply_move, e.heuristic,
                               e.TO_MOVE)
        return plies

    return timed_rate(run, seconds)


def _game_iterations_metric(agent: str) -> GameMetricFn:
    """Another game's ``agent`` iterations per CPU second (:func:`host_iteration_rate`)."""

    def measure(ctx: GameBenchContext, seconds: float) -> float:
        return host_iteration_rate(agent, seconds, positions=ctx.states, game=ctx.game)

    return measure


for _name, _agent in ITERATION_AGENTS.items():
    game_metric(_name)(_game_iterations_metric(_agent))

#: the depth of another game's bench searches (boop.'s: :data:`ALPHABETA_BENCH_DEPTH`): searches of
#: thousands of nodes (Connect Four: ~6,000 at depth 8; its agent reaches depth 10-13 in a device-second)
GAME_ALPHABETA_BENCH_DEPTH = 8


@game_metric("alphabeta_nodes_per_s")
def _game_alphabeta_nodes(ctx: GameBenchContext, seconds: float) -> float:
    return alphabeta_rate(ctx.game.engine("alphabeta"), ctx.states, ctx.rng, GAME_ALPHABETA_BENCH_DEPTH, seconds)


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine_info() -> dict:
    """Where the figures were measured."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "threads_used": 1,
    }


def versions() -> dict:
    return {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "numba": numba.__version__,
        "boopexp": __version__,
    }


def run_bench(seconds: float = 1.0, repeats: int = 5, names: list[str] | None = None,
              ctx: BenchContext | GameBenchContext | None = None, progress: Callable[[str], None] | None = None,
              game: Game | None = None) -> dict:
    """Run the registered measurements of ``game`` (None or boop.: :data:`METRICS`; another game:
    :data:`GAME_METRICS`, its name under ``settings.game``); return the report (medians, runs,
    machine, versions)."""
    if seconds <= 0 or repeats < 1:
        raise ConfigError(f"seconds must be > 0 and repeats >= 1, got {seconds!r} and {repeats!r}")
    other = game is not None and game.name != DEFAULT_GAME
    metrics: dict[str, Any] = dict(GAME_METRICS if other else METRICS)
    names = list(metrics) if names is None else names
    unknown = [n for n in names if n not in metrics]
    if unknown:
        raise ConfigError(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(metrics)}")
    if ctx is None:
        ctx = GameBenchContext(game) if other and game is not None else BenchContext()
    report: dict = {}
    runs: dict[str, list[float]] = {}
    for name in names:
        if progress:
            progress(name)
        runs[name] = [float(metrics[name](ctx, seconds)) for _ in range(repeats)]
        report[name] = statistics.median(runs[name])
    report["runs"] = runs
    report["settings"] = {
        "seconds": seconds,
        "repeats": repeats,
        "positions": int(ctx.states.shape[0]),
        "moves": int(ctx.pidx.shape[0]),
        "sample_seed": ctx.seed,
        "ply_range": list(PLY_RANGE),
    }
    if other and game is not None:  # boop.'s report as it always was: saved ones compare
        report["settings"]["game"] = game.name
    report["machine"] = machine_info()
    report["versions"] = versions()
    return report


def report_game(report: dict) -> str:
    """The game a report measured (a report without one: boop.'s)."""
    settings = report.get("settings")
    return str(settings.get("game", DEFAULT_GAME)) if isinstance(settings, dict) else DEFAULT_GAME


def check_same_game(saved: dict, game: str, path: object) -> None:
    """Refuse to compare a bench of ``game`` with a saved bench of another game.

    Raises:
        BoopError: one line naming the file and both games.
    """
    if report_game(saved) != game:
        raise BoopError(f"{str(path)!r} is a bench of {report_game(saved)}, this one of {game}: compare runs of "
                        "one game")


def format_report(report: dict) -> str:
    """The human-readable table of a report."""
    names = metric_names(report)
    width = max(len(n) for n in names)
    lines = []
    for n in names:
        runs = report["runs"][n]
        spread = f"  (min {min(runs):,.0f}, max {max(runs):,.0f}, {len(runs)} runs)" if len(runs) > 1 else ""
        lines.append(f"{n:<{width}}  {report[n]:>14,.0f}{spread}")
    s, m, v = report["settings"], report["machine"], report["versions"]
    lines.append("")
    lo, hi = s["ply_range"]
    of = f" of {s['game']}" if "game" in s else ""
    lines.append(f"medians of {s['repeats']} runs of ~{s['seconds']} s on one core; {s['positions']} positions{of} "
                 f"({s['moves']} legal moves) from plies {lo}-{hi}, seed {s['sample_seed']}")
    lines.append(f"{m['cpu_model']} ({m['cpu_count']} CPUs), {m['platform']}")
    lines.append(f"python {v['python']}, numpy {v['numpy']}, numba {v['numba']}, boopexp {v['boopexp']}")
    return "\n".join(lines)


_REPORT_KEYS = ("runs", "settings", "machine", "versions", "compare")


def metric_names(report: dict) -> list[str]:
    """The measured metrics of a report, in its order."""
    return [k for k in report if k not in _REPORT_KEYS]


def load_report(path) -> dict:
    """A saved ``boopexp bench --json`` report; BoopError (one line) if it is not one."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            report = json.load(fh)
    except OSError as exc:
        raise BoopError(f"cannot read the saved bench {str(path)!r}: {exc.strerror}") from None
    except ValueError as exc:
        raise BoopError(f"{str(path)!r} is not a bench report (invalid JSON: {exc})") from None
    if not isinstance(report, dict) or not any(_is_number(report[k]) for k in metric_names(report)):
        raise BoopError(f"{str(path)!r} is not a bench report (no metric in it; save one with 'boopexp bench --json')")
    return report


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def compare_ratios(report: dict, saved: dict) -> dict[str, float]:
    """now / saved for every metric both runs measured."""
    return {k: report[k] / saved[k] for k in metric_names(report)
            if _is_number(report[k]) and _is_number(saved.get(k)) and saved[k]}


def format_comparison(report: dict, saved: dict, saved_name: str = "saved") -> str:
    """One line per metric: this run's median, the saved run's, and their ratio (now / saved).

    Metrics only one of the two runs has are listed with a dash.
    """
    names = metric_names(report) + [n for n in metric_names(saved) if n not in report]
    ratios = compare_ratios(report, saved)
    width = max(len(n) for n in names)

    def cell(x) -> str:
        return f"{x:>14,.0f}" if _is_number(x) else f"{'-':>14}"

    lines = [f"{'metric':<{width}}  {'now':>14}  {saved_name:>14}  {'ratio':>6}"]
    for n in names:
        ratio = f"{ratios[n]:>5.2f}x" if n in ratios else f"{'-':>6}"
        lines.append(f"{n:<{width}}  {cell(report.get(n))}  {cell(saved.get(n))}  {ratio}")
    return "\n".join(lines)
