"""The knowledge study (docs/knowledge-plan.md): its stores → pairs of games from one opening →
every claim's sign test, the families, the ladder.

Reads the six stores of ``results/knowledge/`` (``claims``, ``charge-co``, ``charge-vanilla``,
``ladder-1``, ``ladder-0.25``, ``ladder-4``; configs/knowledge-*.yaml) through every study's
reader (:func:`boopexp.studies.stores.read_outcomes`: the store's own reader, each game once,
only the games of the store's plan, the store's warnings and errors).
Each game's condition — its budget in device-seconds and, in a pairing with ``alphabeta``, the
node charge (``node_cost_scale``) — comes from its settings in the store's plan (config.yaml),
keyed by the game's ``config_hash``.

**Pairs** (plan §2): pair i of the pairing A–B at one condition of one store is game i of
"A vs B" and game i of "B vs A" (both from position i of the suite). A pair scores A 1, ½ or 0;
a pair with a game without a winner is left out and counted (a pairing with more than 5 % of its
pairs left out is flagged); a game whose partner is not stored (an incomplete store) is counted
as unpaired. A is the first agent of the first planned pairing that names the two
(:func:`boopexp.experiments.sprt.pairing_groups`, as the SPRT orients its pairs).

**Tests** (plan §5): :func:`boopexp.studies.claims.pairs_above` (the exact sign test on the pairs
not split, its opposite, the TOST on the mean pair score), conjunctions by
:func:`boopexp.studies.claims.conjunction`, Holm and verdicts by
:func:`boopexp.studies.claims.judge_family`.

**Families** (plan §6): ``default`` (C1, C3 at 1 s; C2, C4 over the three budgets; node charge
×1), ``charge=0.5`` and ``charge=2`` (C1, C2 with alpha-beta's node charge ×0.5 / ×2; C1's other
three components are the ×1 games), ``budget=0.25|1|4`` (C1, C2, C3, C4 at that budget, ×1).
A claim whose components have no pair yet is left out of its family and named in the notes.

**The ladder** (plan §3, §5): per budget, a Bradley–Terry fit of every agent from all the decided
games of that budget in the six stores (anchor vanilla, a Blue-seat term), with a seeded
bootstrap (2,000 resamples, seed 2027) of the pairs within each pairing
(:func:`boopexp.analysis.ratings_bootstrap.bootstrap_ratings` with ``pairs=``). alpha-beta at
node charge ×0.5 and ×2 (K3) is rated as its own agent, ``alphabeta×0.5`` / ``alphabeta×2``
(plan §1 lists them as agents).

The tables, figures and files are :mod:`boopexp.studies.knowledge.report`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boopexp.errors import ConfigError
from boopexp.experiments.sprt import pairing_groups
from boopexp.experiments.store import GameStore, has_games_files
from boopexp.studies import claims as cl
from boopexp.studies.stores import check_study_folder, read_outcomes

STUDY = "knowledge"
#: The six stores of the study, under the study folder (configs/knowledge-<store>.yaml).
STORES: tuple[str, ...] = ("claims", "charge-co", "charge-vanilla", "ladder-1", "ladder-0.25", "ladder-4")
BUDGETS: tuple[float, ...] = (0.25, 1.0, 4.0)
CHARGES: tuple[float, ...] = (0.5, 1.0, 2.0)
FOCUS = "mcts-co"
ALPHABETA = "alphabeta"
ANCHOR = "vanilla"
#: C1's classical agents (plan §1), in the order of its components.
CLASSICAL: tuple[str, ...] = ("alphabeta", "mcts-solver", "vanilla", "os-mcts")
#: The agents of the ladder in display order (the alpha-beta charge variants after alphabeta).
AGENTS: tuple[str, ...] = ("mcts-co", "mcts-prior", "mcts-solver", "alphabeta", "alphabeta×0.5", "alphabeta×2",
                           "vanilla", "heuristics", "os-mcts")
DEFAULT = "default"
#: A pairing with more than this share of its pairs left out (a game without a winner) is flagged (plan §2).
LEFT_OUT_FLAG = 0.05
#: The ladder's bootstrap (plan §5).
RESAMPLES = 2000
SEED = 2027

#: A game's result for the pairing's first agent A in the pair frame: won, lost, no winner, not stored.
WON, LOST, UNDECIDED, ABSENT = 1, 0, -1, -2


def ladder_store(budget: float) -> str:
    """The K2 store of a budget: ``ladder-0.25``, ``ladder-1``, ``ladder-4``."""
    return f"ladder-{budget:g}"


def charge_label(charge: float) -> str:
    """``×0.5``, ``×1``, ``×2``."""
    return f"×{charge:g}"


# ---------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class KnowledgeGames:
    """The games of the study as one frame, and what is missing.

    ``games``: one row per stored game of a store's plan: store, pairing, p1, p2, winner,
    game_index, budget (device-seconds), charge (alpha-beta's node charge; NaN in a pairing
    without alpha-beta). ``groups``: per store, the oriented pairings (A, B) in plan order.
    ``missing``: stores without games; ``incomplete``: store → (games stored, games planned).
    """

    games: pd.DataFrame
    groups: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    incomplete: Mapping[str, tuple[int, int]] = field(default_factory=dict)


GAME_COLUMNS = ("store", "pairing", "p1", "p2", "winner", "game_index", "budget", "charge")


def _empty_games() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=float if c in ("budget", "charge") else
                                      "int64" if c == "game_index" else object) for c in GAME_COLUMNS})


def plan_conditions(folder: Path) -> tuple[dict[str, tuple[float, float]], tuple[tuple[str, str], ...]]:
    """{config_hash: (budget seconds, alpha-beta node charge or NaN)} of a store's plan, and its
    oriented pairings (A, B) in plan order.

    Raises:
        ConfigError: config.yaml has no plan whose items give the budget's seconds (a store not
            written by ``boopexp run``).
    """
    doc = GameStore(folder).read_config()
    plan = doc.get("plan") if isinstance(doc, Mapping) else None
    top_budget: Any = doc.get("budget") if isinstance(doc, Mapping) else None
    source = str(folder / "config.yaml")
    if not isinstance(plan, list) or not plan:
        raise ConfigError(f"{source}: no 'plan:' list; the study's stores are written by boopexp run")
    conditions: dict[str, tuple[float, float]] = {}
    sides: list[tuple[str, str]] = []
    for i, item in enumerate(plan):
        try:
            # A plan without a sweep keeps its budget at the top of config.yaml, not in each item.
            seconds = float((item.get("budget") or top_budget)["seconds"])
            charge = math.nan
            for spec in (item.get("p1_spec"), item.get("p2_spec")):
                if isinstance(spec, Mapping) and spec.get("kind") == ALPHABETA:
                    charge = float((spec.get("params") or {}).get("node_cost_scale", 1.0))
            conditions[str(item["config_hash"])] = (seconds, charge)
            sides.append((str(item["p1"]), str(item["p2"])))
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{source}: plan item {i} lacks config_hash/p1/p2/budget.seconds") from None
    return conditions, tuple(pairing_groups(sides))


def load_study(root: Path | str) -> KnowledgeGames:
    """Read the six stores under ``root`` (those present; the others are listed as missing).

    Raises:
        ConfigError: ``root`` is not a folder, holds none of the six stores, or one of them holds
            another experiment's games (nothing is read or written).
    """
    root = Path(root)
    check_study_folder(root, STORES, STUDY)
    frames = []
    groups: dict[str, tuple[tuple[str, str], ...]] = {}
    missing: list[str] = []
    incomplete: dict[str, tuple[int, int]] = {}
    for name in STORES:
        folder = root / name
        if not has_games_files(folder):
            missing.append(name)
            continue
        conditions, groups[name] = plan_conditions(folder)
        read = read_outcomes(folder)
        games = read.games
        if read.planned is not None and len(games) < read.planned:
            incomplete[name] = (len(games), read.planned)
        if games.empty:
            continue
        condition = [conditions.get(h, (math.nan, math.nan)) for h in games["config_hash"]]
        frames.append(pd.DataFrame({
            "store": name, "pairing": games["pairing"].to_numpy(object), "p1": games["p1"].to_numpy(object),
            "p2": games["p2"].to_numpy(object), "winner": games["winner"].to_numpy(object),
            "game_index": games["game_index"].to_numpy("int64"),
            "budget": np.array([c[0] for c in condition], dtype=float),
            "charge": np.array([c[1] for c in condition], dtype=float),
        }))
    games = pd.concat(frames, ignore_index=True) if frames else _empty_games()
    return KnowledgeGames(games=games, groups=groups, missing=tuple(missing), incomplete=incomplete)


# ---------------------------------------------------------------------------------------------
# Pairs


PAIR_KEYS = ["store", "a", "b", "budget", "charge"]


def pair_frame(study: KnowledgeGames) -> pd.DataFrame:
    """One row per pair slot: store, a, b, budget, charge, game_index and A's result in game i of
    "A vs B" (``forward``) and of "B vs A" (``backward``): :data:`WON`, :data:`LOST`,
    :data:`UNDECIDED` or :data:`ABSENT` (not stored). Mirror games (none in the study) are skipped."""
    games = study.games
    columns = [*PAIR_KEYS, "game_index", "forward", "backward"]
    if games.empty:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
    oriented = {(store, a, b): (a, b) for store, pairs in study.groups.items() for a, b in pairs}
    rows: dict[tuple, list[int]] = {}
    for store, p1, p2, winner, index, budget, charge in zip(
            games["store"], games["p1"], games["p2"], games["winner"], games["game_index"], games["budget"],
            games["charge"]):
        if p1 == p2:
            continue
        a, b = oriented.get((store, p1, p2)) or oriented.get((store, p2, p1)) or (p1, p2)
        forward = p1 == a
        if winner == "p1" or winner == "p2":
            result = WON if (winner == "p1") == forward else LOST
        else:
            result = UNDECIDED
        # NaN is no dict key (two NaNs differ): a pairing without alpha-beta is keyed by None
        slot = rows.setdefault((store, a, b, float(budget), None if math.isnan(charge) else float(charge),
                                int(index)), [ABSENT, ABSENT])
        slot[0 if forward else 1] = result
    frame = pd.DataFrame([(*key, f, g) for key, (f, g) in rows.items()], columns=columns)
    frame["charge"] = frame["charge"].astype(float)
    return frame.sort_values([*PAIR_KEYS, "game_index"], kind="stable", na_position="first").reset_index(drop=True)


@dataclass(frozen=True)
class PairCounts:
    """A's pairs against B at one condition: the trinomial counts and what was left out."""

    zero: int
    half: int
    one: int
    left_out: int
    unpaired: int
    games: int

    @property
    def pairs(self) -> int:
        """Complete pairs (both games stored)."""
        return self.zero + self.half + self.one + self.left_out

    @property
    def left_out_share(self) -> float:
        return self.left_out / self.pairs if self.pairs else math.nan

    @property
    def flagged(self) -> bool:
        """More than 5 % of the pairs left out (plan §2)."""
        return self.pairs > 0 and self.left_out_share > LEFT_OUT_FLAG

    def swapped(self) -> PairCounts:
        """The same pairs counted for B."""
        return PairCounts(self.one, self.half, self.zero, self.left_out, self.unpaired, self.games)


