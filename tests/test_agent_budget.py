"""An agent's own budget (``agents.NAME.budget``: factors of the config's budget of a move, the
first move apart): its declaration, errors, hash and record, and the budgets a game gives it."""

from __future__ import annotations

import numpy as np
import pytest
from test_config import cfg

from boopexp.agents.budget import AgentBudget, Budget
from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.errors import ConfigError
from boopexp.games import registry
from boopexp.play.contract import GameTask, task_from_record
from boopexp.play.match import make_player, play_game
from boopexp.play.replay import first_difference

CONFIG = """\
name: t
seed: 5
games_per_side: 1
budget: {budget}
game: connect-four
pairings:
  - [fast, vanilla]
agents:
  fast: {{base: vanilla, budget: {{scale: 2, first_move_scale: 3}}}}
  faster: {{base: fast, budget: {{scale: 4}}}}
"""


def config(budget: str = "{mode: iterations, iterations: 10}", agents: str = ""):
    return cfg(CONFIG.format(budget=budget) + agents)


def test_a_variant_declares_factors_and_inherits_its_bases_keys():
    c = config()
    assert c.agent("fast").budget == AgentBudget(scale=2, first_move_scale=3)
    # the variant's own scale wins, the base's first move is kept
    assert c.agent("faster").budget == AgentBudget(scale=4, first_move_scale=3)
    assert c.agent("vanilla").budget is None


@pytest.mark.parametrize(("budget", "first", "later"), [
    ("{mode: iterations, iterations: 10}", Budget(mode="iterations", iterations=30),
     Budget(mode="iterations", iterations=20)),
    ("{mode: device, seconds: 1.5}", Budget(seconds=4.5), Budget(seconds=3.0)),
    ("{mode: cpu, seconds: 0.5, throttle: 1}", Budget(mode="cpu", seconds=1.5, throttle=1),
     Budget(mode="cpu", seconds=1.0, throttle=1)),
    ("{mode: wall, seconds: 2}", Budget(mode="wall", seconds=6.0), Budget(mode="wall", seconds=4.0)),
])
def test_the_factors_scale_the_budget_of_every_mode(budget, first, later):
    c = config(budget)
    assert c.agent("fast").budget.move_budgets(c.settings.budget) == (first, later)


def test_the_first_move_defaults_to_the_scale_and_iterations_round_to_at_least_one():
    own = AgentBudget(scale=0.01)
    assert own.first == 0.01
    assert own.move_budgets(Budget(mode="iterations", iterations=80)) == (Budget(mode="iterations", iterations=1),) * 2
    assert AgentBudget(scale=1.335).scaled(Budget(mode="iterations", iterations=100), 1.335).iterations == 134


def test_a_player_thinks_under_its_first_budget_once_then_its_later_one():
    game = registry.get("connect-four")
    spec = resolve_agent("vanilla")
    budget = Budget(mode="iterations", iterations=10)
    plain = make_player(spec, budget, np.random.SeedSequence(0), game=game)
    assert [plain.move_budget().iterations for _ in range(3)] == [10, 10, 10]
    own = AgentSpec(**{**spec.__dict__, "budget": AgentBudget(scale=2, first_move_scale=5)})
    player = make_player(own, budget, np.random.SeedSequence(0), game=game)
    assert [player.move_budget().iterations for _ in range(3)] == [50, 20, 20]


def test_a_game_gives_the_agent_its_budgets_and_records_them():
    """The agent's first move runs its first-move iterations, every later one its scaled ones; the
    opponent the config's; the record's agent description holds the factors, and the game replays."""
    c = config()
    fast, vanilla = c.agent("fast"), c.agent("vanilla")
    task = GameTask.new("t", "0" * 16, fast, vanilla, 0, c.settings.budget, c.settings.preset, game="connect-four")
    record = play_game(task)
    mine = [m["iterations"] for m in record["telemetry"] if m["player"] == "p1"]
    theirs = [m["iterations"] for m in record["telemetry"] if m["player"] == "p2"]
    assert mine[0] == 30 and set(mine[1:]) == {20} and set(theirs) == {10}, (mine, theirs)
    assert record["p1_spec"]["budget"] == {"scale": 2.0, "first_move_scale": 3.0}
    assert "budget" not in record["p2_spec"]
    assert task_from_record(record).p1 == fast
    assert first_difference(record) is None  # the game replays: the replay gives the agent its budgets too


