"""The sequential test of a pairing (pure: fastchess's logistic GSPRT on game pairs, ``sprt:``
parsing).

Sequential probability ratio test (SPRT) for one pairing, in the form engine testers use.

``sprt: {elo0: 0, elo1: 30, alpha: 0.05, beta: 0.05}`` tests, per pairing "A vs B" played both
ways, H0: A is elo0 Elo stronger than B against H1: A is elo1 Elo stronger (logistic Elo: an
expected score of 1 / (1 + 10^(−elo/400))). The pairing stops as soon as the log-likelihood
ratio (LLR) leaves (lower, upper) = (ln(β / (1 − α)), ln((1 − β) / α)): H1 accepted at or above
``upper``, H0 at or below ``lower``; ``games_per_side`` is the maximum ("max reached").

The LLR is fastchess's generalised SPRT with its ``logistic`` model on **pentanomial** counts
(its default when games are played in pairs with colours reversed): the games are taken in
pairs — game i of "A vs B" and game i of "B vs A", the same seeds' identities with the seats
swapped — and a pair scores A 0, ½ or 1 while no game was drawn (boop. has no draw). A drawn
game (``termination: "draw"``, Connect Four's full board) scores ½, so a pair of a draw and a
decided game scores a quarter point: from the first such pair, the test reads all its pairs in
fastchess's five categories 0, ¼, ½, ¾, 1 (the pentanomial model proper; before it, and in every
test without draws, the two quarter-point categories cannot occur and are left out rather than
counted as empty, so a test without draws is the one it always was). A pair of two draws scores
½, as a win and a loss do. For each hypothesis the pair-score distribution nearest to the observed one with
expected score s_k = L(elo_k) is the constrained maximum-likelihood estimate
p_i = p̂_i / (1 + θ (a_i − s_k)) (M. Van den Bergh, "Comments on Normalized Elo", proposition 1.1),
θ the root of Σ p̂_i (a_i − s_k) / (1 + θ (a_i − s_k)) = 0, and
LLR = N Σ p̂_i ln(p1_i / p0_i). As in fastchess, an empty category counts 1e-3.
Why pairs: the first-move effect in boop. is large (P2 wins up to 9 games in 10 in some mirrors),
and a pair holds the seats balanced; treating the games as independent Bernoulli trials
(the trinomial model, which on decided games is Wald's classical Bernoulli SPRT,
:func:`bernoulli_llr`) ignores that and overstates the variance.

Decided and drawn games only: a pair in which either game has no winner (the ply cap) is left
out and counted. The decision is taken on pairs in game-index order, stopping at the first pair whose
two games are not both stored: it depends only on the outcomes of a prefix of game identities,
never on the number of workers or on which game finished first.

No engine (``math`` and the Elo scale of ``experiments.elo``): the runner imports it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from boopexp import schema
from boopexp.errors import ConfigError
from boopexp.experiments.elo import expected_score
from boopexp.game.sides import Side
from boopexp.play.contract import is_draw
from boopexp.play.identity import pairing_name

#: What a pair of games scores for the pairing's first agent (boop. has no draws).
PAIR_SCORES: tuple[float, float, float] = (0.0, 0.5, 1.0)
#: What a pair of games scores once a game can be drawn (half a point): the pentanomial categories.
PENTANOMIAL_SCORES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)

#: fastchess's stand-in for an empty category (keeps every log finite).
EMPTY_CATEGORY = 1e-3

#: Game indices per seating scheduled at once while a pairing is undecided (config ``sprt.batch``).
DEFAULT_BATCH = 8

H0, H1, RUNNING, MAX_REACHED = "H0", "H1", "running", "max reached"

_KEYS = ("elo0", "elo1", "alpha", "beta", "batch")


@dataclass(frozen=True)
class SprtSpec:
    """The test's design: hypotheses in logistic Elo, error rates, and the scheduling batch.

    Attributes:
        elo0, elo1: H0 and H1, the first agent's advantage in Elo (elo0 < elo1).
        alpha: the probability of accepting H1 when H0 holds.
        beta: the probability of accepting H0 when H1 holds.
        batch: game indices per seating the runner schedules at once for an undecided pairing
            (does not change the decision, only how many games past it get played).
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    batch: int = DEFAULT_BATCH

    @property
    def lower(self) -> float:
        """ln(β / (1 − α)): at or below, H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """ln((1 − β) / α): at or above, H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    def to_dict(self) -> dict[str, Any]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta, "batch": self.batch}