def count_pairs(forward: np.ndarray, backward: np.ndarray) -> PairCounts:
    """The counts of a pairing's pair slots (A's results in both games of each)."""
    forward, backward = np.asarray(forward, dtype=int), np.asarray(backward, dtype=int)
    complete = (forward != ABSENT) & (backward != ABSENT)
    decided = complete & (forward >= 0) & (backward >= 0)
    score = forward + backward
    return PairCounts(
        zero=int(np.sum(decided & (score == 0))), half=int(np.sum(decided & (score == 1))),
        one=int(np.sum(decided & (score == 2))), left_out=int(np.sum(complete & ~decided)),
        unpaired=int(np.sum((forward != ABSENT) ^ (backward != ABSENT))),
        games=int(np.sum(forward != ABSENT) + np.sum(backward != ABSENT)),
    )


def _same(values: pd.Series, value: float) -> np.ndarray:
    """Where ``values`` equals ``value``, NaN matching NaN (the charge of a pairing without alpha-beta)."""
    x = values.to_numpy(float)
    return np.isnan(x) if math.isnan(value) else np.isclose(x, value)


def pair_counts(pairs: pd.DataFrame, store: str, a: str, b: str, budget: float, charge: float) -> PairCounts | None:
    """A's counts against B at one condition of one store (either orientation); None without a game."""
    for first, second, flip in ((a, b, False), (b, a, True)):
        rows = pairs[(pairs["store"] == store) & (pairs["a"] == first) & (pairs["b"] == second)
                     & _same(pairs["budget"], budget) & _same(pairs["charge"], charge)]
        if len(rows):
            counts = count_pairs(rows["forward"].to_numpy(), rows["backward"].to_numpy())
            return counts.swapped() if flip else counts
    return None


