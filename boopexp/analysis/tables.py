"""The ``Table`` type, the cell formats and the outcome counts every table shares.

Each table builder returns a :class:`Table`: ``data`` is the machine-readable frame written to
CSV (every row, numbers unformatted), ``rows`` the formatted cells shown in Markdown and LaTeX
(rows that were not run are left out there and listed in a note instead). The builders:
:mod:`boopexp.analysis.paper_tables` (Tables I and II and game length: compared with the paper)
and :mod:`boopexp.analysis.run_tables` (pairwise and telemetry: for any run).

Games without a winner (stopped at ``contract.MAX_PLIES``, ``winner`` None) are neither wins nor
losses: they get their own "no winner" column, count towards the status (they are finished
games), and are left out of rates, intervals, tests and every per-game figure (plies per game,
equivalent moves per game), which their length — the cap, not a game — would distort.

Draws (``termination: "draw"``, a game whose rules end it drawn; boop. has none) are results: a
table that counts results gets a "draws" column and a score, wins + draws/2, with its interval
(:func:`boopexp.analysis.stats.score_interval`) — only when its games include a draw, so every
table of games without one is byte for byte what it was (docs/tables.md, "Draws").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from boopexp.agents.specs import AGENT_NAMES
from boopexp.experiments.tally import PairingScore
from boopexp.play.contract import MAX_PLIES, WINNERS, Termination

DASH = "—"


# "(match.MAX_PLIES)" is kept as written: the committed tables quote it (match re-exports the cap).
NO_WINNER_NOTE = (
    f"No winner: games stopped at the {MAX_PLIES:,}-ply safety cap (match.MAX_PLIES) without a victory. "
    "boop. has no draw: the engine has no draw, repetition or move limit rule (RULES.md §7), and every "
    "game of the paper ended with a winner; the cap only stops two near-deterministic agents that "
    "repeat a position cycle forever (docs/agents.md). Such games are neither wins nor losses: win "
    "rates, intervals and Fisher tests use decided games only (n = wins + losses)."
)


@dataclass(frozen=True)
class Table:
    """One table: CSV data, formatted display rows and the notes printed under it.

    Attributes:
        name: file stem (``table1``, ``pairwise``, …).
        title: one-line caption.
        data: every row, raw values (written to CSV).
        headers: display column headers.
        align: one of ``l``/``r`` per display column.
        rows: formatted display cells (Markdown/LaTeX).
        notes: sentences printed under the table.
    """

    name: str
    title: str
    data: pd.DataFrame
    headers: tuple[str, ...]
    align: str
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = field(default=())


COUNT_COLUMNS = ("games", "p1_wins", "p2_wins", "no_winner")
#: The count of drawn games :func:`outcome_counts` adds after :data:`COUNT_COLUMNS` when a game was drawn.
DRAWS = "draws"
#: A game's winner as its column holds it: "p1" or "p2" (no winner: missing).
_WINNER_NAMES = tuple(str(w.value) for w in WINNERS if w is not None)


def drawn(games: pd.DataFrame) -> pd.Series:
    """Per game row, whether it was drawn (no winner, ``termination`` "draw"): the column form of
    :func:`boopexp.play.contract.is_draw`, as :meth:`~boopexp.experiments.tally.PairingScore.with_game` counts it."""
    return games["winner"].isna() & (games["termination"] == Termination.DRAW.value)


def has_draws(games: pd.DataFrame) -> bool:
    """Whether any of ``games`` was drawn: a table shows its draws column and score only then."""
    return bool(len(games)) and bool(drawn(games).any())


def outcome_counts(games: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys`` (sorted): ``games``, ``p1_wins``, ``p2_wins``, ``no_winner`` (int64),
    and ``draws`` after them when a game was drawn (``no_winner`` then counts the ply-capped
    games only: games = p1_wins + p2_wins + draws + no_winner).

    The counts :meth:`boopexp.experiments.tally.PairingScore.with_game` (the one win tally of a
    pairing that the store, the runner and ``boopexp status`` use too) gives, game by game, counted
    on the columns (a million games in a second); a winner it refuses is refused in its words.
    """
    winner = games["winner"]
    bad = winner.notna() & ~winner.isin(_WINNER_NAMES)
    if bad.any():
        row = games[bad].iloc[0]
        PairingScore.blank().with_game(row["winner"])  # raises its one line
    draw = drawn(games)
    columns = [*COUNT_COLUMNS, DRAWS] if draw.any() else list(COUNT_COLUMNS)
    counted = pd.DataFrame({k: games[k] for k in keys}).assign(
        games=1, p1_wins=winner == _WINNER_NAMES[0], p2_wins=winner == _WINNER_NAMES[1],
        no_winner=winner.isna() & ~draw, draws=draw)
    frame = counted.groupby(keys, sort=True)[columns].sum()
    return frame.astype({c: "int64" for c in columns})