def parse_sprt(src: str, data: Any) -> SprtSpec | None:
    """The config's ``sprt:`` mapping as a :class:`SprtSpec` (None when absent).

    Raises:
        ConfigError: not a mapping, an unknown or missing key, a non-number, elo0 >= elo1,
            alpha or beta outside (0, 1), alpha + beta >= 1, a batch that is not a positive integer.
    """
    if data is None:
        return None
    with schema.within(src):
        schema.mapping(data, "sprt", "a mapping like {elo0: 0, elo1: 30, alpha: 0.05, beta: 0.05}")
        schema.check_keys(data, _KEYS, "sprt")
        schema.require_keys(data, ("elo0", "elo1"), "sprt")
        values: dict[str, Any] = {key: float(schema.number(data[key], f"sprt.{key}")) for key in ("elo0", "elo1")}
        for key in ("alpha", "beta"):
            if key in data:
                values[key] = float(schema.number(data[key], f"sprt.{key}", 0, 1, open_low=True, open_high=True))
        if "batch" in data:
            values["batch"] = schema.positive_int(data["batch"], "sprt.batch")
        spec = SprtSpec(**values)
        if spec.elo0 >= spec.elo1:
            raise ConfigError(f"sprt.elo0 must be less than sprt.elo1, got {spec.elo0:g} and {spec.elo1:g}")
        if spec.alpha + spec.beta >= 1.0:
            raise ConfigError(f"sprt.alpha + sprt.beta must be less than 1, got {spec.alpha + spec.beta:g}")
    return spec


def llr_logistic(counts: Sequence[float], scores: Sequence[float], elo0: float, elo1: float) -> float:
    """fastchess's GSPRT log-likelihood ratio (``logistic`` model) for outcome counts.

    Args:
        counts: how often each outcome occurred (an empty category counts 1e-3).
        scores: what each outcome scores, in [0, 1], increasing.
        elo0, elo1: the hypotheses in logistic Elo.

    Returns:
        N Σ p̂_i ln(p1_i / p0_i), p_k the maximum-likelihood distribution of mean L(elo_k).
    """
    regular = [c if c > 0 else EMPTY_CATEGORY for c in counts]
    total = sum(regular)
    observed = [c / total for c in regular]
    p0 = _constrained_mle(observed, scores, expected_score(elo0))
    p1 = _constrained_mle(observed, scores, expected_score(elo1))
    return total * sum(o * (math.log(b) - math.log(a)) for o, a, b in zip(observed, p0, p1))


def _constrained_mle(observed: Sequence[float], scores: Sequence[float], s: float) -> list[float]:
    """The distribution on ``scores`` of mean ``s`` that maximises Σ p̂_i ln p_i (bisection on θ)."""
    shifted = [a - s for a in scores]

    def f(theta: float) -> float:  # decreasing in theta on the admissible interval
        return sum(o * d / (1.0 + theta * d) for o, d in zip(observed, shifted))

    lo, hi = -1.0 / max(shifted), -1.0 / min(shifted)
    # The root lies strictly inside (lo, hi), where every 1 + θ d_i > 0.
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    theta = 0.5 * (lo + hi)
    return [o / (1.0 + theta * d) for o, d in zip(observed, shifted)]


