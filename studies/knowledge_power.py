"""Power calculations and game counts behind docs/knowledge-plan.md (run: python studies/knowledge_power.py).

Every number in the plan's "Power" and "Designs" sections is printed by this script (and checked
against the plan and the configs by tests/test_knowledge_plan.py); nothing here plays games.

The unit of every test is the **pair**: game i of "A vs B" and game i of "B vs A", both from
position i of the opening suite. A pair scores A 1 (A won both games), 0 (B won both) or 1/2
(each won one: a split pair). The primary test is the exact sign test on the pairs that are not
split (McNemar's exact conditional test of the paired design): k pairs won by A out of the n
unsplit pairs, H0: P(A wins a pair) = P(B wins a pair), scipy's ``binomtest(k, n, 0.5)``.

The power model: A's expected score over both seats is ``score``; A wins as Blue with probability
``score - seat_effect + b`` and as Red with ``score + seat_effect - b``, where ``b`` is the
opening's bias towards Blue (mean 0, variance ``position_var``) and the two games of a pair are
independent given the opening. Then P(A wins both) = score² − seat_effect² − position_var and
P(B wins both) = (1 − score)² − seat_effect² − position_var. The plan quotes the power at
``position_var = 0`` (an opening with no bias), which is the least favourable case for the sign
test: a biased opening makes split pairs likelier and the unsplit ones more telling
(tests/test_knowledge_plan.py checks that the power does not fall as the variance grows).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from robustness_power import (  # noqa: E402  (one home for the Elo scale, the exact binomial test and BT SE)
    bt_difference_se,
    critical_value,
    elo_to_p,
    power_one_sided,
)

ALPHA = 0.05
#: The family-wise level split over the default family's four claims (Holm's first step).
ALPHA_FIRST_HOLM_STEP = ALPHA / 4
#: The margin of "negligible" (the verdict "not supported"), in logistic Elo, as in the robustness plan.
ELO_MARGIN = 50.0
BUDGETS = (0.25, 1.0, 4.0)
CHARGE_SCALES = (0.5, 2.0)
#: Pairs (= games per side) of the pairings a claim rests on, and of the other ladder pairings.
CLAIM_PAIRS = 200
LADDER_PAIRS = 100
#: OpenSpiel's MCTSBot simulations per decision at each budget: vanilla's ≈ 80 iterations per
#: device-second (docs/budget.md), scaled with the budget.
OS_SIMULATIONS = {0.25: 20, 1.0: 80, 4.0: 320}


def pair_probabilities(score: float, seat_effect: float = 0.0, position_var: float = 0.0) -> tuple[float, float, float]:
    """(P(A wins both), P(split), P(B wins both)) under the module's model."""
    win = score * score - seat_effect * seat_effect - position_var
    loss = (1.0 - score) ** 2 - seat_effect * seat_effect - position_var
    if win < 0 or loss < 0:
        raise ValueError("seat_effect/position_var too large for this score")
    return win, 1.0 - win - loss, loss


def sign_test_critical(n: int, alpha: float = ALPHA) -> int:
    """The smallest k with P(X >= k) <= alpha for X ~ Binomial(n, 1/2) (n + 1: no k rejects)."""
    return critical_value(n, 0.5, alpha)


def power_sign_test(pairs: int, score: float, seat_effect: float = 0.0, position_var: float = 0.0,
                    alpha: float = ALPHA) -> float:
    """Exact power of the one-sided sign test on ``pairs`` decided pairs (the number of unsplit
    pairs is itself Binomial(pairs, P(unsplit)); the test conditions on it)."""
    win, _, loss = pair_probabilities(score, seat_effect, position_var)
    unsplit = win + loss
    q = win / unsplit
    total = 0.0
    for n in range(pairs + 1):
        total += float(stats.binom.pmf(n, pairs, unsplit)) * power_one_sided(n, 0.5, q, alpha)
    return total


def pair_score_sd(score: float = 0.5, seat_effect: float = 0.0, position_var: float = 0.0) -> float:
    """Standard deviation of one pair's score (1, 1/2 or 0 for A)."""
    win, split, _ = pair_probabilities(score, seat_effect, position_var)
    mean = win + split / 2
    return math.sqrt(win + split / 4 - mean * mean)


def power_pair_tost(pairs: int, margin_elo: float = ELO_MARGIN, score: float = 0.5, seat_effect: float = 0.0,
                    position_var: float = 0.0, alpha: float = ALPHA) -> float:
    """Normal-approximation power of the TOST |mean pair score − 1/2| < margin (the pentanomial
    mean with its sample standard error, as engine testers' normalised intervals)."""
    margin = elo_to_p(margin_elo) - 0.5
    se = pair_score_sd(score, seat_effect, position_var) / math.sqrt(pairs)
    z = stats.norm.isf(alpha)
    d = score - 0.5
    return max(0.0, float(stats.norm.cdf((margin - d) / se - z) - stats.norm.cdf((-margin - d) / se + z)))


