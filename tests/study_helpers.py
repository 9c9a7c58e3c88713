"""What the committed-study tests share (tests/test_robustness_results.py, tests/test_knowledge_results.py):
a store holds every planned game of its config once, and a study's committed outputs equal a rebuild."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from boopexp.experiments.store import StoreReader, has_games_files
from boopexp.studies.stores import iter_planned

#: the files a study command writes that are compared byte for byte
TEXT_SUFFIXES = (".csv", ".md")
FIGURE_SUFFIXES = (".svg", ".png")


def assert_store_complete(folder: Path, config: Path, store: str) -> None:
    """Every game ``config`` plans is in ``folder`` exactly once, and nothing else (no truncated line)."""
    planned = {(h, p, i) for _, h, p, i in iter_planned([config])}
    seen: set[tuple[str, str, int]] = set()
    duplicates = []
    reader = StoreReader(folder)
    assert reader.outcomes().scan.tail is None, f"{store}: a truncated last line"
    for path in reader.files():
        for number, raw in (line for block in reader.blocks(path) for line in block):
            record = json.loads(raw)
            key = (record["config_hash"], record["pairing"], record["game_index"])
            if key in seen:
                duplicates.append((path.name, number, key))
            seen.add(key)
    assert not duplicates, f"{store}: {len(duplicates)} duplicate records, e.g. {duplicates[:3]}"
    assert seen == planned, (
        f"{store}: {len(planned - seen)} planned games missing (e.g. {sorted(planned - seen)[:3]}), "
        f"{len(seen - planned)} not in the plan (e.g. {sorted(seen - planned)[:3]})"
    )


def rebuilt_study(tmp_path_factory: pytest.TempPathFactory, study: Path, stores: Iterable[str], marker: str,
                  rebuild: Callable[[Path, Path], object]) -> Path:
    """``study`` rebuilt by ``rebuild(study, out)`` into a temporary folder; skips (with the reason)
    while one of its ``stores`` or its ``marker`` output is not committed yet."""
    missing = [s for s in stores if not has_games_files(study / s)]
    if missing:
        pytest.skip(f"results/{study.name}: {', '.join(missing)} not committed yet")
    if not (study / marker).exists():
        pytest.skip(f"results/{study.name}/{marker} is not committed yet (make {study.name})")
    out = tmp_path_factory.mktemp(study.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rebuild(study, out)
    return out


def committed_outputs(study: Path, suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in study.iterdir() if p.is_file() and p.suffix in suffixes)


def assert_texts_rebuilt(study: Path, rebuilt: Path) -> None:
    """The committed CSV and Markdown outputs of ``study`` are the rebuilt ones, byte for byte."""
    committed = committed_outputs(study, TEXT_SUFFIXES)
    names = sorted(p.name for p in rebuilt.iterdir() if p.suffix in TEXT_SUFFIXES)
    assert sorted(p.name for p in committed) == names
    for path in committed:
        assert (rebuilt / path.name).read_bytes() == path.read_bytes(), f"{study.name}/{path.name} differs"


def assert_figures_rebuilt(study: Path, rebuilt: Path, tables: str, stems: set[str]) -> None:
    """The committed figures are the rebuilt ones, when drawn with this matplotlib (``tables``: the
    Markdown file that names the version); skips otherwise."""
    import matplotlib

    text = (study / tables).read_text(encoding="utf-8")
    drawn_with = re.search(r"matplotlib ([^ )]+)\)", text)
    if drawn_with is None or drawn_with.group(1) != matplotlib.__version__:
        pytest.skip(f"the committed figures were drawn with matplotlib "
                    f"{drawn_with.group(1) if drawn_with else '?'}, this is {matplotlib.__version__}")
    committed = committed_outputs(study, FIGURE_SUFFIXES)
    assert {p.stem for p in committed} >= stems
    for path in committed:
        assert (rebuilt / path.name).read_bytes() == path.read_bytes(), f"{study.name}/{path.name} differs"
