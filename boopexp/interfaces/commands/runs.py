"""``boopexp run``, ``boopexp mirror`` and ``boopexp status``: play a config's games and follow them.

The library does the work (:mod:`boopexp.experiments.config`, :mod:`boopexp.experiments.store`,
:mod:`boopexp.experiments.runner`);
this module parses options, shows progress and prints the summary. Exit codes: 0 all planned
games stored, 1 some games failed, 2 usage or config error, 130 interrupted by Ctrl-C, 143 by
SIGTERM.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

import boopexp
from boopexp import schema
from boopexp.errors import BoopError, ConfigError, LostResourceError
from boopexp.interfaces.commands import FOLDER

if TYPE_CHECKING:  # the runner pulls in the engine; import it only when a run starts
    from boopexp.experiments.config import ExperimentConfig, PlannedPairing
    from boopexp.experiments.pool import GameOutcome, PoolOptions
    from boopexp.experiments.runner import RunReport
    from boopexp.experiments.status import FolderStatus
    from boopexp.experiments.tally import PairingScore

RESULTS_DIR = Path("results")
DEFAULT_MIRROR_CONFIG = Path("configs/mirror.yaml")
#: The folder holding the package: a checkout's root, where configs/ is (an installed wheel has none).
SOURCE_ROOT = Path(boopexp.__file__).resolve().parent.parent
EXIT_FAILED = 1
EXIT_SIGNAL_BASE = 128  # the shell convention: 130 stopped by SIGINT (Ctrl-C), 143 by SIGTERM


def pool_options(jobs: int | None, backend: str, scheduler: str | None, slurm: bool = False) -> PoolOptions:
    """How a command's games are played, from its options (``--jobs`` defaults to this machine's
    CPUs); checked here, before anything is written.

    Raises:
        ConfigError: a bad backend, scheduler or ``--slurm`` (:func:`boopexp.experiments.pool.check_backend`).
    """
    from boopexp.experiments.pool import PoolOptions, cpu_count

    return PoolOptions(jobs or cpu_count(), backend, scheduler, slurm=slurm)


#: The most worker processes of ``--jobs`` (a typo of a few digits would start as many as there
#: are games): more than any one machine's cores; a cluster runs shards (``--shard``) or dask.
MAX_JOBS = 1024


def run_options(fn: Callable) -> Callable:
    """The options shared by ``run`` and ``mirror``."""
    options = [
        click.option("--out", "out", type=FOLDER, default=None,
                     help="Results folder (default: results/<config name>/)."),
        click.option("--jobs", "-j", type=click.IntRange(1, MAX_JOBS), default=None,
                     help="Worker processes (default: the number of CPUs; 1 = no pool, in this process)."),
        click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
                     help="loky: local processes; dask: a dask.distributed cluster (pip install 'boopexp[dask]')."),
        click.option("--scheduler", metavar="ADDRESS", default=None,
                     help="Dask scheduler address, e.g. tcp://host:8786 (default: a local cluster of --jobs workers)."),
        click.option("--slurm", is_flag=True,
                     help="With --backend dask: the --jobs workers are Slurm jobs (dask-jobqueue's SLURMCluster, "
                          "set up by dask's jobqueue.slurm config; pip install 'boopexp[slurm]'; docs/cluster.md)."),
        click.option("--quiet", "-q", is_flag=True, help="Print only the final summary."),
        click.option("--dry-run", is_flag=True,
                     help="Print the plan (pairings, settings hashes, games stored and to play) and stop: "
                          "nothing is played or written."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.command("run")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--games-per-side", type=click.IntRange(min=1), default=None,
              help="Override the config's games_per_side (the first N games of each side are the same games).")
@click.option("--pairing", "pairings", multiple=True, metavar='"A vs B"',
              help='Play only this pairing of the config (p1 first, aliases allowed; repeatable), e.g. '
                   '--pairing "mcts-co vs vanilla".')
@click.option("--shard", "shard", metavar="I/N", default=None,
              help="Play only shard I of N (1-based: I in 1..N): a fixed 1/N of the plan chosen by game identity, "
                   "for Slurm job arrays (--shard $SLURM_ARRAY_TASK_ID/N, one --out per shard); then "
                   "boopexp merge (docs/cluster.md).")
@run_options
def run(config_path: Path, games_per_side: int | None, pairings: tuple[str, ...], shard: str | None,
        out: Path | None, jobs: int | None, backend: str, scheduler: str | None, slurm: bool, quiet: bool,
        dry_run: bool) -> None:
    """Play the games of CONFIG that its results folder lacks (rerun to resume)."""
    from boopexp.experiments.config import load_config, parse_pairing
    from boopexp.play.identity import Shard

    part = Shard.parse(shard) if shard is not None else None  # a bad I/N is refused before the config is read
    config = load_config(config_path)
    if games_per_side is not None:
        try:
            config = config.with_games_per_side(games_per_side)
        except ConfigError as exc:  # the option, not the config file, holds the bad value
            raise exc.replace(where=f"--games-per-side {games_per_side}") from None
    if part is not None:
        config = config.with_shard(part)
    plan = config.plan()
    only = None
    if pairings:
        names = [p.pairing for p in plan]
        only = []
        for text in pairings:
            with schema.within("--pairing"):
                pairing = parse_pairing(text, config.canonical)
            if pairing not in names:
                raise ConfigError(
                    f"--pairing {text!r} is not planned by {config_path}; its pairings: {', '.join(names)}"
                )
            only.append(pairing)
    _execute(config, plan, only, out, pool_options(jobs, backend, scheduler, slurm), quiet, dry_run)


@click.command("mirror")
@click.option("--agent", "agent", required=True, help="The agent that plays against itself (e.g. mcts-co).")
@click.option("--games", type=click.IntRange(min=1), default=100, show_default=True,
              help="Games to have in total (game indices 0..N-1).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The mirror config whose settings (seed, budget, preset, params) and store are used "
                   f"(default: {DEFAULT_MIRROR_CONFIG} of the current folder, else of the boopexp checkout).")
@run_options
def mirror(agent: str, games: int, config_path: Path | None, out: Path | None, jobs: int | None, backend: str,
           scheduler: str | None, slurm: bool, quiet: bool, dry_run: bool) -> None:
    """Play the mirror games of one agent, sharing the mirror config's settings and results folder."""
    from boopexp.experiments.config import load_config
    from boopexp.play.identity import pairing_name

    config = load_config(config_path if config_path is not None else default_mirror_config())
    with schema.within("--agent"):
        agent = config.canonical(agent)
    try:
        plan = config.mirror_plan(agent, games)
    except ConfigError as exc:  # the option holds the bad value
        raise exc.replace(where=f"--games {games}") from None
    _execute(config, plan, [pairing_name(agent, agent)], out, pool_options(jobs, backend, scheduler, slurm), quiet,
             dry_run)


