"""What a results folder holds against its plan (``status``, ``run --dry-run``).

Used by ``boopexp status`` (text or ``--json``) and ``boopexp run --dry-run``. Reads only: it
never creates, locks or changes anything, and it does not import the engine.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boopexp.errors import ConfigError
from boopexp.experiments.config import PlannedPairing, stored_plan
from boopexp.experiments.sprt import PairingTest, parse_sprt, plan_tests
from boopexp.experiments.store import GameStore, OutcomeColumns, StoreReader, has_games_files
from boopexp.experiments.tally import PairingScore, forfeits, score_columns, score_found


@dataclass(frozen=True)
class FolderStatus:
    """The state of one results folder.

    Attributes:
        folder: the folder.
        settings: the resolved config saved with the games (without its plan), or None if there
            is no config.yaml (then ``scores`` counts every pairing found, ``planned`` = done).
        scores: per pairing, games done / planned and wins.
        other_records: records of other settings or beyond the plan (not counted).
        warnings: anomalies tolerated while reading (truncated last line, duplicates).
        sprt: with ``sprt:`` in the settings, each tested pairing's SPRT (LLR, bounds, decision).
        forfeits: forfeited games of the plan per forfeiting agent, ``{agent: {termination: n}}``.
    """

    folder: Path
    settings: dict[str, Any] | None
    scores: tuple[PairingScore, ...]
    other_records: int = 0
    warnings: tuple[str, ...] = ()
    sprt: tuple[PairingTest, ...] = ()
    forfeits: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``boopexp status --json``)."""
        return {
            "folder": str(self.folder),
            "settings": self.settings,
            "planned": self.settings is not None,
            "pairings": [s.to_dict() for s in self.scores],
            "total": {"done": sum(s.done for s in self.scores), "planned": sum(s.planned for s in self.scores)},
            "other_records": self.other_records,
            "forfeits": self.forfeits,
            "warnings": list(self.warnings),
            "sprt": [t.to_dict() for t in self.sprt],
        }


def require_results_folder(folder: str | Path) -> Path:
    """``folder`` as a Path, or ConfigError (exit code 2 in every command) if it is not a folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"no results folder {str(folder)!r}")
    return folder


def results_folders(root: str | Path) -> list[Path]:
    """The folders under ``root``, at any depth, that hold a store (a live log or sealed
    segments), sorted: studies keep theirs nested (results/robustness/d1, a tuning's trials)."""
    return sorted(Path(d) for d, _, _ in os.walk(root) if has_games_files(d))


def status_folders(folder: str | Path) -> list[Path]:
    """The stores ``status FOLDER`` shows: the folder itself when it is a store (or holds none, so
    that its plan, if any, still shows), else every store under it as :func:`results_folders`
    finds them under results/ (a study's folder, a folder of copied stores)."""
    folder = Path(folder)
    return [folder] if has_games_files(folder) else results_folders(folder) or [folder]


def folder_status(folder: str | Path, outcomes: OutcomeColumns | None = None) -> FolderStatus:
    """Read one results folder (see :class:`FolderStatus`); ``outcomes``: its games as the caller
    just read them (``StoreReader.outcomes``), else they are read here.

    Raises:
        ConfigError: the folder does not exist, or its config.yaml has a ``plan:`` that cannot be read.
        StoreError: games.jsonl or config.yaml is corrupt.
    """
    folder = require_results_folder(folder)
    store = GameStore(folder)
    # identities and outcomes only, as columns: never moves or telemetry, nor one object a game
    if outcomes is None:
        outcomes = StoreReader(folder).outcomes()
    warnings = tuple(outcomes.scan.warnings())
    doc = store.read_config()
    entries = stored_plan(doc, str(store.config_path))
    if doc is None or entries is None:
        # no plan: every stored game of a pairing counts (planned = done)
        return FolderStatus(folder, None, score_found(outcomes.table), 0, warnings)
    settings = {k: v for k, v in doc.items() if k != "plan"}
    spec = parse_sprt(str(store.config_path), doc.get("sprt"))
    tests = plan_tests(spec, entries, outcomes.records()) if spec is not None else ()
    scores, other = score_columns(entries, outcomes.table)
    # forfeits are few: only those games are read one by one
    return FolderStatus(folder, settings, scores, other, warnings, tests, forfeits(entries, outcomes.forfeited()))


def describe_settings(settings: dict[str, Any]) -> str:
    """One line: name, seed, budget and preset of a resolved config."""
    budget = settings.get("budget") or {}
    mode = budget.get("mode")
    if mode == "iterations":
        b = f"{budget.get('iterations')} iterations/move"
    elif mode == "device":
        costs = "".join(f", {k} {v}" for k, v in (budget.get("costs") or {}).items())
        b = f"device {budget.get('seconds')} s/move ({budget.get('profile')}{costs})"
    elif mode == "cpu":
        b = f"cpu {budget.get('seconds')} s/move (throttle {budget.get('throttle')})"
    else:
        b = f"{mode} {budget.get('seconds')} s/move"
    sweep = settings.get("sweep")
    swept = f", sweep over {', '.join(sweep)}" if isinstance(sweep, dict) and sweep else ""
    shard = settings.get("shard")
    part = (f", shard {shard.get('index')}/{shard.get('count')} (its share of the plan)"
            if isinstance(shard, dict) else "")
    return (f"{settings.get('name')}, seed {settings.get('seed')}, budget {b}, preset {settings.get('preset')}"
            f"{swept}{part}")


def plan_status(plan: Sequence[PlannedPairing], folder: str | Path) -> tuple[PairingScore, ...]:
    """Games of ``plan`` already in ``folder`` (which may not exist yet), without writing anything."""
    return score_columns([p.entry() for p in plan], StoreReader(folder).outcomes().table)[0]
