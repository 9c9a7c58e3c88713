"""**The** tests of a claim on counts (``Outcome``: estimate, interval, primary, opposite and
negligible-effect p), conjunctions, Holm over a family (``judge_family``), the verdict rules, the
sensitivity labels.

The tests and verdicts of every study's pre-registered claims, on counts (docs/robustness-plan.md §3).

Every claim, at one condition, comes down to one :class:`Outcome`: an estimate with its 95%
interval and three p-values, each for one question the verdict rules ask:

* ``p_value`` — the **primary** test (H1: the claim): a one-sided test in the claimed direction
  for a directional claim, two one-sided tests (TOST) for an equivalence claim. Holm-adjusted
  across the family, it decides ``supported``.
* ``p_contra`` — a directional claim's test **in the opposite direction**; Holm-adjusted across
  the family (the family's own opposite tests), it decides ``contradicted``. An equivalence
  claim is contradicted instead when its 95% interval lies entirely outside the margin
  (``outside``).
* ``p_weak`` — what makes a claim ``not supported``: for a directional claim, the TOST that the
  effect is negligible (inside the claim's margin: ±50 Elo for ratings, ±5 points for rates,
  ±0.1 logit per doubling for C8); for an equivalence claim, the two-sided test of no difference
  (the effect is real but not shown to exceed the margin). Holm-adjusted across the family.

Verdicts (:func:`verdict`): ``supported`` if the Holm-adjusted primary p < 0.05; else
``contradicted`` if the interval is outside the margin (equivalence) or the Holm-adjusted
opposite test rejects (directional); else ``not supported`` if the Holm-adjusted ``p_weak``
< 0.05; else ``inconclusive``.

Conjunctions (:func:`conjunction`) are intersection–union tests: the primary p is the largest
component p (no correction needed inside); the claim fails as soon as one component fails, so
the secondary p-values are the smallest component ones, Bonferroni-corrected inside the
conjunction (× the number of components that have one), and an equivalence conjunction is
outside as soon as one component is.

The knowledge study (docs/knowledge-plan.md §5) tests on **pairs** of games from one opening
(:func:`pairs_above`): the exact sign test on the pairs not split, the TOST on the mean pair
score (:func:`boopexp.analysis.stats.pair_score`), under the same conjunction, Holm and verdicts.

The tests are scipy.stats' ``binomtest`` (exact binomial), statsmodels' ``Logit`` and the
bootstrap of :mod:`boopexp.analysis.ratings_bootstrap`; Holm is statsmodels' ``multipletests``.
"""

from __future__ import annotations

import functools
import gc
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from boopexp.analysis.stats import (
    BOSCHLOO_MAX_TABLES,
    Z95,
    boschloo_bound,
    boschloo_within_reach,
    pair_score,
    wilson_interval,
)
from boopexp.experiments.elo import expected_score

#: Family-wise level.
ALPHA = 0.05

VERDICTS = ("supported", "not supported", "contradicted", "inconclusive")

#: Margins of the plan (§1, §3).
ELO_MARGIN = 50.0
RATE_MARGIN = 0.05
SLOPE_MARGIN = 0.1
#: The negligible-effect margin on a mean pair score (docs/knowledge-plan.md §5): ±50 Elo as a
#: score, expected_score(50) − ½ = 0.07146 (the plan writes it 0.0715).
PAIR_SCORE_MARGIN = expected_score(ELO_MARGIN) - 0.5


@dataclass(frozen=True)
class Outcome:
    """One test of one claim (or one component of a conjunction) at one condition.

    Attributes:
        claim: the claim id (``C1`` … ``C8``, ``C4-S``, …); component: what this part tests.
        kind: "directional" or "equivalence" (decides the verdict rules).
        estimate, ci_low, ci_high: the effect and its 95% interval (a rate, an Elo difference
            or a slope, as ``test`` says).
        p_value, p_contra, p_weak: see the module docstring (NaN: no such test).
        outside: an equivalence claim's 95% interval lies entirely outside its margin.
        n: decided games behind the estimate; no_winner: games without a winner left out.
        test: the test, in words.
    """

    claim: str
    component: str
    kind: str
    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    p_contra: float
    p_weak: float
    outside: bool
    n: int
    no_winner: int
    test: str


