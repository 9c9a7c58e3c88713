"""boop. in OpenSpiel (``boopexp[openspiel]``): the game ``python_boop`` passes OpenSpiel's own checks,
plays boopexp's REAL rules move for move, and OpenSpiel's MCTSBot plays as a plugin agent.

Without the ``open-spiel`` wheel these tests skip with the reason; where the wheel exists (Linux
x86_64, Python >= 3.11: what CI runs) a missing install fails under CI instead of skipping.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import numpy as np
import pytest

from boopexp.game.position import Move, Position


def _has_wheel() -> bool:
    return sys.version_info >= (3, 11) and sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")


try:
    import pyspiel
except ImportError as exc:  # pragma: no cover - depends on the platform
    if _has_wheel() and os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail("open-spiel has a wheel here but is not installed "
                    f"(make install installs boopexp[openspiel]): {exc}",
                    pytrace=False)
    pytest.skip(f"open-spiel is not installed ({exc}); pip install 'boopexp[openspiel]' (wheels: Python >= 3.11)",
                allow_module_level=True)

from boopexp import openspiel as bos  # noqa: E402  (registers python_boop)


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game("python_boop")


def random_game(game, seed: int, stop=None):
    """Play uniformly random actions (OpenSpiel's view) until the end or until ``stop(state)``."""
    rs = np.random.RandomState(seed)
    state = game.new_initial_state()
    while not state.is_terminal() and not (stop and stop(state)):
        state.apply_action(int(rs.choice(state.legal_actions())))
    return state


def pending(state) -> bool:
    return not state.is_terminal() and min(state.legal_actions()) >= bos.N_PLACEMENTS


def test_registered_with_the_documented_shape(game):
    assert "python_boop" in pyspiel.registered_names()
    assert game.num_distinct_actions() == 72 + 36 + 80 == bos.N_ACTIONS
    assert game.num_players() == 2 and game.max_utility() == 1.0 and game.min_utility() == -1.0
    assert game.observation_tensor_shape() == list(bos.OBSERVATION_SHAPE)
    state = game.new_initial_state()
    assert state.current_player() == 0 and state.legal_actions() == list(range(36))  # smalls only
    assert state.action_to_string(0, 14) == "c4" and bos.action_text(36 + 14) == "C4"
    assert str(state) == Position.initial().to_string()


def test_openspiel_random_sim_test(game):
    pyspiel.random_sim_test(game, num_sims=5, serialize=False, verbose=False)


#: OpenSpiel's regression pin for a game: a stored playthrough (random actions, seed 3), replayed
#: and compared line by line. A rule, notation or observation change shows up here; after a
#: deliberate one, regenerate it with the lines of test_playthrough_replays_the_stored_one.
PLAYTHROUGH = Path(__file__).parent / "data" / "python_boop.playthrough.txt"


def _playthrough_module():
    from absl import flags
    from open_spiel.python.algorithms import generate_playthrough

    if not flags.FLAGS.is_parsed():  # the module reads absl flags (their defaults are what we want)
        flags.FLAGS.mark_as_parsed()
    return generate_playthrough


def test_playthrough_replays_the_stored_one():
    generate_playthrough = _playthrough_module()
    text = generate_playthrough.playthrough("python_boop", action_sequence=None, seed=3)
    for needed in ('GameType.short_name = "python_boop"', "ObservationTensor(0).board", "Returns() = ",
                   "LegalActions() = [0, 1, 2", 'StringLegalActions() = ["promote '):
        assert needed in text
    original, again = generate_playthrough.replay(str(PLAYTHROUGH))
    assert original == again == text


def test_a_random_openspiel_game_is_a_boopexp_game_move_for_move(game):
    for seed in range(3):
        state = random_game(game, seed)
        moves: list[str] = []
        for action in state.history():
            if action < bos.N_PLACEMENTS:
                moves.append(str(Move.from_code(action)))
            else:  # the promotion decision: boopexp's ':group' suffix
                moves[-1] += ":" + "".join(bos.notation.square_name(q) for q in bos.action_group(action))
        position, winner = Position.initial(), None
        for text in moves:
            result = position.play(text)
            position, winner = result.position, result.winner
        assert position.to_string() == str(state)
        assert state.returns() == ([1.0, -1.0] if winner == "blue" else [-1.0, 1.0])


def test_a_promotion_is_a_further_decision_of_the_same_player(game):
    state = random_game(game, 0, stop=pending)
    assert pending(state), "a random game reaches a promotion choice"
    placement = state.history()[-1]
    mover = 0 if bos.Position.from_string(str(state).split(" (")[0]).to_move == "blue" else 1
    assert state.current_player() == mover
    assert f"(promotion after {bos.action_text(placement)})" in str(state)
    choices = state.position().promotion_choices(Move.from_code(placement))
    assert sorted(bos.group_action(g) for g in choices) == state.legal_actions()
    assert all(state.action_to_string(mover, a).startswith("promote ") for a in state.legal_actions())
    assert state.observation_tensor(mover)[-1] == 1.0 and "promotion to choose" in state.observation_string(mover)
    state.apply_action(state.legal_actions()[-1])
    assert state.is_terminal() or state.current_player() == 1 - mover


def test_observation_tensor_planes(game):
    state = game.new_initial_state()
    state.apply_action(14)  # Blue small on c4
    obs = np.array(state.observation_tensor(1)).reshape(-1)
    board = obs[:180].reshape(5, 6, 6)
    assert board[1, 2, 2] == 1 and board[0, 2, 2] == 0 and board[0].sum() == 35
    assert list(obs[180:184]) == [7 / 8, 0, 1, 0] and list(obs[186:188]) == [0, 1]  # Red to move


def test_mcts_bot_plays_legal_seeded_moves():
    bot = bos.mcts_bot(max_simulations=8, uct_c=0.3)
    position = Position.initial().play("c3").position
    a = bot.choose(position, np.random.default_rng(7))
    b = bos.mcts_bot(max_simulations=8, uct_c=0.3).choose(position, np.random.default_rng(7))
    assert a == b and a in position.legal_moves()
    with pytest.raises(ValueError, match="max_simulations"):
        bos.mcts_bot(max_simulations=0)


def test_mcts_bot_chooses_a_promotion_among_the_groups(game):
    state = random_game(game, 0, stop=pending)
    position, placement = state.position(), Move.from_code(state.history()[-1])
    bot = bos.mcts_bot(max_simulations=4)
    bot._last = placement  # as if its own choose() had picked this placement
    groups = position.promotion_choices(placement)
    index = bot.promote(position, groups, np.random.default_rng(1))
    assert 0 <= index < len(groups)


def test_mcts_bot_promote_without_a_decision_left_answers_the_first_group():
    bot = bos.mcts_bot(max_simulations=4)
    bot._last = Move.parse("c3")  # a placement that leaves nothing to choose (as when it wins at once)
    assert bot.promote(Position.initial(), [(14,), (15,)], np.random.default_rng(0)) == 0


def test_mcts_bot_plays_from_a_config_and_its_game_replays(tmp_path):
    from click.testing import CliRunner

    from boopexp.interfaces.cli import main

    config = tmp_path / "os.yaml"
    config.write_text(
        "name: os\nseed: 3\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 4}\n"
        "agents:\n  os-mcts: {plugin: \"boopexp.openspiel:mcts_bot\", max_simulations: 4, uct_c: 0.3}\n"
        "pairings:\n  - [os-mcts, vanilla]\n"
    )
    out = tmp_path / "results"
    run = CliRunner().invoke(main, ["run", str(config), "--out", str(out), "--jobs", "1", "-q"])
    assert run.exit_code == 0, run.output
    import json

    from boopexp.experiments.store import StoreReader

    records = StoreReader(out).records().records
    assert len(records) == 2 and {r["pairing"] for r in records} == {"os-mcts vs vanilla", "vanilla vs os-mcts"}
    for r in records:
        assert r["termination"] == "victory", json.dumps(r.get("forfeit"))
        again = CliRunner().invoke(main, ["replay", str(out), "--pairing", r["pairing"], "--game", "0", "--search"])
        assert again.exit_code == 0 and "the same game, move for move" in again.output, again.output


def test_play_against_the_mcts_bot(tmp_path):
    from click.testing import CliRunner

    from boopexp.interfaces.cli import main

    config = tmp_path / "os.yaml"
    config.write_text(
        "name: os\nseed: 3\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 4}\n"
        "agents:\n  os-mcts: {plugin: \"boopexp.openspiel:mcts_bot\", max_simulations: 4}\n"
        "pairings:\n  - [os-mcts, vanilla]\n"
    )
    result = CliRunner().invoke(main, ["play", "--config", str(config), "--agent", "os-mcts", "--second",
                                       "--out", str(tmp_path / "s")], input="quit\n")
    assert result.exit_code == 0, result.output
    assert "ply 1: Blue (os-mcts) plays" in result.output and "not saved" in result.output
