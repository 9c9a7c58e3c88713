"""**The** writer of a study's files (``write_report``: its tables as ``write_tables`` writes them,
a CSV per table and ``<study>-tables.md`` with the notes, then its figures; a folder that cannot be
written is one ``StoreError``).

:func:`write_report` writes them into the command's folder (each study draws its own figures,
under :mod:`boopexp.analysis.figures`' style), a folder that cannot be written being the one-line
``StoreError`` of every study command (``boopexp robustness``, ``boopexp knowledge``);
:func:`write_tables` writes ``<name>.csv`` per table and ``<study>-tables.md`` with the notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from boopexp.analysis.tables import Table
from boopexp.errors import StoreError

if TYPE_CHECKING:  # for the annotations only: matplotlib is loaded by the figures' drawing
    from matplotlib.figure import Figure


def write_report(out: Path, tables: Sequence[Table], csv_names: Sequence[str], study: str, notes: Sequence[str],
                 figures: Iterable[tuple[str, Figure | None]], *, drop_stale: bool = False) -> list[Path]:
    """A study's files into ``out``: its tables (:func:`write_tables`), then each of ``figures``
    (stem, figure; drawn as the iteration reaches it) in every format. A figure without data
    (None) is not drawn; with ``drop_stale`` an older file of it is removed (it would contradict
    the tables beside it). The paths written, in order.

    Raises:
        StoreError: ``out`` cannot be written.
    """
    from boopexp.analysis import figures as style

    paths: list[Path] = []
    with _writing_into(out):
        paths += write_tables(out, tables, csv_names, study, notes)
        for stem, fig in figures:
            if fig is not None:
                paths += style.save(fig, out, stem)
            elif drop_stale:
                for fmt in style.FORMATS:
                    (out / f"{stem}.{fmt}").unlink(missing_ok=True)
    return paths


@contextmanager
def _writing_into(out: Path) -> Iterator[None]:
    """Write a study's files into ``out`` inside this block.

    Raises:
        StoreError: a file of ``out`` cannot be written (the OSError's message, no traceback).
    """
    try:
        yield
    except OSError as exc:
        raise StoreError(f"cannot write into {str(out)!r}: {exc}") from None


def write_tables(out: Path, tables: Sequence[Table], csv_names: Sequence[str], study: str,
                 notes: Sequence[str]) -> list[Path]:
    """A study's tables into ``out`` (created): ``<name>.csv`` for each table named in
    ``csv_names``, and all of them in ``<study>-tables.md`` with the notes and the matplotlib
    version the figures beside them are drawn with (``boopexp <study>``). Raises OSError."""
    import matplotlib

    from boopexp.analysis import render

    out.mkdir(parents=True, exist_ok=True)
    paths = [_write(out / f"{t.name}.csv", render.to_csv(t)) for t in tables if t.name in csv_names]
    footer = ["", *(f"Note: {n}" for n in notes),
              f"Rebuilt by `boopexp {study}` (figures drawn with matplotlib {matplotlib.__version__})."]
    paths.append(_write(out / f"{study}-tables.md", render.markdown_document(tables) + "\n".join(footer) + "\n"))
    return paths


def _write(path: Path, text: str) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path
