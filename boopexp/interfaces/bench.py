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
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

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
from boopexp.game.positions import PLY_RANGE, SAMPLE_SEED, sample_positions
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


def metric(name: str) -> Callable[[MetricFn], MetricFn]:
    """Register a measurement under ``name`` (its key in the report)."""

    def deco(fn: MetricFn) -> MetricFn:
        METRICS[name] = fn
        return fn

    return deco


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
    """Nodes per CPU second of whole alpha-beta moves (the driver, the table cleared per move):
    fixed-depth searches on the positions in turn."""
    cfg = AlphaBetaConfig(max_depth=ALPHABETA_BENCH_DEPTH)
    budget = Budget(mode="iterations", iterations=MAX_ITERATIONS)  # no node limit short of the cap: depth-bound
    costs = device_costs("android-2023")
    search = alphabeta.new_search()
    n = ctx.states.shape[0]
    at = [0]

    def run(reps: int) -> int:
        nodes = 0
        for _ in range(reps):
            _, _, tel = alphabeta.search(ctx.states[at[0] % n], cfg, budget, costs, ctx.rng, search)
            at[0] += 1
            nodes += tel["search_nodes"]
        return nodes

    return timed_rate(run, seconds)


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
              ctx: BenchContext | None = None, progress: Callable[[str], None] | None = None) -> dict:
    """Run the registered measurements; return the report (medians, runs, machine, versions)."""
    if seconds <= 0 or repeats < 1:
        raise ConfigError(f"seconds must be > 0 and repeats >= 1, got {seconds!r} and {repeats!r}")
    names = list(METRICS) if names is None else names
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ConfigError(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(METRICS)}")
    ctx = ctx or BenchContext()
    report: dict = {}
    runs: dict[str, list[float]] = {}
    for name in names:
        if progress:
            progress(name)
        runs[name] = [float(METRICS[name](ctx, seconds)) for _ in range(repeats)]
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
    report["machine"] = machine_info()
    report["versions"] = versions()
    return report


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
    lines.append(f"medians of {s['repeats']} runs of ~{s['seconds']} s on one core; {s['positions']} positions "
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
