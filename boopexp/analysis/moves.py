"""The games' per-move telemetry, streamed block by block (pyarrow's JSON reader, Python for records
of other shapes) into per-agent distributions (``MoveStats``, ``GameData.moves``): what the
telemetry table and the iterations figure read.

A game's moves are read only from its counted copy (:mod:`boopexp.analysis.records` chose it):
the store's lines are streamed (``StoreReader.blocks``) and only the
counted ones parsed, by pyarrow's JSON reader (C++, a few times faster than ``json.loads`` and
without one Python object a value) when the records are of the current schema with column-wise
telemetry whose derived columns (ply, player, agent, tree_nodes) were left out; any other record
(schema 1, moves kept one by one, a column of another length, a null counter) is decoded in
Python and read by :func:`ply_rows`, the one reading of a record's telemetry: both give the same
values. Measured on the committed round robin's games (7,200, 21 MB of JSON): pyarrow 0.11 s,
``json.loads`` 0.18 s plus the rows.

What is kept (:class:`MoveStats`): per agent, the number of moves, the distribution of each of
:data:`DISTRIBUTION_FIELDS` as distinct values and their counts (the median and quartiles are
exact, computed as pandas computes them: :func:`quantile`), and for :data:`SIDE_FIELDS` the sum
over each side of each finished game (a winner or a draw: not stopped at the ply cap; the
paper's "per agent and per game"), averaged. The
iterations figure draws from the moves in their order while there are at most
:data:`ORDERED_MOVES_LIMIT` of them (every committed store), else from the distribution.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from boopexp.errors import StoreError
from boopexp.play.contract import RECORD_SCHEMA, Side, first_mover

#: Numeric telemetry fields per ply; a missing one becomes NaN.
#: ``equivalent_moves`` counts tie events (solver calls whose best value several moves share),
#: ``equivalent_candidates`` the tied moves summed over those events (docs/budget.md); older
#: records lack the latter.
#: The optional fields (:data:`boopexp.play.contract.OPTIONAL_TELEMETRY`) the telemetry table shows
#: when a game has them: alpha-beta's completed depth and transposition hits, MCTS-Solver's proven
#: nodes. A record carries them only with such an agent (its opponent's moves: 0), so a store
#: without one reads them as missing and its tables are what they always were.
OPTIONAL_FIELDS: tuple[str, ...] = ("search_depth", "tt_hits", "proven_nodes")
TELEMETRY_FIELDS: tuple[str, ...] = (
    "iterations", "solver_calls", "equivalent_moves", "equivalent_candidates", "tree_nodes", "device_seconds",
    "host_cpu_seconds", *OPTIONAL_FIELDS,
)
#: Fields whose distribution per agent the telemetry table and the iterations figure read.
DISTRIBUTION_FIELDS: tuple[str, ...] = ("iterations", "solver_calls", "tree_nodes", "device_seconds",
                                        *OPTIONAL_FIELDS)
#: Fields summed over one side of one finished game (equivalent moves "per agent and per game").
SIDE_FIELDS: tuple[str, ...] = ("equivalent_moves", "equivalent_candidates")
#: Up to this many moves with iterations, the iterations figure is drawn from the moves themselves,
#: in order (as it always was: every committed store is below it); above it, from their distribution.
ORDERED_MOVES_LIMIT = 250_000
#: Games parsed at a time (a block of a segment's lines).
BLOCK_BYTES = 1 << 24

_FIELDS = (*DISTRIBUTION_FIELDS, *SIDE_FIELDS)
#: The stored telemetry columns the fast path reads; the derived ones must be absent (left out
#: because the rest determines them: play/contract.py's schema 2).
_STORED = ("iterations", "solver_calls", "equivalent_moves", "equivalent_candidates", "nodes_created",
           "device_seconds")
_DERIVED = ("ply", "player", "agent", "tree_nodes")


def ply_rows(record: Mapping[str, Any], game: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The telemetry entries of one decoded record (schema 1, as the store's readers give it) for
    the game row ``game`` (its ``config_hash``, ``pairing``, ``game_index``, ``p1``, ``p2``);
    missing or malformed fields become NaN, never an error."""
    telemetry = record.get("telemetry")
    if not isinstance(telemetry, list):
        return []
    rows = []
    for position, entry in enumerate(telemetry, start=1):
        if not isinstance(entry, dict):
            continue
        ply = number(entry.get("ply"))
        if math.isnan(ply):
            ply = float(position)
        player = entry.get("player")
        if player not in ("p1", "p2"):
            # p1 moves on odd plies (plies counted from 1).
            player = "p1" if int(ply) % 2 == 1 else "p2"
        agent = entry.get("agent")
        if not isinstance(agent, str) or not agent:
            agent = game[player]
        row = {
            "config_hash": game["config_hash"],
            "pairing": game["pairing"],
            "game_index": game["game_index"],
            "ply": ply,
            "player": player,
            "agent": agent,
        }
        for f in TELEMETRY_FIELDS:
            row[f] = number(entry.get(f))
        rows.append(row)
    return rows