def bernoulli_llr(wins: int, losses: int, elo0: float, elo1: float) -> float:
    """Wald's SPRT for independent decided games: W ln(s1/s0) + L ln((1 − s1)/(1 − s0)).

    What :func:`llr_logistic` gives on (losses, wins) with scores (0, 1); the runner uses pairs.
    """
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return wins * math.log(s1 / s0) + losses * math.log((1.0 - s1) / (1.0 - s0))


@dataclass(frozen=True)
class SprtState:
    """Where a pairing's test stands after the consecutive prefix of its stored pairs.

    Attributes:
        llr: the log-likelihood ratio at the decision (or after the last pair read).
        lower, upper: the bounds.
        decision: "H1", "H0", "running" or "max reached".
        pairs: pairs used (both games with a winner or drawn).
        counts: pairs scoring the first agent 0, ½ and 1 (:data:`PAIR_SCORES`); once a game of
            the test was drawn, 0, ¼, ½, ¾ and 1 (:data:`PENTANOMIAL_SCORES`).
        left_out: pairs in the prefix left out because a game had no winner.
        last_index: the game index of the last pair read (the decision's, if decided); -1 if none.
    """

    llr: float
    lower: float
    upper: float
    decision: str
    pairs: int
    counts: tuple[int, ...]
    left_out: int
    last_index: int

    @property
    def decided(self) -> bool:
        return self.decision in (H0, H1)

    def to_dict(self) -> dict[str, Any]:
        return {"llr": self.llr, "lower": self.lower, "upper": self.upper, "decision": self.decision,
                "pairs": self.pairs, "counts": list(self.counts), "left_out": self.left_out,
                "last_index": self.last_index}


def sequential(
    forward: Mapping[int, float | None],
    backward: Mapping[int, float | None],
    spec: SprtSpec,
    max_index: int,
) -> SprtState:
    """Run the test over the pairs of a pairing, in game-index order, up to the first gap.

    Args:
        forward: game index -> the first agent's score in game i of "A vs B" (1.0 win, 0.5
            draw, 0.0 loss, None no winner), for the games stored.
        backward: the same for game i of "B vs A" (A moves second).
        spec: the test.
        max_index: games per side planned (the maximum).

    Returns:
        The state at the first crossing of a bound, else after the last consecutive pair stored.
    """
    counts = [0, 0, 0, 0, 0]  # pairs by the first agent's score in quarter points: 0, ¼, ½, ¾, 1
    left_out = 0
    llr = 0.0
    last = -1

    def observed() -> tuple[tuple[int, ...], tuple[float, ...]]:
        """The counts and their scores: three categories until a pair scores a quarter point."""
        if counts[1] or counts[3]:
            return tuple(counts), PENTANOMIAL_SCORES
        return (counts[0], counts[2], counts[4]), PAIR_SCORES

    def state(decision: str) -> SprtState:
        pairs = observed()[0]
        return SprtState(llr, spec.lower, spec.upper, decision, sum(pairs), pairs, left_out, last)

    for i in range(max_index):
        if i not in forward or i not in backward:
            return state(RUNNING)
        last = i
        a, b = forward[i], backward[i]
        if a is None or b is None:
            left_out += 1
            continue
        counts[int(round(2 * (a + b)))] += 1
        llr = llr_logistic(*observed(), spec.elo0, spec.elo1)
        if llr >= spec.upper or llr <= spec.lower:
            return state(H1 if llr >= spec.upper else H0)
    return state(MAX_REACHED)


