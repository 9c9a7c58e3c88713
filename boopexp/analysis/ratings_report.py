"""Its files and figure (``boopexp ratings``).

Ratings files from loaded games: ratings.csv, ratings.md and a figure (``boopexp ratings``, ``boopexp tables``).

The fit itself is :func:`boopexp.analysis.ratings.fit_ratings`; this module chooses the games
(every game given, all settings), lays the result out as a :class:`~boopexp.analysis.tables.Table`
and draws it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from boopexp.analysis import render
from boopexp.analysis.ratings import DRAW, Ratings, fit_ratings
from boopexp.analysis.records import GameData
from boopexp.analysis.tables import Table, agent_order, drawn
from boopexp.errors import StoreError

#: ``boopexp tables`` writes ratings when the games hold at least this many agents.
MIN_AGENTS_FOR_TABLES = 3

RATINGS_COLUMNS = ("agent", "elo", "ci_low", "ci_high", "games", "wins", "losses", "no_winner")


def game_agents(data: GameData) -> list[str]:
    """The agents that played any of the games, in the registry's order."""
    games = data.games
    return agent_order(set(games["p1"]) | set(games["p2"])) if len(games) else []


def ratings_from_data(data: GameData, anchor: str | None = None) -> Ratings:
    """Fit the ratings to every game in ``data`` (all settings; a draw half a win each way, games
    without a winner left out).

    Args:
        data: loaded games.
        anchor: the agent fixed at 0 (default ``random`` if it played, else the first agent in
            the registry's order).

    Raises:
        ConfigError: unknown anchor, fewer than two agents, or agents not linked by decided games.
    """
    games = data.games
    draws = drawn(games).to_numpy(dtype=bool) if len(games) else []
    winner = [DRAW if d else w if isinstance(w, str) else None for w, d in zip(games["winner"], draws)]
    return fit_ratings(list(games["p1"]), list(games["p2"]), winner, agents=game_agents(data), anchor=anchor)


def fmt_elo(x: float) -> str:
    """'+152', '-107', '0'."""
    value = round(float(x))
    return "0" if value == 0 else f"{value:+d}"


def ratings_table(fit: Ratings) -> Table:
    """The fit as a table: one row per agent, strongest first; the first-move term in the notes;
    a draws column only when a game was drawn."""
    columns = [*RATINGS_COLUMNS[:-1], "draws", RATINGS_COLUMNS[-1]] if fit.draws else list(RATINGS_COLUMNS)
    frame = pd.DataFrame(
        [{c: getattr(r, c) for c in columns} for r in fit.ratings], columns=columns
    ).astype({"elo": "float64", "ci_low": "float64", "ci_high": "float64", "games": "int64", "wins": "int64",
              "losses": "int64", "no_winner": "int64"} | ({"draws": "int64"} if fit.draws else {}))
    rows = tuple(
        (
            r.agent + (" (anchor)" if r.agent == fit.anchor else ""),
            fmt_elo(r.elo),
            f"[{fmt_elo(r.ci_low)}, {fmt_elo(r.ci_high)}]" if r.agent != fit.anchor else "—",
            f"{r.games:,}", f"{r.wins:,}", f"{r.losses:,}", *((f"{r.draws:,}",) if fit.draws else ()),
            f"{r.no_winner:,}",
        )
        for r in fit.ratings
    )
    low, high = fit.first_move_ci
    notes = [
        f"First-move advantage (P1's edge, both agents equal): {fmt_elo(fit.first_move)} Elo "
        f"[{fmt_elo(low)}, {fmt_elo(high)}] (95%); negative = the second player is favoured.",
        (f"{fit.games:,} decided games; " if not fit.draws else
         f"{fit.games:,} decided and drawn games ({fit.draws:,} drawn: half a win for each side); ")
        + f"{fit.no_winner:,} game{'s' if fit.no_winner != 1 else ''} without a "
        "winner (stopped at the ply cap) left out of the fit and counted in 'no winner'.",
        f"Model: {fit.method}. Elo = 400·log10 of the odds: +100 Elo wins about 64% of games between "
        f"equals apart from the first move. Anchor: {fit.anchor} = 0. Games: wins + losses against "
        "other agents plus mirror games (which inform the first-move term only). Every game given is "
        "used, all settings pooled under each agent's name.",
    ]
    if fit.corrected:
        notes.append(
            "Warning: the decided games are separated (some agents never lost, or never won, against the "
            "others, alone or once the first move's advantage is counted), so the maximum-likelihood ratings "
            "are infinite; half a virtual win was added each way to every pairing that played. Their "
            "ratings are finite but shrunk: read them as bounds."
        )
    return Table(
        name="ratings",
        title="Ratings: Bradley–Terry (logistic Elo) with a first-move term",
        data=frame,
        headers=("agent", "Elo", "95% CI", "games", "wins", "losses", *(("draws",) if fit.draws else ()),
                 "no winner"),
        align="lrrrrrr" + ("r" if fit.draws else ""),
        rows=rows,
        notes=tuple(notes),
    )


def ratings_figure(fit: Ratings):
    """Each agent's Elo with its 95% interval (strongest on top), and the first-move term."""
    import numpy as np

    from boopexp.analysis import figures

    labels = [r.agent for r in fit.ratings] + ["first move (P1)"]
    elo = np.array([r.elo for r in fit.ratings] + [fit.first_move])
    low = np.array([r.ci_low for r in fit.ratings] + [fit.first_move_ci[0]])
    high = np.array([r.ci_high for r in fit.ratings] + [fit.first_move_ci[1]])
    y = np.arange(len(labels))[::-1]
    with figures.styled_axes() as (fig, ax):
        agents = slice(0, len(labels) - 1)
        ax.errorbar(elo[agents], y[agents], xerr=np.vstack([elo - low, high - elo])[:, agents], fmt="o",
                    color=figures.OURS_COLOUR, capsize=3, label="agent rating (95% CI)")
        ax.errorbar(elo[-1:], y[-1:], xerr=np.vstack([elo - low, high - elo])[:, -1:], fmt="s",
                    color=figures.P2_COLOUR, capsize=3, label="first-move advantage")
        ax.axvline(0.0, color="0.7", linewidth=0.8, linestyle="--")
        ax.set_yticks(y, labels)
        ax.set_xlabel(f"Elo relative to {fit.anchor}")
        ax.set_title("Bradley–Terry ratings")
        ax.legend(loc="lower right")
    return fig


def write_ratings(fit: Ratings, out_dir: Path | str) -> list[Path]:
    """Write ratings.md, ratings.csv, ratings.png and ratings.svg into ``out_dir`` (created).

    Returns:
        The paths written.

    Raises:
        StoreError: out_dir cannot be created or written.
    """
    from boopexp.analysis import figures

    out = Path(out_dir)
    table = ratings_table(fit)
    paths = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in (("ratings.md", render.markdown_document([table])), ("ratings.csv", render.to_csv(table))):
            path = out / name
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            paths.append(path)
        paths += figures.save(ratings_figure(fit), out, "ratings")
    except OSError as exc:
        raise StoreError(f"cannot write into {str(out)!r}: {exc}") from None
    return paths
