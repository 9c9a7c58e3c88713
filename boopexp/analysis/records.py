"""The stores → frames (``load_results``, ``GameData``): one row a game, from the summaries beside
sealed segments (the rest decoded); deduplication, the planned settings, the selection.

Read results folders (sealed segments and ``games.jsonl``) into pandas frames: one row per game,
one row per telemetry ply.

Rules (docs/tables.md):

* **Reading.** A results directory holds its games (sealed segments ``games-NNNN.jsonl.zst`` and
  the live log ``games.jsonl``, one JSON record per line, docs/runner.md) and ``config.yaml``.
  It is read as the store reads it, by the store's reader
  (``StoreReader.outcomes``, what ``status`` and a resumed ``run``
  read): one rule of what a valid record is (``store.check_record``), each game counted once
  within a store, the store's warnings as :class:`ReportWarning` (the live log's cut-short last
  line, a game stored twice, a summary not used), its errors as its :class:`StoreError` (one line
  naming the file and the line).
* **No winner.** ``winner`` is ``"p1"``, ``"p2"`` or ``null``: null is a game that
  ``match.play_game`` stopped at ``contract.MAX_PLIES`` (``"termination": "ply_limit"``) because two
  near-deterministic agents kept repeating a position cycle — boop. itself has no draw
  (RULES.md §7). Such a game is kept (``winner`` None); the tables count it in a "no winner"
  column and leave it out of rates and tests. Any other winner value is an error.
* **Deduplication.** A game is identified by ``(config_hash, pairing, game_index)``; a game seen
  twice (in one store, as the store counts it; the same settings in two directories) is counted
  once — the first copy read, in the order the directories were given.
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

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boopexp.analysis.moves import TELEMETRY_FIELDS, MoveFile, MoveStats, collect
from boopexp.analysis.tables import finished
from boopexp.errors import ConfigError
from boopexp.experiments.config import stored_plan
from boopexp.experiments.store import (
    CONFIG_FILE,
    GAMES_FILE,
    GameStore,
    OutcomeColumns,
    StoreReader,
    has_games_files,
)
from boopexp.play.identity import pairing_agents, record_key

__all__ = ["TELEMETRY_FIELDS", "GameData", "ReportWarning", "load_results", "read_plan"]

GAME_COLUMNS: tuple[str, ...] = (
    "source", "line", "order", "experiment", "config_hash", "pairing", "game_index", "p1", "p2",
    "winner", "termination", "plies", "in_plan", "planned", "sweep",
)
#: What the game rows read of a sealed segment's summary (boopexp/experiments/summary.py).
_SUMMARY_COLUMNS = ("line", "config_hash", "pairing", "game_index", "experiment", "p1", "p2", "winner",
                    "termination", "plies", "sweep")
_KEY = ["config_hash", "pairing", "game_index"]
#: The game rows' column types: every file's rows are cast to them before they are put together
#: (a file of other types, e.g. an empty live log's object columns, would turn every string column
#: of a million games into Python objects: ~1 KB a game at the peak).
_DTYPES = {"source": "str", "experiment": "str", "config_hash": "str", "pairing": "str", "p1": "str", "p2": "str",
           "winner": "str", "termination": "str", "sweep": "str", "line": "int64", "order": "int64",
           "game_index": "int64", "plies": "float64", "in_plan": "bool", "planned": "float64"}


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
        sources: the directories actually read, in the given order.
        move_files: where the games' moves are (read by :attr:`moves` only).
    """

    games: pd.DataFrame
    sources: tuple[Path, ...]
    move_files: tuple[MoveFile, ...] = field(default=(), repr=False)

    @property
    def selected(self) -> pd.DataFrame:
        """The games used by Tables I/II and the game-length table (one config_hash per pairing)."""
        return self.games[self.games["selected"]]

    @cached_property
    def moves(self) -> MoveStats:
        """The games' per-move telemetry per agent (:mod:`boopexp.analysis.moves`), read once, on
        first use, block by block: only the telemetry table and the iterations figure need it."""
        games = self.games
        codes, names = pd.factorize(pd.concat([games["p1"], games["p2"]], ignore_index=True))
        sides = codes.reshape(2, -1).T.astype(np.int64) if len(games) else np.zeros((0, 2), dtype=np.int64)

        def game_row(row: int) -> dict[str, Any]:
            return {k: games[k].iat[row] for k in ("config_hash", "pairing", "game_index", "p1", "p2")}

        return collect(self.move_files, [str(n) for n in names], sides, finished(games).to_numpy(dtype=bool),
                       game_row, lambda path: StoreReader(path.parent).blocks(path), StoreReader.decode)


