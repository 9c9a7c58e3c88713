"""Draws are first-class (issue 35): a record says ``termination: "draw"``, the store and its
readers keep it, ``status`` and the tables count it (a draws column, score = wins + draws/2), the
ratings count it as half a win each way and the SPRT reads it in the pentanomial categories.

boop. has no draw: the games here are synthetic (the runner's fake game, turned into a draw on
some indices), as a game with draws (Connect Four) will store them. Every output of games without
a draw stays as it was: the committed tables' and ratings' byte-for-byte tests hold that.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import DEMO_CONFIG, fake_play_game
from report_fixtures import make_record, write_plan, write_results
from store_helpers import summaries

from boopexp.analysis.ratings import DRAW, fit_ratings
from boopexp.analysis.ratings_bootstrap import bootstrap_ratings
from boopexp.analysis.records import load_results
from boopexp.analysis.run_tables import pairwise, telemetry
from boopexp.analysis.stats import score_interval, wilson_interval
from boopexp.experiments.config import load_yaml, parse_config
from boopexp.experiments.export import game_text, read_games
from boopexp.experiments.sprt import (
    PAIR_SCORES,
    PENTANOMIAL_SCORES,
    SprtSpec,
    llr_logistic,
    sequential,
    state_from_records,
)
from boopexp.experiments.store import GameStore, StoreReader, check_record, encode_record, seal
from boopexp.experiments.tally import PairingScore
from boopexp.interfaces.cli import main
from boopexp.play import match
from boopexp.play.contract import Termination, build_record, is_draw, pack_record, unpack_record

ROUND_ROBIN = """\
name: drawn
seed: 4
games_per_side: 4
budget: {mode: iterations, iterations: 2}
pairings:
  - [heuristics, random]
  - [random, vanilla]
  - [vanilla, heuristics]
"""


def drawing_play_game(task) -> dict:
    """The runner's fake game, drawn on even game indices (``build_record(draw=True)``)."""
    record = fake_play_game(task)
    if task.game_index % 2:
        return record
    return build_record(task, None, record["moves"], record["telemetry"], 0.0, version="fake", draw=True)


def a_task():
    """The first game of the runner tests' demo config ("heuristics vs random")."""
    config = parse_config(load_yaml(DEMO_CONFIG, "demo.yaml"), "demo.yaml")
    return next(iter(config.tasks(config.plan())))


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


# --- records ---------------------------------------------------------------------------------


def test_a_drawn_record_has_no_winner_and_says_draw():
    task = a_task()
    record = build_record(task, None, ["c3"], [], 0.0, draw=True)
    assert record["winner"] is None and record["winner_agent"] is None and record["winner_colour"] is None
    assert record["termination"] is Termination.DRAW and record["termination"] == "draw"
    assert is_draw(record) and not is_draw(build_record(task, None, ["c3"], [], 0.0))
    assert build_record(task, None, ["c3"], [], 0.0)["termination"] is Termination.PLY_LIMIT


@pytest.mark.parametrize("winner, forfeit", [("p1", None), ("p2", None),
                                             (None, {"termination": Termination.AGENT_ERROR, "player": "p1",
                                                     "agent": "random", "error": "boom"})])
def test_a_draw_with_a_winner_or_a_forfeit_is_refused(winner, forfeit):
    task = a_task()
    with pytest.raises(ValueError, match="a drawn game has no winner and no forfeit"):
        build_record(task, winner, ["c3"], [], 0.0, forfeit=forfeit, draw=True)


def test_a_drawn_record_is_stored_and_read_back_as_a_draw(tmp_path):
    task = a_task()
    record = build_record(task, None, ["c3", "d4"], [], 0.0, version="fake", draw=True)
    assert check_record(json.loads(json.dumps(record))) is None
    packed = json.loads(encode_record(record))
    assert packed["termination"] == "draw"  # kept: the winner alone would derive "ply_limit"
    assert unpack_record(packed)["termination"] is Termination.DRAW
    assert unpack_record(pack_record(record)) == unpack_record(packed)
    with GameStore(tmp_path).open() as writer:
        writer.append(record)
    for sealed in (False, True):  # the live log, then a sealed segment read from its summary
        if sealed:
            seal(tmp_path)
            assert summaries(tmp_path)[0]["termination"] == "draw"
        outcomes = StoreReader(tmp_path).outcomes()
        assert outcomes.table["termination"].to_pylist() == ["draw"]
        assert outcomes.table["winner"].to_pylist() == [None]
        assert StoreReader(tmp_path).records().records[0]["termination"] == "draw"


