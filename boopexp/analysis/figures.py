"""The report's figures and ``STYLE``, the matplotlib rc every report figure is drawn under.

Figures of the report (PNG and SVG): Table I win rates, Table II sides, iterations per move;
``STYLE``, the rc every report figure is drawn under (here, ratings, robustness, tune), and ``save``.

Reproducible bytes: figures are drawn on a bare :class:`matplotlib.figure.Figure` with the Agg
canvas (no pyplot, no global backend switch), at a fixed size and dpi, with fixed rc settings,
a fixed SVG hash salt and without the date/software stamps in the file metadata. The SVG's
element ids are numbered in the order they occur (:func:`canonical_svg_ids`): matplotlib names a
clip path by a hash of its rectangle's full-precision floats, which move by an ulp with the CPU's
BLAS kernel (a bootstrap's ratings, then the layout), though nothing drawn moves.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from boopexp.analysis.records import GameData
from boopexp.analysis.tables import Table, agent_order

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.typing import RcKeyType

DPI = 100
FIGSIZE = (7.0, 4.5)
FORMATS = ("png", "svg")

#: The matplotlib rc every report figure is drawn under (fixed font, SVG hash salt), so that
#: figures rebuild byte for byte; the other report modules draw under it too.
STYLE: dict[RcKeyType, Any] = {
    "svg.hashsalt": "boopexp",
    "svg.fonttype": "path",  # glyphs as paths: no dependence on fonts installed where it is read
    "font.family": "DejaVu Sans",  # shipped with matplotlib
    "font.size": 9.0,
    "axes.grid": False,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "path.simplify": True,
}
_METADATA = {
    "png": {"Software": None},
    "svg": {"Date": None},
}
OURS_COLOUR = "#1f77b4"
P1_COLOUR = "#4c72b0"
P2_COLOUR = "#dd8452"
PAPER_COLOUR = "#c0392b"


def save(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` into ``out_dir`` without time stamps.

    Returns:
        The paths written.
    """
    paths = []
    with matplotlib.rc_context(STYLE):
        for fmt in FORMATS:
            path = out_dir / f"{stem}.{fmt}"
            if fmt == "svg":
                text = io.StringIO()
                fig.savefig(text, format=fmt, dpi=DPI, metadata=_METADATA[fmt])
                path.write_text(canonical_svg_ids(text.getvalue()), encoding="utf-8")
            else:
                fig.savefig(path, format=fmt, dpi=DPI, metadata=_METADATA[fmt])
            paths.append(path)
    return paths


#: An id matplotlib's SVG writer derives from a hash (``_make_id``: clip paths ``p…``, markers
#: ``m…``, hatches ``h…``; a letter and ten hex digits), where it is defined or used.
_HASHED_ID = re.compile(r'(?:(?<=id=")|(?<=#))([phm])[0-9a-f]{10}(?=[)"])')


def canonical_svg_ids(svg: str) -> str:
    """``svg`` with each hashed id renamed ``<letter><n>``, n counting the ids in the order they first
    occur (used or defined): the same drawing gives the same bytes whatever floats the hashes took."""
    names: dict[str, str] = {}
    return _HASHED_ID.sub(lambda m: names.setdefault(m.group(0), f"{m.group(1)}{len(names)}"), svg)


def _figure() -> Figure:
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


@contextlib.contextmanager
def styled_axes() -> Iterator[tuple[Figure, Axes]]:
    """A report figure (the size every one-panel figure shares) and its axes, drawn on under :data:`STYLE`."""
    with matplotlib.rc_context(STYLE):
        fig = _figure()
        yield fig, fig.add_subplot()


def table1_figure(table: Table) -> Figure | None:
    """mcts-co's pooled win rate per opponent with Wilson intervals, the paper's rate marked; None if no row.

    Rows whose games all lack a winner (no rate) are left out.
    """
    df = table.data[(table.data["status"] != "not run") & table.data["win_rate"].notna()]
    if df.empty:
        return None
    with styled_axes() as (fig, ax):
        y = np.arange(len(df))[::-1]
        rate = df["win_rate"].to_numpy(float)
        err = np.vstack([rate - df["ci_low"].to_numpy(float), df["ci_high"].to_numpy(float) - rate])
        ax.errorbar(rate, y, xerr=err, fmt="o", color=OURS_COLOUR, capsize=3, label="ours (Wilson 95%)")
        ax.scatter(df["paper_win_rate"].to_numpy(float), y, marker="x", s=50, color=PAPER_COLOUR,
                   zorder=3, label="paper")
        ax.set_yticks(y, [f"{o}\n{s}" if s != "complete" else o for o, s in zip(df["opponent"], df["status"])])
        ax.set_xlim(-0.02, 1.02)  # room for markers at 0% and 100%
        ax.axvline(0.5, color="0.7", linewidth=0.8, linestyle="--")
        ax.set_xlabel("win rate of mcts-co (both sides pooled)")
        ax.set_title("Table I: mcts-co against each opponent")
        ax.legend(loc="lower left")
    return fig