def decided(games: pd.DataFrame) -> pd.DataFrame:
    """The games that ended with a winner (not stopped at the ply limit, not drawn)."""
    return games[games["winner"].notna()]


def finished(games: pd.DataFrame) -> pd.Series:
    """Per game row, whether the game ran its course: a winner or a draw (not the ply cap), so its
    length is a game's length (the per-game figures read these)."""
    return games["winner"].notna() | drawn(games)


def pairing_counts(games: pd.DataFrame) -> pd.DataFrame:
    """Per pairing (and config_hash): games, P1 wins, P2 wins, games without a winner; indexed by pairing.

    Args:
        games: game rows (one config_hash per pairing expected, e.g. GameData.selected).

    Returns:
        Columns ``config_hash``, ``games`` (every finished game), ``p1_wins``, ``p2_wins`` and
        ``no_winner`` (so games = p1_wins + p2_wins + no_winner), and ``draws`` when a game was
        drawn (:func:`outcome_counts`); index ``pairing``.
    """
    if games.empty:
        return pd.DataFrame(
            {"config_hash": pd.Series([], dtype=object)}
            | {c: pd.Series([], dtype="int64") for c in COUNT_COLUMNS},
            index=pd.Index([], name="pairing"),
        )
    hashes = games.groupby("pairing", sort=True)["config_hash"].agg(_join_sorted)
    return pd.concat([hashes.rename("config_hash"), outcome_counts(games, ["pairing"])], axis=1)


def _join_sorted(values: pd.Series) -> str:
    return " ".join(sorted(set(values)))


def fmt_count(wins: Any, games: Any) -> str:
    """'47/50', or '—' when there were no games."""
    if is_missing(wins) or is_missing(games) or int(games) == 0:
        return DASH
    return f"{int(wins)}/{int(games)}"


def fmt_rate_ci(rate: Any, low: Any, high: Any) -> str:
    """'96.0% [90.2, 98.4]' or '—'."""
    if is_missing(rate):
        return DASH
    return f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def fmt_percent(rate: Any) -> str:
    """'96%' for whole percentages, '95.5%' otherwise, '—' if missing."""
    if is_missing(rate):
        return DASH
    pct = round(100 * float(rate), 6)
    return f"{pct:.0f}%" if float(pct).is_integer() else f"{pct:.1f}%"


def fmt_diff(diff: Any) -> str:
    """Difference of rates in percentage points, signed: '+2.0 pp'."""
    if is_missing(diff):
        return DASH
    value = 100 * float(diff)
    if abs(value) < 0.05:
        value = 0.0  # no '-0.0'
    return f"{value:+.1f} pp"


def fmt_p(p: Any) -> str:
    """A p-value with three decimals, '<0.001' below that, '—' if missing."""
    if is_missing(p):
        return DASH
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_num(x: Any) -> str:
    """A count-like number: '1,502', '70.5', or '—'."""
    if is_missing(x):
        return DASH
    x = float(x)
    return f"{x:,.0f}" if x.is_integer() else f"{x:,.1f}"


def fmt_median_iqr(median: Any, q25: Any, q75: Any) -> str:
    """'71 [65–80]' (median [quartile 1–quartile 3]) or '—'."""
    if is_missing(median):
        return DASH
    return f"{fmt_num(median)} [{fmt_num(q25)}–{fmt_num(q75)}]"


def is_missing(x: Any) -> bool:
    if x is None or x is pd.NA:
        return True
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def ratio(a: int, b: int) -> float:
    return a / b if b else math.nan


def agent_order(names: set[str]) -> list[str]:
    """The registry's agent order first (vanilla … mcts-co, heuristics, random), then others sorted."""
    known = [a for a in AGENT_NAMES if a in names]
    return known + sorted(names - set(known))