def test_the_replay_check_takes_a_draw_where_the_moves_end_drawn_and_only_there():
    from boopexp.errors import StoreError
    from boopexp.play.replay import check_counted_fields

    record = build_record(a_task(), None, [], [], 0.0, version="fake", draw=True)
    check_counted_fields(record, None, draw=True)  # a game whose rules drew it (Connect Four)
    with pytest.raises(StoreError, match="termination = 'draw'; its moves and agents give 'ply_limit'"):
        check_counted_fields(record, None)  # boop.'s moves never end drawn


def test_a_draw_is_exported_as_half_a_point_each_and_read_back(tmp_path):
    task = a_task()
    record = build_record(task, None, ["c3", "d4"], [], 0.0, version="fake", draw=True)
    text = game_text(record)
    assert '[Result "1/2-1/2"]' in text and text.rstrip().endswith("1/2-1/2")
    path = tmp_path / "games.txt"
    path.write_text(text)
    [(_, back)] = list(read_games(path))
    assert back["termination"] == "draw" and back["winner"] is None


# --- the tally, status -------------------------------------------------------------------------


def test_the_tally_counts_a_draw_apart_from_a_ply_capped_game():
    s = PairingScore.blank()
    for winner, termination in (("p1", "victory"), (None, "draw"), (None, "ply_limit"), (None, "draw"),
                                ("p2", "victory")):
        s = s.with_game(winner, termination)
    assert (s.done, s.p1_wins, s.p2_wins, s.draws, s.no_winner) == (5, 1, 1, 2, 1)
    assert s.score(match.Side.P1) == 2.0 and s.to_dict()["draws"] == 2
    assert "draws" not in PairingScore.blank().with_game(None, "ply_limit").to_dict()


