"""Start positions (docs/openings.md): the config's ``openings:``, the pairing of starts, the
records and their replay, suite files and the ``boopexp openings`` command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import one_line, without_timing

from boopexp.errors import ConfigError
from boopexp.experiments.config import load_config, parse_config
from boopexp.experiments.store import StoreReader
from boopexp.game.position import Position
from boopexp.interfaces.cli import main
from boopexp.play import identity
from boopexp.play.contract import Side, first_mover, pack_record, same_game, unpack_record
from boopexp.play.openings import Draw
from boopexp.play.replay import first_difference, walk

ROOT = Path(__file__).resolve().parent.parent

BASE = {
    "name": "op",
    "seed": 3,
    "games_per_side": 2,
    "budget": {"mode": "iterations", "iterations": 4},
    "pairings": [["heuristics", "random"], ["vanilla", "random"]],
}


def config_with(openings, directory: str | None = None, **changes):
    return parse_config({**BASE, **changes, **({} if openings is None else {"openings": openings})}, "t.yaml",
                        directory=directory)


def starts_of(config):
    from boopexp.play.match import play_game
    from boopexp.play.starts import resolve_start

    return {(t.pairing, t.game_index): resolve_start(t.start, play_game) for t in config.tasks(config.plan())}


# ---------------------------------------------------------------------------------------------
# identity: without the key nothing changes; with it, the openings are part of the settings


def test_without_openings_the_committed_hashes_are_unchanged():
    """configs/ablation.yaml plans exactly the settings hashes of the committed results/ablation."""
    config = load_config(ROOT / "configs" / "ablation.yaml")
    stored = yaml.safe_load((ROOT / "results" / "ablation" / "config.yaml").read_text())
    assert {(p.pairing, p.config_hash) for p in config.plan()} == {(p["pairing"], p["config_hash"])
                                                                   for p in stored["plan"]}
    assert config.settings.openings is None and "openings" not in config.resolved()
    assert all(t.start is None for t in config.tasks(config.plan()))


def test_openings_enter_the_settings_hash():
    plain = {p.pairing: p.config_hash for p in config_with(None).plan()}
    three = {p.pairing: p.config_hash for p in config_with({"random_plies": 3}).plan()}
    four = {p.pairing: p.config_hash for p in config_with({"random_plies": 4}).plan()}
    balanced = {p.pairing: p.config_hash for p in config_with({"random_plies": 4, "balanced": {}}).plan()}
    for pairing in plain:
        assert len({plain[pairing], three[pairing], four[pairing], balanced[pairing]}) == 4
    config = config_with({"random_plies": 3})
    p = config.plan()[0]
    hashed = {"seed": 3, "budget": config.settings.budget.to_dict(), "preset": config.settings.preset,
              "openings": {"random_plies": 3}}
    assert p.config_hash == identity.settings_hash(hashed, p.p1_spec.to_dict(), p.p2_spec.to_dict())
    assert config.resolved()["openings"] == {"random_plies": 3}


def test_both_games_of_a_pair_start_from_one_position_and_pairs_differ():
    starts = starts_of(config_with({"random_plies": 5}, games_per_side=4))
    for i in range(4):
        pair = {starts[("heuristics vs random", i)], starts[("random vs heuristics", i)],
                starts[("vanilla vs random", i)], starts[("random vs vanilla", i)]}
        assert len(pair) == 1  # the same position for game pair i of every pairing
        position = Position.from_string(pair.pop())
        assert position.move_number == 5 and not position.has_won("blue") and not position.has_won("red")
    assert len({starts[("heuristics vs random", i)] for i in range(4)}) == 4
    # the suite depends on the experiment seed
    other = starts_of(config_with({"random_plies": 5}, games_per_side=4, seed=4))
    assert other[("heuristics vs random", 0)] != starts[("heuristics vs random", 0)]


def test_a_draw_is_the_same_in_any_process():
    """Position i depends on (seed, plies, index) alone: a fresh interpreter draws the same."""
    from boopexp.play.starts import draw_opening

    here = [draw_opening(3, 5, i) for i in (0, 7)]
    code = "from boopexp.play.starts import draw_opening; print([draw_opening(3, 5, i) for i in (7, 0)])"
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(there) == here[::-1]  # noqa: S307 - our own repr of two strings


# ---------------------------------------------------------------------------------------------
# played, stored, replayed


@pytest.fixture(scope="module")
def op_runs(tmp_path_factory):
    """The same openings config run with -j 1 and with -j 2 (real games: heuristics, random, vanilla)."""
    root = tmp_path_factory.mktemp("op")
    (root / "op.yaml").write_text(yaml.safe_dump({**BASE, "openings": {"random_plies": 3}}))
    out = {}
    for jobs in ("1", "2"):
        result = CliRunner().invoke(main, ["run", str(root / "op.yaml"), "-j", jobs, "-q", "--out",
                                           str(root / f"j{jobs}")])
        assert result.exit_code == 0, result.output
        out[jobs] = {(r["pairing"], r["game_index"]): r for r in StoreReader(root / f"j{jobs}").records().records}
    return root, out


def test_records_store_their_start_and_do_not_depend_on_the_workers(op_runs):
    _, runs = op_runs
    assert runs["1"].keys() == runs["2"].keys() and len(runs["1"]) == 8
    for key, record in runs["1"].items():
        assert without_timing(record) == without_timing(runs["2"][key])
        # 3 random plies: Red moves first, and the telemetry says so
        assert record["start"].split()[3] == "r" and first_mover(record) == Side.P2
        assert record["telemetry"][0]["player"] == Side.P2
    for i in range(2):
        assert runs["1"][("heuristics vs random", i)]["start"] == runs["1"][("random vs heuristics", i)]["start"]


def test_a_game_with_a_start_replays_and_packs(op_runs):
    _, runs = op_runs
    record = runs["1"][("vanilla vs random", 1)]
    walk(record)
    assert first_difference(record) is None
    packed = pack_record(record)
    assert "player" not in packed["telemetry"]  # derived from the start's side to move
    assert same_game(unpack_record(json.loads(json.dumps(packed))), record)
    # a start that is not the game's: the walk finds the record inconsistent
    from boopexp.errors import StoreError

    with pytest.raises(StoreError):
        walk({**record, "start": Position.initial().to_string()})


def test_replay_command_shows_the_start_and_its_movers(op_runs):
    root, _ = op_runs
    result = CliRunner().invoke(main, ["replay", str(root / "j1"), "--pairing", "random vs heuristics", "--game", "0",
                                       "--show", "--search"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("start: ")
    assert "ply 1: Red plays" in result.output and "ply 2: Blue plays" in result.output
    assert "the same game, move for move" in result.output


# ---------------------------------------------------------------------------------------------
# suite files


def test_a_file_suite_of_positions_and_move_lists(tmp_path):
    start = Position.initial().play("c3").position.play("d4").position
    (tmp_path / "suite.txt").write_text(f"# two openings\n\n{start.to_string()}\nc3, d4  # the same, as moves\n"
                                        "a1 f6 b2\n")
    config = config_with({"file": "suite.txt"}, directory=str(tmp_path), games_per_side=3)
    starts = starts_of(config)
    assert starts[("heuristics vs random", 0)] == starts[("random vs heuristics", 0)] == start.to_string()
    assert starts[("heuristics vs random", 1)] == start.to_string()
    assert Position.from_string(starts[("vanilla vs random", 2)]).move_number == 3
    # the hash covers the positions, not the file's name or comments
    (tmp_path / "copy.txt").write_text(f"{start.to_string()}\nc3 d4\na1 f6 b2\n")
    copy = config_with({"file": "copy.txt"}, directory=str(tmp_path), games_per_side=3)
    assert [p.config_hash for p in copy.plan()] == [p.config_hash for p in config.plan()]
    assert config.resolved()["openings"]["file"] == "suite.txt"


@pytest.mark.parametrize(("text", "message"), [
    ("c3\nz9\n", "t/s.txt:2: 'z9' is not a move"),
    ("....../....../ 8,0 8,0 b\n", "t/s.txt:1: "),
    ("# only a comment\n", "holds no position"),
])
def test_a_bad_suite_line_is_one_error_naming_file_and_line(tmp_path, text, message):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "s.txt").write_text(text)
    with pytest.raises(ConfigError) as err:
        config_with({"file": "t/s.txt"}, directory=str(tmp_path))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_suite_line_the_rules_refuse_stops_the_run_before_any_game(tmp_path):
    """Illegal moves (c3 twice) are found by the rules: one line, exit 2, no store."""
    (tmp_path / "s.txt").write_text("c3 d4\nc3 c3\n")
    (tmp_path / "op.yaml").write_text(yaml.safe_dump({**BASE, "openings": {"file": "s.txt"}}))
    result = CliRunner().invoke(main, ["run", str(tmp_path / "op.yaml"), "--out", str(tmp_path / "out")])
    line = one_line(result, 2)
    assert "s.txt:2: " in line and "occupied" in line
    assert not (tmp_path / "out").exists()


def test_too_few_positions_for_the_plan_is_refused(tmp_path):
    (tmp_path / "s.txt").write_text("c3\nd4\n")
    config = config_with({"file": "s.txt"}, directory=str(tmp_path))
    assert len(config.plan()) == 4  # 2 games a pairing: 2 positions suffice
    with pytest.raises(ConfigError, match="holds 2 positions, fewer than the 3 games of pairing 'heuristics vs ran"):
        config.plan(games_per_side=3)
    mirror = config_with({"file": "s.txt"}, directory=str(tmp_path), pairings=[["random", "random"]])
    with pytest.raises(ConfigError, match="fewer than the 4 games of pairing 'random vs random'"):
        mirror.plan()  # a mirror plays 2 x games_per_side games, one position each


@pytest.mark.parametrize(("openings", "message"), [
    ({"random_plies": -1}, "openings.random_plies = -1 must be an integer"),
    ({"random_plies": 3, "file": "x"}, "must name one source"),
    ({}, "must name one source"),
    ({"plies": 3}, "unknown key openings.plies"),
    ({"random_plies": 3, "balanced": {"margin": 0.7}}, "openings.balanced.margin = 0.7"),
    ({"random_plies": 3, "balanced": {"games": 3, "margin": 0.1}}, "admits no score of 3 decided games"),
    ({"file": "a.txt", "balanced": {}}, "openings.balanced = {} has no place with openings.file"),
    ({"file": "nowhere.txt"}, "openings file nowhere.txt not found"),
    ("four", "openings = 'four' must be a mapping"),
])
def test_config_mistakes_are_one_line(tmp_path, openings, message):
    with pytest.raises(ConfigError) as err:
        config_with(openings, directory=str(tmp_path))
    assert message in str(err.value) and str(err.value).startswith("t.yaml: ")


def test_a_balanced_draw_keeps_only_positions_the_reference_calls_even(monkeypatch):
    from boopexp.play import starts
    from boopexp.play.match import play_game
    from boopexp.play.openings import Balance

    judged = []

    def fake_score(text, games, seed, play, game="boop", options=()):
        judged.append(text)
        return 0.0 if len(judged) == 1 else 0.5  # the first candidate is lost for the side to move

    monkeypatch.setattr(starts, "balance_score", fake_score)
    starts.draw_opening.cache_clear()
    balanced = starts.draw_opening(12345, 6, 0, Balance(games=8, margin=0.0), play_game)
    starts.draw_opening.cache_clear()
    assert judged[0] == starts.draw_opening(12345, 6, 0)  # the unbalanced suite's position 0, refused
    assert balanced == judged[1] != judged[0]
    starts.draw_opening.cache_clear()
    assert config_with({"random_plies": 6, "balanced": {"games": 8, "margin": 0.0}}, seed=5).start(0) == Draw(
        5, 6, 0, Balance(8, 0.0))


def test_the_reference_evaluation_is_a_seeded_score_of_the_side_to_move():
    from boopexp.play.match import play_game
    from boopexp.play.starts import balance_score, draw_opening

    start = draw_opening(9, 4, 0)
    scores = [balance_score(start, 6, seed, play_game) for seed in (1, 1, 2)]
    assert scores[0] == scores[1] and all(0 <= s <= 1 and (12 * s) % 1 == 0 for s in scores)


# ---------------------------------------------------------------------------------------------
# boopexp game


def test_game_from_a_start_records_it_and_replays(tmp_path):
    result = CliRunner().invoke(main, ["game", "--p1", "heuristics", "--p2", "random", "--start", "c3, d4 a1",
                                       "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output[result.output.index("{"):])
    expected = Position.initial().play("c3").position.play("d4").position.play("a1").position
    assert record["start"] == expected.to_string() and first_mover(record) == Side.P2
    walk(unpack_record(record))
    assert first_difference(unpack_record(record)) is None
    plain = CliRunner().invoke(main, ["game", "--p1", "heuristics", "--p2", "random", "--json"])
    assert json.loads(plain.output[plain.output.index("{"):])["config_hash"] != record["config_hash"]


@pytest.mark.parametrize(("start", "message"), [
    ("c3 c3", "Error: --start: 'c3' is illegal in"),
    ("zz", "Error: --start 'zz': 'zz' is not a move"),
    ("....../....../....../....../....../...... 8,0 8,0 x", "Error: --start '....../"),
])
def test_game_refuses_a_bad_start_in_one_line(start, message):
    line = one_line(CliRunner().invoke(main, ["game", "--p1", "random", "--p2", "random", "--start", start]), 2)
    assert line.startswith(message), line


def test_game_with_a_config_plays_its_game_pair_0_start(op_runs):
    root, runs = op_runs
    result = CliRunner().invoke(main, ["game", "--p1", "heuristics", "--p2", "random", "--config",
                                       str(root / "op.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output[result.output.index("{"):])
    stored = runs["1"][("heuristics vs random", 0)]
    assert record["start"] == stored["start"] and record["config_hash"] == stored["config_hash"]


# ---------------------------------------------------------------------------------------------
# boopexp openings


def test_openings_command_writes_the_suite_a_config_would_draw(tmp_path):
    out = tmp_path / "suite.txt"
    args = ["openings", "--plies", "5", "--count", "3", "--games", "4", "--seed", "7", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "Wrote 3 positions of 5 random plies" in result.output and "Judged even (0.5 +- 0.125): " in result.output
    lines = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    config = config_with({"random_plies": 5}, seed=7, games_per_side=3)
    starts = starts_of(config)
    assert lines == [starts[("heuristics vs random", i)] for i in range(3)]
    # deterministic from the seed; an existing file is kept unless --force
    first = out.read_bytes()
    line = one_line(CliRunner().invoke(main, args), 2)
    assert line == f"Error: --out {out} exists: choose another file, or pass --force to overwrite it"
    assert out.read_bytes() == first
    assert CliRunner().invoke(main, [*args, "--force"]).exit_code == 0 and out.read_bytes() == first
    # the suite plays as a config's file suite: the same starts as the config's draws
    suite = config_with({"file": str(out)}, seed=7, games_per_side=3)
    assert starts_of(suite) == starts


def test_openings_command_balanced_suite_is_the_balanced_configs(tmp_path, monkeypatch):
    out = tmp_path / "b.txt"
    result = CliRunner().invoke(main, ["openings", "--plies", "4", "--count", "2", "--balanced", "--games", "4",
                                       "--margin", "0.25", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    config = config_with({"random_plies": 4, "balanced": {"games": 4, "margin": 0.25}}, seed=0)
    assert lines == [starts_of(config)[("heuristics vs random", i)] for i in range(2)]
    assert "# config: seed: 0, openings: {random_plies: 4, balanced: {games: 4, margin: 0.25}}" in out.read_text()


def test_openings_command_writes_through_a_link_and_to_standard_output(tmp_path, monkeypatch):
    """--out through a link writes the file it points to (issue 33: the link was replaced);
    - is standard output, with what is said of the suite on stderr."""
    monkeypatch.chdir(tmp_path)
    base = ["openings", "--plies", "2", "--count", "2", "--games", "4", "--seed", "3"]
    assert CliRunner().invoke(main, [*base, "--out", "s.txt"]).exit_code == 0
    suite = (tmp_path / "s.txt").read_text()
    (tmp_path / "sub").mkdir()
    Path("link.txt").symlink_to(tmp_path / "sub" / "t.txt")
    result = CliRunner().invoke(main, [*base, "--out", "link.txt"])
    assert result.exit_code == 0, result.output
    assert Path("link.txt").is_symlink() and (tmp_path / "sub" / "t.txt").read_text() == suite
    result = CliRunner().invoke(main, [*base, "--out", "-"])
    assert result.exit_code == 0, result.output
    assert result.stdout == suite and "Wrote 2 positions of 2 random plies to -" in result.stderr
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--margin", "0.7"], "Error: --margin 0.7: margin = 0.7 must be a number in [0, 0.5]"),
    (["--games", "3", "--margin", "0.1"], "Error: --margin 0.1: margin = 0.1 admits no score of 3 decided games"),
    (["--seed", "-1"], "Error: --seed -1: seed = -1 must be an integer from 0 to 2^64-1"),
    (["--out", "no/such/dir/s.txt"], "Error: --out no/such/dir/s.txt: the folder no/such/dir does not exist"),
])
def test_openings_command_mistakes_are_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    base = ["openings", "--plies", "2", "--count", "1", "--out", "s.txt"]
    line = one_line(CliRunner().invoke(main, [*base, *args]), 2)
    assert line.startswith(message), line
    assert not (tmp_path / "s.txt").exists()


# ---------------------------------------------------------------------------------------------
# boopexp play


def test_play_from_a_start_saves_it_and_the_game_replays(tmp_path):
    """Red to move after 'c3': the human (Red, --second) moves first; the record keeps the start."""
    out = tmp_path / "play"
    result = CliRunner().invoke(main, ["play", "--agent", "random", "--second", "--start", "c3", "--budget",
                                       "iterations", "--iterations", "2", "--max-plies", "2", "--out", str(out)],
                                input="d4\n")
    assert result.exit_code == 0, result.output
    (record,) = StoreReader(out).records().records
    assert record["start"] == Position.initial().play("c3").position.to_string()
    assert record["moves"][0] == "d4" and record["telemetry"][0]["player"] == Side.P2
    replayed = CliRunner().invoke(main, ["replay", str(out), "--pairing", record["pairing"], "--game", "0"])
    assert replayed.exit_code == 0 and "2 legal moves replayed" in replayed.output, replayed.output
    bad = CliRunner().invoke(main, ["play", "--agent", "random", "--start", "c3 c3", "--out", str(out)], input="")
    assert one_line(bad, 2).startswith("Error: --start: 'c3' is illegal in")


def test_an_sprt_run_scores_pairs_that_started_from_one_position(tmp_path):
    """The pentanomial SPRT's pair is game i of both orders: with openings, one start."""
    from boopexp.experiments.sprt import plan_tests

    (tmp_path / "s.yaml").write_text(yaml.safe_dump({
        **BASE, "games_per_side": 4, "pairings": [["heuristics", "random"]], "openings": {"random_plies": 2},
        "sprt": {"elo0": 0, "elo1": 400, "batch": 2}}))
    result = CliRunner().invoke(main, ["run", str(tmp_path / "s.yaml"), "-j", "1", "-q", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    records = StoreReader(tmp_path / "o").records().records
    by_key = {(r["pairing"], r["game_index"]): r for r in records}
    pairs = {i for (_, i) in by_key}
    assert pairs and all(by_key[("heuristics vs random", i)]["start"] == by_key[("random vs heuristics", i)]["start"]
                         for i in pairs)
    config = load_config(tmp_path / "s.yaml")
    (test,) = plan_tests(config.sprt, config.plan(), records)
    assert test.state.pairs >= 1


def test_the_web_viewer_walks_a_game_from_its_start(op_runs):
    from boopexp.interfaces.web.game import game_plies, position_view

    _, runs = op_runs
    record = runs["1"][("heuristics vs random", 0)]
    plies = game_plies(record)
    assert len(plies["positions"]) == len(record["moves"]) + 1
    start = Position.from_string(record["start"]).state
    assert plies["positions"][0] == {**position_view(start), "position": record["start"]}
    assert plies["positions"][0]["board"] != position_view(Position.initial().state)["board"]


def test_tune_checks_a_suite_against_the_rules_before_any_game(tmp_path):
    from test_tune import _bad_doc

    (tmp_path / "s.txt").write_text("c3 d4\nc3 c3\n")
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(_bad_doc({"openings": {"file": str(tmp_path / "s.txt")}})))
    line = one_line(CliRunner().invoke(main, ["tune", str(tmp_path / "t.yaml"), "--out", str(tmp_path / "o")]), 2)
    assert "s.txt:2: " in line and "occupied" in line
    assert not (tmp_path / "o").exists()


def test_the_suite_summary_counts_the_side_to_move_of_each_position():
    """``boopexp openings``'s summary reads each position's side to move through the notation
    (Position.from_string), the 4- and the 6-field forms alike."""
    from boopexp.play.openings import Balance
    from boopexp.play.starts import suite_summary

    blue = "....../..b.../...r../....../....../...... 7,0 7,0 b 0,0 2"
    red = "....../..b.../....../....../....../...... 7,0 8,0 r"
    summary = suite_summary([blue, red, red], [0.5, 0.4, 0.9], Balance(games=8, margin=0.1))
    assert summary.splitlines()[-1] == "Side to move: Blue in 1, Red in 2"
    assert "Judged even (0.5 +- 0.1): 2 of 3 (67 %)" in summary


# ---------------------------------------------------------------------------------------------
# another game's suites (docs/games.md)

C4_BASE = {**BASE, "game": "connect-four", "pairings": [["heuristics", "random"]]}


def c4_starts(config):
    from boopexp.play.match import play_game
    from boopexp.play.starts import resolve_start

    return {(t.pairing, t.game_index): resolve_start(t.start, play_game, t.game) for t in config.tasks(config.plan())}


def test_openings_command_writes_another_games_suite_a_config_plays(tmp_path):
    """``openings --game connect-four``: Connect Four position strings, line i the position i of a
    config with ``game: connect-four`` and the same seed and plies; the file plays as a suite."""
    out = tmp_path / "c4.txt"
    result = CliRunner().invoke(main, ["openings", "--game", "connect-four", "--plies", "5", "--count", "3",
                                       "--games", "2", "--seed", "7", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Wrote 3 positions of 5 random plies of connect-four" in result.output
    assert "Side to move: p1 in 0, p2 in 3" in result.output  # 5 plies: the second player moves
    text = out.read_text()
    assert "# config: game: connect-four, seed: 7, openings: {random_plies: 5}" in text
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert all(line.count("/") == 5 and line.endswith(" o") for line in lines) and len(set(lines)) == 3
    drawn = parse_config({**C4_BASE, "seed": 7, "games_per_side": 3, "openings": {"random_plies": 5}}, "t.yaml")
    starts = c4_starts(drawn)
    assert [starts[("heuristics vs random", i)] for i in range(3)] == lines
    assert [starts[("random vs heuristics", i)] for i in range(3)] == lines
    suite = parse_config({**C4_BASE, "seed": 7, "games_per_side": 3, "openings": {"file": str(out)}}, "t.yaml")
    assert c4_starts(suite) == c4_starts(drawn)


def test_a_suite_of_another_game_is_one_line_naming_file_line_and_game(tmp_path):
    """A boop. suite in a Connect Four config, and a Connect Four suite in a boop. config."""
    (tmp_path / "boop.txt").write_text("# boop.\n" + Position.initial().to_string() + "\nc3 d4\n")
    (tmp_path / "c4.txt").write_text("......./......./......./......./......./...x... o\n")
    with pytest.raises(ConfigError) as err:
        parse_config({**C4_BASE, "openings": {"file": "boop.txt"}}, "t.yaml", directory=str(tmp_path))
    line = str(err.value)
    assert line.startswith("t.yaml: boop.txt:2: '....../") and "\n" not in line
    assert "(it is a position of boop, not of connect-four: a suite of another game)" in line
    assert line.endswith("a line of a connect-four suite is one connect-four position string (docs/games.md); "
                         "'#' starts a comment")
    with pytest.raises(ConfigError) as err:
        config_with({"file": "c4.txt"}, directory=str(tmp_path))
    line = str(err.value)
    assert line.startswith("t.yaml: c4.txt:1: ") and "\n" not in line
    assert "(it is a position of connect-four, not of boop: a suite of another game); a line of a boop suite" in line


def test_a_finished_position_of_another_game_stops_the_run_before_any_game(tmp_path):
    (tmp_path / "s.txt").write_text("......./......./......./......./......./...x... o\n"
                                    "......./......./......./......./ooo..../xxxx... o\n")
    (tmp_path / "c4.yaml").write_text(yaml.safe_dump({**C4_BASE, "openings": {"file": "s.txt"}}))
    result = CliRunner().invoke(main, ["run", str(tmp_path / "c4.yaml"), "--out", str(tmp_path / "out")])
    assert one_line(result, 2).startswith("Error: s.txt:2: '......./......./......./......./ooo..../xxxx... o': p1 "
                                          "has already won there: a start must be a game in progress; a line of a "
                                          "connect-four suite")
    assert not (tmp_path / "out").exists()


def test_game_starts_another_game_from_its_position_string():
    start = "......./......./......./......./......./xx..o.o x"
    result = CliRunner().invoke(main, ["game", "--game", "connect-four", "--p1", "random", "--p2", "random",
                                       "--start", start])
    assert result.exit_code == 0, result.output
    line = one_line(CliRunner().invoke(main, ["game", "--game", "connect-four", "--p1", "random", "--p2", "random",
                                              "--start", "c3 d4"]), 2)
    assert line.startswith("Error: --start 'c3 d4': ") and line.endswith("a line of a connect-four suite is one "
                                                                         "connect-four position string "
                                                                         "(docs/games.md); '#' starts a comment")