def number(value: Any) -> float:
    """A finite-or-NaN float from a JSON value; anything non-numeric is NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


@dataclass(frozen=True)
class MoveFile:
    """Where the moves of some counted games are: a store's file and the games' lines in it.

    Attributes:
        path: a sealed segment (streamed) or the live log.
        lines: the counted games' 1-based lines, ascending.
        rows: their rows in ``GameData.games``, in the same order.
    """

    path: Path
    lines: np.ndarray
    rows: np.ndarray


def quantile(values: np.ndarray, counts: np.ndarray, q: float) -> float:
    """The ``q`` quantile of the sample holding ``values`` (distinct, ascending) ``counts`` times,
    exactly as pandas' ``Series.quantile`` (numpy's linear method) computes it on that sample."""
    n = int(counts.sum())
    if n == 0:
        return math.nan
    ends = np.cumsum(counts)
    virtual = (n - 1) * q
    below = math.floor(virtual)
    if virtual >= n - 1:
        return float(values[-1])
    a = values[np.searchsorted(ends, below, side="right")]
    b = values[np.searchsorted(ends, below + 1, side="right")]
    gamma = np.float64(virtual - below)
    # numpy's _lerp: from the nearer end, so that gamma 1 gives b exactly
    diff = np.float64(b) - np.float64(a)
    return float(np.float64(b) - diff * (1 - gamma) if gamma >= 0.5 else np.float64(a) + diff * gamma)


def median(values: np.ndarray, counts: np.ndarray) -> float:
    """The median of that sample as pandas' group-by median computes it (the mean of the two
    middle values of an even count)."""
    n = int(counts.sum())
    if n == 0:
        return math.nan
    ends = np.cumsum(counts)
    upper = values[np.searchsorted(ends, n // 2, side="right")]
    if n % 2:
        return float(upper)
    lower = values[np.searchsorted(ends, n // 2 - 1, side="right")]
    return float((np.float64(upper) + np.float64(lower)) / 2)


class _Distribution:
    """Distinct values and their counts, merged block by block (the blocks' own distinct values
    are set aside and merged once they outnumber the values merged so far and
    :data:`_MERGE_VALUES`: one sort per merge, and what is set aside never much more than what is
    kept, whatever the number of blocks)."""

    def __init__(self) -> None:
        self._values: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self._pending = 0  # values set aside since the last merge

    def add(self, sample: np.ndarray) -> None:
        sample = sample[~np.isnan(sample)]
        if not len(sample):
            return
        values, counts = np.unique(sample, return_counts=True)
        self._values.append(values)
        self._counts.append(counts)
        self._pending += len(values)
        if self._pending > max(_MERGE_VALUES, len(self._values[0])):
            self.merged()

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct values, ascending, and their counts."""
        if not self._values:
            return np.zeros(0), np.zeros(0, dtype=np.int64)
        if len(self._values) > 1:
            values, inverse = np.unique(np.concatenate(self._values), return_inverse=True)
            counts = np.bincount(inverse.ravel(), weights=np.concatenate(self._counts), minlength=len(values))
            self._values, self._counts = [values], [counts.astype(np.int64)]
        self._pending = 0
        return self._values[0], self._counts[0]