def test_the_factors_are_part_of_the_agents_identity():
    """Factors in the hash; factors of 1 are no budget of the agent's own (its hash as without them)."""
    identity = CONFIG.replace("budget: {{scale: 2, first_move_scale: 3}}", "budget: {{scale: 1}}")
    none = CONFIG.replace(", budget: {{scale: 2, first_move_scale: 3}}", "")
    hashes = [{p.pairing: p.config_hash for p in cfg(text.format(budget="{mode: iterations, iterations: 10}")).plan()}
              for text in (identity, none, CONFIG)]
    assert hashes[0] == hashes[1] and hashes[0].keys() == hashes[2].keys()
    assert all(hashes[0][k] != hashes[2][k] for k in hashes[0])
    assert "budget" not in cfg(identity.format(budget="{mode: iterations, iterations: 10}")).agent("fast").to_dict()
    spec = config().agent("fast")
    assert spec.to_dict()["budget"] == {"scale": 2.0, "first_move_scale": 3.0}
    assert AgentSpec.from_dict(spec.to_dict()) == spec
    assert "budget" not in resolve_agent("vanilla").to_dict()  # a built-in agent's hash is unchanged


@pytest.mark.parametrize(("agents", "message"), [
    ("  odd: {base: vanilla, budget: {seconds: 3}}\n",
     "unknown key agents.odd.budget.seconds (value 3) (factors of the config's budget; the amount and mode are "
     "the config's); allowed: scale, first_move_scale"),
    ("  odd: {base: vanilla, budget: {scale: 0}}\n", "agents.odd.budget.scale = 0 must be a positive factor"),
    ("  odd: {base: vanilla, budget: {first_move_scale: -2}}\n", "agents.odd.budget.first_move_scale = -2 must be"),
    ("  odd: {base: vanilla, budget: {scale: yes}}\n", "agents.odd.budget.scale = True must be a positive factor"),
    ("  odd: {base: vanilla, budget: 2}\n", "agents.odd.budget = 2 must be a mapping like {scale: 1.5"),
    ("  odd: {base: random, budget: {scale: 2}}\n",
     "agents.odd.budget = {'scale': 2}: a random agent thinks under no budget; only mcts, alphabeta agents"),
    ("  heuristics: {budget: {scale: 2}}\n", "a heuristics agent thinks under no budget"),
    ("  odd: {base: vanilla, budget: {first_move_scale: 100}}\n",
     "agents.odd.budget = {'scale': 1.0, 'first_move_scale': 100.0} must be at most 1,000,000 iterations a move"),
])
def test_a_bad_agent_budget_is_one_line_naming_it(agents, message):
    budget = "{mode: iterations, iterations: 20000}" if "100}" in agents else "{mode: iterations, iterations: 10}"
    with pytest.raises(ConfigError) as err:
        config(budget, agents)
    text = str(err.value)
    assert "\n" not in text and message in text, text


def test_a_scaled_budget_beyond_the_limit_is_refused_with_the_arithmetic():
    with pytest.raises(ConfigError, match=r"at most 600 s a move \(the config's 300 s x 3 = 900 s\)"):
        config("{mode: device, seconds: 300}")


def test_an_agent_budget_is_checked_in_a_recorded_description_too():
    spec = config().agent("fast").to_dict()
    with pytest.raises(ConfigError, match="budget.scale = 0 must be a positive factor"):
        AgentSpec.from_dict({**spec, "budget": {"scale": 0}})
    with pytest.raises(ConfigError, match="a random agent thinks under no budget"):
        AgentSpec.from_dict({"name": "random", "kind": "random", "budget": {"scale": 2}})
