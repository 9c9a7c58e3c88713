"""The Optuna search (seeded TPE, SQLite, resumable) whose trials are games played through the
runner.

Trial ``k`` (the k-th completed trial, 0-based) is the tuned agent at one point of the space,
declared as the variant ``<agent>.t<k>`` and played against each opponent in both seats through
:func:`boopexp.experiments.runner.run_plan` into its own store ``OUT/trials/<k>/``. Its objective is the
candidate's score over decided games (wins / (wins + losses), 0.5 if none was decided).

Reproducible and resumable:

* the study lives in ``OUT/study.sqlite3`` (Optuna's RDB storage, one transaction per step);
* the sampler of trial ``k`` is a fresh TPE sampler seeded from ``SeedSequence(config seed, k)``,
  so its proposal depends only on the completed trials before it, never on how many processes
  came before it;
* a trial left RUNNING by a killed process is finished with its own parameters: its agent name
  and settings are the same, so its games have the same identities and come back from its store
  (nothing is played twice); one whose parameters were not all written is marked FAIL and its
  slot asked again with the same seed and history, hence the same parameters;
* the games' seeds come from their identities, so ``--jobs`` changes nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from boopexp.errors import ConfigError, StoreError
from boopexp.experiments.pool import FailedGame, PoolOptions
from boopexp.experiments.runner import Progress, run_plan
from boopexp.experiments.store import StoreReader, has_games_files, writable_folder
from boopexp.experiments.tally import PairingScore, score
from boopexp.tuning.config import TuneConfig

if TYPE_CHECKING:
    import optuna

STUDY_FILE = "study.sqlite3"
STUDY_NAME = "boopexp-tune"
TRIALS_DIR = "trials"
LOCK_FILE = "tune.lock"
#: The study's user attribute holding :meth:`TuneConfig.search_hash`.
SEARCH_HASH_ATTR = "search_hash"


@dataclass(frozen=True)
class CandidateScore:
    """A candidate's games against its opponents, both seats pooled."""

    planned: int
    done: int
    wins: int
    losses: int
    no_winner: int

    @property
    def decided(self) -> int:
        return self.wins + self.losses

    @property
    def score(self) -> float:
        """Wins over decided games; 0.5 (no information) when no game was decided."""
        return self.wins / self.decided if self.decided else 0.5


@dataclass(frozen=True)
class TrialResult:
    """One completed trial.

    Attributes:
        slot: its place among completed trials (0-based): names its agent and store.
        number: Optuna's trial number (differs from ``slot`` only after a FAIL trial).
        params: the point of the space ``{space name: value}``.
        games: the candidate's games.
    """

    slot: int
    number: int
    params: dict[str, Any]
    games: CandidateScore

    @property
    def objective(self) -> float:
        return self.games.score


@dataclass(frozen=True)
class SearchReport:
    """The result of :func:`run_search`.

    Attributes:
        trials: the completed trials in slot order (previous runs included).
        played: games played by this run.
        interrupted: stopped by Ctrl-C/SIGTERM (the current trial stays RUNNING: a rerun finishes it).
        stopped_by: the signal that stopped it, or None.
        failed: games that could not be played (the current trial stays RUNNING).
        importances: Optuna's parameter importances (PED-ANOVA), or None if unavailable.
    """

    out_dir: Path
    trials: tuple[TrialResult, ...]
    wanted: int
    played: int = 0
    interrupted: bool = False
    failed: tuple[FailedGame, ...] = ()
    importances: dict[str, float] | None = field(default=None)
    stopped_by: int | None = None

    @property
    def complete(self) -> bool:
        return not self.interrupted and not self.failed and len(self.trials) >= self.wanted

    def best(self) -> TrialResult | None:
        """The trial with the highest objective (the earliest on ties)."""
        return max(self.trials, key=lambda t: (t.objective, -t.slot), default=None)


class TuneProgress(Progress):
    """Receives the events of a tuning: a run's events for each trial's games, plus these."""

    def stage(self, text: str) -> None:
        """A stage of the tuning begins (one line)."""

    def trial_start(self, slot: int, wanted: int, params: Mapping[str, Any]) -> None:
        """Trial ``slot`` (0-based) of ``wanted`` starts with ``params``."""

    def trial_end(self, result: TrialResult, best: TrialResult) -> None:
        """A trial is complete; ``best`` is the best so far (maybe itself)."""


def trial_agent(config: TuneConfig, slot: int) -> str:
    """The agent name of trial ``slot``: ``<agent>.t<slot>``."""
    return f"{config.agent}.t{slot}"


def trial_dir(out_dir: str | Path, slot: int) -> Path:
    """The store folder of trial ``slot``."""
    return Path(out_dir) / TRIALS_DIR / f"{slot:04d}"


def candidate_score(scores: Sequence[PairingScore], name: str) -> CandidateScore:
    """Pool the pairings in which agent ``name`` plays, from its side."""
    planned = done = wins = losses = no_winner = 0
    for s in scores:
        if name not in (s.p1, s.p2):
            continue
        mine, theirs = (s.p1_wins, s.p2_wins) if s.p1 == name else (s.p2_wins, s.p1_wins)
        planned += s.planned
        done += s.done
        wins += mine
        losses += theirs
        no_winner += s.no_winner
    return CandidateScore(planned, done, wins, losses, no_winner)


