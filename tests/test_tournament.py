"""Tournaments: the games a round-robin and a gauntlet plan, and every bad tournament block."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from test_config import cfg

from boopexp.errors import ConfigError
from boopexp.experiments.config import parse_config
from boopexp.interfaces.cli import main

HEAD = "name: t\nseed: 5\ngames_per_side: 3\nbudget: {mode: iterations, iterations: 2}\n"


def test_round_robin_plays_every_pair_both_ways():
    c = cfg(HEAD + "tournament: {format: round-robin, agents: [vanilla, mcts+S, mcts+E, mcts-co]}\n")
    plan = c.plan()
    pairs = [(p.p1, p.p2) for p in plan]
    agents = ["vanilla", "mcts+S", "mcts+E", "mcts-co"]
    assert sorted(pairs) == sorted((a, b) for a in agents for b in agents if a != b)  # 12 ordered pairings
    assert all(p.games == 3 for p in plan) and len(c.tasks(plan)) == 36
    # the same games as the pairings written out
    written = cfg(HEAD + "pairings: [[vanilla, mcts+S], [vanilla, mcts+E], [vanilla, mcts-co], "
                         "[mcts+S, mcts+E], [mcts+S, mcts-co], [mcts+E, mcts-co]]\n")
    assert written.plan() == plan


def test_gauntlet_is_table_one_shaped():
    c = cfg(HEAD + "tournament: {format: gauntlet, agent: mcts+SEP, opponents: [vanilla, heuristics, random]}\n")
    assert c.pairings == (("mcts-co", "vanilla"), ("mcts-co", "heuristics"), ("mcts-co", "random"))
    assert [p.pairing for p in c.plan()] == [
        "mcts-co vs vanilla", "vanilla vs mcts-co", "mcts-co vs heuristics", "heuristics vs mcts-co",
        "mcts-co vs random", "random vs mcts-co",
    ]


def test_tournaments_take_declared_agents_and_round_trip_through_the_resolved_config():
    c = cfg(HEAD + "agents: {co-wide: {base: mcts-co, uct_c: 1.0}}\n"
                   "tournament: {format: gauntlet, agent: co-wide, opponents: [mcts-co]}\n")
    assert [p.pairing for p in c.plan()] == ["co-wide vs mcts-co", "mcts-co vs co-wide"]
    doc = yaml.safe_load(yaml.safe_dump(c.resolved()))
    assert doc["tournament"] == {"format": "gauntlet", "agent": "co-wide", "opponents": ["mcts-co"]}
    user = {k: v for k, v in doc.items() if k not in ("plan", "boopexp_version")}
    assert parse_config(user).plan() == c.plan()


BAD = [
    ("not a mapping", "tournament: [vanilla, random]\n", ["tournament =", "must be a mapping"]),
    ("unknown format", "tournament: {format: swiss, agents: [vanilla, random]}\n",
     ["tournament.format = 'swiss'", "round-robin, gauntlet"]),
    ("key of the other format", "tournament: {format: round-robin, agents: [vanilla, random], agent: vanilla}\n",
     ["unknown key tournament.agent", "allowed: format, agents"]),
    ("missing opponents", "tournament: {format: gauntlet, agent: vanilla}\n",
     ["missing required key tournament.opponents for format gauntlet; required: format, agent, opponents"]),
    ("one agent", "tournament: {format: round-robin, agents: [vanilla]}\n", ["tournament.agents", "at least 2"]),
    ("unknown agent", "tournament: {format: round-robin, agents: [vanilla, alphazero]}\n",
     ["tournament.agents[1]", "unknown agent 'alphazero'"]),
    ("repeated agent", "tournament: {format: round-robin, agents: [mcts-co, vanilla, mcts+SEP]}\n",
     ["tournament.agents[2]", "repeats agent 'mcts-co'"]),
    ("gauntlet agent unknown", "tournament: {format: gauntlet, agent: x, opponents: [vanilla]}\n",
     ["tournament.agent", "unknown agent 'x'"]),
    ("gauntlet against itself", "tournament: {format: gauntlet, agent: vanilla, opponents: [random, vanilla]}\n",
     ["tournament.opponents", "own agent 'vanilla'"]),
    ("both pairings and tournament",
     "pairings: [[vanilla, random]]\ntournament: {format: round-robin, agents: [vanilla, random]}\n",
     ["either pairings or tournament"]),
    ("neither", "", ["missing required key pairings (or tournament)"]),
]


@pytest.mark.parametrize("text,needles", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_tournaments_are_one_line_config_errors(text, needles, tmp_path, monkeypatch):
    with pytest.raises(ConfigError) as info:
        cfg(HEAD + text)
    message = str(info.value)
    assert "\n" not in message and message.startswith("t.yaml: ")
    for needle in needles:
        assert needle in message, (needle, message)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(HEAD + text)
    result = CliRunner().invoke(main, ["run", "t.yaml", "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "results").exists()
