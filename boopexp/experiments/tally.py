"""A store's games counted against a plan: ``PairingScore`` (a ``PlanEntry`` and its counts) and its
``with_game`` (**the** win tally of a pairing), ``score``, ``forfeits``, ``unplanned``;
``RunTally``, a run's count (the store's games, then each game it stores: scores, forfeits, the
SPRT's records).

The store (:mod:`boopexp.experiments.store`) keeps files; this module scores what it holds.
:meth:`PairingScore.with_game` is **the** win tally of a pairing: the runner's running score
(:class:`RunTally`), ``boopexp status``, the tuner and the report's counts all count with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from boopexp.errors import StoreError
from boopexp.experiments.config import PlanEntry
from boopexp.game.sides import Side
from boopexp.play.contract import FORFEITS, WINNERS, WINNERS_TEXT, Termination

if TYPE_CHECKING:
    from boopexp.experiments.store import OutcomeColumns


@dataclass(frozen=True)
class PairingScore:
    """Progress of one planned pairing (``entry``): games done, wins by side, draws, games without
    a winner (stopped at the ply cap): done = p1_wins + p2_wins + draws + no_winner."""

    entry: PlanEntry
    done: int = 0
    p1_wins: int = 0
    p2_wins: int = 0
    no_winner: int = 0
    #: games the rules ended drawn (``termination: "draw"``): half a point to each side
    draws: int = 0

    @classmethod
    def blank(cls) -> PairingScore:
        """A tally of no pairing in particular (to count a list of winners)."""
        return cls(PlanEntry("", "", "", "", 0))

    @property
    def pairing(self) -> str:
        return self.entry.pairing

    @property
    def p1(self) -> str:
        return self.entry.p1

    @property
    def p2(self) -> str:
        return self.entry.p2

    @property
    def config_hash(self) -> str:
        return self.entry.config_hash

    @property
    def planned(self) -> int:
        """The games this store is to hold: the pairing's, or a shard's share of them."""
        return self.entry.share

    @property
    def sweep(self) -> tuple[tuple[str, Any], ...]:
        return self.entry.sweep

    @property
    def label(self) -> str:
        """The pairing string, with its sweep point in brackets if it has one."""
        return self.entry.label

    def with_game(self, winner: str | None, termination: str | None = None) -> PairingScore:
        """This score and one more game done, won by ``winner`` (a :class:`~boopexp.game.sides.Side`
        or its string as read from JSON, or None: a draw when ``termination`` is ``"draw"``, else
        the ply cap). The one win tally of a pairing."""
        if winner not in WINNERS:
            raise StoreError(f"winner {winner!r} of a {self.pairing!r} game is not {WINNERS_TEXT}")
        drawn = winner is None and termination == Termination.DRAW
        return dataclasses.replace(
            self,
            done=self.done + 1,
            p1_wins=self.p1_wins + (winner == Side.P1),
            p2_wins=self.p2_wins + (winner == Side.P2),
            no_winner=self.no_winner + (winner is None and not drawn),
            draws=self.draws + drawn,
        )

    def score(self, side: Side) -> float:
        """``side``'s points: its wins and half of the draws (a ply-capped game scores nothing)."""
        return (self.p1_wins if side == Side.P1 else self.p2_wins) + self.draws / 2

    def to_dict(self) -> dict[str, Any]:
        """The flat form ``status --json`` prints (pairing, p1, p2, config_hash, planned, done, …;
        ``draws`` only when the pairing has one, so a game without draws prints as it always did)."""
        out = {"pairing": self.pairing, "p1": self.p1, "p2": self.p2, "config_hash": self.config_hash,
               "planned": self.planned, "done": self.done, "p1_wins": self.p1_wins, "p2_wins": self.p2_wins,
               "no_winner": self.no_winner, "sweep": self.sweep}
        if self.draws:
            out = {**{k: v for k, v in out.items() if k != "sweep"}, "draws": self.draws, "sweep": self.sweep}
        return out


def score(entries: Iterable[PlanEntry], records: Iterable[Mapping[str, Any]]) -> tuple[PairingScore, ...]:
    """Tally the records that belong to the plan (other settings and extra indices are not counted).

    Args:
        entries: the planned pairings.
        records: deduplicated game records (:attr:`boopexp.experiments.store.StoreScan.records`).
    """
    entries = tuple(entries)
    scores = {(e.config_hash, e.pairing): PairingScore(e) for e in entries}
    for r in records:
        key = (r["config_hash"], r["pairing"])
        s = scores.get(key)
        if s is not None and s.entry.counts(r["game_index"]):
            scores[key] = s.with_game(r["winner"], r.get("termination"))
    return tuple(scores[(e.config_hash, e.pairing)] for e in entries)


