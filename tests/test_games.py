"""The games layer through the commands a user types (docs/games.md): ``boopexp game --game
connect-four`` plays a game that replays exactly, names its game in the record, and bad input is
one line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from boopexp.games import registry
from boopexp.interfaces.cli import main
from boopexp.play.replay import first_difference, walk

#: the built-in games, as an unknown game's error lists them
ALLOWED = ", ".join(registry.GAMES)


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


#: the built-in games as an unknown game's error lists them
ALLOWED = ", ".join(registry.GAMES)
CONNECT_FOUR_GAME = ("game", "--game", "connect-four", "--p1", "mcts-co", "--p2", "vanilla", "--seed", "3",
                     "--budget", "iterations", "--iterations", "60", "--json")


def test_a_connect_four_game_names_its_game_and_replays_exactly():
    result = invoke(*CONNECT_FOUR_GAME)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["game"] == "connect-four" and list(record)[-1] == "game"
    assert all(len(move) == 1 and move in "abcdefg" for move in record["moves"])
    assert record["termination"] in ("victory", "draw") and record["plies"] == len(record["moves"])
    assert json.loads(invoke(*CONNECT_FOUR_GAME).stdout)["moves"] == record["moves"]  # the same seed, the same game
    walk(record)  # every move legal, the outcome the last move's
    assert first_difference(record) is None  # played again by search from its settings: the same game
    # and the settings hash is not boop.'s: the game is part of a pairing's identity
    boop = json.loads(invoke(*[a if a != "connect-four" else "boop" for a in CONNECT_FOUR_GAME]).stdout)
    assert "game" not in boop and boop["config_hash"] != record["config_hash"]


@pytest.mark.parametrize("args, first, second", [
    (CONNECT_FOUR_GAME, "x", "o"),  # its pieces' letters, OpenSpiel's names
    (("game", "--game", "pentago-swap", "--p1", "mcts-co", "--p2", "vanilla", "--seed", "3", "--budget", "iterations",
      "--iterations", "40", "--json"), "white", "black")], ids=["connect-four", "pentago-swap"])
def test_a_game_says_its_own_sides_not_blue_and_red(args, first, second):
    """The summary and ``--show`` name the game's sides (docs/games.md, "Values"); the record's
    ``winner_colour`` keeps the records' vocabulary (blue: p1's side)."""
    record = json.loads(invoke(*args).stdout)
    assert record["termination"] == "victory"  # this seed's game has a winner to name
    shown = invoke(*(a for a in args if a != "--json"), "--show")
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert f"ply 1: {first.capitalize()} plays {record['moves'][0]}" in lines
    assert f"ply 2: {second.capitalize()} plays {record['moves'][1]}" in lines
    side = {"blue": first, "red": second}[record["winner_colour"]]
    assert (f"mcts-co vs vanilla: {record['winner']} ({record['winner_agent']}, {side}) wins in {record['plies']} "
            "plies") in lines
    assert not re.search(r"\b(blue|red)\b", shown.output, re.IGNORECASE), shown.output


def test_each_game_names_its_sides_and_a_game_that_names_none_is_blue_and_red():
    from types import SimpleNamespace

    from boopexp.game.sides import Colour

    assert {name: registry.get(name).side_names for name in registry.GAMES} == {
        "boop": ("blue", "red"), "connect-four": ("x", "o"), "pentago-swap": ("white", "black"),
        "colosseum": ("A", "B")}
    pentago = registry.get("pentago-swap")
    assert [pentago.side_name(c) for c in (Colour.BLUE, Colour.RED, "blue", "red", -1, 1)] == [
        "white", "black", "white", "black", "white", "black"]
    assert pentago.side_name("red", capital=True) == "Black" and registry.get("boop").side_name(-1, True) == "Blue"
    assert registry.Game("mine", SimpleNamespace()).side_names == registry.DEFAULT_SIDE_NAMES == ("blue", "red")
    with pytest.raises(ValueError, match="green"):
        pentago.side_name("green")


def test_a_tampered_connect_four_record_does_not_walk():
    record = json.loads(invoke(*CONNECT_FOUR_GAME).stdout)
    bad = dict(record, moves=record["moves"][:-1] + ["h"])
    with pytest.raises(Exception, match=r"ply \d+ \('h'\)"):
        walk(bad)
    with pytest.raises(Exception, match=f"game = 'chess' is not allowed; allowed: {ALLOWED}"):
        walk(dict(record, game="chess"))


def test_an_unknown_game_is_one_line():
    for command in (["game", "--p1", "vanilla", "--p2", "random"], ["play"], ["engine", "--agent", "random"]):
        result = CliRunner().invoke(main, [command[0], "--game", "chess", *command[1:]])
        assert result.exit_code == 2
        assert result.output.strip().splitlines()[-1] == (
            f"Error: --game chess: game = 'chess' is not allowed; allowed: {ALLOWED}")


def test_every_built_in_game_serves_the_contract_values():
    for name in registry.GAMES:
        game = registry.get(name)
        st = game.initial_state()
        assert game.to_move(st) == -1
        assert game.parse_position(game.position_string(st)).tobytes() == st.tobytes()
        assert game.board_text(st)
        assert game.values.NAME == name


C4_CONFIG = """name: c4-smoke
seed: 1
games_per_side: 2
game: connect-four
budget: {mode: iterations, iterations: 30}
pairings: [[mcts-co, vanilla]]
"""


def test_a_config_with_game_plays_that_game_with_its_defaults_and_resumes(tmp_path):
    config = tmp_path / "c4.yaml"
    config.write_text(C4_CONFIG)
    out = tmp_path / "out"
    result = invoke("run", str(config), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    from boopexp.experiments.store import StoreReader

    records = StoreReader(out).records().records
    assert len(records) == 4 and all(r["game"] == "connect-four" for r in records)
    spec = records[0]["p1_spec"] if records[0]["p1"] == "mcts-co" else records[0]["p2_spec"]
    assert spec["params"]["preselect_m"] == 3 and spec["params"]["co_playout_plies"] == 10  # the game's m, k
    assert "game: connect-four" in (out / "config.yaml").read_text()
    again = invoke("run", str(config), "--out", str(out), "-q")
    assert again.exit_code == 0 and "Played 0 game(s) in this run; 4 were already stored." in again.output
    # export names the game in a header; import walks and plays each game again with the game's own rules
    text = tmp_path / "c4.txt"
    assert invoke("export", str(out), "--out", str(text), "--format", "text").exit_code == 0
    lines = text.read_text().splitlines()
    assert lines[1] == '[Game "connect-four"]' and not any(line.startswith(("[Blue ", "[Red ")) for line in lines)
    assert lines[3] == f'[X "{records[0]["p1"]}"]' and lines[4] == f'[O "{records[0]["p2"]}"]'  # its sides
    edited = tmp_path / "edited.txt"
    edited.write_text(text.read_text().replace(lines[3], '[X "random"]', 1))
    refused = invoke("import", str(edited), "--out", str(tmp_path / "refused"))
    assert refused.exit_code != 0 and "[X 'random'] disagrees with the game's record" in refused.output, refused.output
    imported = invoke("import", str(text), "--out", str(tmp_path / "imported"))
    assert imported.exit_code == 0, imported.output
    assert "4 games imported" in imported.output and "4 played again by search" in imported.output


def test_a_config_naming_no_game_is_one_line(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text(C4_CONFIG.replace("connect-four", "chess"))
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.strip() == (f"Error: {config}: game = 'chess' is not allowed; allowed: {ALLOWED}")


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_a_user_games_task_carries_the_folder_a_worker_imports_it_from(tmp_path):
    """A game found beside its config (not on PYTHONPATH) is played by pool workers that never
    loaded the config: its task carries the folder (``GameTask.game_directory``, neither hashed nor
    recorded), and a fresh process with nothing but the task plays the game (a worker whose
    ``sys.path`` did not have the folder failed it: 'game module not found')."""
    import pickle
    import subprocess
    import sys

    from boopexp.agents.specs import resolve_agent
    from boopexp.play.settings import GameSettings

    # first found on sys.path, with no config folder named (another test's way): the folder is the
    # module's own, however it was first found (a cached game once carried None to the workers)
    registry._LOADED.pop("tictactoe.game", None)
    sys.path.append(str(EXAMPLES))
    try:
        registry.get("tictactoe.game")
    finally:
        sys.path.remove(str(EXAMPLES))
    assert registry.get("tictactoe.game", "/elsewhere").directory == str(EXAMPLES)
    settings = GameSettings("t", game="tictactoe.game")
    task = settings.task(resolve_agent("random"), resolve_agent("heuristics"), 0)
    assert task.game_directory == str(EXAMPLES)
    (tmp_path / "task.pkl").write_bytes(pickle.dumps(task))
    code = ("import pickle; from boopexp.play.match import play_game; "
            "r = play_game(pickle.load(open('task.pkl', 'rb'))); print(r['game'], r['plies'])")
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    game, plies = done.stdout.split()
    assert game == "tictactoe.game" and 5 <= int(plies) <= 9


def test_the_example_game_plays_a_small_tournament_and_is_rated(tmp_path):
    """examples/tictactoe.yaml: a game defined outside the package (game: {module: tictactoe.game})."""
    out = tmp_path / "ttt"
    result = invoke("run", str(EXAMPLES / "tictactoe.yaml"), "--out", str(out), "--games-per-side", "1", "-q")
    assert result.exit_code == 0, result.output
    assert "total                      12/12" in result.output
    assert result.output.splitlines()[1].split()[-1] == "draws"  # tic-tac-toe's draws, a column of their own
    from boopexp.experiments.store import StoreReader

    records = StoreReader(out).records().records
    assert {r["game"] for r in records} == {"tictactoe.game"}
    for record in records:  # the record names its game: its moves walk with the game's own notation
        walk(record)
    assert any(r["termination"] == "draw" and r["winner"] is None for r in records)
    rated = invoke("ratings", str(out), "--out", str(tmp_path / "ratings"))
    assert rated.exit_code == 0, rated.output
    assert "| draws |" in (tmp_path / "ratings" / "ratings.md").read_text()


def _broken_game(tmp_path, name, values_edit=None, kernels_edit=None):
    """A copy of the example game as package ``name``, its values or kernels source edited."""
    package = tmp_path / name
    shutil.copytree(EXAMPLES / "tictactoe", package, ignore=shutil.ignore_patterns("__pycache__"))
    for file, edit in (("game.py", values_edit), ("kernels.py", kernels_edit)):
        text = (package / file).read_text().replace('KERNELS = "tictactoe.kernels"', f'KERNELS = "{name}.kernels"')
        (package / file).write_text(edit(text) if edit else text)
    config = tmp_path / f"{name}.yaml"
    config.write_text(f"name: {name}\nseed: 1\ngames_per_side: 1\ngame: {{module: {name}.game}}\n"
                      "budget: {mode: iterations, iterations: 10}\npairings: [[vanilla, random]]\n")
    return config


BROKEN = [
    ("no_objective", None, lambda t: t.replace("def objective(", "def objective_misnamed("),
     "its kernels no_objective.kernels lack objective"),
    ("no_notation", lambda t: t.replace("def parse_move(", "def parse_move_misnamed("), None,
     "its values lack parse_move"),
    ("illegal_moves", None, lambda t: t.replace("            out[n] = c\n", "            out[n] = c + 9\n"),
     "legal_move_codes gave [9, 10, 11, 12, 13, 14, 15, 16, 17] at ply 1 of a game not over"),
    ("raising", None, lambda t: t.replace("    return score / 8.0", "    raise ValueError('no H here')"),
     "its kernel heuristic raised ValueError: no H here"),
    ("bad_outcome", None, lambda t: t.replace("        return DRAW, 0", "        return 7, 0"),
     "apply_move gave the outcome 7"),
    ("bad_h", None, lambda t: t.replace("    return score / 8.0", "    return score * 8.0"),
     "objective gave 16.0: H and f are numbers in [-1, 1]"),
    ("bad_sides", lambda t: t.replace("SIDE_NAMES = (_MARK[-1], _MARK[1])", 'SIDE_NAMES = ("x", "X")'), None,
     "SIDE_NAMES = ('x', 'X') must be two different words of ASCII letters or digits"),
    ("header_sides", lambda t: t.replace("SIDE_NAMES = (_MARK[-1], _MARK[1])", 'SIDE_NAMES = ("seed", "x")'), None,
     "SIDE_NAMES = ('seed', 'x') would name a player's export header Seed"),
]


@pytest.mark.parametrize("name, values_edit, kernels_edit, says", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_game_that_breaks_the_contract_is_one_line_before_any_game(tmp_path, name, values_edit, kernels_edit,
                                                                     says):
    config = _broken_game(tmp_path, name, values_edit, kernels_edit)
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert len(line.splitlines()) == 1 and line.startswith(f"Error: {config}: game '{name}.game': "), line
    assert says in line, line
    assert not (tmp_path / "out").exists()  # nothing played, nothing written


def test_alpha_beta_searches_another_game_to_its_value():
    """The alpha-beta template bound to tic-tac-toe: the empty board is a draw (0), a position with a
    win in one is worth WIN - 1, and a game against random is never lost."""
    import sys

    from boopexp.agents.budget import Budget, device_costs
    from boopexp.agents.specs import resolve_agent
    from boopexp.engine.rng import new_rng_state

    sys.path.append(str(EXAMPLES))
    game = registry.get("tictactoe.game")
    ab = game.engine("alphabeta")
    cfg = resolve_agent("alphabeta").alphabeta
    budget = Budget(mode="iterations", iterations=10**6)
    search = ab.new_search()
    code, group, telemetry = ab.search(game.initial_state(), cfg, budget, device_costs("android-2023"),
                                       new_rng_state(0), search)
    assert float(search.value[0]) == 0.0 and telemetry["search_depth"] >= 9 and group == 0
    x_wins = game.parse_position("xx./oo./... x")
    code, _, _ = ab.search(x_wins, cfg, budget, device_costs("android-2023"), new_rng_state(0), search)
    assert game.move_text(code) == "c3" and float(search.value[0]) == ab.WIN - 1
    result = invoke("game", "--game", "tictactoe.game", "--p1", "random", "--p2", "alphabeta", "--seed", "4",
                    "--budget", "iterations", "--iterations", "100000", "--json")
    record = json.loads(result.stdout)
    assert record["winner"] != "p1" and record["game"] == "tictactoe.game"


def test_replay_shows_another_games_boards_and_says_a_draw(tmp_path):
    """``boopexp replay --show`` of a drawn tic-tac-toe game (alpha-beta against itself: perfect
    play draws): the game's own boards, the outcome said as a draw."""
    import sys

    sys.path.append(str(EXAMPLES))
    config = tmp_path / "ttt.yaml"
    config.write_text("name: ttt\nseed: 2\ngames_per_side: 1\ngame: {module: tictactoe.game}\n"
                      "budget: {mode: iterations, iterations: 2000}\npairings: [[alphabeta, alphabeta]]\n")
    out = tmp_path / "out"
    assert invoke("run", str(config), "--out", str(out), "-q").exit_code == 0
    from boopexp.experiments.store import StoreReader

    record = StoreReader(out).records().records[0]
    assert record["termination"] == "draw"  # perfect play draws
    shown = invoke("replay", str(out), "--pairing", "alphabeta vs alphabeta", "--game", "0", "--show")
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[-1].endswith("legal moves replayed; a draw, as recorded.")
    assert f"ply 1: X plays {record['moves'][0]}" in shown.output.splitlines()  # the game's names of its sides
    assert f"ply 2: O plays {record['moves'][1]}" in shown.output.splitlines()
    assert "  a b c" in shown.output  # the game's own board