@pytest.fixture
def drawn_run(tmp_path, monkeypatch):
    """A round robin of three agents whose even-indexed games are drawn, run by ``boopexp run``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(match, "play_game", drawing_play_game)
    (tmp_path / "drawn.yaml").write_text(ROUND_ROBIN)
    result = invoke("run", "drawn.yaml", "-q", "-j", "1")
    assert result.exit_code == 0, result.output
    return tmp_path / "results" / "drawn"


def test_status_shows_a_draws_column_and_a_rerun_plays_nothing(drawn_run):
    result = invoke("status", str(drawn_run))
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if line.strip().startswith("pairing"))
    assert header.split()[-1] == "draws"
    row = next(line for line in result.stdout.splitlines() if line.strip().startswith("heuristics vs random"))
    assert row.split()[-4] == "4/4" and row.split()[-1] == "2"  # game indices 0 and 2 of 0..3
    [pairing] = [p for p in json.loads(invoke("status", str(drawn_run), "--json").stdout)[0]["pairings"]
                 if p["pairing"] == "heuristics vs random"]
    assert pairing["draws"] == 2 and pairing["p1_wins"] + pairing["p2_wins"] + pairing["draws"] == 4
    assert pairing["no_winner"] == 0
    rerun = invoke("run", "drawn.yaml", "-j", "1")
    assert rerun.exit_code == 0 and "0 to play" in rerun.output, rerun.output


# --- the tables ----------------------------------------------------------------------------------


def test_score_interval_is_students_t_on_the_mean_score():
    from scipy import stats

    wins, draws, losses = 7, 5, 3
    scores = np.array([1.0] * wins + [0.5] * draws + [0.0] * losses)
    mean, low, high = score_interval(wins, draws, losses)
    want = stats.ttest_1samp(scores, 0.5).confidence_interval(0.95)
    assert mean == pytest.approx(9.5 / 15) and (low, high) == pytest.approx((want.low, want.high))
    assert score_interval(0, 4, 0) == (0.5, 0.5, 0.5)  # no variance: the point
    assert score_interval(0, 1, 0) == (0.5, 0.0, 1.0)  # one game: nothing known
    assert all(math.isnan(x) for x in score_interval(0, 0, 0))
    with pytest.raises(ValueError):
        score_interval(-1, 0, 0)


def test_the_pairwise_table_gets_draws_and_a_score_only_with_a_draw(tmp_path):
    records = [make_record("a vs b", i, w, termination=t) for i, (w, t) in enumerate(
        [("p1", None), ("p1", None), ("p2", None), (None, "draw"), (None, "draw"), (None, "ply_limit")])]
    write_results(tmp_path / "d", records)
    write_plan(tmp_path / "d", [("a vs b", "00000000000000aa", 6)])
    table = pairwise(load_results([tmp_path / "d"]))
    row = table.data.iloc[0]
    assert (row["games"], row["p1_wins"], row["p2_wins"], row["draws"], row["no_winner"]) == (6, 2, 1, 2, 1)
    assert row["p1_rate"] == pytest.approx(2 / 3)  # decided games: draws and the ply cap left out
    assert row["p1_score"] == pytest.approx(3 / 5)  # (2 + 2/2) / (2 + 1 + 2)
    assert (row["score_low"], row["score_high"]) == pytest.approx(score_interval(2, 2, 1)[1:])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_interval(2, 3))
    assert "draws" in table.headers and "P1 score [95% CI]" in table.headers
    assert len(table.headers) == len(table.rows[0]) == len(table.align)
    assert any(n.startswith("Draws:") for n in table.notes)
    without = tmp_path / "w"
    write_results(without, [r for r in records if r.get("termination") != "draw"])
    plain = pairwise(load_results([without]))
    assert "draws" not in plain.data and "draws" not in plain.headers
    assert not any(n.startswith("Draws:") for n in plain.notes)


def test_a_drawn_game_is_a_game_s_length_in_the_telemetry_table(tmp_path):
    records = [make_record("a vs b", 0, "p1", plies=10, iterations=5),
               make_record("a vs b", 1, None, termination="draw", plies=20, iterations=5),
               make_record("a vs b", 2, None, plies=1000, iterations=5)]
    write_results(tmp_path / "d", records)
    row = telemetry(load_results([tmp_path / "d"])).data.set_index("agent").loc["a"]
    assert row["no_winner"] == 1 and row["plies_median"] == 15.0  # the draw counts, the cap does not


def test_tables_and_ratings_of_a_run_with_draws(drawn_run, tmp_path):
    result = invoke("tables", str(drawn_run), "--out", str(tmp_path / "tables"))
    assert result.exit_code == 0, result.output
    pairwise_md = (tmp_path / "tables" / "pairwise.md").read_text()
    assert "P2 wins | draws | no winner" in pairwise_md and "P1 score [95% CI]" in pairwise_md
    ratings_md = (tmp_path / "tables" / "ratings.md").read_text()
    assert "draws" in ratings_md and "half a win for each side" in ratings_md
    result = invoke("ratings", str(drawn_run), "--out", str(tmp_path / "ratings"))
    assert result.exit_code == 0, result.output
    header = (tmp_path / "ratings" / "ratings.csv").read_text().splitlines()[0]
    assert header == "agent,elo,ci_low,ci_high,games,wins,losses,draws,no_winner"


# --- ratings ---------------------------------------------------------------------------------------


def _games(a: str, b: str, per_seat: dict[str, int]) -> tuple[list[str], list[str], list]:
    """Both seatings of a vs b, each with ``per_seat`` games of each of a's results."""
    p1, p2, winner = [], [], []
    for first, second, a_side in ((a, b, "p1"), (b, a, "p2")):
        other = "p2" if a_side == "p1" else "p1"
        for result, n in per_seat.items():
            p1 += [first] * n
            p2 += [second] * n
            winner += [{"win": a_side, "loss": other, "draw": DRAW}[result]] * n
    return p1, p2, winner


def test_a_draw_is_half_a_win_each_way_known_answer():
    # a scores 3/4 in each seat: 400 log10(3) Elo above b, no first-move edge
    fit = fit_ratings(*_games("a", "b", {"win": 2, "draw": 2}), anchor="b")
    assert fit.by_agent()["a"].elo == pytest.approx(400 * math.log10(3), abs=1e-3)
    assert fit.first_move == pytest.approx(0.0, abs=1e-3)
    assert not fit.corrected  # a never lost, but a draw is a half win each way: the MLE exists
    assert (fit.games, fit.draws) == (8, 4)
    a = fit.by_agent()["a"]
    assert (a.games, a.wins, a.losses, a.draws, a.no_winner) == (8, 4, 0, 4, 0)
    # the same score in wins and losses: the same ratings, and the same point
    same = fit_ratings(*_games("a", "b", {"win": 3, "loss": 1}), anchor="b")
    assert same.by_agent()["a"].elo == pytest.approx(fit.by_agent()["a"].elo, abs=1e-3)
    assert "half a win for each side" in fit.method and "half a win" not in same.method.split("virtual")[0]