def default_mirror_config() -> Path:
    """configs/mirror.yaml of the current folder, else of the checkout the package runs from
    (said on stderr: the games then follow another folder's settings).

    Raises:
        ConfigError: neither exists (one line: both places and how to pass --config).
    """
    here = Path.cwd()
    if (here / DEFAULT_MIRROR_CONFIG).is_file():
        return DEFAULT_MIRROR_CONFIG
    beside = SOURCE_ROOT / DEFAULT_MIRROR_CONFIG
    if beside.is_file():
        click.echo(f"Using the mirror config {beside} (no {DEFAULT_MIRROR_CONFIG} in {here};"
                   " --config FILE for another)", err=True)
        return beside
    raise ConfigError(f"no mirror config: looked for {DEFAULT_MIRROR_CONFIG} in {here} and in {SOURCE_ROOT};"
                      f" pass --config FILE (the paper's is {DEFAULT_MIRROR_CONFIG} of the boopexp repository)")


@click.command("status")
@click.argument("directories", metavar="[DIR]...", nargs=-1, type=FOLDER)
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON document (a list of folders, each with its settings and per-pairing counts).")
def status(directories: tuple[Path, ...], as_json: bool) -> None:
    """Games done / planned and wins so far, per pairing, of each DIR (default: every store under
    results/, at any depth, as under a DIR that is not itself a store; a damaged one is one line
    on stderr, the others are listed, exit 1)."""
    from boopexp.experiments.status import folder_status, require_results_folder, results_folders, status_folders

    # every folder named must exist (exit 2, nothing listed), as with one
    named = [require_results_folder(d) for d in directories]
    folders = [f for d in named for f in status_folders(d)] if directories else results_folders(RESULTS_DIR)
    states, damaged = [], 0
    for folder in folders:
        if folder in named:
            states.append(folder_status(folder))  # a store named: its damage is the command's error
            continue
        try:
            states.append(folder_status(folder))
        except BoopError as exc:  # one damaged store must not hide the others
            click.echo(f"Error: {exc}", err=True)
            damaged += 1
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in states], indent=1))
    elif not states and not damaged:
        click.echo(f"No results under {RESULTS_DIR}/ (no folder holding games.jsonl or sealed segments).")
    for i, state in enumerate([] if as_json else states):
        if i:
            click.echo("")
        _print_status(state)
    if damaged:
        sys.exit(EXIT_FAILED)


