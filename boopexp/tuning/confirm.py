"""The confirmation stage: fresh games against the baseline, exact binomial tests, Holm.

The best trial of a noisy search is, by construction, the luckiest: its tuning score is biased
upwards. So the ``top`` best distinct candidates are each re-played ``games`` times (half in each
seat) against the baseline agent, as new agents ``<agent>.c<slot>`` — a new name, so new settings
hashes, so new game identities and seeds: none of the tuning games is reused. For each candidate
the one-sided exact binomial test of H0 "wins over decided games ≤ 1/2" against "> 1/2"
(``scipy.stats.binomtest``, ``alternative="greater"``); Holm's step-down correction over the
candidates (``statsmodels``) keeps the family-wise error at ``alpha``. Only a candidate whose
Holm-adjusted p-value is at most ``alpha`` is confirmed, i.e. reported as an improvement.

Games without a winner (the ply cap) count for neither side, as in the objective.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boopexp.experiments.pool import FailedGame, PoolOptions
from boopexp.experiments.runner import run_plan
from boopexp.tuning.config import TuneConfig
from boopexp.tuning.search import CandidateScore, TrialResult, TuneProgress, candidate_score

CONFIRM_DIR = "confirm"


@dataclass(frozen=True)
class Verdict:
    """One candidate's confirmation.

    Attributes:
        trial: the trial it comes from (params and tuning score).
        agent: its agent name in the confirmation games (``<agent>.c<slot>``).
        games: its confirmation games against the baseline.
        p_value: one-sided exact binomial p-value of wins over decided games.
        p_holm: Holm-adjusted p-value across the candidates.
        confirmed: ``p_holm <= alpha``.
    """

    trial: TrialResult
    agent: str
    games: CandidateScore
    p_value: float
    p_holm: float
    confirmed: bool


@dataclass(frozen=True)
class ConfirmReport:
    """The result of :func:`run_confirmation` (``verdicts`` empty if it stopped early)."""

    out_dir: Path
    baseline: str
    alpha: float
    verdicts: tuple[Verdict, ...]
    played: int = 0
    interrupted: bool = False
    failed: tuple[FailedGame, ...] = ()
    stopped_by: int | None = None

    @property
    def complete(self) -> bool:
        return not self.interrupted and not self.failed

    @property
    def confirmed(self) -> tuple[Verdict, ...]:
        """The confirmed candidates, best confirmation score first."""
        return tuple(sorted((v for v in self.verdicts if v.confirmed), key=lambda v: (-v.games.score, v.trial.slot)))


def confirm_agent(config: TuneConfig, slot: int) -> str:
    """The agent name of trial ``slot``'s candidate in the confirmation: ``<agent>.c<slot>``."""
    return f"{config.agent}.c{slot}"


def pick_candidates(config: TuneConfig, trials: Sequence[TrialResult], top: int) -> tuple[TrialResult, ...]:
    """The ``top`` best trials (earliest first on ties), one per distinct agent setting."""
    seen: set[tuple[tuple[str, Any], ...]] = set()
    out: list[TrialResult] = []
    for t in sorted(trials, key=lambda t: (-t.objective, t.slot)):
        key = tuple(sorted(config.overrides(t.params).items()))
        if key in seen:
            continue
        seen.add(key)
        out.append(t)
        if len(out) == top:
            break
    return tuple(out)


def confirmation_experiment(config: TuneConfig, candidates: Sequence[TrialResult]):
    """Every candidate against the baseline, ``confirm.games / 2`` games in each seat."""
    named = {confirm_agent(config, t.slot): t.params for t in candidates}
    return config.with_candidates(named, (config.confirm.baseline,), config.confirm.games // 2)


def binomial_holm(scores: Sequence[CandidateScore], alpha: float) -> list[tuple[float, float, bool]]:
    """``(p, Holm-adjusted p, confirmed)`` per candidate: one-sided exact binomial tests, Holm.

    ``p`` is ``binomtest(wins, decided, 1/2, alternative="greater")``; a candidate without a
    decided game has ``p = 1``.
    """
    from scipy.stats import binomtest
    from statsmodels.stats.multitest import multipletests

    if not scores:
        return []
    p = [binomtest(s.wins, s.decided, 0.5, alternative="greater").pvalue if s.decided else 1.0 for s in scores]
    reject, p_holm, _, _ = multipletests(p, alpha=alpha, method="holm")
    return [(float(a), float(b), bool(r)) for a, b, r in zip(p, p_holm, reject)]


def run_confirmation(config: TuneConfig, trials: Sequence[TrialResult], out_dir: str | Path,
                     pool: PoolOptions | None = None, *, progress: TuneProgress | None = None) -> ConfirmReport:
    """Play the confirmation games of the best trials into ``OUT/confirm/`` (resumable) and test them
    (``pool``: how games are played, :func:`boopexp.experiments.runner.run_plan`)."""
    progress = progress or TuneProgress()
    settings = config.confirm
    candidates = pick_candidates(config, trials, settings.top)
    store = Path(out_dir) / CONFIRM_DIR
    if not candidates:
        return ConfirmReport(store, settings.baseline, settings.alpha, ())
    progress.stage(
        f"Confirmation: {len(candidates)} candidate(s) x {settings.games} games against {settings.baseline} "
        f"(trials {', '.join(str(t.slot) for t in candidates)})"
    )
    exp = confirmation_experiment(config, candidates)
    report = run_plan(exp, exp.plan(), store, pool, progress=progress)
    if report.interrupted or report.failed or not report.complete:
        return ConfirmReport(store, settings.baseline, settings.alpha, (), report.played,
                             interrupted=report.interrupted, failed=report.failed, stopped_by=report.stopped_by)
    names = [confirm_agent(config, t.slot) for t in candidates]
    scores = [candidate_score(report.scores, n) for n in names]
    tests = binomial_holm(scores, settings.alpha)
    verdicts = tuple(
        Verdict(t, n, s, p, ph, ok) for t, n, s, (p, ph, ok) in zip(candidates, names, scores, tests)
    )
    return ConfirmReport(store, settings.baseline, settings.alpha, verdicts, report.played)