# ---------------------------------------------------------------------------------------------
# The claims


@dataclass(frozen=True)
class Component:
    """One pairing a claim tests: A beats B in ``store`` at ``budget`` s and node charge ``charge``
    (NaN: no alpha-beta in the pairing)."""

    claim: str
    store: str
    a: str
    b: str
    budget: float
    charge: float

    @property
    def name(self) -> str:
        where = f"{self.budget:g} s" + ("" if math.isnan(self.charge) else f", {charge_label(self.charge)}")
        return f"{self.a} vs {self.b} ({where})"


def co_beats_classical(budget: float, charge: float) -> list[Component]:
    """C1: mcts-co against each classical agent: alpha-beta at ``charge`` (K1 at ×1, K3 otherwise),
    the other three from the budget's ladder (plan §3)."""
    store = "claims" if charge == 1.0 else "charge-co"
    parts = [Component("C1", store, FOCUS, ALPHABETA, budget, charge)]
    parts += [Component("C1", ladder_store(budget), FOCUS, x, budget, math.nan) for x in CLASSICAL[1:]]
    return parts


def alphabeta_beats_vanilla(budget: float, charge: float) -> Component:
    """C2 at one budget: alpha-beta with H (at node charge ``charge``) against vanilla MCTS."""
    return Component("C2", "claims" if charge == 1.0 else "charge-vanilla", ALPHABETA, ANCHOR, budget, charge)


