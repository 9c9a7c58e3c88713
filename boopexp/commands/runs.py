"""``boopexp run``, ``boopexp mirror`` and ``boopexp status``: play a config's games and follow them.

The library does the work (:mod:`boopexp.config`, :mod:`boopexp.store`, :mod:`boopexp.runner`);
this module parses options, shows progress and prints the summary. Exit codes: 0 all planned
games stored, 1 some games failed, 2 usage or config error, 130 interrupted by Ctrl-C, 143 by
SIGTERM.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import click

from boopexp.errors import ConfigError

if TYPE_CHECKING:  # the runner pulls in the engine; import it only when a run starts
    from boopexp.config import ExperimentConfig, PlannedPairing
    from boopexp.runner import GameOutcome, RunReport
    from boopexp.store import PairingScore

RESULTS_DIR = Path("results")
DEFAULT_MIRROR_CONFIG = Path("configs/mirror.yaml")
EXIT_FAILED = 1
EXIT_SIGNAL_BASE = 128  # the shell convention: 130 stopped by SIGINT (Ctrl-C), 143 by SIGTERM


def _default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))  # honours taskset/cgroup CPU limits
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _run_options(fn: Callable) -> Callable:
    """The options shared by ``run`` and ``mirror``."""
    options = [
        click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Results folder (default: results/<config name>/)."),
        click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                     help="Worker processes (default: the number of CPUs; 1 = no pool, in this process)."),
        click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
                     help="loky: local processes; dask: a dask.distributed cluster (pip install 'boopexp[dask]')."),
        click.option("--scheduler", metavar="ADDRESS", default=None,
                     help="Dask scheduler address, e.g. tcp://host:8786 (default: a local cluster of --jobs workers)."),
        click.option("--quiet", "-q", is_flag=True, help="Print only the final summary."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.command("run")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--games-per-side", type=click.IntRange(min=1), default=None,
              help="Override the config's games_per_side (the first N games of each side are the same games).")
@_run_options
def run(config_path: Path, games_per_side: int | None, out: Path | None, jobs: int | None, backend: str,
        scheduler: str | None, quiet: bool) -> None:
    """Play the games of CONFIG that its results folder lacks (rerun to resume)."""
    from boopexp.config import load_config

    config = load_config(config_path)
    if games_per_side is not None:
        config = config.with_games_per_side(games_per_side)
    _execute(config, config.plan(), None, out, jobs, backend, scheduler, quiet)


@click.command("mirror")
@click.option("--agent", "agent", required=True, help="The agent that plays against itself (e.g. mcts-co).")
@click.option("--games", type=click.IntRange(min=1), default=100, show_default=True,
              help="Games to have in total (game indices 0..N-1).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              default=DEFAULT_MIRROR_CONFIG, show_default=True,
              help="The mirror config whose settings (seed, budget, preset, params) and store are used.")
@_run_options
def mirror(agent: str, games: int, config_path: Path, out: Path | None, jobs: int | None, backend: str,
           scheduler: str | None, quiet: bool) -> None:
    """Play the mirror games of one agent, sharing the mirror config's settings and results folder."""
    from boopexp.config import load_config, pairing_name

    config = load_config(config_path)
    try:
        agent = config.canonical(agent)
    except ConfigError as exc:
        raise ConfigError(f"--agent: {exc}") from None
    plan = config.mirror_plan(agent, games)
    _execute(config, plan, pairing_name(agent, agent), out, jobs, backend, scheduler, quiet)


@click.command("status")
@click.argument("directory", metavar="[DIR]", required=False, type=click.Path(file_okay=False, path_type=Path))
def status(directory: Path | None) -> None:
    """Games done / planned and wins so far, per pairing (default: every folder under results/)."""
    from boopexp.store import GAMES_FILE, has_games_files

    if directory is not None:
        if not directory.is_dir():
            raise ConfigError(f"no results folder {str(directory)!r}")
        folders = [directory]
    else:
        folders = sorted(p for p in RESULTS_DIR.glob("*") if p.is_dir() and has_games_files(p))
        if not folders:
            click.echo(f"No results under {RESULTS_DIR}/ (no {RESULTS_DIR}/*/{GAMES_FILE}).")
            return
    for i, folder in enumerate(folders):
        if i:
            click.echo("")
        _status_of(folder)


