"""**The** paired design of a study's stores: games from one opening as pairs, their counts, the
claims tested on them, each family judged, and a ladder fitted from the complete pairs.

A study that plays every pairing from a suite of openings (docs/openings.md: pair i of A–B is game
i of "A vs B" and game i of "B vs A", both from position i) reads its stores here
(:func:`load_study`), forms the pairs (:func:`pair_frame`), counts them per condition
(:func:`pair_counts`), tests each claim's components with
:func:`boopexp.studies.claims.pairs_above` and their conjunction (:func:`claim_test`), judges each
family under its own Holm correction (:func:`judge_families`) and fits a Bradley–Terry ladder
from the complete pairs with a bootstrap that resamples pairs (:func:`fit_ladder`). The knowledge
study (docs/knowledge-plan.md) and the generality study (docs/generality-plan.md) are its users;
what differs between them — the stores, the "charge" a condition carries beside its budget, the
claims and families, the ladder's agents — is handed in.

**Conditions**: a game's budget in device-seconds and its *charge*, a number the study reads from
the store's plan item (:data:`ChargeOf`): the knowledge study's alpha-beta node charge
(``node_cost_scale``, NaN in a pairing without alpha-beta), the generality study's scale of the
game's ``solver_move`` cost (1 unless swept).

**Pairs**: a pair scores A 1, ½ or 0; a pair with a game without a winner is left out and counted
(a pairing with more than 5 % of its pairs left out is flagged); a game whose partner is not
stored (an incomplete store) is counted as unpaired. A is the first agent of the first planned
pairing that names the two (:func:`boopexp.experiments.sprt.pairing_groups`, as the SPRT orients
its pairs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boopexp.errors import ConfigError
from boopexp.experiments.sprt import pairing_groups
from boopexp.experiments.store import GameStore, has_games_files
from boopexp.studies import claims as cl
from boopexp.studies.stores import CONFIG_PATTERN, check_study_folder, read_outcomes

#: A pairing with more than this share of its pairs left out (a game without a winner) is flagged.
LEFT_OUT_FLAG = 0.05
#: A game's result for the pairing's first agent A in the pair frame: won, lost, no winner, not stored.
WON, LOST, UNDECIDED, ABSENT = 1, 0, -1, -2

#: A condition's charge from the store's name, one plan item of its config.yaml and the whole
#: config.yaml (NaN: the condition carries none).
ChargeOf = Callable[[str, Mapping[str, Any], Mapping[str, Any]], float]


def charge_label(charge: float) -> str:
    """``×0.5``, ``×1``, ``×2``."""
    return f"×{charge:g}"


# ---------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class StudyGames:
    """The games of a study as one frame, and what is missing.

    ``games``: one row per stored game of a store's plan: store, pairing, p1, p2, winner,
    game_index, budget (device-seconds), charge (the study's, NaN where a condition has none).
    ``groups``: per store, the oriented pairings (A, B) in plan order. ``missing``: stores without
    games; ``incomplete``: store → (games stored, games planned).
    """

    games: pd.DataFrame
    groups: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    incomplete: Mapping[str, tuple[int, int]] = field(default_factory=dict)


GAME_COLUMNS = ("store", "pairing", "p1", "p2", "winner", "game_index", "budget", "charge")


def _empty_games() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=float if c in ("budget", "charge") else
                                      "int64" if c == "game_index" else object) for c in GAME_COLUMNS})


def plan_conditions(folder: Path, charge_of: ChargeOf) -> tuple[dict[str, tuple[float, float]],
                                                                 tuple[tuple[str, str], ...]]:
    """{config_hash: (budget seconds, charge)} of a store's plan, and its oriented pairings (A, B)
    in plan order.

    Raises:
        ConfigError: config.yaml has no plan whose items give the budget's seconds (a store not
            written by ``boopexp run``).
    """
    doc = GameStore(folder).read_config()
    plan = doc.get("plan") if isinstance(doc, Mapping) else None
    top: Mapping[str, Any] = doc if isinstance(doc, Mapping) else {}
    source = str(folder / "config.yaml")
    if not isinstance(plan, list) or not plan:
        raise ConfigError(f"{source}: no 'plan:' list; the study's stores are written by boopexp run")
    conditions: dict[str, tuple[float, float]] = {}
    sides: list[tuple[str, str]] = []
    for i, item in enumerate(plan):
        try:
            # A plan without a sweep keeps its budget at the top of config.yaml, not in each item.
            budget: Any = item.get("budget") or top.get("budget")
            seconds = float(budget["seconds"])
            conditions[str(item["config_hash"])] = (seconds, float(charge_of(folder.name, item, top)))
            sides.append((str(item["p1"]), str(item["p2"])))
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{source}: plan item {i} lacks config_hash/p1/p2/budget.seconds") from None
    return conditions, tuple(pairing_groups(sides))


def load_study(root: Path | str, stores: Sequence[str], study: str, charge_of: ChargeOf, *,
               config_pattern: str = CONFIG_PATTERN) -> StudyGames:
    """Read the study's ``stores`` under ``root`` (those present; the others are listed as missing)
    through every study's reader (:func:`boopexp.studies.stores.read_outcomes`: each game once,
    only the games of the store's plan).

    Raises:
        ConfigError: ``root`` is not a folder, holds none of the stores, or one of them holds
            another experiment's games (nothing is read or written).
    """
    root = Path(root)
    check_study_folder(root, stores, study, config_pattern)
    frames = []
    groups: dict[str, tuple[tuple[str, str], ...]] = {}
    missing: list[str] = []
    incomplete: dict[str, tuple[int, int]] = {}
    for name in stores:
        folder = root / name
        if not has_games_files(folder):
            missing.append(name)
            continue
        conditions, groups[name] = plan_conditions(folder, charge_of)
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
    return StudyGames(games=games, groups=groups, missing=tuple(missing), incomplete=incomplete)


# ---------------------------------------------------------------------------------------------
# Pairs


PAIR_KEYS = ["store", "a", "b", "budget", "charge"]


def pair_frame(study: StudyGames) -> pd.DataFrame:
    """One row per pair slot: store, a, b, budget, charge, game_index and A's result in game i of
    "A vs B" (``forward``) and of "B vs A" (``backward``): :data:`WON`, :data:`LOST`,
    :data:`UNDECIDED` or :data:`ABSENT` (not stored). Mirror games (A vs A) are skipped."""
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
        # NaN is no dict key (two NaNs differ): a condition without a charge is keyed by None
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
        """More than 5 % of the pairs left out."""
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


def same(values: pd.Series, value: float) -> np.ndarray:
    """Where ``values`` equals ``value``, NaN matching NaN (a condition without a charge)."""
    x = values.to_numpy(float)
    return np.isnan(x) if math.isnan(value) else np.isclose(x, value)


def pair_counts(pairs: pd.DataFrame, store: str, a: str, b: str, budget: float, charge: float) -> PairCounts | None:
    """A's counts against B at one condition of one store (either orientation); None without a game."""
    for first, second, flip in ((a, b, False), (b, a, True)):
        rows = pairs[(pairs["store"] == store) & (pairs["a"] == first) & (pairs["b"] == second)
                     & same(pairs["budget"], budget) & same(pairs["charge"], charge)]
        if len(rows):
            counts = count_pairs(rows["forward"].to_numpy(), rows["backward"].to_numpy())
            return counts.swapped() if flip else counts
    return None


