"""The robustness study (docs/robustness-plan.md): its stores → every claim's test, the families.

Reads the six stores of ``results/robustness/`` (``d1``, ``d2``, ``d3``, ``d4-vanilla``,
``d4-se``, ``d4-bias``), the committed device-×1 run the plan's D2 counts as its ×1 condition
(``results/ablation``, ``results/mirror``) and, for the sensitivity figure only, the cpu-budget
runs (``results/ablation-cpu``, ``results/mirror-cpu``). Only the games of each store's plan
(its config.yaml) count; games without a winner are left out of every rate and counted.

The claims and their families (plan §3, "Multiplicity"):

* ``default`` (device × 1, 1 s; 14 tests under one Holm correction): C1, C2, C3 (D1's direct
  pairings), C4-E, C4-P, C4-S, C5b, C5c, C5d (D1's Bradley–Terry contrasts; C5a is C4-E's test,
  shown again), C6a (D4 vanilla mirror), C6b (D4 S and E mirrors), C7a (D4's faithful mcts-co
  mirror at 1 s and the mcts+P mirror of ``results/mirror``, the only one at × 1), C7b (D4 at
  1 s), C8 (D3 against vanilla). C8 against heuristics is reported in a family of its own.
* ``solver_scale=0.5|1|2|4`` (D2; × 1 is ``results/ablation`` + ``results/mirror``): C1, C2,
  C3, C7a, each scale a family.
* ``budget=0.125 … 4`` (D3, and D4's bias mirrors where it has the budget): C1, C2, C7a (the
  mcts-co mirror only: the ladder has no mcts+P mirror) and C7b at 0.25, 1 and 4 s, each budget
  a family.

The tables and files are :mod:`boopexp.studies.robustness.report`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from boopexp.errors import ConfigError
from boopexp.experiments.store import has_games_files
from boopexp.play.identity import pairing_name
from boopexp.studies import claims as cl
from boopexp.studies.stores import check_study_folder, empty_outcomes, read_outcomes

if TYPE_CHECKING:  # for the annotations only: d1_ratings imports it where it fits
    from boopexp.analysis.ratings_bootstrap import BootstrapRatings

#: The six stores of the study, under the study folder.
STORES: tuple[str, ...] = ("d1", "d2", "d3", "d4-vanilla", "d4-se", "d4-bias")
#: The committed runs read beside them, under the study folder's parent: device × 1, and cpu.
REFERENCE: tuple[str, ...] = ("ablation", "mirror")
CPU: tuple[str, ...] = ("ablation-cpu", "mirror-cpu")

FOCUS = "mcts-co"
ABLATIONS: tuple[str, ...] = ("mcts+S", "mcts+E", "mcts+P", "mcts+SE", "mcts+SP", "mcts+EP")
D1_AGENTS: tuple[str, ...] = ("vanilla", *ABLATIONS, FOCUS, "heuristics")
TABLE1_OPPONENTS: tuple[str, ...] = ("vanilla", "heuristics", *ABLATIONS)
ANCHOR = "vanilla"
A9_AGENT = "mcts-co-a9"
SCALES: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
BUDGETS: tuple[float, ...] = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0)
DEFAULT = "default"
#: A cell with more no-winner games than this share is flagged (plan §1).
CAP_FLAG = 0.05

#: The factorial coding of the 2×2×2 design: which injections each agent has.
FACTORS: dict[str, tuple[int, int, int]] = {
    "vanilla": (0, 0, 0), "mcts+S": (1, 0, 0), "mcts+E": (0, 1, 0), "mcts+P": (0, 0, 1),
    "mcts+SE": (1, 1, 0), "mcts+SP": (1, 0, 1), "mcts+EP": (0, 1, 1), "mcts-co": (1, 1, 1),
}
EFFECTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("S", (0,)), ("E", (1,)), ("P", (2,)), ("S×E", (0, 1)), ("S×P", (0, 2)), ("E×P", (1, 2)), ("S×E×P", (0, 1, 2)),
)

CLAIMS_COLUMNS = ("claim", "condition", "estimate", "ci_low", "ci_high", "p_value", "p_holm", "verdict", "n",
                  "no_winner", "test")


# ---------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class StudyGames:
    """The games of the study: one frame per store (columns pairing, p1, p2, winner, point).

    ``point`` is the game's sweep value (the swept axis of its store: budget seconds or solver
    scale; NaN when not swept). ``missing`` lists stores that hold no games; ``incomplete``
    maps a store to (games, planned) when it holds fewer than its plan.
    """

    stores: dict[str, pd.DataFrame]
    missing: tuple[str, ...] = ()
    incomplete: dict[str, tuple[int, int]] = field(default_factory=dict)

    def get(self, name: str) -> pd.DataFrame:
        return self.stores.get(name, empty_outcomes())


def load_study(root: Path | str, reference_root: Path | str | None = None) -> StudyGames:
    """Read the six stores under ``root`` and the committed runs under ``reference_root``.

    Args:
        root: the study folder (``results/robustness``).
        reference_root: where ``ablation``, ``mirror``, ``ablation-cpu`` and ``mirror-cpu`` are
            (default: root's parent).

    Raises:
        ConfigError: ``root`` is not a folder, or holds none of the study's stores (another
            results folder given by mistake: nothing is read or written).
    """
    root = Path(root)
    check_study_folder(root, STORES, "robustness")
    reference_root = root.parent if reference_root is None else Path(reference_root)
    stores: dict[str, pd.DataFrame] = {}
    missing: list[str] = []
    incomplete: dict[str, tuple[int, int]] = {}
    for name, folder in [*((s, root / s) for s in STORES), *((s, reference_root / s) for s in (*REFERENCE, *CPU))]:
        if not has_games_files(folder):
            missing.append(name)
            continue
        read = read_outcomes(folder)
        stores[name] = read.games
        if read.planned is not None and len(read.games) < read.planned:
            incomplete[name] = (len(read.games), read.planned)
    return StudyGames(stores=stores, missing=tuple(missing), incomplete=incomplete)


# ---------------------------------------------------------------------------------------------
# Counting


@dataclass(frozen=True)
class PairCount:
    """``agent``'s results against ``opponent`` over both seatings (wins, losses, no winner), and per seat."""

    wins: int
    losses: int
    no_winner: int
    p1_wins: int
    p1_games: int
    p2_wins: int
    p2_games: int

    @property
    def n(self) -> int:
        return self.wins + self.losses