#: Distinct values set aside at least before a distribution merges them.
_MERGE_VALUES = 1 << 16


class MoveStats:
    """The per-move telemetry of some games, per agent (filled by :func:`collect`).

    Attributes:
        agents: every agent that made a move.
        moves: moves (telemetry entries) per agent.
    """

    def __init__(self) -> None:
        self.agents: set[str] = set()
        self.moves: dict[str, int] = {}
        self._distributions: dict[tuple[str, str], _Distribution] = {}
        self._sides: dict[tuple[str, str], list[float]] = {}  # (agent, field) -> [sum of sides, sides]
        self._ordered: dict[str, list[np.ndarray]] | None = {}
        self._ordered_moves = 0

    def distribution(self, agent: str, field_name: str) -> tuple[np.ndarray, np.ndarray]:
        """The agent's distinct values of a field (NaN left out) and their counts."""
        return self._distributions.get((agent, field_name), _Distribution()).merged()

    def median(self, agent: str, field_name: str) -> float:
        return median(*self.distribution(agent, field_name))

    def quantile(self, agent: str, field_name: str, q: float) -> float:
        return quantile(*self.distribution(agent, field_name), q)

    def side_mean(self, agent: str, field_name: str) -> float:
        """The mean over the agent's sides of finished games of ``field_name`` summed over the
        side's moves; a side with a move lacking the field is left out (NaN: no complete side).
        The sums are of counters (integers), so the order of the additions does not matter."""
        total, sides = self._sides.get((agent, field_name), (0.0, 0))
        return total / sides if sides else math.nan

    def ordered_iterations(self) -> dict[str, np.ndarray] | None:
        """Each agent's iterations per move (NaN left out) in the games' and moves' order, or None
        above :data:`ORDERED_MOVES_LIMIT` moves (then only their distribution is kept)."""
        if self._ordered is None:
            return None
        return {a: np.concatenate(parts) for a, parts in self._ordered.items()}

    def add(self, names: Sequence[str], agent: np.ndarray, side: np.ndarray, game: np.ndarray,
            decided: np.ndarray, values: Mapping[str, np.ndarray]) -> None:
        """Fold in a block of moves: per move its agent (index into ``names``), side (0: p1, 1:
        p2), game (any integer that tells the block's games apart), whether that game was
        decided, and the values of :data:`DISTRIBUTION_FIELDS` and :data:`SIDE_FIELDS` (NaN: missing)."""
        if not len(agent):
            return
        present = np.unique(agent)
        # one key per (game, side, agent): a side's moves, summed
        key = (game * 2 + side) * (int(agent.max()) + 1) + agent
        _, side_of = np.unique(key, return_inverse=True)
        side_of = side_of.ravel()
        side_agent = np.zeros(side_of.max() + 1, dtype=agent.dtype)
        side_agent[side_of] = agent
        side_decided = np.zeros(len(side_agent), dtype=bool)
        side_decided[side_of] = decided
        for code in present:
            name = names[code]
            mine = agent == code
            self.agents.add(name)
            self.moves[name] = self.moves.get(name, 0) + int(mine.sum())
            for f in DISTRIBUTION_FIELDS:
                self._distributions.setdefault((name, f), _Distribution()).add(values[f][mine])
        for f in SIDE_FIELDS:
            v = values[f]
            missing = np.bincount(side_of, weights=np.isnan(v), minlength=len(side_agent)) > 0
            total = np.bincount(side_of, weights=np.nan_to_num(v), minlength=len(side_agent))
            complete = side_decided & ~missing
            for code in np.unique(side_agent[complete]):
                chosen = complete & (side_agent == code)
                slot = self._sides.setdefault((names[code], f), [0.0, 0])
                slot[0] += float(total[chosen].sum())
                slot[1] += int(chosen.sum())
        if self._ordered is not None:
            iterations = values["iterations"]
            self._ordered_moves += int((~np.isnan(iterations)).sum())
            if self._ordered_moves > ORDERED_MOVES_LIMIT:
                self._ordered = None
            else:
                for code in present:
                    v = iterations[agent == code]
                    self._ordered.setdefault(names[code], []).append(v[~np.isnan(v)])