# ---------------------------------------------------------------------------------------------
# The claims


@dataclass(frozen=True)
class Component:
    """One pairing a claim tests: A beats B in ``store`` at ``budget`` s and ``charge`` (NaN: none);
    ``label`` (a game) prefixes its name where one claim spans several (names are unique in a claim)."""

    claim: str
    store: str
    a: str
    b: str
    budget: float
    charge: float
    label: str = ""

    @property
    def name(self) -> str:
        where = f"{self.budget:g} s" + ("" if math.isnan(self.charge) else f", {charge_label(self.charge)}")
        return (f"{self.label}: " if self.label else "") + f"{self.a} vs {self.b} ({where})"


@dataclass(frozen=True)
class ClaimTest:
    """A claim at one condition: its conjunction's outcome, each component's, and which decided."""

    condition: str
    claim: str
    outcome: cl.Outcome
    parts: tuple[tuple[Component, PairCounts, cl.Outcome], ...]
    deciding: int


def claim_test(pairs: pd.DataFrame, condition: str, claim: str, components: Sequence[Component]) -> ClaimTest | str:
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


#: A study's families: (condition, [(claim, its components)]).
Families = Sequence[tuple[str, Sequence[tuple[str, Sequence[Component]]]]]


def judge_families(pairs: pd.DataFrame, families: Families,
                   extra: Mapping[str, Sequence[cl.Outcome]] | None = None) -> Judgement:
    """Every family, each judged under its own Holm correction (``claims.judge_family``).

    ``extra``: per condition, outcomes not tested on pairs (the generality study's slope across
    games) that join that family's Holm correction after its pair claims."""
    tests: list[ClaimTest] = []
    judged: list[cl.Judged] = []
    untested: list[str] = []
    for condition, claims in families:
        done = []
        for claim, components in claims:
            result = claim_test(pairs, condition, claim, components)
            if isinstance(result, str):
                untested.append(result)
            else:
                done.append(result)
        tests += done
        outcomes = [t.outcome for t in done] + list((extra or {}).get(condition, ()))
        judged += cl.judge_family(condition, outcomes)
    return Judgement(tuple(tests), tuple(judged), tuple(untested))


# ---------------------------------------------------------------------------------------------
# The ladder


@dataclass(frozen=True)
class Ladder:
    """One ladder's Bradley–Terry fit with its pair bootstrap; ``label`` names it (a game, or "")."""

    budget: float
    boot: Any  # BootstrapRatings
    note: str = ""
    label: str = ""


def fit_ladder(games: pd.DataFrame, budget: float, *, agents: Sequence[str], anchor: str, resamples: int, seed: int,
               name_of: Callable[[str, float], str] = lambda agent, charge: agent, label: str = "") -> Ladder | str:
    """The ladder of ``games`` (a :class:`StudyGames` frame, already restricted to the ladder's
    stores) at ``budget``: every decided game whose pair is complete (both games stored), each
    agent named by ``name_of(agent, charge)``, in the order of ``agents`` (others after, sorted),
    anchored at ``anchor``; or why there is none yet."""
    from boopexp.analysis.ratings_bootstrap import bootstrap_ratings

    where = f"ladder{' of ' + label if label else ''} at {budget:g} s"
    games = games[same(games["budget"], budget)]
    games = games[games["p1"] != games["p2"]]
    p1 = [name_of(a, c) for a, c in zip(games["p1"], games["charge"])]
    p2 = [name_of(b, c) for b, c in zip(games["p2"], games["charge"])]
    # a pair: game i of both orders of one pairing of one store at one charge
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
    if anchor not in present:
        return f"{where}: no complete pair of the anchor {anchor} yet."
    order = [a for a in agents if a in present] + sorted(present - set(agents))
    try:
        boot = bootstrap_ratings(p1, p2, winner, agents=order, anchor=anchor, resamples=resamples, seed=seed,
                                 pairs=keys)
    except ConfigError as exc:
        return f"{where} not fitted: {exc}."
    return Ladder(budget, boot, label=label)