def read_plan(directory: Path) -> dict[tuple[str, str], int | None] | None:
    """The ``plan:`` of a results directory's config.yaml as {(pairing, config_hash): planned games},
    read as ``status`` reads it (:func:`boopexp.experiments.config.stored_plan`).

    Returns:
        None when there is no config.yaml or it has no ``plan:`` (a hand-written folder: then
        every game counts).

    Raises:
        StoreError: config.yaml exists but is damaged (unreadable, not UTF-8, not YAML).
        ConfigError: its ``plan:`` cannot be read. Counting every game instead would silently
            mix settings, so the tables are not built.
    """
    entries = stored_plan(GameStore(directory).read_config(), str(directory / CONFIG_FILE))
    return None if entries is None else {(e.pairing, e.config_hash): e.games for e in entries}


def _game_frame(outcomes: OutcomeColumns, directory: Path) -> pd.DataFrame:
    """A store's games as read by ``StoreReader.outcomes`` (checked
    by the store's rule, each game once) as game rows (GAME_COLUMNS but order, in_plan, planned):
    what the columns leave out derived as the record's schema derives it (a side's name from the
    pairing, the termination from the winner, the experiment from the folder's name)."""
    columns = [c for c in GAME_COLUMNS if c not in ("order", "in_plan", "planned")]
    t = outcomes.table.to_pandas()
    winner = t["winner"]
    names = {p: pairing_agents(p) for p in pd.unique(t["pairing"])}
    experiment = t["experiment"].where(t["experiment"].notna() & (t["experiment"] != ""), directory.name)
    termination = t["termination"].where(t["termination"].notna() & (t["termination"] != ""),
                                         np.where(winner.isna(), "ply_limit", "victory"))
    sweep = t["sweep"].where(t["sweep"].notna() & t["sweep"].str.startswith("{") & (t["sweep"] != "{}"), "")
    return pd.DataFrame({
        "source": str(directory),
        "line": t["line"].astype("int64"),
        "experiment": experiment,
        "config_hash": t["config_hash"],
        "pairing": t["pairing"],
        "game_index": t["game_index"].astype("int64"),
        "p1": t["p1"].where(t["p1"].notna(), t["pairing"].map(lambda p: names[p][0])),
        "p2": t["p2"].where(t["p2"].notna(), t["pairing"].map(lambda p: names[p][1])),
        "winner": winner,
        "termination": termination,
        "plies": t["plies"].astype("float64"),
        "sweep": sweep,
    }, columns=columns).astype({c: _DTYPES[c] for c in columns})


