"""A game's options (docs/games.md "Values"): a config's ``game: {name: colosseum, board_size: 8}``
and ``boopexp game --game-option``, checked by the game, hashed and recorded only when set, carried
by the task to ``initial_state(seed, **options)``; paired boards (``paired_boards``) and the
random-plies openings of a game with a random start."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import one_line

from boopexp.agents.specs import resolve_agent
from boopexp.errors import ConfigError
from boopexp.experiments.config import parse_config
from boopexp.games import registry
from boopexp.games.colosseum import state as colosseum_state
from boopexp.interfaces.cli import main
from boopexp.play.contract import task_from_record
from boopexp.play.replay import first_difference
from boopexp.play.settings import GameSettings

BASE = {
    "name": "go",
    "seed": 3,
    "games_per_side": 2,
    "budget": {"mode": "iterations", "iterations": 4},
    "pairings": [["random", "heuristics"]],
}
RANDOM = resolve_agent("random")
HEURISTICS = resolve_agent("heuristics")


def config(game) -> object:
    return parse_config({**BASE, "game": game}, "t.yaml")


def _size(start: str) -> int:
    return int(start.split()[0])


def test_a_game_without_options_keeps_its_hash_and_its_saved_config():
    """``game: colosseum`` and ``game: {name: colosseum}`` are one setting; options enter the hash,
    the saved config and the task only when set."""
    plain, named = config("colosseum"), config({"name": "colosseum"})
    assert [p.config_hash for p in plain.plan()] == [p.config_hash for p in named.plan()]
    assert plain.settings.game_options == () and "game_options" not in plain.settings.identity()
    assert plain.resolved()["game"] == "colosseum"
    sized = config({"name": "colosseum", "board_size": 8})
    assert sized.settings.game_options == (("board_size", 8),)
    assert sized.settings.identity()["game_options"] == {"board_size": 8}
    assert [p.config_hash for p in sized.plan()] != [p.config_hash for p in plain.plan()]
    assert sized.resolved()["game"] == {"name": "colosseum", "board_size": 8}
    again = parse_config({**BASE, "game": sized.resolved()["game"]}, "t.yaml")  # the saved config reads back
    assert [p.config_hash for p in again.plan()] == [p.config_hash for p in sized.plan()]
    assert all(t.game_options == (("board_size", 8),) for t in sized.tasks(sized.plan()))
    # paired_boards: false is the default: no option set
    assert config({"name": "colosseum", "paired_boards": False}).settings.game_options == ()


@pytest.mark.parametrize("game, message", [
    ({"name": "colosseum", "board_size": 13}, "game.board_size = 13 must be an integer in [2, 12]"),
    ({"name": "colosseum", "size_range": [9, 6]}, "game.size_range = [9, 6] must be [lo, hi] with lo <= hi"),
    ({"name": "colosseum", "size_range": 7}, "game.size_range = 7 must be [lo, hi]"),
    ({"name": "colosseum", "separation": "dfs"}, "game.separation = 'dfs' is not allowed; allowed: bitboard, "
                                                 "union-find, bidirectional"),
    ({"name": "colosseum", "paired_boards": "yes"}, "game.paired_boards = 'yes' must be true or false"),
    ({"name": "colosseum", "size": 8}, "unknown key game.size (value 8); allowed: board_size, size_range, "
                                       "separation, paired_boards"),
    ({"name": "connect-four", "board_size": 8}, "unknown key game.board_size (value 8); connect-four takes no "
                                                "options"),
    ({"board_size": 8}, "must name its game once"),
    ({"name": "chess"}, "game = 'chess' is not allowed"),
])
def test_a_bad_option_is_one_line_naming_the_key_and_what_is_allowed(game, message):
    with pytest.raises(ConfigError) as err:
        config(game)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_options_reach_the_start_and_the_record_and_the_game_replays():
    """A played game's start has the option's size; its record carries the options, and the task
    rebuilt from the record is the task that played it."""
    from boopexp.play.match import play_game

    for options, sizes in ((("board_size", 7),), {7}), ((("size_range", (10, 11)),), {10, 11}):
        settings = GameSettings("go", 5, game="colosseum", game_options=options)
        for index in range(3):
            task = settings.task(RANDOM, HEURISTICS, index)
            record = play_game(task)
            assert _size(record["start"]) in sizes
            assert record["game_options"] == registry.options_json(options)
            assert task_from_record(record) == task.__class__(**{**task.__dict__, "start": record["start"]})
            assert first_difference(record) is None
    plain = play_game(GameSettings("go", 5, game="colosseum").task(RANDOM, HEURISTICS, 0))
    assert "game_options" not in plain and task_from_record(plain).game_options == ()


def test_the_separation_option_sets_the_state_and_a_position_start_keeps_it():
    game = registry.get("colosseum")
    options = (("separation", "union-find"),)
    st = game.initial_state(4, options)
    assert int(st[colosseum_state.SEPARATION]) == 1
    assert int(game.initial_state(4)[colosseum_state.SEPARATION]) == 0
    text = game.position_string(st)
    assert text == game.position_string(game.initial_state(4))  # not part of the position
    assert int(game.start_state(text, options=options)[colosseum_state.SEPARATION]) == 1
    assert int(game.start_state(text)[colosseum_state.SEPARATION]) == 0


def test_paired_boards_give_both_seatings_of_a_pair_the_same_board():
    """paired_boards: game i of "A vs B" and of "B vs A" (and of every pairing) start from game
    pair i's board; the pairs differ; without it each game draws its own."""
    paired = parse_config({**BASE, "pairings": [["random", "heuristics"], ["random", "random"]],
                           "game": {"name": "colosseum", "paired_boards": True, "size_range": [6, 11]}}, "t.yaml")
    starts: dict[int, set[str]] = {}
    for task in paired.tasks(paired.plan()):
        assert isinstance(task.start, str)
        starts.setdefault(task.game_index, set()).add(task.start)
    assert all(len(s) == 1 for s in starts.values()) and len({s.pop() for s in starts.values()}) == len(starts)
    board = registry.get("colosseum").initial_state(registry.board_seed(3, 1), (("size_range", (6, 11)),))
    assert paired.settings.start(1) == registry.get("colosseum").position_string(board)
    plain = config("colosseum")
    assert all(t.start is None for t in plain.tasks(plain.plan()))  # drawn from each game's own seed