def table2_figure(table: Table) -> Figure | None:
    """Stacked P1/P2 shares of each agent's decided mirror games, the paper's P1 share marked; None if no row.

    Shares are of the decided games (P1 wins + P2 wins), like the table's P2 share; games
    without a winner are not drawn.
    """
    df = table.data[(table.data["status"] != "not run") & table.data["p2_share"].notna()]
    if df.empty:
        return None
    with styled_axes() as (fig, ax):
        x = np.arange(len(df))
        n_decided = df["p1_wins"].to_numpy(float) + df["p2_wins"].to_numpy(float)
        p1_share = df["p1_wins"].to_numpy(float) / n_decided
        ax.bar(x, p1_share, color=P1_COLOUR, label="P1 (Blue) wins")
        ax.bar(x, 1.0 - p1_share, bottom=p1_share, color=P2_COLOUR, label="P2 (Red) wins")
        # The P1/P2 boundary is 1 - P2 share; its interval is the mirrored Wilson interval of P2.
        low = 1.0 - df["ci_high"].to_numpy(float)
        high = 1.0 - df["ci_low"].to_numpy(float)
        ax.errorbar(x, p1_share, yerr=np.vstack([p1_share - low, high - p1_share]), fmt="none",
                    ecolor="black", capsize=3, linewidth=1)
        paper_p1 = df["paper_p1_wins"].to_numpy(float) / df["paper_games"].to_numpy(float)
        ax.scatter(x, paper_p1, marker="D", s=30, color=PAPER_COLOUR, zorder=3, label="paper P1 share")
        ax.set_xticks(x, list(df["agent"]))
        ax.set_ylim(0.0, 1.02)
        ax.set_ylabel("share of mirror games won")
        ax.set_title("Table II: mirror games by side")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=3, frameon=False)
    return fig


#: Above :data:`~boopexp.analysis.moves.ORDERED_MOVES_LIMIT` moves the iterations figure draws at
#: most this many outliers per agent (distinct values, evenly spread over them, the extremes
#: always): the same picture as every outlier drawn (a marker per value, where thousands of moves
#: would share it), bounded in size (one SVG element per outlier drawn: 39 MB at 100k games).
MAX_FLIERS = 200
#: matplotlib's whisker reach, in IQRs beyond the quartiles (its ``boxplot`` default).
WHISKER_IQR = 1.5


def iterations_figure(data: GameData) -> Figure | None:
    """Box plot of MCTS iterations per move for each agent that searched (some move > 0 iterations); else None.

    Up to :data:`~boopexp.analysis.moves.ORDERED_MOVES_LIMIT` moves (every committed store) every
    move is given to matplotlib; above, the boxes are drawn from the moves' distribution (the same
    quartiles and whiskers) with at most :data:`MAX_FLIERS` outliers per agent.
    """
    moves = data.moves
    searching = [a for a in moves.agents if len(v := moves.distribution(a, "iterations")[0]) and v[-1] > 0]
    # Baselines report 0 iterations on every move: they are not searching, so leave them out.
    if not searching:
        return None
    agents = agent_order(set(searching))
    ordered = moves.ordered_iterations()
    medians = [moves.median(a, "iterations") for a in agents]
    with styled_axes() as (fig, ax):
        if ordered is not None:
            ax.boxplot([ordered[a] for a in agents], tick_labels=agents, showfliers=True, flierprops={"markersize": 2})
        else:
            ax.bxp([_box_stats(*moves.distribution(a, "iterations"), a) for a in agents], showfliers=True,
                   flierprops={"markersize": 2})
        ax.set_ylabel("iterations per move")
        ax.set_title("MCTS iterations per move")
        if _spread(medians) > 100:
            ax.set_yscale("log")  # agents differ by orders of magnitude (vanilla vs CO agents)
        ax.tick_params(axis="x", labelrotation=30)
    return fig


def _box_stats(values: np.ndarray, counts: np.ndarray, label: str) -> dict[str, Any]:
    """What matplotlib's ``boxplot`` computes of a sample (quartiles, whiskers at 1.5 IQR, the
    outliers), from its distinct values and their counts, with at most :data:`MAX_FLIERS` outliers."""
    from boopexp.analysis.moves import median, quantile

    q1, q3 = quantile(values, counts, 0.25), quantile(values, counts, 0.75)
    iqr = q3 - q1
    inside_high = values[values <= q3 + WHISKER_IQR * iqr]
    inside_low = values[values >= q1 - WHISKER_IQR * iqr]
    whishi = float(inside_high.max()) if len(inside_high) and inside_high.max() >= q3 else q3
    whislo = float(inside_low.min()) if len(inside_low) and inside_low.min() <= q1 else q1
    fliers = values[(values < whislo) | (values > whishi)]
    if len(fliers) > MAX_FLIERS:
        fliers = fliers[np.unique(np.linspace(0, len(fliers) - 1, MAX_FLIERS).round().astype(int))]
    return {"label": label, "med": median(values, counts), "q1": q1, "q3": q3, "whislo": whislo,
            "whishi": whishi, "fliers": fliers}


def _spread(medians: list[float]) -> float:
    """Ratio of the largest to the smallest positive per-agent median (1 if undefined)."""
    positive = [m for m in medians if m > 0 and not math.isnan(m)]
    return max(positive) / min(positive) if positive else 1.0


def draw_all(data: GameData, tables: dict[str, Table], out_dir: Path) -> list[Path]:
    """Draw every figure whose data exist; remove stale files of figures that have none now.

    Returns:
        The paths written.
    """
    builders = {
        "table1": lambda: table1_figure(tables["table1"]),
        "table2": lambda: table2_figure(tables["table2"]),
        "iterations": lambda: iterations_figure(data),
    }
    written: list[Path] = []
    for stem, build in builders.items():
        fig = build()
        if fig is None:
            # An old figure would contradict the tables just written next to it.
            for fmt in FORMATS:
                (out_dir / f"{stem}.{fmt}").unlink(missing_ok=True)
            continue
        written += save(fig, out_dir, stem)
    return written

