"""Exact statistics from scipy.stats: Wilson, Fisher, Boschloo; the score of games with draws.

Why an exact two-sample test (and not a binomial test against the paper's rate): the paper's win
counts are themselves a sample of 50 or 100 games, not a known true rate. A one-sample binomial
test would treat 96/100 as the exact probability and call far too many honest reproductions
"different". Both tests ask the symmetric question — could both 2×2 rows (ours, the paper's)
come from one common win probability?

* **Fisher** conditions on both margins (hypergeometric). Two-sided p = the sum of the
  probabilities of every table no more likely than the observed one (R's ``fisher.test``;
  SciPy compares with a relative tolerance of 1e-7, as R does). Exact, but conservative when
  the rows are samples of a fixed size (ours: n games, the paper's: 50 or 100): the conditional
  distribution is discrete, so the test's real level is often well below 5%.
* **Boschloo** conditions on the row sizes only (two binomials, the design of both
  experiments), uses Fisher's one-sided p-value as its statistic and takes the supremum over
  the common win probability (the nuisance parameter). It is uniformly more powerful than
  Fisher's test at the same level. SciPy's two-sided p-value is twice the smaller one-sided
  p-value, clipped to 1 (a different convention from Fisher's two-sided p).

The wrappers only add input checks and the degenerate cases (an empty row or column: nothing to
test, p = 1). SciPy is imported inside the functions so that loading the report stays cheap.

**Boschloo at large n.** SciPy's Boschloo sums over every 2×2 table with the two samples' sizes,
(n1 + 1)(n2 + 1) of them, at each of 32 values of the common rate: time and memory grow with that
product (0.05 s for 100 games against the paper's 100, 43 s for 10,000 against 100, about 40 min
for 100,000, more than a day for a million). Above :data:`BOSCHLOO_MAX_TABLES` tables
(:func:`boschloo_within_reach`) the tables show :func:`boschloo_bound` instead, and say so
(:func:`boschloo_bound_note`): Fisher's one-sided p, which bounds Boschloo's from above. No
large-sample test replaces Boschloo here: the paper's sample stays at 50 or 100 games, often with
rates near 100%, where the normal approximations stray from the exact tests (docs/tables.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

#: Two-sided 95% normal quantile, Φ⁻¹(0.975).
Z95 = 1.959963984540054

#: Significance level of the "consistent" / "differs" verdicts.
ALPHA = 0.05

#: The most 2×2 tables, (n1 + 1)(n2 + 1), for which Boschloo's exact test is computed (about 5 s
#: of CPU a call at this size): every committed table and claim is below it (the largest, the
#: robustness study's C7b mirrors, 390 × 396 tables; Tables I and II at most 101 × 101), and a
#: Table I row of up to 2,474 games against the paper's 100 stays exact.
BOSCHLOO_MAX_TABLES = 250_000


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (``scipy.stats.binomtest(...).proportion_ci``).

    Args:
        successes: number of successes, 0 <= successes <= n.
        n: number of trials; 0 gives (nan, nan).
        confidence: confidence level (default 95%).

    Returns:
        (low, high), both in [0, 1]; exactly 0.0 at 0/n and 1.0 at n/n.

    Raises:
        ValueError: negative counts or successes > n.
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes!r}, n={n!r}")
    if n == 0:
        return (math.nan, math.nan)
    from scipy.stats import binomtest

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    # Clamp: at 0/n and n/n the formula touches the bound up to rounding.
    low = 0.0 if successes == 0 else max(0.0, float(ci.low))
    high = 1.0 if successes == n else min(1.0, float(ci.high))
    return (low, high)


def score_interval(wins: int, draws: int, losses: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """The mean score of some games, a win 1, a draw ½, a loss 0, and its ``confidence`` interval:
    (score, low, high), clipped to [0, 1]; (nan, nan, nan) without games.

    The games are a trinomial sample; the interval is Student's t on the mean of the games'
    scores with their sample variance (``statsmodels.stats.weightstats.DescrStatsW`` on the three
    score values weighted by their counts, ``tconfint_mean``): the estimate engine testers report
    for a score with draws (cutechess, fastchess's trinomial), and, unlike a Wilson interval on
    wins + draws/2 "successes", it counts a draw's smaller variance instead of treating a half
    point as half a Bernoulli trial. Games of one score only (all draws, say) have no variance:
    the interval is the point; one game, [0, 1]. Without draws the tables keep Wilson's interval
    (:func:`wilson_interval`).

    Raises:
        ValueError: a negative count.
    """
    if min(wins, draws, losses) < 0:
        raise ValueError(f"need non-negative counts, got wins={wins!r}, draws={draws!r}, losses={losses!r}")
    n = wins + draws + losses
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = (wins + 0.5 * draws) / n
    if n == 1:  # no variance to estimate: the interval is every score
        return (mean, 0.0, 1.0)
    if max(wins, draws, losses) == n:
        return (mean, mean, mean)
    from statsmodels.stats.weightstats import DescrStatsW

    low, high = DescrStatsW([0.0, 0.5, 1.0], weights=[losses, draws, wins]).tconfint_mean(alpha=1.0 - confidence)
    return (mean, max(0.0, float(low)), min(1.0, float(high)))


def pair_score(zero: int, half: int, one: int) -> tuple[float, float]:
    """The mean pair score of trinomial pair counts and its standard error.

    A pair (game i of "A vs B" and of "B vs A", docs/openings.md) scores A 0, ½ or 1; ``zero``,
    ``half`` and ``one`` count the decided pairs of each score. Returns (mean, standard error of
    the mean) from the pairs' sample variance (ddof 1), fastchess's pentanomial estimate: the two
    games of a pair enter together, so their correlation (a biased opening) is in the variance.
    (nan, nan) without pairs; the standard error is nan with one pair.
    """
    n = zero + half + one
    if n <= 0:
        return (math.nan, math.nan)
    mean = (0.5 * half + one) / n
    if n == 1:
        return (mean, math.nan)
    variance = (zero * mean**2 + half * (0.5 - mean) ** 2 + one * (1.0 - mean) ** 2) / (n - 1)
    return (mean, math.sqrt(variance / n))


def _counts(table) -> tuple[int, int, int, int]:
    """The four counts of a 2×2 table, checked: non-negative integers."""
    try:
        (a, b), (c, d) = table
    except (TypeError, ValueError):
        raise ValueError(f"need a 2x2 table [[a, b], [c, d]], got {table!r}") from None
    for x in (a, b, c, d):
        if x is None or isinstance(x, bool) or not float(x).is_integer() or x < 0:
            raise ValueError(f"2x2 table counts must be non-negative integers, got {table!r}")
    return int(a), int(b), int(c), int(d)


def _degenerate(a: int, b: int, c: int, d: int) -> bool:
    """An empty row or column: every test says p = 1 (nothing to compare)."""
    return a + b == 0 or c + d == 0 or a + c == 0 or b + d == 0


def fisher_exact(table: tuple[tuple[int, int], tuple[int, int]] | list[list[int]]) -> float:
    """Two-sided p-value of Fisher's exact test on a 2×2 table [[a, b], [c, d]] (``scipy.stats.fisher_exact``).

    Args:
        table: non-negative integer counts, e.g. [[our wins, our losses], [paper wins, paper losses]].

    Returns:
        The p-value in [0, 1]; 1.0 when a margin is zero (nothing to test).

    Raises:
        ValueError: a count that is negative or not an integer, or not a 2×2 table.
    """
    from scipy.stats import fisher_exact as _fisher

    return _two_sided_p(table, _fisher, samples_as_columns=False)


def boschloo_exact(table: tuple[tuple[int, int], tuple[int, int]] | list[list[int]]) -> float:
    """Two-sided p-value of Boschloo's exact test on a 2×2 table whose rows are the two samples.

    ``scipy.stats.boschloo_exact`` with its defaults (two-sided = twice the smaller one-sided
    p-value, clipped to 1; 32 sampling points for the nuisance parameter's supremum). SciPy takes
    each *column* of its table as one binomial sample, so the rows given here are passed to it
    transposed (the two orientations give different p-values: the unconditional test fixes the
    samples' sizes, not the outcomes' totals).

    Args, Returns, Raises: as :func:`fisher_exact` (``table``: one row per sample).
    """
    from scipy.stats import boschloo_exact as _boschloo

    return _two_sided_p(table, _boschloo, samples_as_columns=True)


def boschloo_within_reach(n1: int, n2: int) -> bool:
    """Whether Boschloo's exact test of samples of ``n1`` and ``n2`` is computed: at most
    :data:`BOSCHLOO_MAX_TABLES` tables (module docstring)."""
    return (n1 + 1) * (n2 + 1) <= BOSCHLOO_MAX_TABLES


def boschloo_bound(table: tuple[tuple[int, int], tuple[int, int]] | list[list[int]],
                   alternative: str = "two-sided") -> float:
    """What stands for Boschloo's p-value beyond :data:`BOSCHLOO_MAX_TABLES`: Fisher's one-sided
    p-value (``alternative`` "greater": the first row's rate is the larger), and for "two-sided"
    twice the smaller one, clipped to 1 (Boschloo's two-sided convention).

    It is an upper bound of Boschloo's p-value: Boschloo's statistic is Fisher's one-sided p and
    its p-value the supremum, over the common rate, of the chance of a Fisher p at most the
    observed one, which Fisher's validity bounds by that p. So a bound below a level means
    Boschloo's p is below it too; a bound above it says nothing of Boschloo's. Fisher's test
    costs about a millisecond at any n (the hypergeometric distribution, ``scipy.stats.fisher_exact``).

    Args, Raises: as :func:`boschloo_exact` (``table``: one row per sample; transposing it does
    not change Fisher's p).
    """
    from scipy.stats import fisher_exact as _fisher

    a, b, c, d = _counts(table)
    if _degenerate(a, b, c, d):
        return 1.0
    if alternative != "two-sided":
        return min(1.0, float(_fisher([[a, b], [c, d]], alternative=alternative).pvalue))
    one_sided = min(float(_fisher([[a, b], [c, d]], alternative=alt).pvalue) for alt in ("less", "greater"))
    return min(1.0, 2.0 * one_sided)


def boschloo_p(table: tuple[tuple[int, int], tuple[int, int]] | list[list[int]]) -> tuple[float, bool]:
    """:func:`boschloo_exact` of ``table`` (rows: the samples) and True when within reach
    (:func:`boschloo_within_reach`), else :func:`boschloo_bound` and False: the p-value and
    whether it is Boschloo's, decided once, on the table's own row sums (a caller's note on the
    bound reads the flag, never a reach check of its own)."""
    a, b, c, d = _counts(table)
    if boschloo_within_reach(a + b, c + d):
        return boschloo_exact(table), True
    return boschloo_bound(table), False


def boschloo_or_bound(table: tuple[tuple[int, int], tuple[int, int]] | list[list[int]]) -> float:
    """The p-value of :func:`boschloo_p`: Boschloo's when within reach, else its Fisher bound."""
    return boschloo_p(table)[0]


def boschloo_bound_note(rows: list[str]) -> str:
    """The note of a table whose ``rows`` show :func:`boschloo_bound` instead of Boschloo's p."""
    return (
        "p (Boschloo) for " + ", ".join(rows) + ": not Boschloo's test, which sums over every 2x2 table "
        f"of the two samples' sizes, (n1 + 1)(n2 + 1) of them, more than {BOSCHLOO_MAX_TABLES:,} here "
        "(minutes to hours of computing); shown instead is twice the smaller one-sided Fisher p, "
        "an upper bound of Boschloo's two-sided p (below 0.05, Boschloo's p is too; above, it may "
        "not be)."
    )


def _two_sided_p(table: tuple[tuple[int, int], tuple[int, int]] | list[list[int]], test: Callable[..., Any], *,
                 samples_as_columns: bool) -> float:
    """A scipy.stats exact test's two-sided p-value on ``table``, checked, 1.0 when a margin is zero,
    clipped to 1; ``samples_as_columns``: the test takes each column as a sample (the table's rows
    are passed transposed)."""
    a, b, c, d = _counts(table)
    if _degenerate(a, b, c, d):
        return 1.0
    cells = [[a, c], [b, d]] if samples_as_columns else [[a, b], [c, d]]
    return min(1.0, float(test(cells, alternative="two-sided").pvalue))


def verdict(p_value: float, alpha: float = ALPHA) -> str:
    """"consistent" if p >= alpha, "differs" if p < alpha, "—" if the p-value is missing."""
    if p_value is None or math.isnan(p_value):
        return "—"
    return "consistent" if p_value >= alpha else "differs"