def prior_beats_preselection(budget: float) -> Component:
    """C3: knowledge as a prior (mcts-prior) against knowledge as a pre-selection (mcts-co)."""
    return Component("C3", "claims", "mcts-prior", FOCUS, budget, math.nan)


def vanilla_beats_openspiel(budget: float) -> Component:
    """C4 at one budget: the paper's vanilla MCTS against OpenSpiel's MCTSBot (os-mcts)."""
    return Component("C4", ladder_store(budget), ANCHOR, "os-mcts", budget, math.nan)


def families() -> list[tuple[str, list[tuple[str, list[Component]]]]]:
    """Every family of plan §6: (condition, [(claim, its components)])."""
    out: list[tuple[str, list[tuple[str, list[Component]]]]] = [(DEFAULT, [
        ("C1", co_beats_classical(1.0, 1.0)),
        ("C2", [alphabeta_beats_vanilla(t, 1.0) for t in BUDGETS]),
        ("C3", [prior_beats_preselection(1.0)]),
        ("C4", [vanilla_beats_openspiel(t) for t in BUDGETS]),
    ])]
    for charge in CHARGES:
        if charge != 1.0:
            out.append((f"charge={charge:g}", [("C1", co_beats_classical(1.0, charge)),
                                               ("C2", [alphabeta_beats_vanilla(t, charge) for t in BUDGETS])]))
    for t in BUDGETS:
        out.append((f"budget={t:g}", [("C1", co_beats_classical(t, 1.0)), ("C2", [alphabeta_beats_vanilla(t, 1.0)]),
                                      ("C3", [prior_beats_preselection(t)]), ("C4", [vanilla_beats_openspiel(t)])]))
    return out


@dataclass(frozen=True)
class ClaimTest:
    """A claim at one condition: its conjunction's outcome, each component's, and which decided."""

    condition: str
    claim: str
    outcome: cl.Outcome
    parts: tuple[tuple[Component, PairCounts, cl.Outcome], ...]
    deciding: int


def claim_test(pairs: pd.DataFrame, condition: str, claim: str, components: list[Component]) -> ClaimTest | str:
    """The claim's test, or (a component without a decided pair) a sentence saying what is missing."""
    parts = []
    absent = []
    for c in components:
        counts = pair_counts(pairs, c.store, c.a, c.b, c.budget, c.charge)
        if counts is None or counts.zero + counts.half + counts.one == 0:
            absent.append(f"{c.name} in {c.store}")
            continue
        parts.append((c, counts, cl.pairs_above(claim, c.name, counts.zero, counts.half, counts.one,
                                                counts.left_out)))
    if absent:
        return f"{claim} at {condition} not tested: no decided pair yet of " + "; ".join(absent) + "."
    outcome = cl.conjunction(claim, [p[2] for p in parts])
    deciding = next(i for i, p in enumerate(parts) if p[2].component == outcome.component)
    return ClaimTest(condition, claim, outcome, tuple(parts), deciding)