def test_only_draws_rate_two_agents_equal_and_a_mirror_draw_only_informs_the_first_move():
    fit = fit_ratings(*_games("a", "b", {"draw": 3}), anchor="b")
    assert fit.by_agent()["a"].elo == 0.0 and fit.first_move == 0.0
    p1, p2, winner = _games("a", "b", {"win": 2, "loss": 2})
    base = fit_ratings(p1, p2, winner, anchor="b")
    mirror = fit_ratings([*p1, "a", "a"], [*p2, "a", "a"], [*winner, DRAW, "p1"], anchor="b")
    assert mirror.by_agent()["a"].elo == base.by_agent()["a"].elo == 0.0
    assert mirror.first_move > 0  # 1.5 of 2 mirror points to p1
    assert mirror.by_agent()["a"].draws == 1


def test_a_fit_without_draws_is_the_fit_it_was():
    rng = np.random.default_rng(11)
    p1, p2, winner = _games("a", "b", {"win": 5, "loss": 3})
    winner = [w if rng.random() < 0.8 else None for w in winner]
    fit = fit_ratings(p1, p2, winner, anchor="b")
    assert fit.draws == 0 and all(r.draws == 0 for r in fit.ratings)
    assert "draw" not in fit.method


def test_the_bootstrap_resamples_draws_as_a_fourth_outcome():
    p1, p2, winner = _games("a", "b", {"win": 6, "draw": 6, "loss": 2})
    boot = bootstrap_ratings(p1, p2, winner, agents=["a", "b"], anchor="b", resamples=300, seed=1)
    a = boot.fit.by_agent()["a"]
    assert a.ci_low < a.elo < a.ci_high and a.draws == 12
    assert "half a win for each side" in boot.fit.method
    # a resample keeps every cell's games, a draw as half a win each way: the resampled first-move
    # terms straddle 0 (the seats are balanced), the ratings stay near the point
    assert np.median(boot.draws[:, 0]) == pytest.approx(a.elo, abs=40)
    paired = bootstrap_ratings(p1, p2, winner, agents=["a", "b"], anchor="b", resamples=300, seed=1,
                               pairs=[i % 14 for i in range(len(p1))])
    assert paired.fit.by_agent()["a"].ci_low < a.elo < paired.fit.by_agent()["a"].ci_high


# --- SPRT ------------------------------------------------------------------------------------------


def test_a_draw_moves_the_test_to_the_pentanomial_categories():
    spec = SprtSpec(elo0=0.0, elo1=30.0)
    forward = {0: 1.0, 1: 0.5, 2: 1.0, 3: 0.0}
    backward = {0: 0.0, 1: 0.5, 2: 0.5, 3: None}
    state = sequential(forward, backward, spec, 4)
    # pairs: 1 + 0 = 1 (½), ½ + ½ = 1 (½), 1 + ½ = 1.5 (¾); pair 3 has no winner: left out
    assert state.counts == (0, 0, 2, 1, 0) and state.pairs == 3 and state.left_out == 1
    assert state.llr == pytest.approx(llr_logistic([0, 0, 2, 1, 0], PENTANOMIAL_SCORES, 0.0, 30.0))
    # before the first draw (pair 0 alone), the three pair scores of a game without draws
    first = sequential({0: 1.0}, {0: 0.0}, spec, 1)
    assert first.counts == (0, 1, 0) and first.llr == pytest.approx(llr_logistic([0, 1, 0], PAIR_SCORES, 0.0, 30.0))


def test_pairs_of_draws_decide_for_equal_strength():
    spec = SprtSpec(elo0=0.0, elo1=20.0, alpha=0.05, beta=0.05)
    forward = {i: 0.5 for i in range(400)}
    state = sequential(forward, dict(forward), spec, 400)
    # a pair of draws scores ½, as a win and a loss do: the three categories of a test without draws
    assert state.decision == "H0" and state.counts == (0, state.pairs, 0)