# --------------------------------------------------------------------------------------------
# run / mirror


def _execute(config: ExperimentConfig, plan: Sequence[PlannedPairing], only: Sequence[str] | None,
             out: Path | None, pool: PoolOptions, quiet: bool, dry_run: bool = False) -> None:
    from boopexp.experiments.runner import run_plan

    out_dir = out if out is not None else RESULTS_DIR / config.name
    if dry_run:
        _dry_run(config, plan, only, out_dir, pool)
        return
    from boopexp.experiments.interrupts import Interrupts, ignore_signals_at_exit
    from boopexp.experiments.pool import release_pool

    if config.settings.openings is not None:  # a suite's moves checked against the rules before any game
        from boopexp.play.starts import check_suite

        check_suite(config.settings.openings, config.settings.game)
    progress = new_progress(quiet)
    # One handler from before the store is opened to the exit code: run_plan counts a signal
    # during the games and settles it after them, so that a Ctrl-C while the pool shuts down or
    # the summary prints is recorded and reported here (the same line, 130), not a traceback.
    interrupts = Interrupts()
    ignore_signals_at_exit()
    with interrupts:
        try:
            with resumable(pool.scheduler):
                report = run_plan(config, plan, out_dir, pool, progress=progress, pairings=only,
                                  interrupts=interrupts)
        except KeyboardInterrupt:  # before the first game: run_plan counts it from there on
            interrupts.settle()
            release_pool()
            click.echo(f"Interrupted: the games finished so far are stored in {out_dir}. To resume, run:\n"
                       f"  {resume_command()}", err=True)
            sys.exit(EXIT_SIGNAL_BASE + (interrupts.signum or signal.SIGINT))
        release_pool()  # its workers and threads end now, not in the interpreter's exit
        _summary(report)
        # A signal after the last game (the pool shutting down, the summary) stops the command as
        # one during the games does, even when every game is stored: the same line and 130.
        if report.interrupted or interrupts.late:
            done = sum(s.done for s in report.scores)
            click.echo(
                f"Interrupted: {done} of {report.planned} games are stored in {report.games_path} "
                f"(games in flight were dropped). To resume, run:\n  {resume_command()}",
                err=True,
            )
            sys.exit(EXIT_SIGNAL_BASE + (interrupts.signum or report.stopped_by or signal.SIGINT))
    if report.failed:
        sys.exit(EXIT_FAILED)


def _dry_run(config: ExperimentConfig, plan: Sequence[PlannedPairing], only: Sequence[str] | None,
             out_dir: Path, pool: PoolOptions) -> None:
    from boopexp.experiments.status import describe_settings, plan_status

    selected = [p for p in plan if only is None or p.pairing in only]
    scores = plan_status(selected, out_dir)
    click.echo(f"Dry run (nothing is played or written): {describe_settings(config.resolved(tuple(plan)))}")
    click.echo(f"Results folder: {out_dir}")
    width = max([len(s.label) for s in scores] + [len("pairing")])
    click.echo(f"  {'pairing':<{width}}  {'settings hash':<16}  {'games':>9}  {'stored':>9}  {'to play':>9}")
    for s in scores:  # the label: a sweep plays each pairing once per point
        click.echo(f"  {s.label:<{width}}  {s.config_hash:<16}  {s.planned:>9}  {s.done:>9}  {s.planned - s.done:>9}")
    planned, done = sum(s.planned for s in scores), sum(s.done for s in scores)
    click.echo(f"  {'total':<{width}}  {'':<16}  {planned:>9}  {done:>9}  {planned - done:>9}")
    workers = pool.for_games(planned - done).jobs
    where = (f"the dask cluster at {pool.scheduler}" if pool.scheduler
             else f"{workers} dask worker(s) as Slurm jobs" if pool.slurm
             else f"{workers} {pool.backend} worker(s)")
    click.echo(f"{planned - done} game(s) to play on {where}.")


