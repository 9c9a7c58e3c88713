"""Configs: the shipped YAML files, the planned games, the settings hashes, every bad-config class."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from boopexp.agents.budget import Budget
from boopexp.agents.specs import resolve_agent
from boopexp.errors import ConfigError
from boopexp.experiments.config import ExperimentConfig, load_config, load_yaml, parse_config, plan_entries
from boopexp.interfaces.cli import main
from boopexp.play import identity

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

BASE = """\
name: t
seed: 5
games_per_side: 3
budget: {mode: iterations, iterations: 2}
pairings:
  - [mcts-co, vanilla]
  - [heuristics, heuristics]
"""


def cfg(text: str = BASE, tmp_path: Path | None = None) -> ExperimentConfig:
    return parse_config(load_yaml(text, "t.yaml"), "t.yaml")


# --------------------------------------------------------------------------------------------
# shipped configs


def test_ablation_config_is_table_one():
    c = load_config(CONFIGS / "ablation.yaml")
    assert c.name == "ablation" and c.games_per_side == 50 and c.settings.preset == "code-0.6.2"
    assert c.settings.budget == Budget(mode="device", seconds=1.0, profile="android-2023")
    assert c.params == {"k": 21, "m": 5, "d": 0.9}
    opponents = ["vanilla", "heuristics", "mcts+S", "mcts+E", "mcts+P", "mcts+SE", "mcts+SP", "mcts+EP"]
    assert c.pairings == tuple(("mcts-co", o) for o in opponents)
    plan = c.plan()
    assert [p.pairing for p in plan][:4] == [
        "mcts-co vs vanilla", "vanilla vs mcts-co", "mcts-co vs heuristics", "heuristics vs mcts-co"]
    assert len(plan) == 16 and all(p.games == 50 for p in plan)
    assert len(c.tasks(plan)) == 800
    full = c.agent("mcts-co").mcts
    assert (full.co_playout_plies, full.playout_depth, full.preselect_m, full.discount) == (21, 21, 5, 0.9)


def test_mirror_config_is_table_two():
    c = load_config(CONFIGS / "mirror.yaml")
    assert c.name == "mirror"
    agents = ["vanilla", "mcts-co", "heuristics", "mcts+S", "mcts+E", "mcts+P"]
    assert [p.pairing for p in c.plan()] == [f"{a} vs {a}" for a in agents]
    assert all(p.games == 100 for p in c.plan())


def test_paper_config_uses_k20_and_the_paper_preset():
    c = load_config(CONFIGS / "ablation-paper.yaml")
    assert c.name == "ablation-paper" and c.settings.preset == "paper" and c.params["k"] == 20
    assert c.agent("mcts-co").mcts.co_playout_plies == 20
    assert c.agent("mcts-co").mcts.discount_offset == 0
    ablation = load_config(CONFIGS / "ablation.yaml")
    assert {p.config_hash for p in c.plan()}.isdisjoint(p.config_hash for p in ablation.plan())


def test_smoke_config_is_small_and_exercises_mcts_and_baselines():
    c = load_config(CONFIGS / "smoke.yaml")
    tasks = c.tasks(c.plan())
    assert c.name == "smoke" and len(tasks) <= 24
    kinds = {t.p1.kind for t in tasks} | {t.p2.kind for t in tasks}
    assert kinds == {"mcts", "heuristics", "random"}


def test_shipped_configs_say_where_numbers_come_from():
    text = (CONFIGS / "ablation.yaml").read_text()
    for source in ("AGENTS.md §C.4", "EXPERIMENTS.md §6", "EXPERIMENTS.md §1"):
        assert source in text


# --------------------------------------------------------------------------------------------
# the plan


def test_plan_plays_both_sides_and_doubles_mirrors():
    plan = cfg().plan()
    assert [(p.pairing, p.games) for p in plan] == [
        ("mcts-co vs vanilla", 3), ("vanilla vs mcts-co", 3), ("heuristics vs heuristics", 6)]
    tasks = cfg().tasks(plan)
    assert [(t.pairing, t.game_index) for t in tasks][:4] == [
        ("mcts-co vs vanilla", 0), ("mcts-co vs vanilla", 1), ("mcts-co vs vanilla", 2), ("vanilla vs mcts-co", 0)]
    assert len(tasks) == 12
    assert tasks[0].p1.name == "mcts-co" and tasks[3].p1.name == "vanilla"


def test_hashes_and_seeds_follow_identity():
    c = cfg()
    for p in c.plan():
        expected = identity.settings_hash({"seed": 5, "budget": {"mode": "iterations", "iterations": 2},
                                           "preset": "code-0.6.2"}, p.p1_spec.to_dict(), p.p2_spec.to_dict())
        assert p.config_hash == expected
    for t in c.tasks(c.plan()):
        assert t.seed == identity.game_seed(t.config_hash, t.game_index)
        assert t.experiment == "t" and t.budget == c.settings.budget and t.preset == "code-0.6.2"


def test_the_name_is_not_part_of_the_hash_but_the_seed_is():
    a, b = cfg(), cfg(BASE.replace("name: t", "name: other"))
    assert [p.config_hash for p in a.plan()] == [p.config_hash for p in b.plan()]
    c = cfg(BASE.replace("seed: 5", "seed: 6"))
    assert {p.config_hash for p in a.plan()}.isdisjoint(p.config_hash for p in c.plan())


def test_games_per_side_override_keeps_the_first_games():
    c = cfg()
    short = c.with_games_per_side(1)
    assert [p.games for p in short.plan()] == [1, 1, 2]
    assert short.tasks(short.plan())[0] == c.tasks(c.plan())[0]
    with pytest.raises(ConfigError, match="games_per_side = 0"):
        c.with_games_per_side(0)


def test_k_default_depends_on_the_preset_and_is_recorded():
    code = cfg(BASE + "params: {m: 4}\n")
    paper = cfg(BASE + "preset: paper\n")
    assert code.params == {"k": 21, "m": 4, "d": 0.9}
    assert paper.params == {"k": 20, "m": 5, "d": 0.9}
    assert paper.agent("mcts+P").mcts.playout_depth == 20
    assert paper.resolved()["params"]["k"] == 20


def test_agent_overrides_change_only_their_agents_and_aliases_resolve():
    base = {p.pairing: p.config_hash for p in cfg().plan()}
    tuned = cfg(BASE + "agents:\n  mcts+SEP: {uct_c: 0.5}\n")
    assert tuned.agents == {"mcts-co": {"uct_c": 0.5}}
    assert tuned.agent("mcts-co").mcts.uct_c == 0.5
    new = {p.pairing: p.config_hash for p in tuned.plan()}
    assert new["mcts-co vs vanilla"] != base["mcts-co vs vanilla"]
    assert new["heuristics vs heuristics"] == base["heuristics vs heuristics"]
    alias = cfg(BASE.replace("[mcts-co, vanilla]", "[mcts+SEP, vanilla]"))
    assert alias.pairings[0] == ("mcts-co", "vanilla")


def test_mirror_plan_replaces_or_adds_the_mirror_pairing():
    c = cfg()
    plan = c.mirror_plan("heuristics", 4)
    assert [(p.pairing, p.games) for p in plan][-1] == ("heuristics vs heuristics", 4)
    assert len(plan) == 3
    added = c.mirror_plan("mcts+P", 2)
    assert added[-1].pairing == "mcts+P vs mcts+P" and len(added) == 4
    # same settings as a config that lists the mirror: the games are shared
    listed = cfg(BASE + "  - [mcts+P, mcts+P]\n")
    assert added[-1].config_hash == listed.plan()[-1].config_hash


def test_resolved_document_round_trips_through_yaml():
    c = cfg(BASE + "agents: {vanilla: {uct_c: 0.4}}\n")
    doc = yaml.safe_load(yaml.safe_dump(c.resolved()))
    assert doc["budget"] == {"mode": "iterations", "iterations": 2}
    assert doc["agents"] == {"vanilla": {"uct_c": 0.4}}
    assert [e.pairing for e in plan_entries(doc)] == [p.pairing for p in c.plan()]
    assert [e.config_hash for e in plan_entries(doc)] == [p.config_hash for p in c.plan()]
    assert doc["plan"][0]["p1_spec"] == resolve_agent("mcts-co").to_dict()
    # the user-facing keys of the resolved document are themselves a valid config
    user = {k: v for k, v in doc.items() if k not in ("plan", "boopexp_version")}
    assert parse_config(user).plan() == c.plan()


def test_optional_keys_default_to_the_paper_setting():
    c = cfg("name: t\nseed: 1\ngames_per_side: 1\npairings: [[vanilla, random]]\n")
    assert c.settings.budget == Budget(mode="device", seconds=1.0, profile="android-2023")
    assert c.settings.preset == "code-0.6.2" and c.params == {"k": 21, "m": 5, "d": 0.9} and c.agents == {}


# --------------------------------------------------------------------------------------------
# every class of bad config: one line, naming the key, the value and what is allowed

BAD = [
    # unknown keys
    ("top-level key", BASE + "bugdet: 3\n", ["t.yaml", "bugdet", "3", "allowed:", "budget"]),
    ("budget key", BASE.replace("iterations: 2}", "iterations: 2, secs: 1}"),
     ["budget.secs", "1", "allowed: mode, iterations"]),
    ("budget key of another mode", BASE.replace("iterations: 2}", "iterations: 2, seconds: 1}"),
     ["budget.seconds", "'iterations'", "allowed: mode, iterations"]),
    ("agent param", BASE + "agents: {mcts-co: {uct: 0.3}}\n", ["agents.mcts-co.uct", "0.3", "uct_c"]),
    ("baseline param", BASE + "agents: {heuristics: {uct_c: 0.3}}\n",
     ["agents.heuristics.uct_c", "takes no parameters"]),
    ("params key", BASE + "params: {kk: 3}\n", ["params.kk", "3", "allowed: k, m, d"]),
    # wrong types
    ("seed type", BASE.replace("seed: 5", "seed: five"), ["seed", "'five'", "must be an integer from 0 to 2^64-1"]),
    ("games type", BASE.replace("games_per_side: 3", "games_per_side: 2.5"),
     ["games_per_side", "2.5", "positive integer"]),
    ("budget type", BASE.replace("budget: {mode: iterations, iterations: 2}", "budget: fast"),
     ["budget", "'fast'", "mapping"]),
    ("seconds type", BASE.replace("{mode: iterations, iterations: 2}", "{mode: wall, seconds: soon}"),
     ["budget.seconds", "'soon'", "positive number"]),
    ("iterations type", BASE.replace("iterations: 2}", "iterations: 2.5}"),
     ["budget.iterations", "2.5", "positive integer"]),
    ("param type", BASE + "params: {k: many}\n", ["params.k", "'many'", "integer"]),
    ("override type", BASE + "agents: {mcts-co: {uct_c: high}}\n",
     ["agents.mcts-co.uct_c = 'high'", "number in [0.0, 100.0]"]),
    ("agents type", BASE + "agents: [mcts-co]\n", ["agents", "['mcts-co']", "mapping"]),
    ("name type", BASE.replace("name: t", "name: [a]"), ["name", "['a']", "letters"]),
    ("preset", BASE + "preset: fancy\n", ["preset", "'fancy'", "code-0.6.2, paper"]),
    ("mode", BASE.replace("mode: iterations", "mode: sundial"), ["budget.mode", "'sundial'", "device, cpu, wall"]),
    ("profile", BASE.replace("{mode: iterations, iterations: 2}", "{mode: device, profile: pc}"),
     ["budget.profile", "'pc'", "android-2023"]),
    # unknown agents
    ("agent in pairings", BASE.replace("[mcts-co, vanilla]", "[mcts-co, alphazero]"),
     ["pairings[0]", "'alphazero'", "valid agents", "vanilla"]),
    ("agent in agents", BASE + "agents: {alphazero: {uct_c: 1}}\n", ["agents", "'alphazero'", "valid agents"]),
    # negative / zero budgets
    ("zero seconds", BASE.replace("{mode: iterations, iterations: 2}", "{mode: device, seconds: 0}"),
     ["budget.seconds", "0", "positive"]),
    ("negative seconds", BASE.replace("{mode: iterations, iterations: 2}", "{mode: cpu, seconds: -1.5}"),
     ["budget.seconds", "-1.5", "positive"]),
    ("infinite seconds", BASE.replace("{mode: iterations, iterations: 2}", "{mode: device, seconds: .inf}"),
     ["budget.seconds", "inf", "positive"]),
    ("infinite throttle", BASE.replace("{mode: iterations, iterations: 2}", "{mode: cpu, throttle: .inf}"),
     ["budget.throttle", "inf", "positive"]),
    ("zero iterations", BASE.replace("iterations: 2}", "iterations: 0}"), ["budget.iterations", "0", "positive"]),
    ("negative throttle", BASE.replace("{mode: iterations, iterations: 2}", "{mode: cpu, throttle: -2}"),
     ["budget.throttle", "-2", "positive"]),
    ("zero games", BASE.replace("games_per_side: 3", "games_per_side: 0"), ["games_per_side", "0", "positive"]),
    ("param range", BASE + "params: {d: 1.5}\n", ["params.d", "1.5", "[0.0, 1.0]"]),
    # pairings
    ("empty pairings", BASE.split("pairings:")[0] + "pairings: []\n", ["pairings", "[]", "non-empty list"]),
    ("pairings not a list", BASE.split("pairings:")[0] + "pairings: mcts-co vs vanilla\n",
     ["pairings", "'mcts-co vs vanilla'", "non-empty list"]),
    ("pairing of one", BASE.replace("[mcts-co, vanilla]", "[mcts-co]"),
     ["pairings[0]", "['mcts-co']", "two agent names"]),
    ("pairing of three", BASE.replace("[mcts-co, vanilla]", "[mcts-co, vanilla, random]"),
     ["pairings[0]", "two agent names"]),
    ("pairing string", BASE.replace("[mcts-co, vanilla]", "mcts-co vs vanilla"),
     ["pairings[0]", "'mcts-co vs vanilla'", "two agent names"]),
    ("pairing of numbers", BASE.replace("[mcts-co, vanilla]", "[1, 2]"), ["pairings[0]", "[1, 2]", "two agent names"]),
    ("repeated pairing", BASE + "  - [vanilla, mcts-co]\n", ["pairings[2]", "repeats pairings[0]"]),
    # missing required keys, document shape
    ("missing seed", BASE.replace("seed: 5\n", ""), ["missing required key seed;", "name, seed, games_per_side"]),
    ("missing pairings", BASE.split("pairings:")[0], ["missing required key pairings (or tournament)"]),
    ("empty file", "", ["t.yaml", "empty", "required keys"]),
    ("not a mapping", "- a\n- b\n", ["t.yaml", "mapping", "['a', 'b']"]),
    # malformed YAML
    ("malformed YAML", BASE.replace("games_per_side: 3", "games_per_side: [3"), ["t.yaml line", "malformed YAML"]),
    ("duplicate key", BASE + "seed: 6\n", ["t.yaml line 8", "duplicate key 'seed'"]),
]


@pytest.mark.parametrize("text,needles", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_configs_raise_one_clear_line(text, needles):
    with pytest.raises(ConfigError) as info:
        cfg(text)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("t.yaml")
    for needle in needles:
        assert needle in message, (needle, message)


def test_malformed_yaml_names_file_line_and_column(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nseed: 1\npairings: [[a, b]\n")
    with pytest.raises(ConfigError, match=r"broken.yaml line \d+, column \d+: malformed YAML"):
        load_config(path)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file .*nope.yaml not found"):
        load_config(tmp_path / "nope.yaml")


def test_long_values_are_shortened_to_keep_one_line():
    with pytest.raises(ConfigError) as info:
        cfg(BASE + "bogus: " + "x" * 500 + "\n")
    assert len(str(info.value)) < 300


# --------------------------------------------------------------------------------------------
# issue 20: YAML nested deeper than the parser's recursion


def _deep_yaml(depth: int) -> str:
    return "name: deep\nseed: " + "[" * depth + "]" * depth + "\n"


@pytest.mark.parametrize("command", [["run"], ["game", "--p1", "vanilla", "--p2", "random", "--config"]],
                         ids=["run", "game"])
def test_deeply_nested_yaml_is_one_line_naming_the_file(tmp_path, command):
    """PyYAML composes nodes recursively: 3,000 brackets gave a 2,993-line RecursionError."""
    path = tmp_path / "deep.yaml"
    path.write_text(_deep_yaml(3000))
    result = CliRunner().invoke(main, [*command, str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stderr.splitlines() == [
        f"Error: {path}: malformed YAML: nested too deeply to read (a boopexp config is a few levels deep)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.yaml"]


def test_nesting_within_the_parser_s_reach_is_still_read():
    value = load_yaml(_deep_yaml(100), "t.yaml")["seed"]
    for _ in range(99):
        (value,) = value
    assert value == []


@pytest.mark.parametrize("value, problem", [
    ("[" * 3000 + "]" * 3000, "malformed YAML: nested too deeply to read"),
    ("[1", "line 1, column 3: malformed YAML: expected ',' or ']', but got '<stream end>'"),
], ids=["deep", "unclosed"])
def test_a_bad_param_value_on_the_command_line_is_one_line(value, problem):
    """--p1-param values are YAML too, read by the same reader (a traceback before)."""
    result = CliRunner().invoke(main, ["game", "--p1", "vanilla", "--p2", "random", "--p1-param", f"k={value}"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: --p1-param k") and problem in line, line


def test_a_stored_config_is_read_by_libyaml_exactly_as_by_the_python_parser():
    """load_yaml(stored=True) parses a store's config.yaml with libyaml (speed: serve lists every
    store) and must give the very document the Python parser gives, on every committed store."""
    import glob

    import yaml

    from boopexp.experiments import config as cfg

    if yaml.__with_libyaml__:
        assert issubclass(cfg._StoredLoader, yaml.CSafeLoader)
    root = Path(__file__).resolve().parents[1] / "results"
    files = sorted(glob.glob(str(root / "**" / "config*.yaml"), recursive=True))
    assert len(files) > 50
    for name in files:
        text = Path(name).read_text(encoding="utf-8")
        fast = cfg.load_yaml(text, name, stored=True)
        assert repr(fast) == repr(yaml.load(text, Loader=cfg._StrictLoader)), name  # noqa: S506
    # a duplicate key is still refused, with the Python parser's message
    with pytest.raises(cfg.ConfigError, match="duplicate key 'a'"):
        cfg.load_yaml("a: 1\na: 2\n", "x.yaml", stored=True)
