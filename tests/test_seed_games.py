"""The seed reports' rows (docs/seed-games.md) on synthetic stores: counts, tests, verdicts, files.

Every outcome is known by construction: the counts chosen so that each verdict must come out, the
p-values recomputed by hand from the binomial and hypergeometric formulas, and the stores written
as ``boopexp run`` writes them (a config.yaml with the plan, one record a game), so the command
reads them as it will read the study's. No game is played.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from report_fixtures import make_record, write_plan, write_results

from boopexp.experiments.config import load_config
from boopexp.interfaces.cli import main
from boopexp.studies.seed_games import analysis as sg
from boopexp.studies.seed_games import report as sr

REPO = Path(__file__).resolve().parents[1]


def _row(claim: str, rate: float | None, games: int | None = None, counts: str = "wins",
         agent: str = "a", opponent: str = "b", margin: float = 0.05) -> sg.ReportRow:
    return sg.ReportRow("T", "pentago-swap", agent, opponent, "test", counts, rate, games, claim, "", margin=margin)


def _games(agent: str, opponent: str, wins: int, ties: int, losses: int, start: int = 0) -> list[dict]:
    """Records of ``agent`` against ``opponent``: its seats alternate (p1 in even-numbered games)."""
    out = []
    results = ["w"] * wins + ["t"] * ties + ["l"] * losses
    for i, result in enumerate(results, start):
        first = i % 2 == 0
        pairing = f"{agent} vs {opponent}" if first else f"{opponent} vs {agent}"
        mine, theirs = ("p1", "p2") if first else ("p2", "p1")
        winner = {"w": mine, "l": theirs, "t": None}[result]
        out.append(make_record(pairing, i, winner, config_hash="h" + pairing, termination="draw" if winner is None
                               else None, experiment="x"))
    return out


def _frame(records: list[dict]) -> pd.DataFrame:
    return pd.DataFrame({"p1": [r["p1"] for r in records], "p2": [r["p2"] for r in records],
                         "winner": [r["winner"] for r in records],
                         "game_index": [r["game_index"] for r in records]})


def _binom_two_sided(k: int, n: int, p: float) -> float:
    """Two-sided exact binomial p by hand: the outcomes no more likely than k's (scipy's rule, R's)."""
    pmf = [math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(n + 1)]
    return min(1.0, sum(q for q in pmf if q <= pmf[k] * (1 + 1e-7)))


