"""Helpers of the store's tests: a name of the store patched in every room of the package, the
summaries a store's reader gives, a sample of a committed store's games."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import boopexp.experiments.store as store_package
from boopexp.experiments.store import COLUMNS, StoreReader, segment_data, segment_paths


def store_rooms() -> list[Any]:
    """The modules of ``boopexp/experiments/store/`` (the front door first)."""
    return [store_package] + [importlib.import_module(f"{store_package.__name__}.{m.name}")
                              for m in pkgutil.iter_modules(store_package.__path__)]


def patch_store(monkeypatch: pytest.MonkeyPatch, name: str, value: Any) -> None:
    """Set ``name`` to ``value`` in every module of the store that holds it (where it is defined and
    where it is imported): what patching the one ``store.py`` did before it became a package."""
    rooms = [m for m in store_rooms() if hasattr(m, name)]
    assert rooms, f"no module of the store holds {name!r}"
    for module in rooms:
        monkeypatch.setattr(module, name, value)


def summaries(folder: Path) -> list[dict[str, Any]]:
    """Every game's summary as :meth:`StoreReader.outcomes` reads it (every column of the summary,
    the line left out): what :func:`~boopexp.experiments.store.game_summary` of each decoded record
    gives, in reading order."""
    return [{k: v for k, v in r.items() if k != "line"} for r in StoreReader(folder).outcomes(COLUMNS).records()]


#: the most games of one committed store that a per-game family of tests reads (every k-th line:
#: every pairing of a store, each a hundred games or more, is in the sample;
#: tests/test_export.py's test_the_round_trip_sample_takes_every_pairing_of_every_store holds it)
SAMPLE_GAMES = 500


def stored_lines(folder: Path) -> bytes:
    """A store's lines as stored: its segments in order, then its live log."""
    data = b"".join(segment_data(p) for p in segment_paths(folder))
    log = folder / "games.jsonl"
    return data + (log.read_bytes() if log.exists() else b"")


def sampled_store(folder: Path, out: Path) -> Path:
    """A store (a live log) of every k-th line of ``folder``'s, at most :data:`SAMPLE_GAMES` of them."""
    lines = stored_lines(folder).splitlines(keepends=True)
    out.mkdir()
    (out / "games.jsonl").write_bytes(b"".join(lines[::-(-len(lines) // SAMPLE_GAMES)]))
    return out