def pair_count(games: pd.DataFrame, agent: str, opponent: str) -> PairCount:
    """Both seatings of ``agent`` against ``opponent`` (not a mirror)."""
    first = games[(games["p1"] == agent) & (games["p2"] == opponent)]["winner"]
    second = games[(games["p1"] == opponent) & (games["p2"] == agent)]["winner"]
    p1_wins, p1_losses = int((first == "p1").sum()), int((first == "p2").sum())
    p2_wins, p2_losses = int((second == "p2").sum()), int((second == "p1").sum())
    return PairCount(
        wins=p1_wins + p2_wins, losses=p1_losses + p2_losses,
        no_winner=int(first.isna().sum() + second.isna().sum()),
        p1_wins=p1_wins, p1_games=p1_wins + p1_losses, p2_wins=p2_wins, p2_games=p2_wins + p2_losses,
    )


def mirror_count(games: pd.DataFrame, agent: str) -> tuple[int, int, int]:
    """(P2 wins, decided games, no winner) of ``agent``'s mirror games."""
    w = games[(games["p1"] == agent) & (games["p2"] == agent)]["winner"]
    p2, p1 = int((w == "p2").sum()), int((w == "p1").sum())
    return p2, p1 + p2, int(w.isna().sum())


def at_point(games: pd.DataFrame, value: float) -> pd.DataFrame:
    return games[np.isclose(games["point"].to_numpy(float), value)]