@dataclass(frozen=True)
class Judgement:
    """Every family judged: the claims' tests, their Holm-adjusted verdicts, and what was not tested."""

    tests: tuple[ClaimTest, ...]
    judged: tuple[cl.Judged, ...]
    untested: tuple[str, ...]


def judge_all(pairs: pd.DataFrame) -> Judgement:
    """Every family of plan §6, each judged under its own Holm correction (``claims.judge_family``)."""
    tests: list[ClaimTest] = []
    judged: list[cl.Judged] = []
    untested: list[str] = []
    for condition, claims in families():
        done = []
        for claim, components in claims:
            result = claim_test(pairs, condition, claim, components)
            if isinstance(result, str):
                untested.append(result)
            else:
                done.append(result)
        tests += done
        judged += cl.judge_family(condition, [t.outcome for t in done])
    return Judgement(tuple(tests), tuple(judged), tuple(untested))


def charge_robustness(judged: tuple[cl.Judged, ...] | list[cl.Judged]) -> dict[str, tuple[list[str], str]]:
    """C1 and C2: the verdicts at ×0.5, ×1 (the default family), ×2 and the label (plan §3):
    ``robust`` (supported at all three), ``charge-dependent`` (at some), ``supported at no charge``,
    or ``incomplete`` (not tested at every charge yet)."""
    by = {(j.outcome.claim, j.condition): j.verdict for j in judged}
    out = {}
    for claim in ("C1", "C2"):
        verdicts = [by.get((claim, DEFAULT if c == 1.0 else f"charge={c:g}"), "") for c in CHARGES]
        label = cl.sensitivity_label(verdicts, missing="", varies="charge-dependent", nowhere="supported at no charge")
        out[claim] = (verdicts, label)
    return out


# ---------------------------------------------------------------------------------------------
# The ladder


def ladder_name(agent: str, charge: float) -> str:
    """An agent's name on the ladder: alpha-beta at a node charge other than ×1 is ``alphabeta×0.5`` etc."""
    return f"{agent}×{charge:g}" if agent == ALPHABETA and not math.isnan(charge) and charge != 1.0 else agent


@dataclass(frozen=True)
class Ladder:
    """One budget's Bradley–Terry fit with its pair bootstrap (None: not enough games linked yet)."""

    budget: float
    boot: Any  # BootstrapRatings
    note: str = ""


def ladder(study: KnowledgeGames, budget: float, *, resamples: int = RESAMPLES, seed: int = SEED) -> Ladder | str:
    """The budget's ladder from every decided game at that budget (all six stores) whose pair is
    complete (both games stored: every game of a complete store), or why there is none yet."""
    from boopexp.analysis.ratings_bootstrap import bootstrap_ratings

    games = study.games[_same(study.games["budget"], budget)]
    games = games[games["p1"] != games["p2"]]
    p1 = [ladder_name(a, c) for a, c in zip(games["p1"], games["charge"])]
    p2 = [ladder_name(b, c) for b, c in zip(games["p2"], games["charge"])]
    # a pair: game i of both orders of one pairing of one store at one node charge
    keys = list(zip(games["store"], [tuple(sorted((x, y))) for x, y in zip(p1, p2)], games["charge"].fillna(-1.0),
                    games["game_index"]))
    # only complete pairs: a pairing of an unfinished store played in one order so far would
    # confound the agents' ratings with the Blue seat
    stored: dict[tuple, int] = {}
    for key in keys:
        stored[key] = stored.get(key, 0) + 1
    keep = np.array([stored[key] == 2 for key in keys], dtype=bool)
    p1 = [x for x, k in zip(p1, keep) if k]
    p2 = [x for x, k in zip(p2, keep) if k]
    keys = [x for x, k in zip(keys, keep) if k]
    winner = [w if isinstance(w, str) else None for w in games["winner"][keep]]
    present = set(p1) | set(p2)
    if ANCHOR not in present:
        return f"ladder at {budget:g} s: no complete pair of the anchor {ANCHOR} yet."
    agents = [a for a in AGENTS if a in present] + sorted(present - set(AGENTS))
    try:
        boot = bootstrap_ratings(p1, p2, winner, agents=agents, anchor=ANCHOR, resamples=resamples, seed=seed,
                                 pairs=keys)
    except ConfigError as exc:
        return f"ladder at {budget:g} s not fitted: {exc}."
    return Ladder(budget, boot)