def stored_score(plan, directory: str | Path, name: str) -> CandidateScore:
    """Candidate ``name``'s games of ``plan`` that the store in ``directory`` holds."""
    records = StoreReader(directory).outcomes().records() if Path(directory).is_dir() else []
    return candidate_score(score([p.entry() for p in plan], records), name)


def distributions(config: TuneConfig) -> dict[str, optuna.distributions.BaseDistribution]:
    """Optuna's distribution of every search dimension."""
    from optuna.distributions import FloatDistribution, IntDistribution

    return {
        p.name: (IntDistribution(int(p.low), int(p.high), log=p.log) if p.kind == "int"
                 else FloatDistribution(float(p.low), float(p.high), log=p.log))
        for p in config.space
    }


def sampler_seed(config: TuneConfig, slot: int) -> int:
    """The seed of trial ``slot``'s sampler: ``SeedSequence(config seed, slot)``, 32 bits."""
    return int(np.random.SeedSequence([config.experiment.settings.seed, slot]).generate_state(1, dtype=np.uint32)[0])


def make_sampler(config: TuneConfig, slot: int) -> optuna.samplers.BaseSampler:
    """A fresh TPE sampler for trial ``slot`` (its proposal depends only on the seed and history)."""
    import optuna

    return optuna.samplers.TPESampler(seed=sampler_seed(config, slot), n_startup_trials=config.startup_trials)


def open_study(config: TuneConfig, out_dir: str | Path) -> optuna.Study:
    """Create or load the study in ``OUT/study.sqlite3``.

    Raises:
        ConfigError: the study was made under other search settings (then nothing is changed).
    """
    import optuna

    path = Path(out_dir) / STUDY_FILE
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    storage = f"sqlite:///{path.resolve()}"
    if existed:
        try:
            study = optuna.load_study(study_name=STUDY_NAME, storage=storage)
        except KeyError:
            raise StoreError(f"{path} holds no boopexp study; remove it or use another --out") from None
        found = study.user_attrs.get(SEARCH_HASH_ATTR)
        if found is not None and found != config.search_hash():
            raise ConfigError(
                f"{path} holds a study made with other search settings "
                f"(hash {found}, this config {config.search_hash()});"
                " only tune.trials and tune.confirm may change on a resume: use another --out"
            )
        if found is None and study.get_trials(deepcopy=False):
            raise StoreError(f"{path} holds a study without its settings hash; remove it or use another --out")
    else:
        study = optuna.create_study(study_name=STUDY_NAME, storage=storage, direction="maximize",
                                    load_if_exists=True)
    if SEARCH_HASH_ATTR not in study.user_attrs:
        study.set_user_attr(SEARCH_HASH_ATTR, config.search_hash())
    return study


def completed_trials(config: TuneConfig, study: optuna.Study, out_dir: str | Path) -> tuple[TrialResult, ...]:
    """The study's COMPLETE trials in order, with their games read back from their stores."""
    from optuna.trial import TrialState

    out = []
    for slot, t in enumerate(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))):
        exp = trial_experiment(config, slot, t.params)
        games = stored_score(exp.plan(), trial_dir(out_dir, slot), trial_agent(config, slot))
        out.append(TrialResult(slot, t.number, dict(t.params), games))
    return tuple(out)


def trial_experiment(config: TuneConfig, slot: int, params: Mapping[str, Any]):
    """The experiment of trial ``slot``: its candidate against every opponent, both seats."""
    return config.with_candidates({trial_agent(config, slot): params}, config.opponents, config.games_per_side)


def importances(study: optuna.Study) -> dict[str, float] | None:
    """Optuna's parameter importances (PED-ANOVA), or None when it cannot say."""
    import optuna
    from optuna.trial import TrialState

    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if len(complete) < 2 or len({t.value for t in complete}) < 2:
        return None
    try:
        # PED-ANOVA needs nothing beyond Optuna (fANOVA, the default before Optuna 5, needs scikit-learn).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ExperimentalWarning in Optuna 4
            evaluator = optuna.importance.PedAnovaImportanceEvaluator()
            found = optuna.importance.get_param_importances(study, evaluator=evaluator)
    except (AttributeError, ImportError, RuntimeError, ValueError, ZeroDivisionError):  # pragma: no cover
        return None
    return {k: float(v) for k, v in found.items()}


def check_tune_folder(out: Path) -> None:
    """Refuse a tuning's folder that is a run's store: the tuning's files (study, trials, outputs)
    would be written beside that run's games (a tuning keeps its games in per-trial stores below).

    Raises:
        ConfigError: ``out`` holds games.jsonl or sealed segments (nothing is written).
    """
    if has_games_files(out):
        raise ConfigError(f"--out {str(out)!r} is a run's store (it holds games.jsonl or sealed segments), "
                          "not a tuning's folder; choose another --out")


