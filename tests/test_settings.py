"""A game's settings are one value (boopexp/play/settings.py): the hash it names a pairing by, the
tasks it builds, and every builder of a game (config, session, calibration, openings) going through it."""

from __future__ import annotations

import pytest

from boopexp.agents.budget import Budget
from boopexp.agents.specs import DEFAULT_PRESET, resolve_agent
from boopexp.game.position import Position
from boopexp.game.sides import Colour
from boopexp.play import calibrate, identity
from boopexp.play.openings import BALANCE_PLY_CAP, Draw, parse_openings
from boopexp.play.session import HUMAN, PlaySession
from boopexp.play.settings import GameSettings

CO, VANILLA_PAPER = resolve_agent("mcts-co"), resolve_agent("vanilla", "paper")
ITERATIONS = Budget(mode="iterations", iterations=7)
THREE = parse_openings({"random_plies": 3}, None)
BALANCED = parse_openings({"random_plies": 4, "balanced": {"games": 8, "margin": 0.2}}, None)

#: Settings hashes computed by the code before GameSettings (identity.pairing_hash of commit
#: 0106038): every stored game keeps its identity.
PINNED = [
    (GameSettings("x"), CO, VANILLA_PAPER, "8d392915c9ddadec"),
    (GameSettings("y", 2**64 - 1, ITERATIONS, "paper"), VANILLA_PAPER, CO, "d1415954624aec16"),
    (GameSettings("x", 5, ITERATIONS, max_plies=300), CO, CO, "9f71124358e309a1"),
    (GameSettings("x", 5, ITERATIONS, openings=THREE), CO, VANILLA_PAPER, "61694ab9906c7b02"),
    (GameSettings("play", 9, Budget(), max_plies=50, openings=BALANCED), HUMAN, VANILLA_PAPER, "0505d5bf19c7b759"),
]


@pytest.mark.parametrize("settings, p1, p2, pinned", PINNED)
def test_the_settings_hash_is_the_one_games_were_stored_under(settings, p1, p2, pinned):
    assert settings.pairing_hash(p1, p2) == pinned
    assert settings.replace(experiment="another name").pairing_hash(p1, p2) == pinned  # the name is not hashed


def test_the_game_at_its_default_leaves_every_hash_as_it_was():
    """``game`` (issue 35) is hashed and recorded only when not boop.: every stored game keeps its identity."""
    for settings, p1, p2, pinned in PINNED:
        assert settings.game == "boop" and "game" not in settings.identity()
        assert settings.replace(game="boop").pairing_hash(p1, p2) == pinned
        assert settings.game_options == () and "game_options" not in settings.identity()  # options: only when set
        other = settings.replace(game="connect-four")
        assert other.pairing_hash(p1, p2) != pinned and other.identity()["game"] == "connect-four"
        task = other.task(p1, p2, 3)
        assert task.config_hash == other.pairing_hash(p1, p2) and task.game == "connect-four"
        assert settings.task(p1, p2, 3).game == "boop"


def test_a_task_carries_the_settings_and_the_seed_of_its_identity():
    settings = GameSettings("e", 5, ITERATIONS, "paper", 300, THREE)
    task = settings.task(CO, VANILLA_PAPER, 7, sweep=(("budget.iterations", 7),))
    chash = settings.pairing_hash(CO, VANILLA_PAPER)
    assert (task.experiment, task.config_hash, task.pairing, task.game_index) == ("e", chash, "mcts-co vs vanilla", 7)
    assert task.seed == identity.game_seed(chash, 7) and task.sweep == (("budget.iterations", 7),)
    assert (task.budget, task.preset, task.max_plies) == (ITERATIONS, "paper", 300)
    assert task.start == Draw(5, 3, 7, None) == settings.start(7)  # game pair 7's position of the openings
    assert GameSettings("e").task(CO, CO, 0).start is None  # without openings: the empty board


def test_the_settings_as_json():
    settings = GameSettings("e", 5, ITERATIONS, openings=THREE)
    assert settings.to_dict() == {"seed": 5, "budget": {"mode": "iterations", "iterations": 7},
                                  "preset": DEFAULT_PRESET, "max_plies": None, "openings": {"random_plies": 3},
                                  "game": "boop", "game_options": {}}
    assert settings.identity() == {"seed": 5, "budget": {"mode": "iterations", "iterations": 7},
                                   "preset": DEFAULT_PRESET, "openings": {"random_plies": 3}}


def test_the_calibration_plays_its_games_under_settings_not_a_made_up_hash(monkeypatch):
    """Its games are seeded by hand (seed + g) as the published calibration's were, but each task
    is the settings' own: before, every game had the settings hash 'cccccccccccccccc'."""
    tasks = []

    def fake_play(task):
        tasks.append(task)
        return {"winner": "p1", "telemetry": [{"agent": task.p1.name, **dict.fromkeys(COUNTS, 1)}]}

    COUNTS = ("iterations", "nodes_created", "playout_plies", "solver_calls", "solver_moves", "equivalent_moves",
              "equivalent_candidates")
    monkeypatch.setattr(calibrate, "play_game", fake_play)
    calibrate.measure_primitives("mcts-co", "heuristics", 9, 3, seed=40)
    settings = GameSettings("calibration", 40, Budget(mode="iterations", iterations=9))
    co, heuristics = resolve_agent("mcts-co"), resolve_agent("heuristics")
    assert [t.pairing for t in tasks] == ["mcts-co vs heuristics", "heuristics vs mcts-co", "mcts-co vs heuristics"]
    assert [t.seed for t in tasks] == [40, 41, 42]
    assert [t.config_hash for t in tasks] == [settings.pairing_hash(co, heuristics),
                                              settings.pairing_hash(heuristics, co),
                                              settings.pairing_hash(co, heuristics)]
    assert all(t.preset == DEFAULT_PRESET and t.experiment == "calibration" for t in tasks)


def test_the_openings_reference_games_keep_their_seeds():
    """A balanced suite's positions depend on these games: their seeds are those they always had."""
    from boopexp.play.starts import balance_score

    tasks = []
    start = Position.initial().to_string()
    balance_score(start, 3, 2**64 + 17, lambda task: (tasks.append(task), {"winner": None})[1])
    key = f"{17:016x}"
    assert [t.seed for t in tasks] == [identity.game_seed(key, g) for g in range(3)]
    assert all(t.config_hash == key and t.max_plies == BALANCE_PLY_CAP and t.start == start
               and t.pairing == "heuristics vs heuristics" and t.experiment == "openings-balance" for t in tasks)


def test_a_session_is_played_under_settings_with_the_humans_colour(tmp_path):
    settings = GameSettings("a-config", 3, ITERATIONS, max_plies=40)
    random = resolve_agent("random")
    session = PlaySession(settings, random, Colour.RED, game_index=2)
    assert session.human is Colour.RED and session.winner is None and not session.human_to_move
    task = session.task
    assert task.experiment == "play"  # a played game's record names the play folder's experiment
    assert task.config_hash == settings.pairing_hash(random, HUMAN) and task.pairing == "random vs human"
    assert task.seed == identity.game_seed(task.config_hash, 2) and task.max_plies == 40
    view = session.play_agent()
    assert view is not None and view.colour is Colour.BLUE
    assert session.human_to_move
    with pytest.raises(ValueError):
        PlaySession(settings, random, "green")  # type: ignore[arg-type] - a colour is Blue or Red