@dataclass
class _Block:
    """A block of moves being gathered, as :meth:`MoveStats.add` takes it."""

    names: list[str]
    codes: dict[str, int]
    agent: list[np.ndarray] = field(default_factory=list)
    side: list[np.ndarray] = field(default_factory=list)
    game: list[np.ndarray] = field(default_factory=list)
    values: dict[str, list[np.ndarray]] = field(default_factory=lambda: {f: [] for f in _FIELDS})

    def code(self, name: str) -> int:
        if name not in self.codes:
            self.codes[name] = len(self.names)
            self.names.append(name)
        return self.codes[name]

    def add_rows(self, rows: list[dict[str, Any]], game: int) -> None:
        """The rows of :func:`ply_rows` of one game."""
        if not rows:
            return
        self.agent.append(np.array([self.code(r["agent"]) for r in rows], dtype=np.int64))
        self.side.append(np.array([0 if r["player"] == "p1" else 1 for r in rows], dtype=np.int64))
        self.game.append(np.full(len(rows), game, dtype=np.int64))
        for f in _FIELDS:
            self.values[f].append(np.array([r[f] for r in rows], dtype=np.float64))

    def flush(self, stats: MoveStats, decided: np.ndarray) -> None:
        if self.agent:
            game = np.concatenate(self.game)
            stats.add(self.names, np.concatenate(self.agent), np.concatenate(self.side), game, decided[game],
                      {f: np.concatenate(v) for f, v in self.values.items()})
        self.agent, self.side, self.game = [], [], []
        self.values = {f: [] for f in _FIELDS}


def collect(files: Sequence[MoveFile], names: Sequence[str], sides: np.ndarray, decided: np.ndarray,
            game_rows: Callable[[int], dict[str, Any]], blocks: Callable[[Path], Iterator[list[tuple[int, bytes]]]],
            decode: Callable[[Path, int, bytes], dict[str, Any]]) -> MoveStats:
    """The moves of the counted games in ``files``, folded into a :class:`MoveStats`.

    Args:
        files: where each counted game's moves are, in reading order.
        names: agent names; ``sides`` holds indices into it.
        sides: each game's p1 and p2 (by row number: shape (games, 2)).
        decided: whether each game (by row number) finished: a winner or a draw
            (:func:`boopexp.analysis.tables.finished`), not the ply cap.
        game_rows: a game's row (by its row number) as :func:`ply_rows` reads it.
        blocks: a store file's numbered lines, block by block (``StoreReader.blocks``).
        decode: one stored line as its record (schema 1), checked (``StoreReader.decode``).

    Raises:
        StoreError: a file no longer holds a line it held when the games were read.
    """
    stats = MoveStats()
    block = _Block(list(names), {name: i for i, name in enumerate(names)})
    for f in files:
        start = 0
        for lines in blocks(f.path):
            if start >= len(f.lines):
                break
            numbers = np.fromiter((n for n, _ in lines), dtype=np.int64, count=len(lines))
            stop = start + int(np.searchsorted(f.lines[start:], numbers[-1], side="right"))
            wanted, rows = f.lines[start:stop], f.rows[start:stop]
            start = stop
            if not len(wanted):
                continue
            positions = np.minimum(np.searchsorted(numbers, wanted), len(numbers) - 1)
            if not np.array_equal(numbers[positions], wanted):
                raise StoreError(f"{f.path} changed while the tables were built (a seal or migrate?); build them again")
            raws = [lines[i][1] for i in positions.tolist()]
            _read_block(raws, rows, f.path, wanted, block, sides, game_rows, decode)
            block.flush(stats, decided)
    return stats