# --------------------------------------------------------------------------------------------
# run / mirror


def _execute(config: "ExperimentConfig", plan: Sequence["PlannedPairing"], only: str | None, out: Path | None,
             jobs: int | None, backend: str, scheduler: str | None, quiet: bool) -> None:
    from boopexp.runner import check_backend, run_plan

    check_backend(backend, scheduler)  # before anything is written
    out_dir = out if out is not None else RESULTS_DIR / config.name
    if quiet:
        progress = _QuietProgress()
    elif sys.stdout.isatty():
        progress = _BarProgress()
    else:
        progress = _LineProgress()
    report = run_plan(
        config, plan, out_dir, jobs=jobs or _default_jobs(), backend=backend, scheduler=scheduler,
        progress=progress, pairings=None if only is None else [only],
    )
    _summary(report)
    if report.interrupted:
        done = sum(s.done for s in report.scores)
        click.echo(
            f"Interrupted: {done} of {report.planned} games are stored in {report.games_path} "
            f"(games in flight were dropped). To resume, run:\n  {_resume_command()}",
            err=True,
        )
        sys.exit(EXIT_SIGNAL_BASE + (report.stopped_by or signal.SIGINT))
    if report.failed:
        sys.exit(EXIT_FAILED)


def _resume_command() -> str:
    """The command line that was typed, rebuilt from the options given explicitly."""
    ctx = click.get_current_context()
    words = ["boopexp", ctx.info_name or ctx.command.name or ""]
    for param in ctx.command.params:
        value = ctx.params.get(param.name)  # type: ignore[arg-type]
        if isinstance(param, click.Argument):
            words.append(str(value))
            continue
        if ctx.get_parameter_source(param.name) in (None, click.core.ParameterSource.DEFAULT):  # type: ignore[arg-type]
            continue
        flag = param.opts[0] if param.opts[0].startswith("--") else max(param.opts, key=len)
        if getattr(param, "is_flag", False):
            if value:
                words.append(flag)
        else:
            words += [flag, str(value)]
    return shlex.join(words)


def _score_table(scores: Sequence["PairingScore"]) -> None:
    """Games done/planned and wins per pairing; a "no winner" column only if a game hit the ply limit."""
    width = max([len(s.pairing) for s in scores] + [len("pairing")])
    extra = any(s.no_winner for s in scores)
    click.echo(f"  {'pairing':<{width}}  {'games':>9}  {'p1 wins':>7}  {'p2 wins':>7}" + ("  no winner" if extra else ""))
    for s in scores:
        row = f"  {s.pairing:<{width}}  {f'{s.done}/{s.planned}':>9}  {s.p1_wins:>7}  {s.p2_wins:>7}"
        click.echo(row + (f"  {s.no_winner:>9}" if extra else ""))
    done, planned = sum(s.done for s in scores), sum(s.planned for s in scores)
    click.echo(f"  {'total':<{width}}  {f'{done}/{planned}':>9}")


def _summary(report: "RunReport") -> None:
    click.echo(f"Results: {report.games_path} (settings: {report.out_dir / 'config.yaml'})")
    _score_table(report.scores)
    click.echo(f"Played {report.played} game(s) in this run; {report.skipped} were already stored.")
    if report.failed:
        click.echo(f"{len(report.failed)} game(s) failed (not stored; rerun the same command to retry them):", err=True)
        for outcome in report.failed:
            click.echo(f"  {outcome.task.pairing} #{outcome.task.game_index}: {outcome.error}", err=True)
        first = report.failed[0]
        if first.detail:
            click.echo(f"First failure in detail:\n{first.detail.rstrip()}", err=True)


class _ProgressBase:
    """Warnings go to stderr in every mode; notices only when not quiet.

    Same methods as :class:`boopexp.runner.Progress`, which is not subclassed so that importing
    the CLI does not import the runner (and the engine behind it).
    """

    quiet = False

    def message(self, text: str, warning: bool = True) -> None:
        if warning:
            self._write(f"Warning: {text}", err=True)
        elif not self.quiet:
            self._write(text, err=True)

    def _write(self, text: str, err: bool = False) -> None:
        click.echo(text, err=err)

    def start(self, planned: int, skipped: int, scores: Sequence["PairingScore"]) -> None:
        pass

    def game(self, outcome: "GameOutcome", finished: int, planned: int, scores: Sequence["PairingScore"]) -> None:
        pass

    def close(self) -> None:
        pass


