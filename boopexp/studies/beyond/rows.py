"""The head-to-head and gauntlet rows of docs/beyond.md (written by the script
``studies/beyond.py``, no command).

A row counts one agent's games against one opponent (both seats together) at one budget:
wins, losses, games without a winner, the win rate over decided games with its 95 % Wilson
interval, the two-sided exact binomial test of "the rate is 1/2" (``scipy.stats.binomtest``), the
wins per seat, and the median MCTS iterations per move of each side (the iterations a move keeps
under the budget). Read straight from the stores (no frame): the committed stores are small.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from boopexp.analysis.stats import wilson_interval
from boopexp.experiments.store import StoreReader
from boopexp.play.identity import record_key


@dataclass(frozen=True)
class Row:
    """``agent`` against ``opponent`` under one budget per move (both seats)."""

    agent: str
    opponent: str
    budget: str  # "1 s" (device-seconds) or "75 iterations"
    seconds: float  # device-seconds per move (nan under an iterations budget)
    wins: int
    losses: int
    no_winner: int
    wins_as_blue: int
    games_as_blue: int
    wins_as_red: int
    games_as_red: int
    iterations: float  # the agent's median iterations per move
    opponent_iterations: float  # the opponent's

    @property
    def decided(self) -> int:
        return self.wins + self.losses

    @property
    def rate(self) -> float:
        return self.wins / self.decided if self.decided else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.decided)

    @property
    def p_value(self) -> float:
        """Two-sided exact binomial test of a win rate of 1/2 over the decided games."""
        from scipy.stats import binomtest

        return float(binomtest(self.wins, self.decided, 0.5).pvalue) if self.decided else math.nan


def rows(folders: list[str | Path], agent: str) -> list[Row]:
    """``agent``'s rows in the stores of ``folders`` (planned or not; a game counted once), one per
    opponent and budget, in order of first appearance."""
    seen: set[tuple] = set()
    tally: dict[tuple[str, tuple[str, float]], dict] = {}  # (opponent, (mode, seconds)) -> counts
    for folder in folders:
        for r in StoreReader(folder).records().records:
            key = record_key(r)
            if key in seen or agent not in (r["p1"], r["p2"]):
                continue
            seen.add(key)
            side = "p1" if r["p1"] == agent else "p2"
            opponent = r["p2"] if side == "p1" else r["p1"]
            t = tally.setdefault((opponent, _budget(r["budget"])), {
                "wins": 0, "losses": 0, "no_winner": 0, "blue": [0, 0], "red": [0, 0], "it": [], "op_it": []})
            seat = t["blue"] if side == "p1" else t["red"]
            seat[1] += 1
            if r["winner"] is None:
                t["no_winner"] += 1
            elif r["winner"] == side:
                t["wins"] += 1
                seat[0] += 1
            else:
                t["losses"] += 1
            for m in r["telemetry"]:
                (t["it"] if m["agent"] == agent else t["op_it"]).append(m["iterations"])
    return [Row(agent, opponent, budget[0], budget[1], t["wins"], t["losses"], t["no_winner"],
                t["blue"][0], t["blue"][1],
                t["red"][0], t["red"][1], float(statistics.median(t["it"])), float(statistics.median(t["op_it"])))
            for (opponent, budget), t in tally.items()]


def _budget(budget: dict) -> tuple[str, float]:
    if budget.get("mode") == "iterations":
        return f"{budget['iterations']} iterations", math.nan
    if budget.get("mode") != "device" or budget.get("costs"):
        raise ValueError(f"budget {budget!r}: only the default device profile and iterations are tabulated here")
    return f"{float(budget['seconds']):g} s", float(budget["seconds"])


def markdown(table: list[Row], by: str = "budget") -> str:
    """The rows as a Markdown table, led by the budget (``by="budget"``), the opponent or the agent."""
    lead = {"budget": "budget / move", "opponent": "opponent", "agent": "agent"}[by]
    lines = [f"| {lead} | wins / decided | win rate [95 % Wilson] | exact p (two-sided) | as Blue | as Red "
             "| no winner | median iterations / move (agent : opponent) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in table:
        low, high = r.interval
        first = r.budget if by == "budget" else f"`{getattr(r, by)}`"
        lines.append(
            f"| {first} | {r.wins} / {r.decided} | {100 * r.rate:.1f} % [{100 * low:.1f}, {100 * high:.1f}] "
            f"| {_p(r.p_value)} | {r.wins_as_blue} / {r.games_as_blue} | {r.wins_as_red} / {r.games_as_red} "
            f"| {r.no_winner} | {r.iterations:g} : {r.opponent_iterations:g} |")
    return "\n".join(lines) + "\n"


def _p(p: float) -> str:
    return f"{p:.3f}" if p >= 1e-3 else f"{p:.1e}"


def check_table(folders: list[str | Path], agent: str) -> str:
    """Per budget, what ``agent``'s two-stage checks cost: replies tested and moves examined per
    check (one check per solver call), and their share of its device time, charged as the
    device clock charges them (docs/budget.md, "The two-stage check")."""
    from boopexp.agents.budget import DEVICE_PROFILES

    sums: dict[tuple[str, float], list[float]] = {}
    for folder in folders:
        for r in StoreReader(folder).records().records:
            budget = _budget(r["budget"])
            if math.isnan(budget[1]):
                continue  # an iterations budget: nothing is charged against it
            p = DEVICE_PROFILES[r["budget"]["profile"]]
            s = sums.setdefault(budget, [0.0, 0.0, 0.0, 0.0, 0.0])
            for m in r["telemetry"]:
                if m["agent"] != agent:
                    continue
                steps = m["lookahead_moves"] + m["lookahead_replies"]
                s[0] += m["solver_calls"]
                s[1] += m["lookahead_moves"]
                s[2] += m["lookahead_replies"]
                s[3] += m["solver_calls"] * p.solver_call + steps * p.solver_move * p.lookahead_ratio
                s[4] += m["device_seconds"] * 1e6
    lines = ["| budget / move | moves examined per check | replies tested per check "
             "| checks' share of its device time |",
             "|---|---|---|---|"]
    for (label, _), (checks, moves, replies, check_us, device_us) in sorted(sums.items(), key=lambda kv: kv[0][1]):
        lines.append(f"| {label} | {moves / checks:.1f} | {replies / checks:,.0f} "
                     f"| {100 * check_us / device_us:.1f} % |")
    return "\n".join(lines) + "\n"


def side_by_side(mine: list[Row], theirs: list[Row], label_mine: str, label_theirs: str) -> str:
    """Two agents' win rates against the same opponents (a gauntlet against a round robin)."""
    other = {r.opponent: r for r in theirs}
    lines = [f"| opponent | {label_mine} | {label_theirs} |", "|---|---|---|"]
    for r in mine:
        o = other.get(r.opponent)
        cells = []
        for x in (r, o):
            if x is None:
                cells.append("—")
                continue
            low, high = x.interval
            cells.append(f"{100 * x.rate:.1f} % [{100 * low:.1f}, {100 * high:.1f}] of {x.decided}")
        lines.append(f"| `{r.opponent}` | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"