def _binom(k: int, n: int, p: float, alternative: str) -> float:
    from scipy.stats import binomtest

    if n == 0:
        return math.nan
    return float(binomtest(int(k), int(n), p, alternative=alternative).pvalue)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson 95% interval of k/n; (nan, nan) without games."""
    return wilson_interval(k, n) if n else (math.nan, math.nan)


def rate_above(claim: str, component: str, k: int, n: int, no_winner: int, *, p0: float = 0.5,
               margin: float = RATE_MARGIN, what: str = "win rate") -> Outcome:
    """A directional rate claim: H1 p > p0 by the exact one-sided binomial test; Wilson 95% interval.

    The opposite test is H1 p < p0; the negligible-effect test is the binomial TOST of
    |p − p0| < margin.
    """
    low, high = wilson(k, n)
    weak = max(_binom(k, n, p0 - margin, "greater"), _binom(k, n, p0 + margin, "less")) if n else math.nan
    return Outcome(
        claim=claim, component=component, kind="directional",
        estimate=k / n if n else math.nan, ci_low=low, ci_high=high,
        p_value=_binom(k, n, p0, "greater"), p_contra=_binom(k, n, p0, "less"), p_weak=weak,
        outside=False, n=n, no_winner=no_winner,
        test=f"{component}: {what} {k}/{n}, exact binomial one-sided H0 p <= {p0:g}",
    )


def pairs_above(claim: str, component: str, zero: int, half: int, one: int, left_out: int, *,
                margin: float = PAIR_SCORE_MARGIN) -> Outcome:
    """A directional claim on pairs of games from one opening (docs/knowledge-plan.md §5): A beats B.

    Args:
        zero, half, one: the decided pairs A scored 0 (B won both games), ½ (a split) and 1.
        left_out: pairs left out because a game of theirs has no winner.

    The primary test is the exact sign test on the pairs that are not split: k = ``one`` of
    n = ``one + zero``, ``binomtest(k, n, 0.5, "greater")`` (McNemar's exact conditional test of
    the paired design); the opposite test is the same with "less". The estimate is A's mean pair
    score (= its score over the decided pairs' games) with a 95% normal interval from the pairs'
    sample variance (:func:`boopexp.analysis.stats.pair_score`); the negligible-effect test is
    the TOST |score − ½| < ``margin`` by two one-sided z-tests with that standard error (a
    standard error of 0, every pair scoring the same: p 0 inside the margin, 1 outside).
    ``n`` is the decided pairs behind the estimate, ``no_winner`` the pairs left out.
    """
    from scipy.stats import norm

    k, n = one, one + zero
    score, se = pair_score(zero, half, one)
    if math.isnan(se):
        low = high = weak = math.nan
    else:
        low, high = score - Z95 * se, score + Z95 * se
        if se > 0:
            weak = max(float(norm.sf((score - (0.5 - margin)) / se)), float(norm.cdf((score - (0.5 + margin)) / se)))
        else:
            weak = 0.0 if abs(score - 0.5) < margin else 1.0
    return Outcome(
        claim=claim, component=component, kind="directional", estimate=score, ci_low=low, ci_high=high,
        p_value=_binom(k, n, 0.5, "greater"), p_contra=_binom(k, n, 0.5, "less"), p_weak=weak,
        outside=False, n=zero + half + one, no_winner=left_out,
        test=(f"{component}: pairs won {k} of {n} not split ({half} split, {left_out} left out), exact sign "
              "test one-sided H0 P(win a pair) <= 1/2"),
    )


def share_balanced(claim: str, component: str, k: int, n: int, no_winner: int, *, margin: float) -> Outcome:
    """An equivalence claim on a share: binomial TOST of |p − 0.5| < margin; Wilson 95% interval.

    ``p_weak`` is the two-sided exact binomial test of p = 0.5; ``outside`` when the Wilson
    interval lies entirely outside [0.5 − margin, 0.5 + margin].
    """
    low, high = wilson(k, n)
    tost = max(_binom(k, n, 0.5 - margin, "greater"), _binom(k, n, 0.5 + margin, "less")) if n else math.nan
    return Outcome(
        claim=claim, component=component, kind="equivalence",
        estimate=k / n if n else math.nan, ci_low=low, ci_high=high,
        p_value=tost, p_contra=math.nan, p_weak=_binom(k, n, 0.5, "two-sided"),
        outside=bool(n) and (high < 0.5 - margin or low > 0.5 + margin), n=n, no_winner=no_winner,
        test=f"{component}: P2 share {k}/{n}, exact binomial TOST ±{margin:g}",
    )


def elo_above(claim: str, component: str, point: float, draws: np.ndarray, n: int, no_winner: int,
              *, margin: float = ELO_MARGIN) -> Outcome:
    """A directional rating contrast: H1 contrast > 0, bootstrap p-value and 95% percentile interval."""
    from boopexp.analysis.ratings_bootstrap import p_above, p_below, percentile_interval

    low, high = percentile_interval(draws)
    weak = max(p_above(draws, -margin), p_below(draws, margin))
    return Outcome(
        claim=claim, component=component, kind="directional", estimate=point, ci_low=low, ci_high=high,
        p_value=p_above(draws), p_contra=p_below(draws), p_weak=weak, outside=False, n=n, no_winner=no_winner,
        test=f"{component} > 0 Elo: Bradley–Terry contrast, bootstrap one-sided",
    )


def elo_equivalent(claim: str, component: str, point: float, draws: np.ndarray, n: int, no_winner: int,
                   *, margin: float = ELO_MARGIN) -> Outcome:
    """An equivalence rating contrast: TOST |contrast| < margin on the bootstrap (90% interval inside).

    ``p_weak`` is the two-sided bootstrap test of a zero contrast; ``outside`` when the 95%
    percentile interval lies entirely outside ±margin.
    """
    from boopexp.analysis.ratings_bootstrap import p_above, p_below, percentile_interval

    low, high = percentile_interval(draws)
    two_sided = min(1.0, 2.0 * min(p_above(draws), p_below(draws)))
    return Outcome(
        claim=claim, component=component, kind="equivalence", estimate=point, ci_low=low, ci_high=high,
        p_value=max(p_above(draws, -margin), p_below(draws, margin)), p_contra=math.nan, p_weak=two_sided,
        outside=high < -margin or low > margin, n=n, no_winner=no_winner,
        test=f"|{component}| < {margin:g} Elo: Bradley–Terry contrast, bootstrap TOST",
    )


def share_greater(claim: str, component: str, a: tuple[int, int], b: tuple[int, int], no_winner: int) -> Outcome:
    """H1: share a > share b (two samples), Boschloo's exact test one-sided; Fisher's beside in ``test``.

    Args:
        a, b: (successes, decided games) of each sample.

    ``p_contra`` is Boschloo's test in the other direction; the estimate is the difference of
    the shares with a Newcombe (Wilson-score) 95% interval. Samples too large for Boschloo's test
    (:func:`boopexp.analysis.stats.boschloo_within_reach`) are tested by Fisher's one-sided test,
    an upper bound of Boschloo's p-value, and ``test`` says so.
    """
    from scipy.stats import fisher_exact

    (ka, na), (kb, nb) = a, b
    if not na or not nb:
        return Outcome(claim, component, "directional", math.nan, math.nan, math.nan, math.nan, math.nan,
                       math.nan, False, na + nb, no_winner, f"{component}: no games")
    # scipy's exact 2x2 tests take the two samples as the table's columns.
    table = [[ka, kb], [na - ka, nb - kb]]
    greater, exact = _boschloo(ka, kb, na - ka, nb - kb, "greater")
    less, _ = _boschloo(ka, kb, na - ka, nb - kb, "less")
    fisher = float(fisher_exact(table, alternative="greater").pvalue)
    if exact:
        test = f"Boschloo exact one-sided (Fisher one-sided p = {fisher:.3g})"
    else:
        test = (f"Fisher exact one-sided, an upper bound of Boschloo's p (Boschloo's test not computed: "
                f"{(na + 1) * (nb + 1):,} tables, more than {BOSCHLOO_MAX_TABLES:,})")
    la, ha = wilson_interval(ka, na)
    lb, hb = wilson_interval(kb, nb)
    d = ka / na - kb / nb
    low = d - math.sqrt((ka / na - la) ** 2 + (hb - kb / nb) ** 2)
    high = d + math.sqrt((ha - ka / na) ** 2 + (kb / nb - lb) ** 2)
    return Outcome(
        claim=claim, component=component, kind="directional", estimate=d, ci_low=low, ci_high=high,
        p_value=min(1.0, greater), p_contra=min(1.0, less), p_weak=math.nan, outside=False,
        n=na + nb, no_winner=no_winner,
        test=f"{component}: {ka}/{na} vs {kb}/{nb}, {test}",
    )


@functools.lru_cache(maxsize=64)
def _boschloo(a: int, b: int, c: int, d: int, alternative: str) -> tuple[float, bool]:
    """Boschloo's exact test on [[a, b], [c, d]] (samples in columns), cached: it takes seconds at
    400 + 400 games, and the same table is tested in the default and the 1 s family. Beyond
    reach (:func:`boopexp.analysis.stats.boschloo_within_reach`), Fisher's one-sided p, which
    bounds it from above (:func:`boopexp.analysis.stats.boschloo_bound`). With it, whether the
    p-value is Boschloo's (the one reach check: :func:`share_greater`'s ``test`` reads it)."""
    from scipy.stats import boschloo_exact

    if not boschloo_within_reach(a + c, b + d):
        return boschloo_bound([[a, c], [b, d]], alternative), False
    return float(boschloo_exact([[a, b], [c, d]], alternative=alternative).pvalue), True


def logit_slope_below(claim: str, component: str, win: np.ndarray, log2_budget: np.ndarray, seat: np.ndarray,
                      no_winner: int, *, margin: float = SLOPE_MARGIN) -> Outcome:
    """C8: statsmodels Logit of win on log2(budget) and seat; one-sided Wald test of slope < 0.

    Args:
        win: 1 if the agent won the decided game; log2_budget: its budget; seat: 1 if it moved first.

    The opposite test is slope > 0; the negligible-effect test is the Wald TOST |slope| < margin.
    """
    import statsmodels.api as sm
    from scipy.stats import norm

    n = len(win)
    if n == 0 or len(set(log2_budget.tolist())) < 2:
        return Outcome(claim, component, "directional", math.nan, math.nan, math.nan, math.nan, math.nan,
                       math.nan, False, n, no_winner, f"{component}: fewer than two budgets")
    x = np.column_stack([np.ones(n), log2_budget.astype(float), seat.astype(float)])
    fit = sm.Logit(win.astype(float), x).fit(disp=0, method="newton", maxiter=100)
    slope, se = float(fit.params[1]), float(fit.bse[1])
    z = slope / se
    return Outcome(
        claim=claim, component=component, kind="directional", estimate=slope,
        ci_low=slope - 1.959963984540054 * se, ci_high=slope + 1.959963984540054 * se,
        p_value=float(norm.cdf(z)), p_contra=float(norm.sf(z)),
        p_weak=max(float(norm.sf((slope + margin) / se)), float(norm.cdf((slope - margin) / se))),
        outside=False, n=n, no_winner=no_winner,
        test=f"{component}: Logit(win ~ log2 budget + seat), slope per doubling, one-sided Wald H0 slope >= 0",
    )


def conjunction(claim: str, parts: Sequence[Outcome], kind: str | None = None) -> Outcome:
    """An intersection–union test over ``parts`` (see the module docstring).

    The estimate, interval, n and no_winner shown are those of the deciding component (the one
    with the largest primary p-value; the first one on ties).
    """
    if not parts:
        raise ValueError("a conjunction needs at least one component")
    if any(math.isnan(p.p_value) for p in parts):
        deciding = next(p for p in parts if math.isnan(p.p_value))
        primary = math.nan
    else:
        deciding = max(parts, key=lambda p: p.p_value)
        primary = deciding.p_value

    def smallest(values: list[float]) -> float:
        values = [v for v in values if not math.isnan(v)]
        return min(1.0, len(values) * min(values)) if values else math.nan

    return Outcome(
        claim=claim, component=deciding.component, kind=kind or parts[0].kind,
        estimate=deciding.estimate, ci_low=deciding.ci_low, ci_high=deciding.ci_high,
        p_value=primary, p_contra=smallest([p.p_contra for p in parts]), p_weak=smallest([p.p_weak for p in parts]),
        outside=any(p.outside for p in parts), n=deciding.n, no_winner=deciding.no_winner,
        test=f"all of {len(parts)} (intersection–union, p = the largest); shown: " + deciding.test
        if len(parts) > 1 else deciding.test,
    )


def renamed(outcome: Outcome, claim: str, note: str) -> Outcome:
    """The same test reported under another claim id (C5a is C4's test for E)."""
    return replace(outcome, claim=claim, test=f"{note}: {outcome.test}")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (statsmodels ``multipletests(method="holm")``); NaN stays NaN and is not counted."""
    from statsmodels.stats.multitest import multipletests

    values = list(p_values)
    present = [i for i, p in enumerate(values) if not math.isnan(p)]
    out = [math.nan] * len(values)
    if present:
        # multipletests runs gc.collect() on every Holm call, which costs a tenth of a second
        # with pandas and scipy loaded; frozen objects are skipped, so the collection is instant.
        gc.freeze()
        try:
            adjusted = multipletests([values[i] for i in present], method="holm")[1]
        finally:
            gc.unfreeze()
        for i, p in zip(present, adjusted):
            out[i] = float(p)
    return out


@dataclass(frozen=True)
class Judged:
    """An outcome with its Holm-adjusted p-values and verdict."""

    outcome: Outcome
    condition: str
    p_holm: float
    p_contra_holm: float
    p_weak_holm: float
    verdict: str


def judge_family(condition: str, outcomes: Sequence[Outcome], alpha: float = ALPHA) -> list[Judged]:
    """Holm over one family (the primary, the opposite and the weak p-values each), then the verdicts."""
    primary = holm([o.p_value for o in outcomes])
    contra = holm([o.p_contra for o in outcomes])
    weak = holm([o.p_weak for o in outcomes])
    return [
        Judged(o, condition, p, c, w, verdict(o, p, c, w, alpha))
        for o, p, c, w in zip(outcomes, primary, contra, weak)
    ]


def verdict(outcome: Outcome, p_holm: float, p_contra_holm: float, p_weak_holm: float, alpha: float = ALPHA) -> str:
    """The plan's verdict rules (module docstring); a test that could not run is ``inconclusive``."""
    if not math.isnan(p_holm) and p_holm < alpha:
        return "supported"
    if outcome.outside or (not math.isnan(p_contra_holm) and p_contra_holm < alpha):
        return "contradicted"
    if not math.isnan(p_weak_holm) and p_weak_holm < alpha:
        return "not supported"
    return "inconclusive"


def sensitivity_label(verdicts: Sequence[str], *, missing: str, varies: str, nowhere: str) -> str:
    """A claim's verdicts across the conditions of a sensitivity analysis as one label (the
    robustness plan's rule, the knowledge plan's §3): ``robust`` if supported at every condition,
    ``varies`` (e.g. "profile-dependent") if at some, ``nowhere`` if at none, ``incomplete`` if a
    verdict is ``missing`` (not tested there)."""
    if missing in verdicts:
        return "incomplete"
    if all(v == "supported" for v in verdicts):
        return "robust"
    if any(v == "supported" for v in verdicts):
        return varies
    return nowhere