def load_results(results_dirs: Sequence[Path | str]) -> GameData:
    """Read, validate, deduplicate and select the games of some results directories.

    Each store is read as the store reads it (``StoreReader.outcomes``,
    what ``status`` and a resumed ``run`` read: one rule of what a valid record is, each game once,
    the same warnings): from the summaries beside the sealed segments (one row a game, pyarrow:
    docs/runner.md "Summaries"), the rest decoded. The moves are not read here (:attr:`GameData.moves`).

    Args:
        results_dirs: directories each holding a store.

    Returns:
        The games (possibly none if no games were written yet).

    Raises:
        ConfigError: no directory given, none of them exists, or a config.yaml's plan is damaged.
        StoreError: a line other than the live log's cut-short last one is not a valid record
            (the store's one line: file and line named), or a file cannot be read.
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

    games: pd.DataFrame | None = None
    files: list[Path] = []
    for d in existing:
        if not has_games_files(d):
            warnings.warn(f"no {GAMES_FILE} in {str(d)!r} (no games yet)", ReportWarning, stacklevel=2)
            continue
        outcomes = StoreReader(d).outcomes(columns=_SUMMARY_COLUMNS)  # then the plan, as status
        plan = read_plan(d)
        for problem in outcomes.scan.warnings():
            warnings.warn(problem, ReportWarning, stacklevel=2)
        frame = _game_frame(outcomes, d)
        frame["_file"] = len(files) + outcomes.file_of_row.astype(np.int64)
        files += [f.path for f in outcomes.files]
        settings_codes, settings = pd.MultiIndex.from_arrays([frame["pairing"], frame["config_hash"]]).factorize()
        planned_of = [plan.get(s) if plan else None for s in settings]
        frame["in_plan"] = np.array([plan is None or s in plan for s in settings], dtype=bool)[settings_codes] \
            if len(frame) else np.zeros(0, dtype=bool)
        frame["planned"] = np.array([math.nan if p is None else float(p) for p in planned_of],
                                    dtype=np.float64)[settings_codes] if len(frame) else np.zeros(0)
        games = _deduplicated(games, frame, files)
        off_plan = frame.loc[~frame["in_plan"], "pairing"].value_counts()
        if len(off_plan):
            detail = ", ".join(f"{p} ({n})" for p, n in sorted(off_plan.items()))
            warnings.warn(
                f"{d}: {int(off_plan.sum())} games have settings not in the plan of "
                f"{d / CONFIG_FILE} (older runs?); they are left out of Tables I/II: {detail}",
                ReportWarning,
                stacklevel=2,
            )

    if games is None:
        games = pd.DataFrame({c: pd.Series([], dtype=object) for c in (*GAME_COLUMNS, "_file")})
    games = games.reset_index(drop=True)
    games["order"] = np.arange(len(games), dtype=np.int64)
    file_of = games.pop("_file").to_numpy(dtype=np.int64) if len(games) else np.zeros(0, dtype=np.int64)
    games = games[list(GAME_COLUMNS)].astype(_DTYPES)
    games["selected"] = _select(games)
    move_files = []
    lines = games["line"].to_numpy()
    for i, path in enumerate(files):
        rows = np.flatnonzero(file_of == i)
        if len(rows):
            move_files.append(MoveFile(path, lines[rows], rows))
    return GameData(games=games, sources=tuple(existing), move_files=tuple(move_files))


def _deduplicated(games: pd.DataFrame | None, frame: pd.DataFrame, paths: list[Path]) -> pd.DataFrame:
    """``games`` and the rows of ``frame`` (one directory's, in reading order) that are new games;
    a game read again marks its first copy in the plan if it is (and gives it a planned count
    it lacked), and is warned about when its winner differs (the first copy is kept)."""
    both = frame if games is None else pd.concat([games, frame], ignore_index=True)
    again = both.duplicated(_KEY, keep="first").to_numpy()
    if not again.any():
        return both
    keys = pd.MultiIndex.from_frame(both[_KEY])
    firsts = np.flatnonzero(~again & keys.isin(keys[again]))
    first_of = {k: i for k, i in zip(keys[firsts], firsts.tolist())}
    in_plan = both["in_plan"].to_numpy(dtype=bool).copy()
    planned = both["planned"].to_numpy(dtype=np.float64).copy()
    winner = both["winner"].to_numpy(dtype=object)
    files = both["_file"].to_numpy()
    for i in np.flatnonzero(again).tolist():
        first = first_of[keys[i]]
        key = record_key({"config_hash": keys[i][0], "pairing": keys[i][1], "game_index": int(keys[i][2])})
        # The same game planned by another directory's config still belongs to a current run.
        in_plan[first] = in_plan[first] or in_plan[i]
        if math.isnan(planned[first]):
            planned[first] = planned[i]
        if not _same_winner(winner[first], winner[i]):
            warnings.warn(
                f"{paths[files[i]]}:{both['line'].iat[i]}: game {key!r} was already read from "
                f"{both['source'].iat[first]}:{both['line'].iat[first]} with another winner; keeping the first",
                ReportWarning,
                stacklevel=3,
            )
    both["in_plan"] = in_plan
    both["planned"] = planned
    return both[~again]
def _same_winner(a: Any, b: Any) -> bool:
    """Whether two copies' winners are the same (no winner: None or NaN, as a frame holds it)."""
    return (pd.isna(a) and pd.isna(b)) or a == b


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
    swept = set(candidates["pairing"].unique()) - set(candidates.loc[candidates["sweep"] == "", "pairing"].unique())
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


def _join_unique(values: pd.Series) -> str:
    return ", ".join(sorted(values.unique()))