@contextlib.contextmanager
def resumable(scheduler: str | None) -> Iterator[None]:
    """Add the command that resumes to the one line of a run stopped by a lost resource.

    Raises:
        LostResourceError: the run's, ending with "to resume, run: <the command typed>".
    """
    try:
        yield
    except LostResourceError as exc:
        where = " (with a scheduler running there again)" if scheduler else ""
        raise LostResourceError(f"{exc}; to resume{where}, run: {resume_command()}") from None


def resume_command() -> str:
    """The command line that was typed, rebuilt from the options given explicitly."""
    ctx = click.get_current_context()
    words = ["boopexp", ctx.info_name or ctx.command.name or ""]
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if isinstance(param, click.Argument):
            words.append(str(value))
            continue
        if ctx.get_parameter_source(param.name) in (None, click.core.ParameterSource.DEFAULT):
            continue
        flag = param.opts[0] if param.opts[0].startswith("--") else max(param.opts, key=len)
        if getattr(param, "is_flag", False):
            if value:
                words.append(flag)
        else:
            words += [flag, str(value)]
    return shlex.join(words)


def _score_table(scores: Sequence[PairingScore], tests: Sequence[Any] = ()) -> None:
    """Games done/planned and wins per pairing; a "draws" column only if a game was drawn, a "no
    winner" column only if a game hit the ply limit.

    With SPRT ``tests``, a pairing whose test has decided is marked "stopped (H1)" or "stopped
    (H0)": its games planned are the maximum, not games still owed (docs/runner.md, "SPRT").
    """
    width = max([len(s.label) for s in scores] + [len("pairing")])
    extra = any(s.no_winner for s in scores)
    drawn = any(s.draws for s in scores)
    stopped = {p: t.state.decision for t in tests if t.state.decided for p in t.pairings}
    click.echo(f"  {'pairing':<{width}}  {'games':>9}  {'p1 wins':>7}  {'p2 wins':>7}"
               + ("    draws" if drawn else "") + ("  no winner" if extra else ""))
    for s in scores:
        row = f"  {s.label:<{width}}  {f'{s.done}/{s.planned}':>9}  {s.p1_wins:>7}  {s.p2_wins:>7}"
        row += f"  {s.draws:>7}" if drawn else ""
        row += f"  {s.no_winner:>9}" if extra else ""
        click.echo(row + (f"  stopped ({stopped[s.pairing]})" if s.pairing in stopped else ""))
    done, planned = sum(s.done for s in scores), sum(s.planned for s in scores)
    if stopped:
        owed = sum(s.planned - s.done for s in scores if s.pairing not in stopped)
        click.echo(f"  {'total':<{width}}  {f'{done}/{planned}':>9}  ({owed} still to play: "
                   "the stopped pairings' rest is not played)")
    else:
        click.echo(f"  {'total':<{width}}  {f'{done}/{planned}':>9}")


def _sprt_lines(tests: Sequence[Any]) -> None:
    """One line per SPRT-tested pairing: LLR, bounds, hypotheses and decision."""
    if tests:
        click.echo("  SPRT (games in identity order, pairs of both seatings; boopexp/experiments/sprt.py):")
    for test in tests:
        click.echo(f"    {test.describe()}")


def _forfeit_lines(forfeited: dict[str, dict[str, int]]) -> None:
    """One line per agent that forfeited games (a plugin's illegal move or exception)."""
    for agent, kinds in sorted(forfeited.items()):
        detail = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        click.echo(f"  forfeits: {agent} {sum(kinds.values())} ({detail})")


