"""Every table and figure of ``boopexp tables`` (``build_report``)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from boopexp.analysis import figures, render
from boopexp.analysis.paper_tables import game_length, table1, table2
from boopexp.analysis.records import GameData, ReportWarning, load_results
from boopexp.analysis.run_tables import pairwise, telemetry
from boopexp.analysis.sweep import sweep_figure, sweep_table
from boopexp.analysis.tables import Table
from boopexp.errors import ConfigError, StoreError


@dataclass(frozen=True)
class Report:
    """What :func:`build_report` produced.

    Attributes:
        out_dir: the output folder.
        paths: every file written, in writing order.
        tables: the tables by name (table1, table2, telemetry, game_length, pairwise).
        data: the games read.
    """

    out_dir: Path
    paths: tuple[Path, ...]
    tables: dict[str, Table]
    data: GameData

    def markdown(self, name: str, notes: bool = True) -> str:
        """One table as Markdown (what the command prints for table1 and table2), with its notes or without."""
        table = self.tables[name]
        return render.markdown_document([table if notes else replace(table, notes=())])


def build_tables(data: GameData) -> dict[str, Table]:
    """Every table of the report from loaded games, keyed by name."""
    return {
        "table1": table1(data),
        "table2": table2(data),
        "telemetry": telemetry(data),
        "game_length": game_length(data),
        "pairwise": pairwise(data),
    }


def build_report(results_dirs: Sequence[Path | str], out_dir: Path | str) -> Report:
    """Read the results, write tables (md, csv, tex) and figures (png, svg) into ``out_dir``.

    Files: table1, table2, telemetry (with the game-length table), pairwise as .md/.csv/.tex,
    game_length.csv, and table1/table2/iterations .png/.svg when they have data; for swept
    games (records with ``sweep``) also sweep.md, sweep.csv and sweep.png/.svg, and Table I/II
    only when they have rows.
    Warnings (missing directory, truncated last line, mixed settings) are
    :class:`~boopexp.analysis.records.ReportWarning`.

    Args:
        results_dirs: directories holding ``games.jsonl``.
        out_dir: output folder, created if needed.

    Returns:
        The report (paths written, tables, games).

    Raises:
        StoreError: no results directory exists, a record is invalid, or out_dir cannot be written.
    """
    data = load_results(results_dirs)
    tables = build_tables(data)
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create output folder {str(out)!r}: {exc}") from None

    swept = sweep_table(data.games)
    # Swept games fill the sweep table, not the paper's (whose pairings they are not): an empty
    # Table I/II is then not written (nor left from an earlier build), as the command prints it.
    # Without a sweep both are written, rows or not (the committed outputs hold empty ones).
    paper = [name for name in ("table1", "table2") if swept is None or tables[name].rows]
    documents: dict[str, list[Table]] = {
        **{name: [tables[name]] for name in paper},
        "telemetry": [tables["telemetry"], tables["game_length"]],
        "pairwise": [tables["pairwise"]],
    }
    files: list[tuple[str, str]] = []
    for stem, parts in documents.items():
        files.append((f"{stem}.md", render.markdown_document(parts)))
        files.append((f"{stem}.csv", render.to_csv(parts[0])))
        files.append((f"{stem}.tex", render.latex_document(parts)))
    files.append(("game_length.csv", render.to_csv(tables["game_length"])))
    if swept is not None:
        tables["sweep"] = swept
        files += [("sweep.md", render.markdown_document([swept])), ("sweep.csv", render.to_csv(swept))]

    paths: list[Path] = []
    try:
        for stale in (f"{n}.{ext}" for n in ("table1", "table2") if n not in paper for ext in ("md", "csv", "tex")):
            (out / stale).unlink(missing_ok=True)
        for name, text in files:
            path = out / name
            # newline="" keeps '\n' on every platform: the same bytes everywhere.
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            paths.append(path)
        paths += figures.draw_all(data, tables, out)
        if swept is not None:
            paths += figures.save(sweep_figure(swept), out, "sweep")
    except OSError as exc:
        raise StoreError(f"cannot write into {str(out)!r}: {exc}") from None
    paths += _ratings(data, tables, out)
    paths += _sprt(data, tables, out)
    return Report(out_dir=out, paths=tuple(paths), tables=tables, data=data)


def _ratings(data: GameData, tables: dict[str, Table], out: Path) -> list[Path]:
    """ratings.md/.csv/.png/.svg when the games hold three or more agents (else stale ones removed)."""
    from boopexp.analysis.ratings import linked_groups
    from boopexp.analysis.ratings_report import (
        MIN_AGENTS_FOR_TABLES,
        game_agents,
        ratings_from_data,
        ratings_table,
        write_ratings,
    )

    fit = None
    # Agents whose games never meet (a design of separate groups, like configs/smoke.yaml's) have
    # no common scale: like two agents, nothing to rate and nothing to warn about. A warning is for
    # games that link every agent but whose decided games do not, or another failed fit.
    games = data.games
    if len(game_agents(data)) >= MIN_AGENTS_FOR_TABLES and len(linked_groups(games["p1"], games["p2"])) == 1:
        try:
            fit = ratings_from_data(data)
        except ConfigError as exc:
            warnings.warn(ReportWarning(f"no ratings: {exc}"), stacklevel=3)
    if fit is None:
        for name in ("ratings.md", "ratings.csv", "ratings.png", "ratings.svg"):
            (out / name).unlink(missing_ok=True)
        return []
    tables["ratings"] = ratings_table(fit)
    return write_ratings(fit, out)


def _sprt(data: GameData, tables: dict[str, Table], out: Path) -> list[Path]:
    """sprt.md/.csv when a folder's config has ``sprt:`` (else stale ones removed)."""
    from boopexp.analysis.sprt_table import sprt_table

    table = sprt_table(data.sources)
    names = ("sprt.md", "sprt.csv")
    if table is None:
        for name in names:
            (out / name).unlink(missing_ok=True)
        return []
    tables["sprt"] = table
    paths = []
    try:
        for name, text in zip(names, (render.markdown_document([table]), render.to_csv(table))):
            path = out / name
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            paths.append(path)
    except OSError as exc:
        raise StoreError(f"cannot write into {str(out)!r}: {exc}") from None
    return paths