class _QuietProgress(_ProgressBase):
    quiet = True


class _LineProgress(_ProgressBase):
    """One plain line per finished game (for logs and pipes)."""

    def start(self, planned: int, skipped: int, scores: Sequence["PairingScore"]) -> None:
        todo = planned - skipped
        click.echo(f"{planned} games planned, {skipped} already stored, {todo} to play.")

    def game(self, outcome: "GameOutcome", finished: int, planned: int, scores: Sequence["PairingScore"]) -> None:
        click.echo(f"[{finished:>{len(str(planned))}}/{planned}] {_describe(outcome)}")


class _BarProgress(_ProgressBase):
    """A tqdm bar with ETA and the running score of the pairings being played."""

    def __init__(self) -> None:
        self.bar: Any = None

    def _write(self, text: str, err: bool = False) -> None:
        if self.bar is None:
            click.echo(text, err=err)
        else:
            self.bar.write(text, file=sys.stderr if err else sys.stdout)

    def start(self, planned: int, skipped: int, scores: Sequence["PairingScore"]) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=planned, initial=skipped, unit="game", dynamic_ncols=True, file=sys.stdout,
                        smoothing=0.05)

    def game(self, outcome: "GameOutcome", finished: int, planned: int, scores: Sequence["PairingScore"]) -> None:
        if not outcome.ok:
            self._write(f"Warning: {_describe(outcome)}", err=True)
        self.bar.update(1)
        current = [s for s in scores if 0 < s.done < s.planned] or [
            s for s in scores if s.pairing == outcome.task.pairing
        ]
        self.bar.set_postfix_str(", ".join(f"{s.pairing} {s.p1_wins}-{s.p2_wins}" for s in current[:3]))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _describe(outcome: "GameOutcome") -> str:
    task = outcome.task
    head = f"{task.pairing} #{task.game_index}"
    if not outcome.ok:
        return f"{head}: FAILED: {outcome.error}"
    record = outcome.record or {}
    winner = record["winner"]
    if winner is None:
        why = record.get("termination", "no winner")
        return f"{head}: no winner ({why}) after {record.get('plies', '?')} plies, {outcome.seconds:.1f} s"
    agent = task.p1.name if winner == "p1" else task.p2.name
    return f"{head}: {winner} ({agent}) wins in {record.get('plies', '?')} plies, {outcome.seconds:.1f} s"


# --------------------------------------------------------------------------------------------
# status


def _status_of(folder: Path) -> None:
    from boopexp.config import plan_entries
    from boopexp.store import GameStore, score, unplanned

    store = GameStore(folder)
    scan = store.scan()
    for text in scan.warnings():
        click.echo(f"Warning: {text}", err=True)
    doc = store.read_config()
    if doc is None:
        click.echo(f"{folder}: no config.yaml, so no plan; games found per pairing:")
        counts: dict[str, list[int]] = {}
        for r in scan.records:
            c = counts.setdefault(r["pairing"], [0, 0, 0])
            c[0] += 1
            c[1] += r["winner"] == "p1"
            c[2] += r["winner"] == "p2"
        for pairing, (n, w1, w2) in counts.items():
            click.echo(f"  {pairing}: {n} games, p1 {w1} - p2 {w2}")
        return
    entries = plan_entries(doc, str(store.config_path))
    scores = score(entries, scan.records)
    click.echo(f"{folder}: {_describe_settings(doc)}")
    _score_table(scores)
    extra = unplanned(entries, scan.records)
    if extra:
        click.echo(f"  ({extra} other record(s) in {store.directory} belong to other settings or games; not counted)")


def _describe_settings(doc: dict[str, Any]) -> str:
    budget = doc.get("budget") or {}
    mode = budget.get("mode")
    if mode == "iterations":
        b = f"{budget.get('iterations')} iterations/move"
    elif mode == "device":
        b = f"device {budget.get('seconds')} s/move ({budget.get('profile')})"
    elif mode == "cpu":
        b = f"cpu {budget.get('seconds')} s/move (throttle {budget.get('throttle')})"
    else:
        b = f"{mode} {budget.get('seconds')} s/move"
    return f"{doc.get('name')}, seed {doc.get('seed')}, budget {b}, preset {doc.get('preset')}"