# ---------------------------------------------------------------------------------------------
# The claims' tests


def co_beats(claim: str, games: pd.DataFrame, opponent: str) -> cl.Outcome:
    """mcts-co's win rate against ``opponent`` over both seats, above 50% (C1 against vanilla, C2
    against heuristics, each part of C3)."""
    c = pair_count(games, FOCUS, opponent)
    out = cl.rate_above(claim, pairing_name(FOCUS, opponent), c.wins, c.n, c.no_winner)
    return replace(out, test=out.test + f" (as P1 {c.p1_wins}/{c.p1_games}, as P2 {c.p2_wins}/{c.p2_games})")


def co_beats_every_ablation(games: pd.DataFrame) -> cl.Outcome:
    """C3: mcts-co beats each single and double ablation (a conjunction of :func:`co_beats`)."""
    return cl.conjunction("C3", [co_beats("C3", games, x) for x in ABLATIONS])


def p2_wins_more_in_mirrors(mirrors: Sequence[tuple[str, pd.DataFrame]]) -> cl.Outcome:
    """C7a: the second player's share above 60% in each given (agent, games) mirror."""
    parts = []
    for agent, games in mirrors:
        k, n, none = mirror_count(games, agent)
        part = cl.rate_above("C7a", f"{agent} mirror", k, n, none, p0=0.6, what="P2 share")
        parts.append(part)
    return cl.conjunction("C7a", parts)


def a9_fix_balances_mirror(bias: pd.DataFrame) -> cl.Outcome:
    """C7b: the QUIRK-A9-corrected mirror balanced (±10 points) and below the faithful one (Boschloo)."""
    k_fix, n_fix, none_fix = mirror_count(bias, A9_AGENT)
    k_faith, n_faith, none_faith = mirror_count(bias, FOCUS)
    balanced = cl.share_balanced("C7b", f"{A9_AGENT} mirror", k_fix, n_fix, none_fix, margin=0.10)
    lower = cl.share_greater("C7b", f"{FOCUS} mirror P2 share > {A9_AGENT} mirror's", (k_faith, n_faith),
                             (k_fix, n_fix), none_faith + none_fix)
    return cl.conjunction("C7b", [balanced, lower], kind="equivalence")


def vanilla_mirror_balanced(mirror: pd.DataFrame) -> cl.Outcome:
    """C6a: boop. is balanced, the second player's share of the vanilla mirror within 50% ± 5 points."""
    return cl.share_balanced("C6a", "vanilla mirror", *mirror_count(mirror, "vanilla"), margin=0.05)


def s_and_e_mirrors_balanced(mirrors: pd.DataFrame) -> cl.Outcome:
    """C6b: the mcts+S and mcts+E mirrors balanced too, each P2 share within 50% ± 10 points."""
    return cl.conjunction("C6b", [
        cl.share_balanced("C6b", f"{a} mirror", *mirror_count(mirrors, a), margin=0.10) for a in ("mcts+S", "mcts+E")
    ])


def co_edge_shrinks_with_budget(ladder: pd.DataFrame, opponent: str, claim: str = "C8") -> cl.Outcome:
    """C8: mcts-co's win against ``opponent`` on log2(budget) and seat, slope below 0 (its edge
    shrinks as the budget grows)."""
    rows = ladder[((ladder["p1"] == FOCUS) & (ladder["p2"] == opponent))
                  | ((ladder["p1"] == opponent) & (ladder["p2"] == FOCUS))]
    decided = rows[rows["winner"].notna()]
    seat = (decided["p1"] == FOCUS).to_numpy(int)
    win = np.where(seat == 1, decided["winner"] == "p1", decided["winner"] == "p2").astype(int)
    return cl.logit_slope_below(claim, pairing_name(FOCUS, opponent), win, np.log2(decided["point"].to_numpy(float)),
                                seat, int(rows["winner"].isna().sum()))


