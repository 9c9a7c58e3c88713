"""A study's folder checked (``check_study_folder``: not the study's folder or store, refused before
anything is read) and each store's planned games read (``read_outcomes``, through the store's
reader); ``iter_planned``.

A study (``boopexp robustness``, ``boopexp knowledge``, …) reads several stores under one folder
(``results/<study>/<store>``, each written by ``boopexp run`` from ``configs/<study>-<store>.yaml``).
:func:`check_study_folder` refuses a folder that is not the study's (nothing read or written);
:func:`read_outcomes` reads only what an analysis needs from one store (each game's identity,
winner and sweep point), as the store reads it; :func:`iter_planned` lists the games the
configs plan (what the tests of a committed study check the stores against).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boopexp.analysis.records import ReportWarning, read_plan
from boopexp.errors import ConfigError
from boopexp.experiments.store import GameStore, StoreReader, has_games_files
from boopexp.play.identity import pairing_agents


def empty_outcomes() -> pd.DataFrame:
    """The columns of :func:`read_outcomes`'s games without a game (pairing, p1, p2, winner, point)."""
    return pd.DataFrame({"pairing": pd.Series([], dtype=object), "p1": pd.Series([], dtype=object),
                         "p2": pd.Series([], dtype=object), "winner": pd.Series([], dtype=object),
                         "point": pd.Series([], dtype=float)})


@dataclass(frozen=True)
class StoreOutcomes:
    """The outcomes of one store's planned games, and what the store's reading found: ``duplicates``,
    copies of games stored twice that were ignored (as ``status`` counts them); ``off_plan``, stored
    games (each once) of settings outside the plan."""

    games: pd.DataFrame
    planned: int | None
    duplicates: int
    off_plan: int


def read_outcomes(directory: Path) -> StoreOutcomes:
    """Only what the analysis needs from a store: each game's identity, winner and sweep point.

    Read as the store reads it (``StoreReader.outcomes``, what
    ``status`` and a resumed ``run`` read: each sealed segment's summary, a segment without a usable
    one and the live log decoded), never one Python object per game: the same valid records (one
    rule), the same refusals (the store's one line naming the file and line) and the same warnings
    (a truncated last line of the live log, a game stored twice, a summary not used). A game read
    twice is counted once (the first copy read: the sealed segments by number, then the live log);
    games of settings outside the store's config.yaml plan are left out and counted.

    Raises:
        StoreError: a line other than the live log's cut-short last one is not a valid record.
        ConfigError: the store's ``plan:`` cannot be read.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = StoreReader(directory).outcomes()  # then the plan, as status
    plan = read_plan(directory)
    table, scan = columns.table, columns.scan
    off_plan = 0
    if plan is not None:
        keys = pc.binary_join_element_wise(table["config_hash"], table["pairing"], "\x00")
        planned_keys = pa.array([f"{config_hash}\x00{pairing}" for pairing, config_hash in plan], pa.string())
        in_plan = pc.is_in(keys, value_set=planned_keys)
        off_plan = len(table) - int(pc.sum(in_plan).as_py() or 0)
        table = table.filter(in_plan)
    for problem in scan.warnings():
        warnings.warn(problem, ReportWarning, stacklevel=2)
    pairing = _objects(table["pairing"])
    sides = {p: pairing_agents(p) for p in set(pairing.tolist())}
    sweep = pc.dictionary_encode(table["sweep"]).combine_chunks()
    points = np.array([_point(json.loads(v)) for v in sweep.dictionary.to_pylist()] + [math.nan], dtype=float)
    games = pd.DataFrame({
        "pairing": pairing.tolist(),
        "p1": [sides[p][0] for p in pairing.tolist()],
        "p2": [sides[p][1] for p in pairing.tolist()],
        "winner": _objects(table["winner"]).tolist(),
        "point": points[sweep.indices.fill_null(len(sweep.dictionary)).to_numpy()],
        "config_hash": _objects(table["config_hash"]).tolist(),
        "game_index": table["game_index"].to_numpy(),
    })
    if games.empty:
        games = empty_outcomes()
    planned = sum(v for v in plan.values() if v is not None) if plan else None
    return StoreOutcomes(games=games, planned=planned, duplicates=scan.duplicates, off_plan=off_plan)


def _objects(column: Any) -> np.ndarray:
    """A text column as an object array holding one string object per distinct value (None for null)."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column).combine_chunks()
    values = np.array([*encoded.dictionary.to_pylist(), None], dtype=object)
    return values[encoded.indices.fill_null(len(encoded.dictionary)).to_numpy()]


def _point(sweep: Any) -> float:
    """A game's sweep value: the value of its one swept axis, NaN when not swept (or on several axes)."""
    sweep = sweep or {}
    return float(next(iter(sweep.values()))) if len(sweep) == 1 else math.nan



#: Where a study's store's config lives, by default (``{study}``, ``{store}`` filled in).
CONFIG_PATTERN = "configs/{study}-{store}.yaml"


def check_study_folder(root: Path, stores: Sequence[str], study: str, config_pattern: str = CONFIG_PATTERN) -> None:
    """Refuse a study folder that is not one: not a folder, none of ``stores`` in it, or one of
    them holding another experiment's games (:func:`check_study_store`); nothing is read or written.
    ``config_pattern``: where each store's config lives (the messages name it).

    Raises:
        ConfigError: as said, naming the folder and the study's default (results/<study>).
    """
    if not root.is_dir():
        raise ConfigError(f"study folder not found: {str(root)!r}")
    if not any(has_games_files(root / name) for name in stores):
        raise ConfigError(
            f"{str(root)!r} is not the {study} study's folder: it holds none of its stores "
            f"{', '.join(stores)} (each a results folder of {config_pattern.format(study=study, store='*')}); "
            f"give the study's folder (default results/{study})"
        )
    for name in stores:
        check_study_store(root / name, name, study, config_pattern)


def check_study_store(folder: Path, store: str, study: str, config_pattern: str = CONFIG_PATTERN) -> None:
    """Refuse a folder named like one of the study's stores that is not it.

    A store identifies itself by the experiment name its config.yaml was written with
    (``<study>-<store>``, from configs/<study>-<store>.yaml): a copy of another run's store
    under the study's folder name would otherwise be analysed as the study's (issue 20 item 11).
    A folder without games is not checked (it is reported missing). ``study``: the study's name
    ("robustness", "knowledge"), whose default folder is results/<study>; ``config_pattern``: where
    the store's config lives (the message names it).

    Raises:
        ConfigError: ``folder`` holds games of another experiment (or no config.yaml).
        StoreError: its config.yaml is damaged.
    """
    if not has_games_files(folder):
        return
    expected = f"{study}-{store}"
    doc = GameStore(folder).read_config()
    name = None if doc is None else doc.get("name")
    if name != expected:
        held = "no config.yaml" if doc is None else f"the games of experiment {name!r}"
        raise ConfigError(
            f"{str(folder)!r} is not the {study} study's store {store}: it holds {held}, not those of "
            f"{expected!r} ({config_pattern.format(study=study, store=store)}); give the study's folder "
            f"(default results/{study})"
        )


def iter_planned(configs: Iterable[Path]):
    """(config path, config_hash, pairing, game_index) of every game the configs plan (for the completeness test)."""
    from boopexp.experiments.config import load_config

    for path in configs:
        config = load_config(path)
        for p in config.plan():
            for i in range(p.games):
                yield path, p.config_hash, p.pairing, i