def describe(config: TuneConfig, out_dir: str | Path) -> list[str]:
    """Lines saying what ``boopexp tune`` would do in ``out_dir`` (``--dry-run``); writes nothing."""
    import optuna
    from optuna.trial import TrialState

    check_tune_folder(Path(out_dir))

    space = ", ".join(f"{p.name} {p.low}..{p.high}{' (log)' if p.log else ''}" for p in config.space)
    c = config.confirm
    lines = [
        f"Dry run (nothing is played or written): tune {config.name}, agent {config.agent}, "
        f"seed {config.experiment.settings.seed}",
        f"Space: {space}",
        f"Trials: {config.trials} x {config.games_per_trial} games against {', '.join(config.opponents)} (both seats); "
        f"search settings hash {config.search_hash()}",
        f"Confirmation: top {c.top} x {c.games} games against {c.baseline}, one-sided exact binomial, "
        f"Holm, alpha {c.alpha}",
    ]
    path = Path(out_dir) / STUDY_FILE
    if not path.exists():
        return lines + [f"Study: {path} does not exist yet: {config.trials} trial(s) to play."]
    with _quiet_optuna():
        study = optuna.load_study(study_name=STUDY_NAME, storage=f"sqlite:///{path.resolve()}")
        found = study.user_attrs.get(SEARCH_HASH_ATTR)
        trials = study.get_trials(deepcopy=False)
    if found != config.search_hash():
        return lines + [f"Study: {path} was made with other search settings (hash {found}): a run would be refused."]
    done = sum(t.state == TrialState.COMPLETE for t in trials)
    running = sum(t.state == TrialState.RUNNING for t in trials)
    return lines + [f"Study: {path}: {done} trial(s) complete, {running} to finish, "
                    f"{max(config.trials - done - running, 0)} to ask."]


def run_search(config: TuneConfig, out_dir: str | Path, pool: PoolOptions | None = None, *,
               progress: TuneProgress | None = None) -> SearchReport:
    """Complete ``config.trials`` trials in ``out_dir`` (resuming whatever is there).

    Args:
        pool: how games are played (:func:`boopexp.experiments.runner.run_plan`, for each trial).
        progress: receives the run events of every trial's games and the trial events.

    Raises:
        ConfigError: the study in ``out_dir`` was made under other search settings.
        StoreError: a store cannot be read, or another process tunes into ``out_dir``.
    """
    from optuna.trial import TrialState

    progress = progress or TuneProgress()
    out = Path(out_dir)
    check_tune_folder(out)
    with writable_folder(out):  # one line, as for run's --out, before anything is written
        out.mkdir(parents=True, exist_ok=True)
    dists = distributions(config)
    played = 0
    with _quiet_optuna(), _locked(out / LOCK_FILE):
        study = open_study(config, out)
        results = list(completed_trials(config, study, out))

        def finish(slot: int, number: int, params: Mapping[str, Any]) -> SearchReport | None:
            """Play trial ``slot``'s missing games and tell the study; a report if it stopped."""
            nonlocal played
            progress.trial_start(slot, config.trials, params)
            exp = trial_experiment(config, slot, params)
            report = run_plan(exp, exp.plan(), trial_dir(out, slot), pool, progress=progress)
            played += report.played
            if report.interrupted or report.failed or not report.complete:
                return SearchReport(out, tuple(results), config.trials, played,
                                    interrupted=report.interrupted, failed=report.failed,
                                    stopped_by=report.stopped_by)
            result = TrialResult(slot, number, dict(params), candidate_score(report.scores, trial_agent(config, slot)))
            study.tell(number, result.objective)
            results.append(result)
            progress.trial_end(result, max(results, key=lambda t: (t.objective, -t.slot)))
            return None

        def n_complete(before: int | None = None) -> int:
            return sum(1 for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                       if before is None or t.number < before)

        try:
            for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
                if set(t.params) != set(dists):  # killed inside ask(): its slot is asked again
                    study.tell(t.number, state=TrialState.FAIL)
                    continue
                stopped = finish(n_complete(t.number), t.number, t.params)
                if stopped is not None:
                    return stopped
            while (slot := n_complete()) < config.trials:
                study.sampler = make_sampler(config, slot)
                trial = study.ask(dists)
                stopped = finish(slot, trial.number, trial.params)
                if stopped is not None:
                    return stopped
        except KeyboardInterrupt:  # Ctrl-C between two trials' games (run_plan handles it during them)
            return SearchReport(out, tuple(results), config.trials, played, interrupted=True,
                                stopped_by=int(signal.SIGINT))
        return SearchReport(out, tuple(results), config.trials, played, importances=importances(study))


@contextlib.contextmanager
def _quiet_optuna() -> Iterator[None]:
    """Optuna logs every trial at INFO; our progress says it once, in our words."""
    import optuna

    previous = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        yield
    finally:
        optuna.logging.set_verbosity(previous)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An advisory lock on the tuning folder: two tunings into one study would interleave trials."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with writable_folder(path.parent):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"{path.parent} is being tuned by another boopexp process (lock {path}); "
                             "wait for it or use another --out") from None
        yield
    finally:
        os.close(fd)