def test_colosseum_random_plies_openings_start_from_the_pairs_board():
    """openings: {random_plies: N} plays its plies from game pair i's board under the options (N = 0:
    that board itself, which paired_boards also gives the pair), not from a fixed default board."""
    from boopexp.play.match import play_game
    from boopexp.play.starts import resolve_start

    def starts(game, plies):
        cfg = parse_config({**BASE, "game": game, "openings": {"random_plies": plies}}, "t.yaml")
        return {t.game_index: resolve_start(t.start, play_game, t.game, t.game_options)
                for t in cfg.tasks(cfg.plan())}

    zero = starts({"name": "colosseum", "board_size": 9}, 0)
    paired = config({"name": "colosseum", "board_size": 9, "paired_boards": True})
    assert zero == {i: paired.settings.start(i) for i in zero}
    four = starts({"name": "colosseum", "board_size": 9}, 4)
    assert all(_size(s) == 9 for s in four.values()) and len(set(four.values())) == len(four)
    assert len({s.split()[1] for s in starts("colosseum", 0).values()}) == len(zero)  # not one default board


def test_game_option_on_the_command_line():
    args = ["game", "--game", "colosseum", "--game-option", "board_size=6", "--game-option", "separation=bidirectional",
            "--p1", "random", "--p2", "heuristics", "--budget", "iterations", "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["game_options"] == {"board_size": 6, "separation": "bidirectional"} and _size(record["start"]) == 6
    bad = CliRunner().invoke(main, ["game", "--game", "colosseum", "--game-option", "board_size=1", "--p1", "random",
                                    "--p2", "random"])
    assert one_line(bad, 2) == "Error: --game-option: board_size = 1 must be an integer in [2, 12]"
