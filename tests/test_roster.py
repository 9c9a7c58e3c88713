"""Agent variants declared in a config: names, parameters, hashes, games and every bad declaration."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner
from test_config import BASE, cfg

from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.errors import ConfigError
from boopexp.experiments.store import StoreReader
from boopexp.interfaces.cli import main

VARIANTS = BASE + """\
  - [co-wide, vanilla]
agents:
  co-wide: {base: mcts-co, uct_c: 1.0, preselect_m: 8}
  co-wider: {base: co-wide, uct_c: 2.0}
  mcts-co: {discount: 0.8}
"""


def test_a_variant_is_its_base_with_its_own_parameters_last():
    c = cfg(VARIANTS)
    wide = c.agent("co-wide")
    assert wide.name == "co-wide" and wide.kind == "mcts" and wide.base == "mcts-co"
    # the base's own override (discount) is inherited, the variant's parameters win
    assert (wide.mcts.uct_c, wide.mcts.preselect_m, wide.mcts.discount) == (1.0, 8, 0.8)
    wider = c.agent("co-wider")
    assert (wider.mcts.uct_c, wider.mcts.preselect_m, wider.base) == (2.0, 8, "co-wide")
    assert AgentSpec.from_dict(wider.to_dict()) == wider


def test_a_variant_is_a_first_class_name_in_the_plan_and_its_hash():
    c = cfg(VARIANTS)
    pairings = [p.pairing for p in c.plan()]
    assert "co-wide vs vanilla" in pairings and "vanilla vs co-wide" in pairings
    entry = next(p for p in c.plan() if p.pairing == "co-wide vs vanilla")
    assert entry.p1_spec.to_dict()["name"] == "co-wide" and entry.p1_spec.to_dict()["base"] == "mcts-co"
    # the same parameters under another name are another agent (the name is in the hash)
    renamed = cfg(VARIANTS.replace("co-wide", "co-broad"))
    other = next(p for p in renamed.plan() if p.pairing == "co-broad vs vanilla")
    assert other.config_hash != entry.config_hash


def test_built_in_agents_keep_their_description_and_hash():
    plain = {p.pairing: p.config_hash for p in cfg().plan()}
    with_variants = {p.pairing: p.config_hash for p in cfg(VARIANTS.replace("  mcts-co: {discount: 0.8}\n", "")).plan()}
    assert {k: with_variants[k] for k in plain} == plain
    assert "base" not in resolve_agent("mcts-co").to_dict() and "plugin" not in resolve_agent("vanilla").to_dict()
    # {base: itself} is a plain override
    same = cfg(BASE + "agents: {mcts-co: {base: mcts-co, uct_c: 0.5}}\n")
    assert same.agents == {"mcts-co": {"uct_c": 0.5}} and same.agent("mcts-co").base is None


def test_a_variant_of_a_baseline_is_a_renamed_baseline():
    c = cfg(BASE + "  - [rand2, random]\nagents: {rand2: {base: random}}\n")
    assert c.agent("rand2") == AgentSpec(name="rand2", kind="random", base="random")


def test_variants_play_in_runs_and_games(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v.yaml").write_text(
        "name: v\nseed: 3\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 2}\n"
        "agents: {quick: {base: vanilla, playout_depth: 4}}\npairings: [[quick, random]]\n"
    )
    result = CliRunner().invoke(main, ["run", "v.yaml", "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    records = StoreReader(tmp_path / "results/v").records().records
    assert sorted(r["pairing"] for r in records) == ["quick vs random", "random vs quick"]
    quick = next(r for r in records if r["p1"] == "quick")
    assert quick["p1_spec"]["base"] == "vanilla" and quick["p1_spec"]["params"]["playout_depth"] == 4
    # the same game again from `boopexp game --config`: the same settings hash and moves
    game = CliRunner().invoke(main, ["game", "--config", "v.yaml", "--p1", "quick", "--p2", "random", "--json"])
    assert game.exit_code == 0, game.output
    again = json.loads(game.stdout)
    assert again["config_hash"] == quick["config_hash"] and again["moves"] == quick["moves"]


BAD_VARIANTS = [
    ("unknown base", "agents: {x: {base: alphazero}}\n", ["agents.x.base = 'alphazero'", "valid bases", "mcts-co"]),
    ("unknown parameter", "agents: {x: {base: mcts-co, uct: 1}}\n", ["agents.x.uct", "allowed:", "uct_c"]),
    ("parameter of a baseline variant", "agents: {x: {base: heuristics, uct_c: 1}}\n",
     ["agents.x.uct_c", "takes no parameters"]),
    ("value out of range", "agents: {x: {base: mcts-co, uct_c: -1}}\n", ["agents.x.uct_c = -1", "[0.0, 100.0]"]),
    ("shadowing a built-in", "agents: {vanilla: {base: mcts-co}}\n",
     ["agents.vanilla", "base 'mcts-co'", "shadow the built-in agent 'vanilla'"]),
    ("shadowing through an alias", "agents: {mcts+SEP: {base: random}}\n", ["shadow the built-in agent 'mcts-co'"]),
    ("a plugin named like a built-in", "agents: {random: {plugin: 'm:f'}}\n", ["agents.random", "shadow"]),
    ("cycle of bases", "agents: {a: {base: b}, b: {base: c}, c: {base: a}}\n", ["cycle", "a -> b -> c -> a"]),
    ("self base", "agents: {a: {base: a}}\n", ["agents.a.base", "cycle (a -> a)"]),
    ("base and plugin", "agents: {a: {base: vanilla, plugin: 'm:f'}}\n", ["agents.a", "one of base, plugin or engine"]),
    ("new name without base", "agents: {a: {uct_c: 1}}\n", ["unknown agent 'a'", "needs base"]),
    ("bad name", "agents: {'a vs b': {base: vanilla}}\n", ["'a vs b'", "not a valid agent name"]),
    ("variant unknown in pairings", "agents: {a: {base: vanilla}}\n", None),
]


@pytest.mark.parametrize("text,needles", [b[1:] for b in BAD_VARIANTS[:-1]], ids=[b[0] for b in BAD_VARIANTS[:-1]])
def test_bad_variants_are_one_line_config_errors(text, needles, tmp_path, monkeypatch):
    with pytest.raises(ConfigError) as info:
        cfg(BASE + text)
    message = str(info.value)
    assert "\n" not in message and message.startswith("t.yaml: ")
    for needle in needles:
        assert needle in message, (needle, message)
    # and on the command line: one line on stderr, exit 2, nothing written
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(BASE + text)
    result = CliRunner().invoke(main, ["run", "t.yaml", "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "results").exists()


def test_an_undeclared_name_in_pairings_lists_the_declared_ones():
    with pytest.raises(ConfigError, match=r"pairings\[2\]: unknown agent 'co-narrow'; valid agents: .*co-wide"):
        cfg(VARIANTS.replace("[co-wide, vanilla]", "[co-narrow, vanilla]"))


def test_game_with_a_config_refuses_unknown_names_and_a_second_preset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v.yaml").write_text(VARIANTS.replace("name: t", "name: v"))
    for args, needle in (
        (["--p1", "co-narrow", "--p2", "vanilla"], "v.yaml: unknown agent 'co-narrow'; valid agents:"),
        (["--p1", "co-wide", "--p2", "vanilla", "--preset", "paper"], "--preset cannot be combined with --config"),
        (["--p1", "co-wide", "--p2", "vanilla", "--p1-param", "uct=1"],
         "Error: --p1-param: unknown key uct (value 1); allowed:"),  # the option, not v.yaml's agents.co-wide
    ):
        result = CliRunner().invoke(main, ["game", "--config", "v.yaml", *args])
        assert result.exit_code == 2 and needle in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# co_lookahead (the two-stage constraint, docs/beyond.md) and the named agent mcts-co2


def test_mcts_co2_is_mcts_co_with_the_lookahead_and_variants_set_it():
    c = cfg(BASE + "  - [mcts-co2, mcts-co]\n  - [e2, mcts-co]\nagents:\n"
                   "  e2: {base: mcts+E, co_lookahead: 1}\n  co2-off: {base: mcts-co2, co_lookahead: 0}\n")
    co, co2 = c.agent("mcts-co").mcts, c.agent("mcts-co2").mcts
    assert co2.co_lookahead == 1 and co.co_lookahead == 0
    assert dataclasses.replace(co2, co_lookahead=0) == co
    assert c.agent("e2").mcts == dataclasses.replace(c.agent("mcts+E").mcts, co_lookahead=1)
    assert c.agent("co2-off").mcts == co
    assert "mcts-co2 vs mcts-co" in [p.pairing for p in c.plan()]
    assert AgentSpec.from_dict(c.agent("mcts-co2").to_dict()) == c.agent("mcts-co2")


@pytest.mark.parametrize("value", [2, -1, True, 0.5, "yes"])
def test_a_bad_co_lookahead_is_a_one_line_config_error(value):
    with pytest.raises(ConfigError, match=r"agents\.x\.co_lookahead"):
        cfg(BASE + f"  - [x, vanilla]\nagents: {{x: {{base: mcts-co, co_lookahead: {json.dumps(value)}}}}}\n")


def test_co_lookahead_is_in_the_hash_only_when_on():
    """Existing identities are unchanged: the paper's agents' descriptions have no co_lookahead key
    (pinned hashes of a reproduction pairing and a robustness-study pairing, from before the key)."""
    from pathlib import Path

    from boopexp.agents.specs import AGENT_NAMES
    from boopexp.experiments.config import load_config

    for name in AGENT_NAMES:
        params = resolve_agent(name).to_dict().get("params", {})
        assert ("co_lookahead" in params) == (name == "mcts-co2")
    assert resolve_agent("mcts-co", overrides={"co_lookahead": 0}).to_dict() == resolve_agent("mcts-co").to_dict()
    old = {k: v for k, v in resolve_agent("mcts-co").to_dict().items()}
    assert AgentSpec.from_dict(old).mcts.co_lookahead == 0  # a record written before the key
    configs = Path(__file__).resolve().parents[1] / "configs"
    for config, pairing, digest in [("ablation", "heuristics vs mcts-co", "73d39c598ced1612"),
                                    ("robustness-d1", "heuristics vs mcts+E", "4ebf79805885a21d")]:
        plan = load_config(configs / f"{config}.yaml").plan()
        assert next(p.config_hash for p in plan if p.pairing == pairing) == digest
    on = cfg(BASE + "agents: {mcts-co: {co_lookahead: 1}}\n").plan()
    assert next(p.config_hash for p in on if p.pairing == "mcts-co vs vanilla") != \
        next(p.config_hash for p in cfg().plan() if p.pairing == "mcts-co vs vanilla")