def forfeits(entries: Iterable[PlanEntry], records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Forfeited games of the plan per forfeiting agent: ``{agent: {termination: games}}``.

    A forfeit is a decided game (the opponent is its ``winner``); the loser is the forfeiting agent.
    """
    planned = {(e.config_hash, e.pairing): e for e in entries}
    out: dict[str, dict[str, int]] = {}
    for r in records:
        if r.get("termination") not in FORFEITS or not _planned(planned, r):
            continue
        agent = str((r.get("forfeit") or {}).get("agent") or (r.get("p2") if r["winner"] == Side.P1 else r.get("p1")))
        slot = out.setdefault(agent, {})
        slot[r["termination"]] = slot.get(r["termination"], 0) + 1
    return out


class RunTally:
    """A run's count of its plan: the store's games (read once, under its lock), then each game
    the run stores (:meth:`add`): what the run reports, game by game and at the end.

    Args:
        entries: the planned pairings the run plays.
        stored: the store's games as columns (:attr:`boopexp.experiments.store.StoreWriter.stored`).
        sprt: keep the records the SPRT reads (read one by one: only for a run with ``sprt:``).

    Attributes:
        skipped: the plan's games already stored when the run began.
        played: the games this run stored.
        records: with ``sprt``, the records the test reads: the stored ones (as summaries), then
            the run's own, in that order; empty without it.
    """

    def __init__(self, entries: Iterable[PlanEntry], stored: OutcomeColumns, sprt: bool = False) -> None:
        self.entries = tuple(entries)
        # keyed like the games: a sweep plans the same pairing string once per point
        self._scores = {(s.config_hash, s.pairing): s for s in score_columns(self.entries, stored.table)[0]}
        self._forfeited: list[Mapping[str, Any]] = list(stored.forfeited())  # few: counted by :func:`forfeits`
        self.sprt = sprt
        self.records: list[Mapping[str, Any]] = list(stored.records()) if sprt else []
        self.skipped = sum(s.done for s in self._scores.values())
        self.played = 0

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one game the run stored (a game of the plan: its pairing is one of ``entries``)."""
        key = (record["config_hash"], record["pairing"])
        self._scores[key] = self._scores[key].with_game(record["winner"], record.get("termination"))
        self.played += 1
        if record.get("termination") in FORFEITS:
            self._forfeited.append(record)
        if self.sprt:
            self.records.append(record)

    @property
    def scores(self) -> tuple[PairingScore, ...]:
        """Per planned pairing, games done and wins (previous runs included), in plan order."""
        return tuple(self._scores.values())

    @property
    def forfeits(self) -> dict[str, dict[str, int]]:
        """The plan's forfeited games (previous runs included) per forfeiting agent (:func:`forfeits`)."""
        return forfeits(self.entries, self._forfeited)

    @property
    def planned(self) -> int:
        """The games of the plan (this store's share of them)."""
        return sum(e.share for e in self.entries)

    @property
    def to_play(self) -> int:
        """The plan's games the store lacked when the run began."""
        return self.planned - self.skipped

    @property
    def done(self) -> int:
        """The plan's games stored: before the run and by it."""
        return self.skipped + self.played


def unplanned(entries: Iterable[PlanEntry], records: Iterable[Mapping[str, Any]]) -> int:
    """How many records are outside the plan (other settings, indices beyond the planned count, or
    another shard's games in a shard's store)."""
    planned = {(e.config_hash, e.pairing): e for e in entries}
    return sum(1 for r in records if not _planned(planned, r))


def _planned(entries: Mapping[tuple[str, str], PlanEntry], record: Mapping[str, Any]) -> bool:
    """Whether a record is a game of the plan (``entries`` keyed by settings hash and pairing)."""
    entry = entries.get((record["config_hash"], record["pairing"]))
    return entry is not None and entry.counts(record["game_index"])


def score_columns(entries: Iterable[PlanEntry], table: Any) -> tuple[tuple[PairingScore, ...], int]:
    """:func:`score` and :func:`unplanned` of a table of games (the ``table`` of
    :class:`~boopexp.experiments.store.OutcomeColumns`), counted on its columns with numpy:
    ``status`` and ``run --dry-run`` at a million games, without one Python object a game.

    Raises:
        StoreError: a counted game's winner is not one of :data:`~boopexp.play.contract.WINNERS`
            (the first such game, as :meth:`PairingScore.with_game` says it).
    """
    import numpy as np
    import pyarrow.compute as pc

    entries = tuple(entries)
    index = {f"{e.config_hash}\x00{e.pairing}": i for i, e in enumerate(entries)}
    pairs, codes = _codes(pc.binary_join_element_wise(table["config_hash"], table["pairing"], "\x00"))
    # per row, its entry (len(entries): none, planned no game)
    of_pair = np.array([index.get(p, len(entries)) for p in pairs] or [0], dtype=np.int64)
    row_entry = of_pair[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    game_index = table["game_index"].to_numpy()
    limits = np.array([e.games for e in entries] + [0], dtype=np.int64)
    planned = game_index < limits[row_entry]
    for i, e in enumerate(entries):
        if e.shard is not None:  # Shard.holds on the column: the shard's indices are first_index mod count
            rows = row_entry == i
            first = e.shard.first_index(e.config_hash, e.pairing)
            planned &= ~rows | (game_index % e.shard.count == first)
    scores = _tallies([PairingScore(e) for e in entries], table, row_entry, planned)
    return scores, int(len(planned) - planned.sum())


def score_found(table: Any) -> tuple[PairingScore, ...]:
    """Every stored game counted per pairing, in order of first appearance, for a store without a
    plan (planned = done; settings hash "(several)" when a pairing's games have more than one;
    sides from its first game): ``status`` of a folder without config.yaml, on columns."""
    import numpy as np
    import pyarrow.compute as pc

    pairings, codes = _codes(table["pairing"])
    firsts = np.unique(codes, return_index=True)[1] if len(codes) else np.zeros(0, dtype=np.int64)
    heads = table.select(["config_hash", "p1", "p2"]).take(firsts).to_pylist()
    _, by_hash = _codes(pc.binary_join_element_wise(table["config_hash"], table["pairing"], "\x00"))
    hashes = np.bincount(np.unique(np.stack([codes, by_hash]), axis=1)[0], minlength=len(pairings))
    blank = [PairingScore(PlanEntry(p, h["p1"] or "", h["p2"] or "",
                                    h["config_hash"] if n == 1 else "(several)", 0))
             for p, h, n in zip(pairings, heads, hashes)]
    scores = _tallies(blank, table, codes, np.ones(len(codes), dtype=bool))
    return tuple(dataclasses.replace(s, entry=dataclasses.replace(s.entry, games=s.done)) for s in scores)


def _codes(column: Any) -> tuple[list[str], Any]:
    """The distinct values of a text column in order of first appearance, and each row's code."""
    import numpy as np

    encoded = column.combine_chunks().dictionary_encode() if len(column) else None
    if encoded is None:
        return [], np.zeros(0, dtype=np.int64)
    return encoded.dictionary.to_pylist(), encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _tallies(blank: list[PairingScore], table: Any, group: Any, counted: Any) -> tuple[PairingScore, ...]:
    """``blank`` (one score per group code) with the winners (and draws: the ``termination``
    column, when the table has it) of the rows ``counted`` added, as :meth:`PairingScore.with_game`
    would, one game at a time."""
    import numpy as np
    import pyarrow.compute as pc

    winner = table["winner"]
    p1 = pc.fill_null(pc.equal(winner, Side.P1.value), False).to_numpy(zero_copy_only=False)
    p2 = pc.fill_null(pc.equal(winner, Side.P2.value), False).to_numpy(zero_copy_only=False)
    none = pc.is_null(winner).to_numpy(zero_copy_only=False)
    drawn = np.zeros(len(none), dtype=bool)
    if "termination" in table.column_names:
        drawn = none & pc.fill_null(pc.equal(table["termination"], Termination.DRAW.value),
                                    False).to_numpy(zero_copy_only=False)
    wrong = np.flatnonzero(counted & ~(p1 | p2 | none))
    if len(wrong):
        blank[int(group[wrong[0]])].with_game(winner[int(wrong[0])].as_py())  # raises its one line
    n = len(blank)

    def count(mask: Any) -> list[int]:
        return [int(c) for c in np.bincount(group[counted & mask], minlength=n)[:n]]

    done, p1_wins, p2_wins = count(np.ones(len(group), dtype=bool)), count(p1), count(p2)
    no_winner, draws = count(none & ~drawn), count(drawn)
    return tuple(dataclasses.replace(s, done=d, p1_wins=a, p2_wins=b, no_winner=c, draws=e)
                 for s, d, a, b, c, e in zip(blank, done, p1_wins, p2_wins, no_winner, draws))
