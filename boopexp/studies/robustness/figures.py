"""The robustness study's figures: the budget ladder (C8) and the profile sensitivity (D2).

Drawn like every report figure (:mod:`boopexp.analysis.figures`): a bare Figure on the Agg canvas,
fixed size, rc settings and SVG hash salt, no date stamp, so they rebuild byte for byte with the
same matplotlib.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from boopexp.analysis import figures

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")


def ladder_figure(ladder: pd.DataFrame) -> Figure | None:
    """mcts-co's win rate against vanilla and heuristics, and the mirror's P2 share, by budget (log2 axis)."""
    data = ladder[ladder["rate"].notna()]
    if data.empty:
        return None
    with figures.styled_axes() as (fig, ax):
        for k, (series, grp) in enumerate(data.groupby("series", sort=True)):
            grp = grp.sort_values("budget")
            x = grp["budget"].to_numpy(float)
            y = grp["rate"].to_numpy(float)
            err = np.vstack([y - grp["ci_low"].to_numpy(float), grp["ci_high"].to_numpy(float) - y])
            ax.errorbar(x, y, yerr=err, marker=_MARKERS[k % len(_MARKERS)], capsize=3, label=series)
        ax.set_xscale("log", base=2)
        ticks = sorted(set(data["budget"].to_numpy(float)))
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_ylim(-0.02, 1.02)
        ax.axhline(0.5, color="0.7", linewidth=0.8, linestyle="--")
        ax.set_xlabel("device-seconds per move")
        ax.set_ylabel("win rate / P2 share (decided games)")
        ax.set_title("Budget ladder (D3): Wilson 95% intervals")
        ax.legend(loc="lower right")
    return fig


def sensitivity_figure(sensitivity: pd.DataFrame) -> Figure | None:
    """Left: mcts-co's win rate per opponent at each solver-cost scale and cpu; right: mirror P2 shares."""
    data = sensitivity[sensitivity["rate"].notna()]
    if data.empty:
        return None
    profiles = list(dict.fromkeys(data["profile"]))
    position = {p: i for i, p in enumerate(profiles)}
    mirrors = data["series"].str.endswith("(P2 share)")
    with matplotlib.rc_context(figures.STYLE):
        fig = Figure(figsize=(10.0, 4.5), dpi=figures.DPI, layout="constrained")
        FigureCanvasAgg(fig)
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 1]})
        for ax, part, title in ((left, data[~mirrors], "mcts-co against each Table I opponent"),
                                (right, data[mirrors], "mirror games: P2 share")):
            series = list(dict.fromkeys(part["series"]))
            width = 0.8 / max(1, len(series))
            for k, name in enumerate(series):
                grp = part[part["series"] == name]
                x = np.array([position[p] for p in grp["profile"]], dtype=float) + (k - (len(series) - 1) / 2) * width
                y = grp["rate"].to_numpy(float)
                err = np.vstack([y - grp["ci_low"].to_numpy(float), grp["ci_high"].to_numpy(float) - y])
                ax.errorbar(x, y, yerr=err, fmt=_MARKERS[k % len(_MARKERS)], capsize=2, markersize=4,
                            label=name.replace("mcts-co vs ", "vs ").replace(" (P2 share)", ""))
            ax.set_xticks(range(len(profiles)), profiles)
            ax.set_xlabel("solver-cost scale (cpu: the cpu budget)")
            ax.set_ylim(-0.02, 1.02)
            ax.axhline(0.5, color="0.7", linewidth=0.8, linestyle="--")
            ax.set_title(title)
            ax.legend(fontsize=7, loc="lower left", ncol=2)
        left.set_ylabel("win rate of mcts-co (decided games, Wilson 95%)")
        right.axhline(0.6, color="0.5", linewidth=0.8, linestyle=":")
        fig.suptitle("Profile sensitivity (D2): solver costs scaled; × 1 is the committed run")
    return fig