def _summary(report: RunReport) -> None:
    click.echo(f"Results: {report.games_path} (settings: {report.out_dir / 'config.yaml'})")
    _score_table(report.scores, report.sprt)
    _sprt_lines(report.sprt)
    _forfeit_lines(report.forfeits)
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

    The methods of :class:`boopexp.experiments.runner.RunEvents`; not a subclass of its Progress so that importing
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

    def start(self, planned: int, skipped: int, scores: Sequence[PairingScore]) -> None:
        pass

    def game(self, outcome: GameOutcome, finished: int, planned: int, scores: Sequence[PairingScore]) -> None:
        pass

    def close(self) -> None:
        pass


class QuietProgress(_ProgressBase):
    quiet = True


class LineProgress(_ProgressBase):
    """One plain line per finished game (for logs and pipes)."""

    def start(self, planned: int, skipped: int, scores: Sequence[PairingScore]) -> None:
        todo = planned - skipped
        click.echo(f"{planned} games planned, {skipped} already stored, {todo} to play.")

    def game(self, outcome: GameOutcome, finished: int, planned: int, scores: Sequence[PairingScore]) -> None:
        click.echo(f"[{finished:>{len(str(planned))}}/{planned}] {_describe(outcome)}")


class BarProgress(_ProgressBase):
    """A tqdm bar with ETA and the running score of the pairings being played."""

    def __init__(self) -> None:
        self.bar: Any = None

    def _write(self, text: str, err: bool = False) -> None:
        if self.bar is None:
            click.echo(text, err=err)
        else:
            self.bar.write(text, file=sys.stderr if err else sys.stdout)

    def start(self, planned: int, skipped: int, scores: Sequence[PairingScore]) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=planned, initial=skipped, unit="game", dynamic_ncols=True, file=sys.stdout,
                        smoothing=0.05)

    def game(self, outcome: GameOutcome, finished: int, planned: int, scores: Sequence[PairingScore]) -> None:
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


def new_progress(quiet: bool, quiet_style: type = QuietProgress, bar_style: type = BarProgress,
                 line_style: type = LineProgress) -> Any:
    """A run's display: only the summary with ``--quiet``, else a bar on a terminal and a line a
    game in a log or a pipe (``tune`` passes its own classes of the three styles)."""
    if quiet:
        return quiet_style()
    return bar_style() if sys.stdout.isatty() else line_style()


def _describe(outcome: GameOutcome) -> str:
    task = outcome.task
    head = f"{task.pairing} #{task.game_index}"
    if not outcome.ok:
        return f"{head}: FAILED: {outcome.error}"
    record: Mapping[str, Any] = outcome.record
    winner = record["winner"]
    if winner is None:
        why = record.get("termination", "no winner")
        return f"{head}: no winner ({why}) after {record.get('plies', '?')} plies, {outcome.seconds:.1f} s"
    agent = task.player(winner).name
    how = f" by forfeit ({record.get('termination')})" if "forfeit" in record else ""
    return f"{head}: {winner} ({agent}) wins{how} in {record.get('plies', '?')} plies, {outcome.seconds:.1f} s"


# --------------------------------------------------------------------------------------------
# status


def _print_status(state: FolderStatus) -> None:
    from boopexp.experiments.status import describe_settings

    for text in state.warnings:
        click.echo(f"Warning: {text}", err=True)
    if state.settings is None:
        click.echo(f"{state.folder}: no config.yaml, so no plan; games found per pairing:")
        for s in state.scores:
            click.echo(f"  {s.pairing}: {s.done} games, p1 {s.p1_wins} - p2 {s.p2_wins}"
                       + (f", {s.draws} drawn" if s.draws else ""))
        return
    click.echo(f"{state.folder}: {describe_settings(state.settings)}")
    _score_table(state.scores, state.sprt)
    _sprt_lines(state.sprt)
    _forfeit_lines(state.forfeits)
    if state.other_records:
        click.echo(f"  ({state.other_records} other record(s) in {state.folder} belong to other "
                   "settings or games; not counted)")