@dataclass(frozen=True)
class RatingsResult:
    """D1's Bradley–Terry fit with its bootstrap, the factorial effects and the per-pairing deviance."""

    boot: BootstrapRatings
    factorial: pd.DataFrame
    deviance: pd.DataFrame
    direct: pd.DataFrame


def d1_ratings(d1: pd.DataFrame, resamples: int, seed: int) -> RatingsResult | None:
    from boopexp.analysis.ratings_bootstrap import bootstrap_ratings, percentile_interval
    from boopexp.experiments.elo import elo_of_score

    games = d1[d1["p1"].isin(D1_AGENTS) & d1["p2"].isin(D1_AGENTS)]
    if games.empty or len(set(games["p1"]) | set(games["p2"])) < 2:
        return None
    present = [a for a in D1_AGENTS if a in set(games["p1"]) | set(games["p2"])]
    if ANCHOR not in present:
        return None
    winner = [w if isinstance(w, str) else None for w in games["winner"]]
    try:
        boot = bootstrap_ratings(list(games["p1"]), list(games["p2"]), winner, agents=present, anchor=ANCHOR,
                                 resamples=resamples, seed=seed)
    except ConfigError:
        return None  # agents not linked yet (a store only begun)
    rows = []
    if all(a in present for a in FACTORS):
        for name, factors in EFFECTS:
            weights = {a: float(np.prod([1 if code[f] else -1 for f in factors])) / 4.0 for a, code in FACTORS.items()}
            point, draws = boot.contrast(weights)
            low, high = percentile_interval(draws)
            rows.append({"effect": name, "estimate": point, "ci_low": low, "ci_high": high})
    factorial = pd.DataFrame(rows, columns=["effect", "estimate", "ci_low", "ci_high"])
    deviance = _deviance(games, boot)
    direct_rows = []
    for x in ("mcts+S", "mcts+E", "mcts+P"):
        if x not in present:
            continue
        c = pair_count(games, x, ANCHOR)
        low, high = cl.wilson(c.wins, c.n)
        point, draws = boot.contrast({x: 1.0, ANCHOR: -1.0})
        direct_rows.append({
            "agent": x, "wins": c.wins, "losses": c.losses, "no_winner": c.no_winner,
            "win_rate": c.wins / c.n if c.n else math.nan, "ci_low": low, "ci_high": high,
            "direct_elo": elo_of_score(c.wins / c.n) if c.n else math.nan, "rating_elo": point,
        })
    direct = pd.DataFrame(direct_rows, columns=["agent", "wins", "losses", "no_winner", "win_rate", "ci_low",
                                                "ci_high", "direct_elo", "rating_elo"])
    return RatingsResult(boot=boot, factorial=factorial, deviance=deviance, direct=direct)


def _deviance(games: pd.DataFrame, boot: BootstrapRatings) -> pd.DataFrame:
    """Per unordered pair of agents: observed and expected wins of the first (both seats) and the deviance."""
    from boopexp.experiments.elo import expected_score

    elo = dict(zip(boot.agents, boot.point[:-1]))
    first_move = float(boot.point[-1])
    rows = []
    order = {a: i for i, a in enumerate(D1_AGENTS)}
    pairs = sorted({tuple(sorted((a, b), key=order.__getitem__)) for a, b in zip(games["p1"], games["p2"]) if a != b},
                   key=lambda t: (order[t[0]], order[t[1]]))
    for a, b in pairs:
        dev = expected = 0.0
        c = pair_count(games, a, b)
        for (x, y), wins, n in (((a, b), c.p1_wins, c.p1_games), ((b, a), c.p2_games - c.p2_wins, c.p2_games)):
            if n == 0:
                continue
            p = expected_score(elo[x] - elo[y] + first_move)
            # P1 = x wins ``wins`` of n; the first agent a's expected wins, seat by seat
            expected += n * p if x == a else n * (1.0 - p)
            losses = n - wins
            dev += 2.0 * ((wins * math.log(wins / (n * p)) if wins else 0.0)
                          + (losses * math.log(losses / (n * (1.0 - p))) if losses else 0.0))
        rows.append({"agent": a, "opponent": b, "games": c.n, "wins": c.wins, "expected_wins": expected,
                     "p1_wins": c.p1_wins, "p1_games": c.p1_games, "p2_wins": c.p2_wins, "p2_games": c.p2_games,
                     "deviance": dev})
    return pd.DataFrame(rows, columns=["agent", "opponent", "games", "wins", "expected_wins", "p1_wins", "p1_games",
                                       "p2_wins", "p2_games", "deviance"])


