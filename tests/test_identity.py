"""A game's identity has one home (boopexp/play/identity.py): every builder and reader agrees with it."""

from __future__ import annotations

import pytest
from conftest import DEMO_CONFIG, fake_play_game

from boopexp.experiments.config import load_config
from boopexp.play import identity
from boopexp.play.contract import GameTask


def test_pairing_name_and_agents_are_inverse():
    assert identity.pairing_name("mcts-co", "vanilla") == "mcts-co vs vanilla"
    assert identity.pairing_agents("mcts-co vs vanilla") == ("mcts-co", "vanilla")
    assert identity.pairing_agents(identity.pairing_name("a", "a")) == ("a", "a")
    with pytest.raises(ValueError, match="A vs B"):
        identity.pairing_agents("mcts-co")


def test_a_config_builds_its_tasks_from_the_identity_functions(tmp_path):
    (tmp_path / "demo.yaml").write_text(DEMO_CONFIG)
    config = load_config(tmp_path / "demo.yaml")
    for task in config.tasks(config.plan()):
        assert config.settings.max_plies is None and config.settings.openings is None  # hashed only when set
        hashed = {"seed": config.settings.seed, "budget": task.budget.to_dict(), "preset": config.settings.preset}
        chash = identity.settings_hash(hashed, task.p1.to_dict(), task.p2.to_dict())
        assert task.config_hash == chash
        assert task == GameTask.new(config.name, chash, task.p1, task.p2, task.game_index, task.budget,
                                    config.settings.preset, config.settings.max_plies, task.sweep)
        assert task.seed == identity.game_seed(chash, task.game_index)
        assert task.key == identity.game_key(chash, identity.pairing_name(task.p1.name, task.p2.name), task.game_index)
        # a game's record carries the identity of the task that played it
        assert identity.record_key(fake_play_game(task)) == task.key