def test_the_test_reads_drawn_records():
    def rec(pairing: str, index: int, winner, termination: str) -> dict:
        return {"pairing": pairing, "game_index": index, "winner": winner, "termination": termination}

    records = [rec("a vs b", 0, None, "draw"), rec("b vs a", 0, "p1", "victory"),
               rec("a vs b", 1, None, "ply_limit"), rec("b vs a", 1, "p2", "victory")]
    state = state_from_records("a", "b", records, SprtSpec(elo0=0.0, elo1=30.0), 2)
    assert state.counts == (0, 1, 0, 0, 0) and state.left_out == 1  # ½ + 0 = ½ a pair: ¼


def test_the_game_command_says_a_game_was_drawn(monkeypatch):
    def drawn_game(task, on_ply=None):
        return build_record(task, None, ["c3"], [], 0.0, version="fake", draw=True)

    monkeypatch.setattr(match, "play_game", drawn_game)
    result = invoke("game", "--p1", "random", "--p2", "random", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert "random vs random: drawn after 1 plies (half a point each)" in result.stdout


def test_tables_one_and_two_count_draws_apart_and_compare_decided_games_with_the_paper(tmp_path):
    from boopexp.analysis.paper_tables import table1, table2
    from boopexp.analysis.render import to_markdown
    from boopexp.analysis.stats import fisher_exact

    def games(pairing: str, p1: int, p2: int, draws: int, start: int = 0) -> list[dict]:
        outcomes = ["p1"] * p1 + ["p2"] * p2 + [None] * draws
        return [make_record(pairing, start + i, w, termination="draw" if w is None else None)
                for i, w in enumerate(outcomes)]

    ablation = games("mcts-co vs heuristics", 30, 10, 10) + games("heuristics vs mcts-co", 5, 40, 5)
    write_results(tmp_path / "ablation", ablation)
    write_results(tmp_path / "mirror", games("mcts-co vs mcts-co", 20, 60, 20))
    data = load_results([tmp_path / "ablation", tmp_path / "mirror"])
    t1 = table1(data)
    row = t1.data.set_index("opponent").loc["heuristics"]
    assert (row.p1_draws, row.p2_draws, row.draws, row.no_winner) == (10, 5, 15, 0)
    assert (row.wins, row.games, row.status) == (70, 85, "complete")  # 50 finished games a side
    assert row.p_value == pytest.approx(fisher_exact([[70, 15], [80, 20]]))  # decided games vs the paper's
    assert row.score == pytest.approx((70 + 7.5) / 100)
    assert (row.score_low, row.score_high) == pytest.approx(score_interval(70, 15, 15)[1:])
    assert "| opponent | P1 | P2 | draws | no winner | win rate [95% CI] | score [95% CI] |" in to_markdown(t1)
    t2 = table2(data)
    mirror = t2.data.set_index("agent").loc["mcts-co"]
    assert (mirror.p1_wins, mirror.p2_wins, mirror.draws, mirror.games) == (20, 60, 20, 100)
    assert mirror.p2_share == pytest.approx(60 / 80) and mirror.p2_score == pytest.approx(70 / 100)
    assert len(t2.headers) == len(t2.rows[0]) == len(t2.align)
    assert any(n.startswith("Draws:") for n in t1.notes) and any(n.startswith("Draws:") for n in t2.notes)


def test_the_sweep_table_counts_draws_at_each_point(tmp_path):
    from boopexp.analysis.sweep import sweep_table

    records = []
    for iterations, outcomes in ((10, ["p1", "p2", None, None]), (20, ["p1", "p1", "p1", None])):
        for w in outcomes:
            records.append(make_record("a vs b", len(records), w, termination="draw" if w is None else None,
                                       config_hash=f"{iterations:016x}") | {"sweep": {"iterations": iterations}})
    write_results(tmp_path / "s", records)
    table = sweep_table(load_results([tmp_path / "s"]).games)
    assert table is not None and "wins-draws-losses" in table.headers
    data = table.data.set_index("iterations")
    assert (data.loc[10, "wins"], data.loc[10, "draws"], data.loc[10, "losses"]) == (1, 2, 1)
    assert data.loc[10, "score"] == pytest.approx(0.5) and data.loc[20, "score"] == pytest.approx(3.5 / 4)
    assert data.loc[10, "win_rate"] == pytest.approx(0.5) and data.loc[20, "games"] == 4
    assert [r[3] for r in table.rows] == ["1-2-1", "3-1-0"]