def _read_block(raws: list[bytes], rows: np.ndarray, path: Path, lines: np.ndarray, block: _Block,
                sides: np.ndarray, game_rows: Callable[[int], dict[str, Any]],
                decode: Callable[[Path, int, bytes], dict[str, Any]]) -> None:
    """Add the moves of some games' stored lines to ``block``: pyarrow for the games of the
    current schema whose telemetry columns are all stored and of one length, Python otherwise."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    columns = [(k, pa.list_(pa.float64())) for k in (*_STORED, *OPTIONAL_FIELDS)]
    columns += [(k, pa.list_(pa.null())) for k in _DERIVED]
    schema = pa.schema([("schema", pa.int64()), ("start", pa.string()), ("telemetry", pa.struct(columns))])
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        table = pj.read_json(io.BytesIO(b"\n".join(raws)), parse_options=options,
                             read_options=pj.ReadOptions(use_threads=False, block_size=1 << 26))
    except pa.ArrowInvalid:  # a record of another shape in this block: every game in Python
        table = None
    if table is None or table.num_rows != len(raws):
        slow = np.ones(len(raws), dtype=bool)
    else:
        telemetry = table["telemetry"].combine_chunks()
        schema_2 = pc.fill_null(pc.equal(table["schema"].combine_chunks(), RECORD_SCHEMA), False)
        fast = schema_2.to_numpy(zero_copy_only=False)
        fast &= telemetry.is_valid().to_numpy(zero_copy_only=False)
        lengths = {}
        for k in _DERIVED:  # present: this game's telemetry is not the usual column-wise form
            fast &= ~telemetry.field(k).is_valid().to_numpy(zero_copy_only=False)
        for k in _STORED:
            column = telemetry.field(k)
            present = column.is_valid().to_numpy(zero_copy_only=False)
            fast &= present
            lengths[k] = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False)
        n = lengths[_STORED[0]]
        for k in _STORED[1:]:
            fast &= lengths[k] == n
        for k in OPTIONAL_FIELDS:  # absent (NaN on every move) or a column of the same length
            column = telemetry.field(k)
            fast &= ~column.is_valid().to_numpy(zero_copy_only=False) | (
                pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False) == n)
        for k in ("iterations", "nodes_created"):  # a null there: contract derives no column at all
            column = telemetry.field(k)
            flat = pc.list_flatten(column)
            if flat.null_count:
                parents = pc.list_parent_indices(column).to_numpy(zero_copy_only=False)
                nulls = np.bincount(parents, weights=flat.is_null().to_numpy(zero_copy_only=False),
                                    minlength=len(raws))
                fast &= nulls == 0
        slow = ~fast
        chosen = np.flatnonzero(fast)
        if len(chosen):
            picked = telemetry.take(pa.array(chosen))
            counts = n[chosen].astype(np.int64)
            game = np.repeat(rows[chosen].astype(np.int64), counts)
            within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
            # the sides alternate from the first mover (contract's derived player): p1, but p2
            # from a start with Red to move (contract.first_mover, read only where there is a start)
            starts = table["start"].combine_chunks().take(pa.array(chosen))
            first = np.zeros(len(chosen), dtype=np.int64)
            for i in np.flatnonzero(starts.is_valid().to_numpy(zero_copy_only=False)).tolist():
                first[i] = first_mover({"start": starts[i].as_py()}) is Side.P2
            side = (within + np.repeat(first, counts)) % 2
            values = {k: pc.list_flatten(picked.field(k)).to_numpy(zero_copy_only=False).astype(np.float64)
                      for k in _STORED}
            for k in OPTIONAL_FIELDS:
                column = picked.field(k)
                has = np.repeat(column.is_valid().to_numpy(zero_copy_only=False), counts)
                values[k] = np.full(len(has), math.nan)
                values[k][has] = pc.list_flatten(column).to_numpy(zero_copy_only=False).astype(np.float64)
            it, created = values["iterations"], values.pop("nodes_created")
            values["tree_nodes"] = np.where(it > 0, created + 1, 0.0)
            block.agent.append(sides[game, side])
            block.side.append(side)
            block.game.append(game)
            for f in _FIELDS:
                block.values[f].append(values[f])
    for i in np.flatnonzero(slow).tolist():
        record = decode(path, int(lines[i]), raws[i])
        block.add_rows(ply_rows(record, game_rows(int(rows[i]))), int(rows[i]))