def _fisher_two_sided(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact p of [[a, b], [c, d]] by hand (hypergeometric over the first column)."""
    r1, col = a + b, a + c
    n = a + b + c + d

    def prob(x: int) -> float:
        return math.comb(r1, x) * math.comb(n - r1, col - x) / math.comb(n, col)

    observed = prob(a)
    return min(1.0, sum(prob(x) for x in range(max(0, col - (n - r1)), min(r1, col) + 1)
                        if prob(x) <= observed * (1 + 1e-7)))


# ---------------------------------------------------------------------------------------------
# Counting


def test_counts_take_both_seatings_and_ties():
    games = _frame(_games("a", "b", 7, 2, 5) + _games("c", "b", 9, 0, 0, start=100))
    assert sg.row_counts(games, "a", "b") == (7, 2, 5)
    assert sg.row_counts(games, "b", "a") == (5, 2, 7)
    assert sg.row_counts(games, "c", "b") == (9, 0, 0)
    assert sg.row_counts(games, "a", "c") == (0, 0, 0)


def test_a_mirror_agent_sits_p1_in_even_games_and_p2_in_odd_ones():
    records = [make_record("a vs a", i, w, experiment="x") for i, w in enumerate(["p1", "p1", "p2", "p2", None, "p1"])]
    # game 0 p1 (won), 1 p2 (lost), 2 p1 (lost), 3 p2 (won), 4 tie, 5 p2 (lost)
    assert sg.row_counts(_frame(records), "a", "a") == (2, 1, 3)


@pytest.mark.parametrize(("counts", "expected", "equal"), [
    ("wins", (6, 10), 4 / 10),        # half of the 8 decided games
    ("wins+ties", (8, 10), 6 / 10),   # and the 2 ties
    ("not lost", (8, 10), 6 / 10),
    ("decided wins", (6, 8), 4 / 8),
])
def test_what_a_row_counts_and_what_equal_agents_would_score(counts, expected, equal):
    assert sg.successes(counts, 6, 2, 2) == expected
    assert sg.equal_rate(counts, 6, 2, 2) == pytest.approx(equal)


def test_an_unknown_count_is_refused():
    with pytest.raises(ValueError, match="unknown count 'score'"):
        sg.successes("score", 1, 0, 0)


# ---------------------------------------------------------------------------------------------
# Tests and verdicts


def test_a_report_count_makes_the_test_fisher_against_its_sample():
    games = _frame(_games("a", "b", 600, 0, 400))
    result = sg.evaluate(_row("above", 0.544, 1000), games)
    assert result.p_fisher == pytest.approx(_fisher_two_sided(600, 400, 544, 456), rel=1e-9)
    assert result.p_binomial == pytest.approx(_binom_two_sided(600, 1000, 0.544), rel=1e-6)
    assert result.p_value == result.p_fisher
    # 600 vs 544 of 1,000: Fisher says different, so the row does not hold (the binomial agrees here)
    assert result.p_value < 0.05 and result.verdict == "does not hold"


def test_without_a_report_count_the_test_is_the_binomial_against_the_rate():
    result = sg.evaluate(_row("above", 0.6), _frame(_games("a", "b", 14, 0, 6)))
    assert math.isnan(result.p_fisher)
    assert result.p_value == pytest.approx(_binom_two_sided(14, 20, 0.6), rel=1e-9)
    assert (result.k, result.n, result.rate) == (14, 20, 0.7)
    assert result.verdict == "inconclusive"  # consistent with 60%, but the interval reaches below 50%


def test_verdicts_of_directional_rows():
    above = _row("above", 0.70, 100)
    assert sg.evaluate(above, _frame(_games("a", "b", 72, 0, 28))).verdict == "holds"
    assert sg.evaluate(above, _frame(_games("a", "b", 45, 0, 55))).verdict == "does not hold"
    assert sg.evaluate(above, _frame(_games("a", "b", 6, 0, 4))).verdict == "inconclusive"
    below = _row("below", 0.33)
    assert sg.evaluate(below, _frame(_games("a", "b", 30, 0, 70))).verdict == "holds"
    assert sg.evaluate(below, _frame(_games("a", "b", 60, 0, 40))).verdict == "does not hold"


def test_the_side_of_a_finding_is_judged_against_equal_agents_with_the_ties_counted():
    # 40 ties counted as wins for both (QUIRK-CS3): equal agents score 0.5 + 0.2 = 0.7, so 74/100
    # agrees with a report of 72% but is no evidence that the agent is better than its opponent
    row = _row("above", 0.72, 100, counts="wins+ties")
    result = sg.evaluate(row, _frame(_games("a", "b", 34, 40, 26)))
    assert result.rate == pytest.approx(0.74) and result.equal_rate == pytest.approx(0.70)
    assert result.verdict == "inconclusive"


def test_a_direction_without_a_number_is_judged_on_the_interval_alone():
    row = _row("above", None)
    assert sg.evaluate(row, _frame(_games("a", "b", 70, 0, 30))).verdict == "holds"
    assert sg.evaluate(row, _frame(_games("a", "b", 30, 0, 70))).verdict == "does not hold"
    unclear = sg.evaluate(row, _frame(_games("a", "b", 55, 0, 45)))
    assert unclear.verdict == "inconclusive" and math.isnan(unclear.p_value)
    assert sg.evaluate(_row("below", None), _frame(_games("a", "b", 30, 0, 70))).verdict == "holds"


def test_verdicts_of_no_gain_rows():
    row = _row("near", 0.497, 1000, counts="wins+ties")
    assert sg.evaluate(row, _frame(_games("a", "b", 490, 20, 490))).verdict == "holds"
    assert sg.evaluate(row, _frame(_games("a", "b", 600, 0, 400))).verdict == "does not hold"
    assert sg.evaluate(row, _frame(_games("a", "b", 25, 0, 25))).verdict == "inconclusive"  # too wide


def test_cannot_be_beaten_holds_only_without_a_loss():
    row = _row("never loses", 1.0, counts="not lost")
    clean = sg.evaluate(row, _frame(_games("a", "b", 95, 5, 0)))
    assert (clean.k, clean.n, clean.p_value, clean.verdict) == (100, 100, 1.0, "holds")
    beaten = sg.evaluate(row, _frame(_games("a", "b", 95, 4, 1)))
    assert (beaten.p_value, beaten.verdict) == (0.0, "does not hold")


def test_at_least_rows_use_the_one_sided_binomial_and_the_interval():
    row = _row("at least", 0.95, counts="wins+ties")
    strong = sg.evaluate(row, _frame(_games("a", "b", 995, 0, 5)))
    assert strong.verdict == "holds" and strong.ci_low >= 0.95
    weak = sg.evaluate(row, _frame(_games("a", "b", 900, 0, 100)))
    lower_tail = sum(math.comb(1000, i) * 0.95**i * 0.05 ** (1000 - i) for i in range(901))
    assert weak.p_value == pytest.approx(lower_tail, rel=1e-6) and weak.verdict == "does not hold"
    assert sg.evaluate(row, _frame(_games("a", "b", 19, 0, 1))).verdict == "inconclusive"


def test_rows_without_games_or_without_a_number():
    assert sg.evaluate(_row("above", 0.6), None).verdict == "not run"
    assert sg.evaluate(_row("none", None), None).verdict == "not run"
    measured = sg.evaluate(_row("none", None, agent="a", opponent="a"),
                           _frame([make_record("a vs a", i, "p1", experiment="x") for i in range(4)]))
    assert (measured.k, measured.n, measured.verdict) == (2, 4, "not tested")
    assert math.isnan(measured.p_value)


def test_every_row_is_well_formed_and_named_once():
    names = [r.row for r in sg.ROWS]
    assert len(names) == len(set(names))
    for r in sg.ROWS:
        assert r.counts in sg.COUNTS and r.claim in sg.CLAIMS
        assert (r.store in sg.STORES) != bool(r.missing), r.row  # a row is played, or says what it needs
        if r.claim == "none" or r.claim not in ("above", "below"):
            assert (r.report_rate is None) == (r.claim == "none"), r.row


@pytest.mark.parametrize("store", sg.STORES)
def test_the_configs_plan_every_row_of_their_store_both_ways(store):
    config = load_config(REPO / "configs" / "seed-games" / f"{store}.yaml")
    assert config.name == f"{sg.STUDY}-{store}"
    plan = {p.pairing: p.games for p in config.plan()}
    rows = [r for r in sg.ROWS if r.store == store]
    assert rows
    for r in rows:
        if r.agent == r.opponent:
            assert plan[f"{r.agent} vs {r.agent}"] >= 1000 if store.startswith("colosseum") else 100
        else:
            forward, back = plan[f"{r.agent} vs {r.opponent}"], plan[f"{r.opponent} vs {r.agent}"]
            assert forward == back  # seats alternate
            assert forward + back >= (r.report_games or 100), r.row
    if store.startswith("colosseum"):
        assert all(n >= 500 for n in plan.values())  # 1,000 games a row (COLOSSEUM.md §12.3)


@pytest.mark.parametrize(("row", "factor"), [("PS-E1b-5", 5 / 1.9), ("PS-E1b-7", 7 / 1.9), ("PS-E1b-10", 10 / 1.9),
                                            ("PS-E1b-25", 25 / 1.9)])
def test_e1b_gives_the_persistent_agent_the_reports_first_move_ratio(row, factor):
    """The persistent agent's first move is the report's first-move limit over its 1.9 s later
    moves, times the config's budget; its later moves and its opponent's are the config's."""
    config = load_config(REPO / "configs" / "seed-games" / "pentago-swap.yaml")
    r = next(r for r in sg.ROWS if r.row == row)
    agent, opponent = config.agent(r.agent), config.agent(r.opponent)
    first, later = agent.budget.move_budgets(config.settings.budget)
    assert first.seconds == pytest.approx(36 * factor, rel=1e-3) and later == config.settings.budget
    assert agent.mcts == config.agent("ps-persistent").mcts and agent.mcts.reuse_tree
    assert opponent.name == "ps-submitted" and opponent.budget is None


@pytest.mark.parametrize(("row", "store", "options"), [
    ("CS-E1c", "colosseum-cpu", {"size_range": (6, 11)}),
    ("CS-E1cu", "colosseum-cpu-uf", {"size_range": (6, 11), "separation": "union-find"})])
def test_e1_on_the_cpu_clock_is_e1_s_agent_b_without_its_factor(row, store, options):
    """CS-E1c and CS-E1cu: B is CS-E1's B (A's parameters, E1's end test) with no budget of its
    own, on the cpu clock, the same boards as the device rows; CS-E1cu with the original's
    union-find end test (docs/seed-games.md §7)."""
    cpu = load_config(REPO / "configs" / "seed-games" / f"{store}.yaml")
    device = load_config(REPO / "configs" / "seed-games" / "colosseum.yaml")
    r = next(r for r in sg.ROWS if r.row == row)
    assert r.store == store
    b, a = cpu.agent(r.agent), cpu.agent(r.opponent)
    assert a.budget is None and b.budget is None
    assert a.mcts == device.agent("cs-a").mcts and b.mcts == device.agent("cs-b-e1").mcts
    assert cpu.settings.budget.mode == "cpu" and cpu.settings.budget.seconds == 0.01
    assert dict(cpu.settings.game_options) == options


@pytest.mark.parametrize(("row", "scale", "terminal_check"), [("CS-E1", 1.335, 2), ("CS-E1r", 1.386, 2),
                                                              ("CS-E3", 1.528, 1), ("CS-E3r", 2.906, 1)])
def test_e1_and_e3_give_agent_b_the_iterations_its_code_buys(row, scale, terminal_check):
    """B is A (its parameters but E1's end test) with A's budget times the speed-up: ours (docs/games.md,
    benchmarks/colosseum_speed.py) or the report's; the board drawn from the report's 6..11."""
    config = load_config(REPO / "configs" / "seed-games" / "colosseum.yaml")
    r = next(r for r in sg.ROWS if r.row == row)
    b, a = config.agent(r.agent), config.agent(r.opponent)
    assert a.name == "cs-a" and a.budget is None
    assert b.budget.move_budgets(config.settings.budget) == (dataclasses.replace(config.settings.budget,
                                                                                 seconds=2.0 * scale),) * 2
    assert b.mcts == dataclasses.replace(a.mcts, terminal_check=terminal_check)
    assert dict(config.settings.game_options) == {"size_range": (6, 11)}


# ---------------------------------------------------------------------------------------------
# The command and its files


def _study(tmp_path: Path) -> Path:
    root = tmp_path / "seed-games"
    pentago = _games("ps-c0", "ps-submitted", 72, 3, 25) + _games("ps-submitted", "random", 100, 0, 0, start=200)
    colosseum = _games("cs-b-n5", "cs-a", 480, 30, 490)
    for store, records in (("pentago-swap", pentago), ("colosseum", colosseum)):
        folder = root / store
        write_results(folder, records)
        pairings = sorted({(r["pairing"], r["config_hash"]) for r in records})
        write_plan(folder, [(p, h, sum(r["pairing"] == p for r in records)) for p, h in pairings])
        config = folder / "config.yaml"
        config.write_text(config.read_text(encoding="utf-8").replace(f"name: {store}", f"name: {sg.STUDY}-{store}"),
                          encoding="utf-8")
    return root


def test_the_command_writes_the_rows_and_rebuilds_them_byte_for_byte(tmp_path):
    root = _study(tmp_path)
    result = CliRunner().invoke(main, ["seed-games", str(root), "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert "Wrote 2 files" in result.output
    again = CliRunner().invoke(main, ["seed-games", str(root), "--out", str(tmp_path / "b")])
    assert again.exit_code == 0
    for name in ("rows.csv", "seed-games-tables.md"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    with open(tmp_path / "a" / "rows.csv", newline="", encoding="utf-8") as fh:
        rows = {r["row"]: r for r in csv.DictReader(fh)}
    assert list(rows) == [r.row for r in sg.ROWS]
    assert tuple(next(iter(rows.values()))) == sr.ROWS_COLUMNS
    e2 = rows["PS-E2"]
    assert (e2["wins"], e2["ties"], e2["losses"], e2["k"], e2["n"]) == ("72", "3", "25", "72", "100")
    assert float(e2["p_value"]) == pytest.approx(_fisher_two_sided(72, 28, 70, 30), rel=1e-6)
    assert e2["verdict"] == "holds"
    assert rows["PS-E5"]["verdict"] == "holds"
    n5 = rows["CS-E2-N5"]
    assert (n5["k"], n5["n"]) == ("510", "1000")  # ties counted as wins (QUIRK-CS3)
    assert float(n5["p_value"]) == pytest.approx(_fisher_two_sided(510, 490, 497, 503), rel=1e-6)
    assert rows["PS-E3"]["verdict"] == "not run" and rows["CS-E1"]["verdict"] == "not run"
    assert not any(r["missing"] for r in rows.values())  # every row is playable (its store has no games here)
    text = (tmp_path / "a" / "seed-games-tables.md").read_text(encoding="utf-8")
    assert "| PS-E2 |" in text and "72-3-25" in text and "not run: needs" not in text


def test_a_folder_without_the_stores_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["seed-games", str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert "holds none of its stores pentago-swap, colosseum" in result.output
    assert "configs/seed-games/*.yaml" in result.output
    assert not any((tmp_path / "empty").iterdir())


def test_a_store_of_another_experiment_is_refused(tmp_path):
    root = _study(tmp_path)
    config = root / "colosseum" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("seed-games-colosseum", "other"), encoding="utf-8")
    result = CliRunner().invoke(main, ["seed-games", str(root)])
    assert result.exit_code == 2
    assert "not those of 'seed-games-colosseum' (configs/seed-games/colosseum.yaml)" in result.output
