"""The sweep table and figure: each pairing's win rate at each point of a sweep (skill ladders).

Written by ``boopexp tables`` when some games carry ``sweep: {axis: value}`` (docs/runner.md,
"Sweeps"). A row is one pair of agents (both seatings together, as in Table I) at one point: the
first agent's wins, losses, games without a winner, its win rate over decided games and the 95%
Wilson interval. A mirror ``A vs A`` counts Blue's (p1's) wins. When a game was drawn, the
draws and the first agent's score (wins + draws/2) with its interval are added (docs/tables.md,
"Draws"). The figure draws, for each axis, the win rate with its interval against the axis (log
scale for budgets and costs), one line per pair and per value of the other axes.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from boopexp.analysis.stats import score_interval, wilson_interval
from boopexp.analysis.tables import Table, drawn, fmt_rate_ci
from boopexp.experiments.sweep import is_log_axis
from boopexp.play.identity import pairing_name

TITLE = "Sweep: win rate of the first agent of each pairing at each point (both seatings; 95% Wilson interval)"


def sweep_axes(games: pd.DataFrame) -> list[str]:
    """The sweep axes found in the games, in the order their records list them."""
    axes: list[str] = []
    for text in games.get("sweep", pd.Series([], dtype=object)):
        for axis in json.loads(text) if text else {}:
            if axis not in axes:
                axes.append(axis)
    return axes


def sweep_table(games: pd.DataFrame) -> Table | None:
    """The sweep table of the planned games (``in_plan``), or None when no game is swept."""
    axes = sweep_axes(games)
    if not axes:
        return None
    swept = games[(games["sweep"] != "") & games["in_plan"]].sort_values("order", kind="mergesort")
    swept = swept.assign(drawn=drawn(swept))
    draws = bool(swept["drawn"].any())
    pairs: dict[frozenset, tuple[str, str]] = {}
    counts: dict[tuple, list[int]] = {}
    for g in swept.itertuples():
        point = json.loads(g.sweep)
        agent, opponent = pairs.setdefault(frozenset((g.p1, g.p2)), (g.p1, g.p2))
        key = (agent, opponent, tuple(point.get(a) for a in axes))
        slot = counts.setdefault(key, [0, 0, 0, 0])
        if g.drawn:
            slot[3] += 1
        elif g.winner is None:
            slot[2] += 1
        elif (g.p1 if g.winner == "p1" else g.p2) == agent and (agent != opponent or g.winner == "p1"):
            slot[0] += 1
        else:
            slot[1] += 1
    rows = []
    for (agent, opponent, values), (wins, losses, no_winner, drew) in counts.items():
        n = wins + losses
        low, high = wilson_interval(wins, n) if n else (math.nan, math.nan)
        rows.append({
            "pairing": pairing_name(agent, opponent), "agent": agent, "opponent": opponent,
            **dict(zip(axes, values)),
            "games": wins + losses + no_winner + drew, "wins": wins, "losses": losses, "no_winner": no_winner,
            "win_rate": wins / n if n else math.nan, "ci_low": low, "ci_high": high,
            **(dict(zip(("draws", "score", "score_low", "score_high"), (drew, *score_interval(wins, drew, losses))))
               if draws else {}),
        })
    data = pd.DataFrame(rows)
    data = data.sort_values(["pairing", *axes], kind="mergesort", key=_sort_key).reset_index(drop=True)
    display = tuple(
        (r["pairing"], *(str(r[a]) for a in axes), str(r["games"]),
         f"{r['wins']}-{r['draws']}-{r['losses']}" if draws else f"{r['wins']}-{r['losses']}",
         fmt_rate_ci(r["win_rate"], r["ci_low"], r["ci_high"]))
        for r in data.to_dict("records")
    )
    notes = ["Mirror pairings (A vs A) count Blue's wins. Games without a winner are left out of the rate."]
    if draws:
        notes.append("Wins-draws-losses: a draw is half a point to each side; sweep.csv holds the first agent's "
                     "score (wins + draws/2 over the decided and drawn games) and its interval (Student's t on "
                     "the games' mean score). The win rate stays the share of the decided games.")
    return Table(
        name="sweep",
        title=TITLE,
        data=data,
        headers=("pairing", *axes, "games", "wins-draws-losses" if draws else "wins-losses", "win rate [95% CI]"),
        align="l" + "r" * (len(axes) + 3),
        rows=display,
        notes=tuple(notes),
    )


def sweep_figure(table: Table) -> Any:
    """One panel per axis: win rate and interval against the axis, a line per pair and other-axes values."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from boopexp.analysis.figures import DPI

    data = table.data
    axes = [h for h in table.headers[1:-3]]
    fig = Figure(figsize=(6.0 * len(axes), 4.5), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    panels = fig.subplots(1, len(axes), squeeze=False)[0]
    for ax, axis in zip(panels, axes):
        others = [a for a in axes if a != axis]
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data[axis])
        for (pairing, *rest), grp in data.groupby(["pairing", *others], sort=True, dropna=False):
            grp = grp.sort_values(axis, key=_sort_key)
            x = list(grp[axis]) if numeric else [str(v) for v in grp[axis]]
            y = grp["win_rate"].to_numpy()
            err = [y - grp["ci_low"].to_numpy(), grp["ci_high"].to_numpy() - y]
            label = pairing + "".join(f", {a}={v}" for a, v in zip(others, rest))
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=label)
        if numeric:
            if is_log_axis(axis) and all(v > 0 for v in data[axis]):
                ax.set_xscale("log")
            ticks = sorted(set(data[axis]))
            ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
            ax.minorticks_off()
        ax.set_xlabel(axis)
        ax.set_ylabel("win rate of the first agent")
        ax.set_ylim(-0.02, 1.02)
        ax.axhline(0.5, color="grey", linewidth=0.6, linestyle=":")
        ax.legend(fontsize=7)
    return fig


def _sort_key(column: pd.Series) -> pd.Series:
    """Numbers by value, anything else by its text (an axis may hold profile names)."""
    return column.map(
        lambda v: (0, float(v), "") if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, 0.0, str(v))
    )