def test_random_plies_openings_of_another_game_start_paired_games_that_replay(tmp_path):
    """``openings: {random_plies: 3, balanced: …}`` with ``game: connect-four``: each game pair starts
    from the same Connect Four position (3 random plies, then judged by heuristics against itself),
    o to move, so p2 moves first; every game walks and is played again by search."""
    config = tmp_path / "c4.yaml"
    config.write_text(C4_CONFIG.replace("games_per_side: 2", "games_per_side: 2\nopenings: {random_plies: 3, "
                                                                "balanced: {games: 4, margin: 0.5}}"))
    out = tmp_path / "out"
    assert invoke("run", str(config), "--out", str(out), "-q").exit_code == 0
    from boopexp.experiments.store import StoreReader
    from boopexp.play.contract import first_mover

    records = StoreReader(out).records().records
    game = registry.get("connect-four")
    starts = {r["game_index"]: r["start"] for r in records}
    assert all(r["start"] == starts[r["game_index"]] for r in records)  # a pair shares its start
    for record in records:
        st = game.parse_position(record["start"])
        assert int(st[3]) == 3 and game.to_move(st) == 1 and first_mover(record) == "p2"
        walk(record)
    assert first_difference(records[0]) is None


@pytest.mark.parametrize(("name", "doc"), [("connect-four", "games.md"), ("pentago-swap", "pentago-swap.md"),
                                           ("colosseum", "games.md")])
def test_the_docs_cite_each_games_device_costs(name, doc):
    """The device costs a game's page gives are the ones its module charges (a calibration that
    changes one must change the other): ``node 60, random_ply …, …`` in the costs' order."""
    costs = registry.get(name).device_costs()
    cited = ", ".join(f"{key} {value:g}" for key, value in costs.items())
    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / doc).read_text(encoding="utf-8").split())
    assert cited in text, cited