def rating_claims(ratings: RatingsResult | None, d1: pd.DataFrame) -> dict[str, cl.Outcome]:
    """C4 (E, P, S), C5b, C5c, C5d from D1's bootstrap."""
    if ratings is None:
        return {}
    boot = ratings.boot
    n = int(d1["winner"].notna().sum())
    none = int(d1["winner"].isna().sum())

    def diff(a: str, b: str) -> tuple[float, np.ndarray]:
        return boot.contrast({a: 1.0, b: -1.0})

    out: dict[str, cl.Outcome] = {}
    have = set(boot.agents)
    for x in ("E", "P", "S"):
        agent = f"mcts+{x}"
        if agent in have:
            out[f"C4-{x}"] = cl.elo_equivalent(f"C4-{x}", f"Elo({agent}) − Elo(vanilla)", *diff(agent, ANCHOR), n, none)
    if {"mcts+SE", "mcts+S", "mcts+EP", "mcts+P"} <= have:
        out["C5b"] = cl.conjunction("C5b", [
            cl.elo_above("C5b", "Elo(mcts+SE) − Elo(mcts+S)", *diff("mcts+SE", "mcts+S"), n, none),
            cl.elo_above("C5b", "Elo(mcts+EP) − Elo(mcts+P)", *diff("mcts+EP", "mcts+P"), n, none),
        ])
    if set(ABLATIONS) <= have:
        out["C5c"] = cl.conjunction("C5c", [
            cl.elo_above("C5c", f"Elo(mcts+EP) − Elo({x})", *diff("mcts+EP", x), n, none)
            for x in ABLATIONS if x != "mcts+EP"
        ])
        out["C5d"] = cl.conjunction("C5d", [
            cl.elo_above("C5d", f"Elo({x}) − Elo(mcts+P)", *diff(x, "mcts+P"), n, none)
            for x in ABLATIONS if x != "mcts+P"
        ])
    return out


# ---------------------------------------------------------------------------------------------
# The families


def has_pairing(games: pd.DataFrame, a: str, b: str) -> bool:
    """Whether a and b played each other (either seating) in ``games``."""
    return bool((((games["p1"] == a) & (games["p2"] == b)) | ((games["p1"] == b) & (games["p2"] == a))).any())


def has_mirror(games: pd.DataFrame, agent: str) -> bool:
    """Whether ``games`` hold mirror games of ``agent``."""
    return bool(((games["p1"] == agent) & (games["p2"] == agent)).any())


def direct_claims(games: pd.DataFrame) -> list[cl.Outcome]:
    """C1, C2 and C3 (mcts-co against vanilla, heuristics, every ablation: direct pairings), those
    whose games are present."""
    out: list[cl.Outcome] = []
    if has_pairing(games, FOCUS, "vanilla"):
        out.append(co_beats("C1", games, "vanilla"))
    if has_pairing(games, FOCUS, "heuristics"):
        out.append(co_beats("C2", games, "heuristics"))
    if all(has_pairing(games, FOCUS, x) for x in ABLATIONS):
        out.append(co_beats_every_ablation(games))
    return out