def pairing_groups(pairings: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The SPRT groups of a plan: each unordered pair of different agents once, as (A, B) with
    A the first agent of the first pairing that names them (mirror pairings are not tested)."""
    seen: set[frozenset[str]] = set()
    groups = []
    for p1, p2 in pairings:
        key = frozenset((p1, p2))
        if p1 == p2 or key in seen:
            continue
        seen.add(key)
        groups.append((p1, p2))
    return groups


def state_from_records(
    first: str, second: str, records: Sequence[Mapping[str, Any]], spec: SprtSpec, max_index: int,
    hashes: Mapping[str, str] | None = None,
) -> SprtState:
    """The test of the group (first, second) from stored game records (others are ignored).

    Args:
        first, second: the agents; positive Elo = ``first`` stronger.
        records: game records (any pairings; only "first vs second" and "second vs first" used).
        spec: the test.
        max_index: games per side planned.
        hashes: pairing -> config_hash: only records of the planned settings (default: all).
    """
    forward: dict[int, float | None] = {}
    backward: dict[int, float | None] = {}
    ahead, behind = pairing_name(first, second), pairing_name(second, first)
    for r in records:
        pairing = r.get("pairing")
        if hashes is not None and (pairing is None or r.get("config_hash") != hashes.get(pairing)):
            continue
        if pairing == ahead:
            forward[int(r["game_index"])] = _score(r, Side.P1)
        elif pairing == behind:
            backward[int(r["game_index"])] = _score(r, Side.P2)
    return sequential(forward, backward, spec, max_index)


def _score(record: Mapping[str, Any], side: Side) -> float | None:
    """What a game scores for ``side``: 1 a win, ½ a draw, 0 a loss, None no winner (the ply cap)."""
    winner = record.get("winner")
    if winner is None:
        return 0.5 if is_draw(record) else None
    return float(winner == side)


@dataclass(frozen=True)
class PairingTest:
    """The test of one pairing played both ways.

    Attributes:
        first, second: the agents; the Elo hypotheses are ``first``'s advantage.
        forward, backward: the pairing strings "first vs second" and "second vs first".
        state: where the test stands.
        spec: the test's design.
    """

    first: str
    second: str
    forward: str
    backward: str
    state: SprtState
    spec: SprtSpec

    @property
    def pairings(self) -> tuple[str, str]:
        return (self.forward, self.backward)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``boopexp status --json``)."""
        return {"first": self.first, "second": self.second, "pairings": list(self.pairings),
                **self.spec.to_dict(), **self.state.to_dict()}

    def describe(self) -> str:
        """One line: 'a vs b (both ways): LLR 3.01 in (-2.94, 2.94) for [0, 30] Elo: H1 after 24 pairs'."""
        s, spec = self.state, self.spec
        after = f"after {s.pairs} pair{'s' if s.pairs != 1 else ''}"
        left = f", {s.left_out} left out (no winner)" if s.left_out else ""
        return (f"{self.first} vs {self.second} (both ways): LLR {s.llr:.2f} in ({s.lower:.2f}, {s.upper:.2f}) "
                f"for [{spec.elo0:g}, {spec.elo1:g}] Elo: {s.decision} {after}{left}")


def plan_tests(spec: SprtSpec, entries: Sequence[Any], records: Sequence[Mapping[str, Any]]) -> tuple[PairingTest, ...]:
    """The SPRT of every pairing of a plan that is played both ways (mirrors are not tested).

    Args:
        spec: the test.
        entries: planned pairings with ``pairing``, ``p1``, ``p2``, ``config_hash`` and ``games``
            (:class:`boopexp.experiments.config.PlanEntry` or :class:`boopexp.experiments.config.PlannedPairing`).
        records: stored game records (only those of the planned settings count).
    """
    by_pairing = {e.pairing: e for e in entries}
    tests = []
    for first, second in pairing_groups([(e.p1, e.p2) for e in entries]):
        forward, backward = by_pairing.get(pairing_name(first, second)), by_pairing.get(pairing_name(second, first))
        if forward is None or backward is None:
            continue
        hashes = {forward.pairing: forward.config_hash, backward.pairing: backward.config_hash}
        state = state_from_records(first, second, records, spec, min(forward.games, backward.games), hashes)
        tests.append(PairingTest(first, second, forward.pairing, backward.pairing, state, spec))
    return tuple(tests)
