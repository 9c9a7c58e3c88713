"""Helpers of the store's tests: a name of the store patched in every room of the package, the
summaries a store's reader gives."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import boopexp.experiments.store as store_package
from boopexp.experiments.store import COLUMNS, StoreReader


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
