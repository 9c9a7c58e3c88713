"""Power calculations behind docs/robustness-plan.md (exact binomial; run: python studies/robustness_power.py).

Every number in the plan's "Power" section is printed by this script; nothing here plays games.
"""

from __future__ import annotations

import math

from scipy import stats

ALPHA = 0.05


def elo_to_p(elo: float) -> float:
    """Expected score of a player rated ``elo`` above its opponent (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def critical_value(n: int, p0: float, alpha: float = ALPHA) -> int:
    """The smallest k with P(X >= k) <= alpha for X ~ Binomial(n, p0) (n + 1: no k rejects)."""
    k = int(stats.binom.isf(alpha, n, p0)) + 1
    while k > 0 and stats.binom.sf(k - 2, n, p0) <= alpha:
        k -= 1
    return k


def power_one_sided(n: int, p0: float, p_true: float, alpha: float = ALPHA) -> float:
    """Power of the exact one-sided binomial test of H0: p <= p0 against p_true > p0."""
    return float(stats.binom.sf(critical_value(n, p0, alpha) - 1, n, p_true))


def power_tost(n: int, margin: float, p_true: float = 0.5, alpha: float = ALPHA) -> float:
    """Power of the exact binomial TOST of |p - 0.5| >= margin, at p_true."""
    lo, hi = 0.5 - margin, 0.5 + margin
    ks = [k for k in range(n + 1)
          if stats.binom.sf(k - 1, n, lo) <= alpha and stats.binom.cdf(k, n, hi) <= alpha]
    return float(sum(stats.binom.pmf(k, n, p_true) for k in ks))


def power_two_prop(n1: int, n2: int, p1: float, p2: float, alpha: float = ALPHA) -> float:
    """Normal-approximation power of a two-sided two-proportion test (orientation only)."""
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    z = stats.norm.isf(alpha / 2)
    d = abs(p1 - p2) / se
    return float(stats.norm.sf(z - d) + stats.norm.cdf(-z - d))


def bt_difference_se(games_per_agent: int, p: float = 0.5) -> float:
    """Rough standard error (Elo) of a difference of two Bradley-Terry ratings, each fitted
    from ``games_per_agent`` games against a common field (independent-estimates bound)."""
    per_agent = 400.0 / math.log(10.0) / math.sqrt(games_per_agent * p * (1 - p))
    return math.sqrt(2.0) * per_agent


def main() -> None:
    print("One-sided exact binomial, H0 p <= 0.5 (decided games, seats pooled):")
    for n in (100, 200, 400):
        row = ", ".join(f"p={p:.2f}: {power_one_sided(n, 0.5, p):.2f}" for p in (0.55, 0.60, 0.65, 0.70))
        print(f"  n={n}: {row}")
    print("P2-share 'far more' (H0 p <= 0.60):")
    for n in (200, 400):
        row = ", ".join(f"p={p:.2f}: {power_one_sided(n, 0.60, p):.2f}" for p in (0.70, 0.75, 0.80))
        print(f"  n={n}: {row}")
    print("TOST balance, exact binomial, true p = 0.5:")
    for n, m in ((100, 0.10), (400, 0.10), (400, 0.05), (860, 0.05), (1000, 0.05)):
        print(f"  n={n}, margin ±{m:.2f}: power {power_tost(n, m):.2f}")
    print("TOST balance at true p = 0.53 (n = 1000, ±0.05):", f"{power_tost(1000, 0.05, 0.53):.2f}")
    print("Two proportions (faithful vs QUIRK-A9 corrected mirror), two-sided:")
    for n in (100, 400):
        print(f"  n={n} each, 0.80 vs 0.50: {power_two_prop(n, n, 0.80, 0.50):.2f};"
              f" 0.65 vs 0.50: {power_two_prop(n, n, 0.65, 0.50):.2f}")
    se = bt_difference_se(8 * 200)
    print(f"Bradley-Terry, 9 agents round robin, 200 games a pair: SE of a rating difference "
          f"≈ {se:.1f} Elo (p = 0.5); at p = 0.8 ≈ {bt_difference_se(8 * 200, 0.8):.1f} Elo")
    for margin in (50.0,):
        z = margin / se - stats.norm.isf(ALPHA)
        print(f"  TOST ±{margin:.0f} Elo at true difference 0: power ≈ {2 * stats.norm.cdf(z) - 1:.2f}")
    print(f"  one-sided difference test, true 30 Elo: power ≈ "
          f"{stats.norm.sf(stats.norm.isf(ALPHA) - 30 / se):.2f}; true 50 Elo: "
          f"{stats.norm.sf(stats.norm.isf(ALPHA) - 50 / se):.2f}")
    print("Elo margins as win rates: ±50 Elo =", f"[{elo_to_p(-50):.3f}, {elo_to_p(50):.3f}]")
    print("Budget ladder: logistic slope per doubling, 6 budgets x 200 games:")
    # normal approx: slope SE ≈ 1 / sqrt(sum n p(1-p) (x - xbar)^2), x = log2(budget)
    xs = [-3, -2, -1, 0, 1, 2]
    xbar = sum(xs) / len(xs)
    for p in (0.95, 0.85, 0.7):
        info = sum(200 * p * (1 - p) * (x - xbar) ** 2 for x in xs)
        se_slope = 1 / math.sqrt(info)
        print(f"  win rate ≈ {p:.2f}: slope SE ≈ {se_slope:.3f} logits/doubling; "
              f"detectable (80% power, one-sided 5%) ≈ {2.486 * se_slope:.3f}")


if __name__ == "__main__":
    main()
