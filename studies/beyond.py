"""The tables of docs/beyond.md from the committed stores (run: python studies/beyond.py).

Writes results/beyond/summary.md: mcts-co2 against mcts-co at each budget (results/beyond/co2),
mcts-co2 against each of the robustness study's agents (results/beyond/ladder), and, when the
tuning's confirmation is there, the confirmed candidates' games against mcts-co. The test suite
rebuilds it and compares byte for byte (tests/test_beyond.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from boopexp.studies.beyond.rows import check_table, markdown, rows, side_by_side

RESULTS = Path(__file__).resolve().parent.parent / "results" / "beyond"


def summary(results: Path = RESULTS) -> str:
    """The Markdown text of results/beyond/summary.md."""
    parts = ["# Beyond the paper: the committed games (written by studies/beyond.py)\n",
             "Win rates over decided games, both seats together; exact p: two-sided binomial test of 1/2 "
             "(scipy.stats.binomtest); iterations: the median per move of each side.\n"]
    co2 = [results / name for name in ("co2", "co2-4s") if (results / name).is_dir()]
    if co2:
        table = sorted(rows(co2, "mcts-co2"), key=lambda r: r.seconds)
        parts += ["## mcts-co2 against mcts-co, equal device time (results/beyond/co2, co2-4s)\n", markdown(table),
                  "What mcts-co2's checks cost in those games:\n", check_table(co2, "mcts-co2")]
    free = results / "co2-iterations"
    if free.is_dir():
        parts += ["## mcts-co2 against mcts-co, equal iterations: the check free (results/beyond/co2-iterations)\n",
                  markdown(rows([free], "mcts-co2"))]
    a9 = results / "co2-iterations-a9"
    if a9.is_dir():
        parts += ["## The same with QUIRK-A9 fixed in both agents: co2-a9 against co-a9 "
                  "(results/beyond/co2-iterations-a9)\n", markdown(rows([a9], "co2-a9"))]
    ladder = results / "ladder"
    if ladder.is_dir():
        co2_rows = rows([ladder], "mcts-co2")
        parts += ["## mcts-co2 against the robustness study's agents, 1 device-s (results/beyond/ladder)\n",
                  markdown(co2_rows, by="opponent")]
        d1 = results.parent / "robustness" / "d1"
        if d1.is_dir():
            co_rows = rows([d1], "mcts-co")
            parts += ["Against the same opponents, mcts-co2 (this gauntlet, 50 games per side) and mcts-co (the "
                      "robustness study's round robin, results/robustness/d1, 100 per side), win rate over decided "
                      "games [95 % Wilson]:\n",
                      side_by_side([r for r in co2_rows if r.opponent != "mcts-co"], co_rows, "mcts-co2", "mcts-co")]
    confirm = results / "tune-mcts-co" / "confirm"
    if confirm.is_dir():
        names = sorted({r.opponent for r in rows([confirm], "mcts-co")})
        table = [r for name in names for r in rows([confirm], name) if r.opponent == "mcts-co"]
        parts += ["## The tuning's candidates against mcts-co, 1 device-s (results/beyond/tune-mcts-co/confirm)\n",
                  markdown(table, by="agent")]
    return "\n".join(parts)


def main() -> int:
    text = summary()
    (RESULTS / "summary.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