def detectable_score(pairs: int, power: float = 0.8, alpha: float = ALPHA) -> float:
    """The smallest expected score (to 0.005) whose sign test at ``pairs`` pairs has ``power``."""
    score = 0.5
    while power_sign_test(pairs, score, alpha=alpha) < power:
        score = round(score + 0.005, 3)
    return score


@dataclass(frozen=True)
class Design:
    """One config of the plan: its file, its pairings, pairs per pairing and sweep points."""

    config: str
    pairings: int
    pairs: int
    points: int

    @property
    def games(self) -> int:
        return self.pairings * 2 * self.pairs * self.points


#: K1 claims, K2 the ladders (1 s: the round robin of 7 agents less K1's 3 pairings; 0.25 s and
#: 4 s: the 12 pairings of the paper's three agents with each other and of the four others with
#: them), K3 the node charge (alpha-beta x0.5 and x2 against vanilla at every budget and
#: against mcts-co at 1 s).
DESIGNS = (
    Design("configs/knowledge-claims.yaml", pairings=3, pairs=CLAIM_PAIRS, points=len(BUDGETS)),
    Design("configs/knowledge-ladder-1.yaml", pairings=21 - 3, pairs=LADDER_PAIRS, points=1),
    Design("configs/knowledge-ladder-0.25.yaml", pairings=12, pairs=LADDER_PAIRS, points=1),
    Design("configs/knowledge-ladder-4.yaml", pairings=12, pairs=LADDER_PAIRS, points=1),
    Design("configs/knowledge-charge-vanilla.yaml", pairings=1, pairs=CLAIM_PAIRS,
           points=len(BUDGETS) * len(CHARGE_SCALES)),
    Design("configs/knowledge-charge-co.yaml", pairings=1, pairs=CLAIM_PAIRS, points=len(CHARGE_SCALES)),
)


def print_designs(designs: tuple[Design, ...]) -> None:
    """Each design's games and their total (every study's power script prints them so)."""
    print("Games per design:")
    for d in designs:
        print(f"  {d.config}: {d.pairings} pairings x {d.pairs} pairs x 2 x {d.points} points = {d.games:,}")
    print(f"  total {sum(d.games for d in designs):,}")


def total_games() -> int:
    return sum(d.games for d in DESIGNS)


def main() -> None:
    print("Sign test on pairs (one-sided, exact), power at expected score s (no seat effect, unbiased openings):")
    for pairs in (100, 200):
        for alpha in (ALPHA, ALPHA_FIRST_HOLM_STEP):
            row = ", ".join(f"s={s:.2f}: {power_sign_test(pairs, s, alpha=alpha):.2f}" for s in (0.55, 0.60, 0.65))
            print(f"  {pairs} pairs, alpha {alpha:g}: {row}")
    print("  with a seat effect of 0.10 (200 pairs, alpha 0.05): "
          f"s=0.60: {power_sign_test(200, 0.60, seat_effect=0.10):.2f}")
    print("  with biased openings, position variance 0.03 (200 pairs, alpha 0.05): "
          f"s=0.60: {power_sign_test(200, 0.60, position_var=0.03):.2f}")
    for pairs in (100, 200):
        print(f"  detectable score (80% power) at {pairs} pairs: alpha 0.05 {detectable_score(pairs):.3f}, "
              f"alpha 0.0125 {detectable_score(pairs, alpha=ALPHA_FIRST_HOLM_STEP):.3f}")
    c2 = power_sign_test(CLAIM_PAIRS, 0.60, alpha=ALPHA_FIRST_HOLM_STEP) ** len(BUDGETS)
    print(f"C2 (3 budgets, 200 pairs each, s = 0.60 at each, alpha 0.0125): power {c2:.2f}")
    print(f"Negligible-effect TOST +-{ELO_MARGIN:.0f} Elo (score +-{elo_to_p(ELO_MARGIN) - 0.5:.4f}) at true s = 0.5:")
    for pairs in (100, 200):
        print(f"  {pairs} pairs: power {power_pair_tost(pairs):.2f} (alpha 0.05), "
              f"{power_pair_tost(pairs, alpha=ALPHA_FIRST_HOLM_STEP):.2f} (alpha 0.0125)")
    print(f"Bradley-Terry ladder at 1 s, 7 agents, 200 games a pairing: SE of a rating difference "
          f"≈ {bt_difference_se(6 * 2 * LADDER_PAIRS):.1f} Elo (games independent; pairs make it smaller)")
    print_designs(DESIGNS)


if __name__ == "__main__":
    main()
