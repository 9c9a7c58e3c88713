"""Read results folders (sealed segments and ``games.jsonl``) into pandas frames: one row per game,
one row per telemetry ply.

Rules (docs/tables.md):

* **Reading.** A results directory holds its games (sealed segments ``games-NNNN.jsonl.gz`` and
  the live log ``games.jsonl``, one JSON record per line, docs/runner.md) and ``config.yaml``.
  Blank lines are ignored. An invalid *last* line of the log is skipped with a
  :class:`ReportWarning` (a run may be appending to it right now); an invalid
  line anywhere else, or a record lacking a required key, raises :class:`StoreError` naming the
  file and the line number.
* **No winner.** ``winner`` is ``"p1"``, ``"p2"`` or ``null``: null is a game that
  ``match.play_game`` stopped at ``contract.MAX_PLIES`` (``"termination": "ply_limit"``) because two
  near-deterministic agents kept repeating a position cycle — boop. itself has no draw
  (RULES.md §7). Such a game is kept (``winner`` None); the tables count it in a "no winner"
  column and leave it out of rates and tests. Any other winner value is an error.
* **Deduplication.** A game is identified by ``(config_hash, pairing, game_index)``; a game seen
  twice (a resumed run, the same settings in two directories) is counted once — the first copy
  read, in the order the directories were given.
* **Current run.** ``boopexp run`` keeps the resolved config in the directory's ``config.yaml``,
  whose ``plan:`` lists each pairing with its ``config_hash`` and planned number of games; when
  the config changes the file is replaced (the old one is backed up) but the old games stay in
  ``games.jsonl``. So when ``config.yaml`` has a readable plan, only games whose
  ``(pairing, config_hash)`` is in it count for Tables I/II (a warning counts the others);
  without a plan every game of the directory is a candidate.
* **Selection.** Tables I/II and the game-length table must not silently merge different
  settings. For each pairing, the candidate games are grouped by ``config_hash``; if there is
  more than one group, the one with the most games is used (ties: the group read first) and a
  warning names the others. The pairwise table lists every group, with a ``selected`` column.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from boopexp.errors import ConfigError, StoreError
from boopexp.experiments.config import plan_entries
from boopexp.experiments.store import (
    CONFIG_FILE,
    GAMES_FILE,
    GameStore,
    decode_record,
    has_games_files,
    read_store_files,
)
from boopexp.play.contract import WINNERS, WINNERS_TEXT
from boopexp.play.identity import PAIRING_SEPARATOR, pairing_agents, record_key

#: Keys a record must have to be counted (the rest is optional for the tables).
REQUIRED_KEYS: tuple[str, ...] = ("config_hash", "pairing", "game_index", "winner")

#: Numeric telemetry fields per ply; a missing one becomes NaN.
#: ``equivalent_moves`` counts tie events (solver calls whose best value several moves share),
#: ``equivalent_candidates`` the tied moves summed over those events (docs/budget.md); older
#: records lack the latter.
TELEMETRY_FIELDS: tuple[str, ...] = (
    "iterations", "solver_calls", "equivalent_moves", "equivalent_candidates", "tree_nodes", "device_seconds",
    "host_cpu_seconds",
)

GAME_COLUMNS: tuple[str, ...] = (
    "source", "line", "order", "experiment", "config_hash", "pairing", "game_index", "p1", "p2",
    "winner", "termination", "plies", "in_plan", "planned", "sweep",
)
PLY_COLUMNS: tuple[str, ...] = (
    "config_hash", "pairing", "game_index", "ply", "player", "agent", *TELEMETRY_FIELDS,
)


class ReportWarning(UserWarning):
    """A recoverable problem with the results (missing directory, truncated last line, mixed settings)."""


@dataclass(frozen=True)
class GameData:
    """All games read from some results directories.

    Attributes:
        games: one row per unique game (columns GAME_COLUMNS plus ``selected``); ``winner`` is
            "p1", "p2" or None (no winner: stopped at the ply limit), ``termination`` the
            record's ("victory" / "ply_limit"; derived from ``winner`` when absent); ``in_plan``
            is False for games of settings absent from their directory's config.yaml plan,
            ``planned`` the planned number of games of their pairing (NaN if unknown), ``sweep``
            the sweep point of a swept game as JSON text ("" otherwise).
        plies: one row per telemetry entry of those games (columns PLY_COLUMNS).
        sources: the directories actually read, in the given order.
    """

    games: pd.DataFrame
    plies: pd.DataFrame
    sources: tuple[Path, ...]

    @property
    def selected(self) -> pd.DataFrame:
        """The games used by Tables I/II and the game-length table (one config_hash per pairing)."""
        return self.games[self.games["selected"]]


def read_games(directory: Path) -> list[tuple[Path, int, dict[str, Any]]]:
    """Parse the games of one results directory into (file, line number, record) triples.

    The files are read as the store reads them (:func:`boopexp.experiments.store.read_store_files`): the
    sealed segments ``games-NNNN.jsonl.gz`` in number order, then the live log ``games.jsonl``.
    A last line of the log without its newline is a write cut short (a run killed, or still
    writing) and is skipped with a warning; any other line must be a JSON object. Records of
    either schema are returned in schema 1 (:func:`boopexp.experiments.store.decode_record`).

    Args:
        directory: the results directory.

    Returns:
        The records in reading order, with their file and 1-based line numbers.

    Raises:
        StoreError: a file cannot be read, or a complete line is not a JSON object.
    """
    out: list[tuple[Path, int, dict[str, Any]]] = []
    for f in read_store_files(directory):
        if f.tail is not None:
            warnings.warn(
                f"{f.path}:{f.tail.line}: skipping truncated or invalid last line "
                f"({_short(f.tail.data.decode('utf-8', 'replace'))!r})",
                ReportWarning,
                stacklevel=2,
            )
        for number, raw in f.lines:
            try:
                record = json.loads(raw.decode("utf-8"))
                if not isinstance(record, dict):
                    raise ValueError(f"a JSON {type(record).__name__}, not an object")
                record = decode_record(record)
            except ValueError as exc:
                line = raw.decode("utf-8", "replace")
                raise StoreError(f"{f.path}:{number}: invalid record ({exc}): {_short(line)!r}") from None
            out.append((f.path, number, record))
    return out


def read_plan(directory: Path) -> dict[tuple[str, str], int | None] | None:
    """The ``plan:`` of a results directory's config.yaml as {(pairing, config_hash): planned games}.

    Returns:
        None when there is no config.yaml or it has no usable plan (a hand-written folder: then
        every game counts).

    Raises:
        StoreError: config.yaml exists but is damaged (unreadable, not UTF-8, not YAML): counting
            every game instead would silently mix settings, so the tables are not built.
    """
    doc = GameStore(directory).read_config()
    if doc is None:
        return None
    try:
        entries = plan_entries(doc, source=str(directory / CONFIG_FILE))
    except ConfigError:
        return None  # no plan (a hand-written folder): every game counts
    return {(e.pairing, e.config_hash): e.games for e in entries} or None


def load_results(results_dirs: Sequence[Path | str]) -> GameData:
    """Read, validate, deduplicate and select the games of some results directories.

    Args:
        results_dirs: directories each holding a ``games.jsonl``.

    Returns:
        The games and telemetry (possibly empty if no games were written yet).

    Raises:
        ConfigError: no directory given, or none of them exists.
        StoreError: a middle line is invalid or a record lacks a required key.
    """
    dirs = [Path(d) for d in results_dirs]
    if not dirs:
        raise ConfigError("no results directory given")
    existing = [d for d in dirs if d.is_dir()]
    missing = [d for d in dirs if not d.is_dir()]
    if not existing:
        names = ", ".join(repr(str(d)) for d in missing)
        # A mistyped folder is a usage error: exit code 2, as in `status` and `replay`.
        raise ConfigError(f"results directory not found: {names}")
    for d in missing:
        warnings.warn(f"results directory {str(d)!r} not found; skipping it", ReportWarning, stacklevel=2)

    game_rows: list[dict[str, Any]] = []
    ply_rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, int], dict[str, Any]] = {}
    order = 0
    for d in existing:
        if not has_games_files(d):
            warnings.warn(f"no {GAMES_FILE} in {str(d)!r} (no games yet)", ReportWarning, stacklevel=2)
            continue
        plan = read_plan(d)
        off_plan: dict[str, int] = {}
        for path, line_no, record in read_games(d):
            row = _game_row(record, path, line_no, default_experiment=d.name)
            settings = (row["pairing"], row["config_hash"])
            row["in_plan"] = plan is None or settings in plan
            planned = plan.get(settings) if plan else None
            row["planned"] = math.nan if planned is None else float(planned)
            if not row["in_plan"]:
                off_plan[row["pairing"]] = off_plan.get(row["pairing"], 0) + 1
            key = record_key(row)
            if key in seen:
                first = seen[key]
                # The same game planned by another directory's config still belongs to a current run.
                first["in_plan"] = first["in_plan"] or row["in_plan"]
                if math.isnan(first["planned"]):
                    first["planned"] = row["planned"]
                if first["winner"] != row["winner"]:
                    warnings.warn(
                        f"{path}:{line_no}: game {key!r} was already read from "
                        f"{first['source']}:{first['line']} with another winner; keeping the first",
                        ReportWarning,
                        stacklevel=2,
                    )
                continue
            row["order"] = order
            order += 1
            seen[key] = row
            game_rows.append(row)
            ply_rows.extend(_ply_rows(record, row))
        if off_plan:
            detail = ", ".join(f"{p} ({n})" for p, n in sorted(off_plan.items()))
            warnings.warn(
                f"{d}: {sum(off_plan.values())} games have settings not in the plan of "
                f"{d / CONFIG_FILE} (older runs?); they are left out of Tables I/II: {detail}",
                ReportWarning,
                stacklevel=2,
            )

    games = pd.DataFrame(game_rows, columns=list(GAME_COLUMNS))
    games = games.astype({"line": "int64", "order": "int64", "game_index": "int64", "plies": "float64",
                          "in_plan": "bool", "planned": "float64"})
    plies = pd.DataFrame(ply_rows, columns=list(PLY_COLUMNS))
    plies = plies.astype({"game_index": "int64", "ply": "float64", **{f: "float64" for f in TELEMETRY_FIELDS}})
    games["selected"] = _select(games)
    return GameData(games=games, plies=plies, sources=tuple(existing))


def _select(games: pd.DataFrame) -> pd.Series:
    """Mark, for each pairing, the planned games of its config_hash with the most games (ties: read first)."""
    candidates = games[games["in_plan"]]
    if candidates.empty:
        return pd.Series(False, dtype=bool, index=games.index)
    groups = (
        candidates.groupby(["pairing", "config_hash"], sort=True)
        .agg(n=("order", "size"), first=("order", "min"), experiments=("experiment", _join_unique))
        .reset_index()
        .sort_values(["pairing", "n", "first"], ascending=[True, False, True], kind="mergesort")
    )
    # A sweep plays each pairing under several settings by design: no warning for those.
    swept = set(candidates["pairing"]) - set(candidates.loc[candidates["sweep"] == "", "pairing"])
    chosen: dict[str, str] = {}
    for pairing, grp in groups.groupby("pairing", sort=True):
        best = grp.iloc[0]
        chosen[pairing] = best["config_hash"]
        if len(grp) > 1 and pairing not in swept:
            others = "; ".join(
                f"{r.config_hash} ({r.n} games, {r.experiments})" for r in grp.iloc[1:].itertuples()
            )
            warnings.warn(
                f"pairing {pairing!r} has games of {len(grp)} different settings; using config_hash "
                f"{best['config_hash']} ({best['n']} games, {best['experiments']}), ignoring {others} "
                f"in Tables I/II",
                ReportWarning,
                stacklevel=3,
            )
    return games["in_plan"] & (games["config_hash"] == games["pairing"].map(chosen))


def _join_unique(values: Iterable[str]) -> str:
    return ", ".join(sorted(set(values)))


def _game_row(record: dict[str, Any], path: Path, line_no: int, default_experiment: str) -> dict[str, Any]:
    """Validate one record and keep the fields the tables use."""
    where = f"{path}:{line_no}"
    for key in REQUIRED_KEYS:
        if key not in record:
            raise StoreError(f"{where}: record lacks the key {key!r}")
    pairing = record["pairing"]
    if not isinstance(pairing, str) or PAIRING_SEPARATOR not in pairing:
        raise StoreError(f"{where}: pairing {pairing!r} is not of the form '<p1> vs <p2>'")
    index = record["game_index"]
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise StoreError(f"{where}: game_index {index!r} is not a non-negative integer")
    winner = record["winner"]
    if winner not in WINNERS:
        raise StoreError(f"{where}: winner {winner!r} is not {WINNERS_TEXT}")
    termination = record.get("termination")
    if not isinstance(termination, str) or not termination:
        # Older records have no "termination"; the only way a game ends without a winner is the cap.
        termination = "victory" if winner is not None else "ply_limit"
    config_hash = record["config_hash"]
    if not isinstance(config_hash, str) or not config_hash:
        raise StoreError(f"{where}: config_hash {config_hash!r} is not a non-empty string")
    name1, name2 = pairing_agents(pairing)
    experiment = record.get("experiment")
    return {
        "source": str(path.parent),
        "line": line_no,
        "order": -1,
        "experiment": experiment if isinstance(experiment, str) and experiment else default_experiment,
        "config_hash": config_hash,
        "pairing": pairing,
        "game_index": index,
        "p1": record.get("p1") if isinstance(record.get("p1"), str) else name1,
        "p2": record.get("p2") if isinstance(record.get("p2"), str) else name2,
        "winner": winner,
        "termination": termination,
        "plies": _number(record.get("plies")),
        "in_plan": True,
        "planned": math.nan,
        # a swept game's point as JSON text ("" when not swept): report/sweep.py groups by it
        "sweep": json.dumps(record["sweep"]) if isinstance(record.get("sweep"), dict) and record["sweep"] else "",
    }


def _ply_rows(record: dict[str, Any], game: dict[str, Any]) -> list[dict[str, Any]]:
    """The telemetry entries of one record; missing or malformed fields become NaN, never an error."""
    telemetry = record.get("telemetry")
    if not isinstance(telemetry, list):
        return []
    rows = []
    for position, entry in enumerate(telemetry, start=1):
        if not isinstance(entry, dict):
            continue
        ply = _number(entry.get("ply"))
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
            row[f] = _number(entry.get(f))
        rows.append(row)
    return rows


def _number(value: Any) -> float:
    """A finite-or-NaN float from a JSON value; anything non-numeric is NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def _short(line: str, limit: int = 60) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[:limit] + "…"
