"""Power calculations, game counts and move spaces behind docs/generality-plan.md
(run: python studies/generality_power.py; --move-space also measures each game's move space).

Every number in the plan's "Power" and "Designs" sections is printed by this script (and checked
against the plan and the configs by tests/test_generality_plan.py); nothing here plays games.

The unit of every pair test is the pair, as in the knowledge study (studies/knowledge_power.py,
whose exact sign-test power this script uses: one home for the pair model). statsmodels gives the
normal-approximation cross-check of the pairs needed (Cohen's h of the unsplit pairs' win share,
``NormalIndPower`` with ``ratio=0``: a one-sample test) and the power of G2's slope test.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

sys.path.insert(0, str(Path(__file__).resolve().parent))

from knowledge_power import (  # noqa: E402  (one home for the pair model, its exact sign test, a design)
    ALPHA,
    Design,
    detectable_score,
    pair_probabilities,
    power_sign_test,
    print_designs,
)
from robustness_power import elo_to_p  # noqa: E402

from boopexp.studies.generality import analysis  # noqa: E402  (one home for the games and move spaces)

GAMES = analysis.GAMES
#: A game family (game=G) holds four claims: Holm's first step.
ALPHA_GAME = ALPHA / 4
#: The all-games family holds five claims (G1, G2, G3a, G3b, G4).
ALPHA_ALL = ALPHA / 5
#: Pairs (= games per side) of the claims store, of the budgets and costs stores, and the mirror's
#: games per side.
CLAIM_PAIRS = 100
SENSITIVITY_PAIRS = 50
MIRROR_PER_SIDE = 50
CLAIM_PAIRINGS = 12  # G1 1, G3a 6, G3b 4, G4 1
#: The effects planned for (pair scores): the smallest component of each claim on boop. (our
#: committed studies) and the smaller effect the plan must still detect on another game.
BOOP_EFFECTS = {"G1 mcts-co vs vanilla": 0.985, "G3a mcts-co vs mcts+SE": 0.646,
                "G3b mcts+EP vs mcts+E": round(elo_to_p(243.0), 3), "G4 alphabeta vs mcts-co": 0.909}
PLANNED_SCORE = 0.65
#: G2: the standard error (Elo) of one game's gain assumed for the slope's power (the ladder's
#: bootstrap at 100 pairs a pairing; boop.'s 1 s ladder of the knowledge study had ≈ 25-45).
GAIN_SE = 60.0


def designs() -> tuple[Design, ...]:
    out = []
    for g in GAMES:
        out += [
            Design(f"configs/generality/{g}-claims.yaml", CLAIM_PAIRINGS, CLAIM_PAIRS, 1),
            Design(f"configs/generality/{g}-budgets.yaml", 2, SENSITIVITY_PAIRS, 2),  # 0.25 and 4 s
            Design(f"configs/generality/{g}-costs.yaml", 2, SENSITIVITY_PAIRS, 2),  # solver_move x0.5, x2
            Design(f"configs/generality/{g}-mirror.yaml", 2, MIRROR_PER_SIDE, 1),
        ]
    return tuple(out)


DESIGNS = designs()


def total_games() -> int:
    return sum(d.games for d in DESIGNS)


def pairs_needed_normal(score: float, power: float = 0.8, alpha: float = ALPHA_GAME) -> int:
    """statsmodels' normal approximation of the pairs the sign test needs: the unsplit pairs'
    win share q against ½ (Cohen's h, a one-sample test), divided by the share of unsplit pairs."""
    win, split, loss = pair_probabilities(score)
    q = win / (win + loss)
    h = proportion_effectsize(q, 0.5)
    unsplit = NormalIndPower().solve_power(effect_size=h, alpha=alpha, power=power, ratio=0, alternative="larger")
    return math.ceil(unsplit / (win + loss))


def slope_se(move_spaces: dict[str, float], gain_se: float = GAIN_SE) -> float:
    """The standard error (Elo per doubling) of G2's least-squares slope with equal gain SEs."""
    x = [math.log2(v) for v in move_spaces.values()]
    mean = sum(x) / len(x)
    return gain_se / math.sqrt(sum((v - mean) ** 2 for v in x))


def detectable_slope(move_spaces: dict[str, float], power: float = 0.8, alpha: float = ALPHA_ALL) -> float:
    """The slope (Elo per doubling) G2's one-sided test detects with ``power`` (statsmodels, normal)."""
    d = NormalIndPower().solve_power(effect_size=None, nobs1=1, alpha=alpha, power=power, ratio=0,
                                     alternative="larger")
    return d * slope_se(move_spaces)


def measure_move_spaces() -> dict[str, float]:
    """Each game's mean number of legal moves over its 200 bench positions (compiles every game)."""
    from boopexp.games.registry import get
    from boopexp.interfaces.bench import game_positions

    out = {}
    for name in GAMES:
        game = get(name)
        positions = game_positions(game)
        out[name] = sum(len(game.legal_moves(st)) for st in positions) / len(positions)
    return out


#: The move spaces measured by --move-space before any game of the study (plan §3), the analysis's.
MOVE_SPACE = analysis.MOVE_SPACE


def main() -> None:
    spaces = measure_move_spaces() if "--move-space" in sys.argv else MOVE_SPACE
    print("Move space (mean legal moves over the 200 bench positions): "
          + ", ".join(f"{g} {v:.1f}" for g, v in spaces.items()))
    print("Effects on boop. (pair scores, smallest component of each claim): "
          + ", ".join(f"{k} {v:.3f}" for k, v in BOOP_EFFECTS.items()))
    for pairs in (50, 100):
        for alpha in (ALPHA, ALPHA_GAME):
            row = ", ".join(f"s={s:.2f}: {power_sign_test(pairs, s, alpha=alpha):.2f}" for s in (0.60, 0.65, 0.70))
            print(f"  sign test, {pairs} pairs, alpha {alpha:g}: {row}")
        print(f"  detectable score (80%) at {pairs} pairs: alpha 0.05 {detectable_score(pairs):.3f}, "
              f"alpha {ALPHA_GAME:g} {detectable_score(pairs, alpha=ALPHA_GAME):.3f}")
    print(f"statsmodels cross-check: pairs for 80% at s={PLANNED_SCORE} and alpha {ALPHA_GAME:g}: "
          f"{pairs_needed_normal(PLANNED_SCORE)}")
    component = power_sign_test(CLAIM_PAIRS, PLANNED_SCORE, alpha=ALPHA_GAME)
    print(f"G3a (6 components at s={PLANNED_SCORE}, alpha {ALPHA_GAME:g}): power {component ** 6:.2f}; "
          f"G3b (4): {component ** 4:.2f}")
    print(f"G1/G4 on every game (4 components at s={PLANNED_SCORE}, alpha {ALPHA_ALL:g}): "
          f"{power_sign_test(CLAIM_PAIRS, PLANNED_SCORE, alpha=ALPHA_ALL) ** 4:.2f}")
    print(f"Sensitivity rows ({SENSITIVITY_PAIRS} pairs, alpha {ALPHA / 2:g}): s=0.70 "
          f"{power_sign_test(SENSITIVITY_PAIRS, 0.70, alpha=ALPHA / 2):.2f}, s=0.80 "
          f"{power_sign_test(SENSITIVITY_PAIRS, 0.80, alpha=ALPHA / 2):.2f}")
    if not any(math.isnan(v) for v in spaces.values()):
        print(f"G2: slope SE {slope_se(spaces):.1f} Elo per doubling at a gain SE of {GAIN_SE:.0f}; "
              f"detectable slope (80%, alpha {ALPHA_ALL:g}) {detectable_slope(spaces):.0f} Elo per doubling")
    print_designs(DESIGNS)


if __name__ == "__main__":
    main()
