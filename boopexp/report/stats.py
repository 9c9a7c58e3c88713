"""Small exact statistics for win counts: Wilson score intervals and Fisher's exact test.

Why Fisher's exact test (and not a binomial test against the paper's rate): the paper's win
counts are themselves a sample of 50 or 100 games, not a known true rate. A one-sample binomial
test would treat 96/100 as the exact probability and call far too many honest reproductions
"different". Fisher's test asks the symmetric question — could both 2×2 rows (ours, the
paper's) come from one common win probability? — conditioning on the margins, so it is exact
for small counts and needs no large-sample approximation. The two-sided p-value is the sum of
the probabilities of every table no more likely than the observed one (the usual definition,
the same as R's ``fisher.test`` and SciPy's ``fisher_exact``), "no more likely" meaning at most
(1 + 1e-7) times the observed probability, the relative tolerance R uses. The weights are exact
integers here, so ties are exact anyway; the tolerance keeps the definition identical to R's.

Everything is written with :mod:`math` only (no SciPy dependency): hypergeometric
probabilities are ratios of exact integer binomial coefficients.
"""

from __future__ import annotations

import math

#: Two-sided 95% normal quantile, Φ⁻¹(0.975).
Z95 = 1.959963984540054

#: Significance level of the "consistent" / "differs" verdicts.
ALPHA = 0.05

#: Relative tolerance when comparing a table's probability with the observed one.
FISHER_RTOL = 1e-7


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion.

    Args:
        successes: number of successes, 0 <= successes <= n.
        n: number of trials; 0 gives (nan, nan).
        z: normal quantile (default 95%).

    Returns:
        (low, high), both in [0, 1].

    Raises:
        ValueError: negative counts or successes > n.
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes!r}, n={n!r}")
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denom
    # Clamp: at 0/n and n/n the formula touches the bound up to rounding.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def fisher_exact(table: tuple[tuple[int, int], tuple[int, int]] | list[list[int]]) -> float:
    """Two-sided p-value of Fisher's exact test on a 2×2 table [[a, b], [c, d]].

    Two-sided = sum of the hypergeometric probabilities (margins fixed) of every table whose
    probability is <= that of the observed table, times (1 + 1e-7).

    Args:
        table: non-negative integer counts, e.g. [[our wins, our losses], [paper wins, paper losses]].

    Returns:
        The p-value in [0, 1]; 1.0 when a margin is zero (nothing to test).

    Raises:
        ValueError: a count that is negative or not an integer.
    """
    try:
        (a, b), (c, d) = table
    except (TypeError, ValueError):
        raise ValueError(f"need a 2x2 table [[a, b], [c, d]], got {table!r}") from None
    for x in (a, b, c, d):
        if isinstance(x, bool) or not float(x).is_integer() or x < 0:
            raise ValueError(f"2x2 table counts must be non-negative integers, got {table!r}")
    a, b, c, d = int(a), int(b), int(c), int(d)
    row1, row2, col1 = a + b, c + d, a + c
    n = row1 + row2
    if row1 == 0 or row2 == 0 or col1 == 0 or col1 == n:
        return 1.0
    lo, hi = max(0, col1 - row2), min(col1, row1)
    total = math.comb(n, col1)
    # Exact integer weights: P(x) = C(row1, x) C(row2, col1 - x) / C(n, col1).
    weights = [math.comb(row1, x) * math.comb(row2, col1 - x) for x in range(lo, hi + 1)]
    observed = weights[a - lo]
    # Integer comparison w <= observed * (1 + 1e-7): exact, and no float overflow for large n.
    scale = round(1 / FISHER_RTOL)
    p = sum(w for w in weights if w * scale <= observed * (scale + 1)) / total
    return min(1.0, p)


def verdict(p_value: float, alpha: float = ALPHA) -> str:
    """"consistent" if p >= alpha, "differs" if p < alpha, "—" if the p-value is missing."""
    if p_value is None or math.isnan(p_value):
        return "—"
    return "consistent" if p_value >= alpha else "differs"