def default_family(study: StudyGames, ratings: RatingsResult | None) -> list[cl.Outcome]:
    """The 14 primary tests at device × 1, 1 s (plan §3, "Multiplicity"), for the games present."""
    d1 = study.get("d1")
    out = direct_claims(d1)
    rc = rating_claims(ratings, d1)
    out += [rc[c] for c in ("C4-E", "C4-P", "C4-S", "C5b", "C5c", "C5d") if c in rc]
    vanilla = study.get("d4-vanilla")
    if has_mirror(vanilla, "vanilla"):
        out.append(vanilla_mirror_balanced(vanilla))
    se = study.get("d4-se")
    if has_mirror(se, "mcts+S") and has_mirror(se, "mcts+E"):
        out.append(s_and_e_mirrors_balanced(se))
    bias = at_point(study.get("d4-bias"), 1.0)
    mirror = study.get("mirror")
    if has_mirror(bias, FOCUS) and has_mirror(mirror, "mcts+P"):
        out.append(p2_wins_more_in_mirrors([(FOCUS, bias), ("mcts+P", mirror)]))
    if has_mirror(bias, FOCUS) and has_mirror(bias, A9_AGENT):
        out.append(a9_fix_balances_mirror(bias))
    d3 = study.get("d3")
    if has_pairing(d3, FOCUS, "vanilla"):
        out.append(co_edge_shrinks_with_budget(d3, "vanilla"))
    return out


def profile_family(games: pd.DataFrame) -> list[cl.Outcome]:
    """C1, C2, C3, C7a on one solver-cost profile's games (D2, or the committed × 1 run)."""
    out = direct_claims(games)
    if has_mirror(games, FOCUS) and has_mirror(games, "mcts+P"):
        out.append(p2_wins_more_in_mirrors([(FOCUS, games), ("mcts+P", games)]))
    return out


def budget_family(ladder: pd.DataFrame, bias: pd.DataFrame) -> list[cl.Outcome]:
    """C1, C2, C7a (mcts-co mirror) on one budget's ladder games, C7b on D4's bias mirrors there."""
    out = direct_claims(ladder)  # C1, C2 (the ladder has no ablations, so no C3)
    if has_mirror(ladder, FOCUS):
        out.append(p2_wins_more_in_mirrors([(FOCUS, ladder)]))
    if has_mirror(bias, FOCUS) and has_mirror(bias, A9_AGENT):
        out.append(a9_fix_balances_mirror(bias))
    return out


def profile_games(study: StudyGames, scale: float) -> pd.DataFrame:
    if scale == 1.0:
        return pd.concat([study.get("ablation"), study.get("mirror")], ignore_index=True)
    return at_point(study.get("d2"), scale)


def judge_all(study: StudyGames, ratings: RatingsResult | None) -> list[cl.Judged]:
    """Every family of the plan, judged; C5a repeats C4-E's row."""
    judged: list[cl.Judged] = []
    family = cl.judge_family(DEFAULT, default_family(study, ratings))
    for j in family:
        judged.append(j)
        if j.outcome.claim == "C4-E":
            judged.append(replace(j, outcome=cl.renamed(j.outcome, "C5a", "C4-E's test (E alone is weak)")))
    d3 = study.get("d3")
    if has_pairing(d3, FOCUS, "heuristics"):
        judged += cl.judge_family(DEFAULT, [co_edge_shrinks_with_budget(d3, "heuristics", claim="C8-heuristics")])
    for scale in SCALES:
        judged += cl.judge_family(f"solver_scale={scale:g}", profile_family(profile_games(study, scale)))
    bias = study.get("d4-bias")
    for budget in BUDGETS:
        judged += cl.judge_family(f"budget={budget:g}", budget_family(at_point(d3, budget), at_point(bias, budget)))
    return judged
