"""Sweeps and declarable device costs: the planned grid, records tagged with their point, the
sweep table and figure, and every bad sweep or cost block."""

from __future__ import annotations

import csv

import pytest
import yaml
from click.testing import CliRunner
from test_config import cfg

from boopexp.agents.budget import DEVICE_PROFILES, Budget
from boopexp.errors import ConfigError
from boopexp.experiments.config import parse_config
from boopexp.experiments.store import StoreReader, decode_record
from boopexp.games import registry as games
from boopexp.interfaces.cli import main
from boopexp.play import identity

HEAD = "name: s\nseed: 4\ngames_per_side: 2\n"
TWO_AXES = HEAD + """\
budget: {mode: device, seconds: 0.5}
agents: {co-wide: {base: mcts-co}}
tournament: {format: gauntlet, agent: co-wide, opponents: [vanilla, random]}
sweep:
  budget.seconds: [0.25, 1, 4]
  agents.co-wide.uct_c: [0.3, 1.0]
"""


def test_a_two_axis_sweep_plans_the_experiment_once_per_grid_point():
    c = cfg(TWO_AXES)
    plan = c.plan()
    assert len(plan) == 3 * 2 * 4  # points x pairing strings
    points = [dict(p.sweep) for p in plan[::4]]
    assert points == [{"budget.seconds": s, "agents.co-wide.uct_c": u} for s in (0.25, 1, 4) for u in (0.3, 1.0)]
    assert len({(p.config_hash, p.pairing) for p in plan}) == len(plan)  # no game planned twice
    for p in plan:
        point = dict(p.sweep)
        assert p.budget.seconds == point["budget.seconds"]
        wide = p.p1_spec if p.p1 == "co-wide" else p.p2_spec
        assert wide.mcts.uct_c == point["agents.co-wide.uct_c"]
        # each point's games are exactly those of the config with the point's values written in
        spec = {"seed": 4, "budget": p.budget.to_dict(), "preset": "code-0.6.2"}
        assert p.config_hash == identity.settings_hash(spec, p.p1_spec.to_dict(), p.p2_spec.to_dict())
    tasks = c.tasks(plan)
    assert len(tasks) == 24 * 2 and all(dict(t.sweep) == dict(p.sweep) for t, p in zip(tasks[::2], plan))
    # a point equals the unswept config with those values: its games are shared
    single = cfg(TWO_AXES.split("sweep:")[0].replace("seconds: 0.5", "seconds: 1")).plan()
    point = [p for p in plan if dict(p.sweep) == {"budget.seconds": 1, "agents.co-wide.uct_c": 0.3}]
    assert [(p.pairing, p.config_hash) for p in point] == [(p.pairing, p.config_hash) for p in single]


def test_the_resolved_config_keeps_the_axes_and_each_plan_item_its_point_and_budget():
    c = cfg(TWO_AXES)
    doc = yaml.safe_load(yaml.safe_dump(c.resolved()))
    assert doc["sweep"] == {"budget.seconds": [0.25, 1, 4], "agents.co-wide.uct_c": [0.3, 1.0]}
    first = doc["plan"][0]
    assert first["sweep"] == {"budget.seconds": 0.25, "agents.co-wide.uct_c": 0.3}
    assert first["budget"]["seconds"] == 0.25
    user = {k: v for k, v in doc.items() if k not in ("plan", "boopexp_version")}
    # (safe_dump sorts the axes, so the grid order may differ; the games do not)
    again = parse_config(user).plan()
    assert sorted((p.config_hash, p.pairing) for p in again) == sorted((p.config_hash, p.pairing) for p in c.plan())


def test_with_pairings_replans_every_point_of_a_sweep():
    """Re-planning a swept config re-plans its points (plan() reads the points, not the base):
    replacing only the base's pairings once let a tuner play the points' old pairings."""
    config = cfg(HEAD + "budget: {mode: device, seconds: 0.5}\npairings: [[vanilla, random]]\n"
                 "sweep: {budget.seconds: [0.25, 1]}\n")
    replanned = config.with_pairings((("co-wide", "heuristics"),), 3,
                                     agents={"co-wide": {"base": "mcts-co", "uct_c": 0.7}})
    assert replanned.pairings == (("co-wide", "heuristics"),) and replanned.games_per_side == 3
    got = [(p.pairing, p.games, dict(p.sweep)["budget.seconds"], p.budget.seconds) for p in replanned.plan()]
    assert got == [(pairing, 3, s, s) for s in (0.25, 1)
                   for pairing in ("co-wide vs heuristics", "heuristics vs co-wide")]
    assert all(p.p1_spec.mcts.uct_c == 0.7 for p in replanned.plan() if p.p1 == "co-wide")


def test_unswept_configs_plan_and_resolve_as_before():
    c = cfg()
    assert all(p.sweep == () for p in c.plan()) and "sweep" not in c.resolved()
    assert all("sweep" not in item and "budget" not in item for item in c.resolved()["plan"])


def test_device_costs_override_the_profile_and_solver_scale_multiplies_both_solver_costs():
    base = DEVICE_PROFILES["android-2023"]
    scaled = Budget.from_mapping({"mode": "device", "costs": {"solver_scale": 2}})
    assert scaled.device_profile().solver_move == 2 * base.solver_move
    assert scaled.device_profile().solver_call == 2 * base.solver_call
    explicit = Budget.from_mapping({"mode": "device", "costs": {"solver_move": 2 * base.solver_move,
                                                                  "solver_call": 2 * base.solver_call}})
    assert explicit == scaled and explicit.to_dict() == scaled.to_dict()
    assert scaled.to_dict()["costs"] == {"solver_call": 200.0, "solver_move": 14.8}
    # a cost equal to the profile's changes nothing, not even the hash
    same = Budget.from_mapping({"mode": "device", "costs": {"solver_move": base.solver_move}})
    assert same == Budget() and "costs" not in same.to_dict()
    # records carry the effective costs and give back the same budget
    assert Budget.from_mapping(scaled.to_dict()) == scaled
    mixed = Budget.from_mapping({"mode": "device", "costs": {"solver_move": 10.0, "solver_scale": 3}})
    assert mixed.device_profile().solver_move == 30.0 and mixed.device_profile().node == base.node


def test_cost_axes_are_sweepable():
    c = cfg(HEAD + "budget: {mode: device, seconds: 0.1, costs: {node: 70}}\npairings: [[mcts-co, vanilla]]\n"
                   "sweep: {budget.costs.solver_scale: [0.5, 1, 2]}\n")
    moves = [p.budget.device_profile().solver_move for p in c.plan()[::2]]
    assert moves == [3.7, 7.4, 14.8] and all(p.budget.device_profile().node == 70 for p in c.plan())



@pytest.mark.parametrize("game", ["connect-four", "pentago-swap", "colosseum"])
def test_solver_scale_scales_the_game_s_own_solver_costs(game):
    """Another game's calibrated costs, not boop.'s, are what ``solver_scale`` multiplies (a sweep of
    it gave every game boop.'s 3.7 and 14.8 device-us)."""
    own = games.get(game).device_costs()
    c = cfg(HEAD + f"game: {game}\n" + "budget: {mode: device, seconds: 0.1}\n"
            "pairings: [[mcts-co, vanilla]]\nsweep: {budget.costs.solver_scale: [0.5, 2]}\n")
    for point in c.plan()[::2]:
        scale = dict(point.sweep)["budget.costs.solver_scale"]
        played = point.budget.device_profile(own)
        assert played.solver_move == pytest.approx(scale * own["solver_move"])
        assert played.random_ply == own["random_ply"]


BAD = [
    ("not a mapping", "sweep: [budget.seconds]\n", ["sweep =", "non-empty mapping"]),
    ("unknown axis", "sweep: {seconds: [1, 2]}\n", ["unknown axis 'seconds'", "budget.KEY"]),
    ("budget key of another mode", "sweep: {budget.iterations: [1, 2]}\n",
     ["axis 'budget.iterations'", "mode 'device'", "budget.seconds"]),
    ("mode", "sweep: {budget.mode: [device, cpu]}\n", ["axis 'budget.mode'"]),
    ("unknown cost", "sweep: {budget.costs.solver: [1, 2]}\n", ["budget.costs.solver", "solver_scale"]),
    ("values not a list", "sweep: {budget.seconds: 1}\n", ["sweep.budget.seconds = 1", "non-empty list"]),
    ("empty values", "sweep: {budget.seconds: []}\n", ["sweep.budget.seconds = []"]),
    ("repeated value", "sweep: {budget.seconds: [1, 2, 1.0]}\n", ["sweep.budget.seconds[2] = 1.0", "repeats"]),
    ("bad value", "sweep: {budget.seconds: [1, -2]}\n", ["sweep point budget.seconds=-2", "budget.seconds = -2"]),
    ("bad scale", "sweep: {budget.costs.solver_scale: [1, 0]}\n",
     ["sweep point budget.costs.solver_scale=0", "positive"]),
    ("unknown agent", "sweep: {agents.alphazero.uct_c: [1, 2]}\n", ["axis 'agents.alphazero.uct_c'", "unknown agent"]),
    ("unknown parameter", "sweep: {agents.mcts-co.uct: [1, 2]}\n", ["sweep point agents.mcts-co.uct=1", "uct_c"]),
    ("an axis that changes no game", "sweep: {agents.mcts+P.uct_c: [1, 2]}\n",
     ["pairing 'mcts-co vs vanilla' is the same games", "agents.mcts+P.uct_c=1"]),
    ("sprt with a sweep", "sweep: {budget.seconds: [1, 2]}\nsprt: {elo0: 0, elo1: 30, alpha: 0.05, beta: 0.05}\n",
     ["sprt and sweep cannot be combined"]),
    ("costs outside device mode", "budget: {mode: iterations, iterations: 2, costs: {node: 1}}\n",
     ["unknown key budget.costs", "mode 'iterations'"]),
    ("unknown budget cost", "budget: {mode: device, costs: {cpu: 1}}\n",
     ["unknown key budget.costs.cpu", "solver_scale"]),
    ("negative cost", "budget: {mode: device, costs: {solver_move: -1}}\n",
     ["budget.costs.solver_move = -1", "positive"]),
    ("costs not a mapping", "budget: {mode: device, costs: 2}\n", ["budget.costs = 2", "mapping"]),
    ("a grid too large to play", "sweep: {budget.seconds: [" + ", ".join(str(i) for i in range(1, 1001))
     + "], agents.mcts-co.uct_c: [" + ", ".join(str(i / 100) for i in range(1, 1001)) + "]}\n",
     ["sweep: 1,000,000 points (1000 x 1000 values) is more than 10,000: 4,000,000 games", "split it"]),
]


def test_a_huge_sweep_is_refused_before_its_values_are_checked():
    """A 10^6-point grid was planned point by point before a word (a minute, dry run included), and
    a long axis took minutes to find its repeated values (each against all before it): the size is
    checked first, so this 20,001-value axis (with a repeat the old order would have found only after
    some 10^8 comparisons) is refused for its size."""
    values = ", ".join(str(i) for i in range(1, 20_001)) + ", 1"
    with pytest.raises(ConfigError) as info:
        cfg(HEAD + "budget: {mode: device, seconds: 0.1}\npairings: [[mcts-co, vanilla]]\n"
            f"sweep: {{budget.seconds: [{values}]}}\n")
    assert str(info.value) == ("t.yaml: sweep: 20,001 points (20001 values) is more than 10,000: 80,004 games; "
                               "split it into configs of at most 10,000 points each")


@pytest.mark.slow  # ~30-60 s: 10,000 configs parsed (tests/conftest.py starts this file early)
def test_a_sweep_of_the_largest_size_is_planned():
    c = cfg(HEAD + "budget: {mode: iterations, iterations: 2}\npairings: [[mcts-co, vanilla]]\n"
            "sweep: {budget.iterations: [" + ", ".join(map(str, range(1, 2001)))
            + "], agents.mcts-co.uct_c: [1, 2, 3, 4, 5]}\n")
    assert len(c.points) == 10_000 and len(c.plan()) == 20_000


@pytest.mark.parametrize("text,needles", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_sweeps_and_costs_are_one_line_config_errors(text, needles, tmp_path, monkeypatch):
    body = HEAD + ("" if text.startswith("budget") else "budget: {mode: device, seconds: 0.1}\n") + text
    body += "pairings: [[mcts-co, vanilla]]\n"
    with pytest.raises(ConfigError) as info:
        cfg(body)
    message = str(info.value)
    assert "\n" not in message and message.startswith("t.yaml: ")
    for needle in needles:
        assert needle in message, (needle, message)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(body)
    result = CliRunner().invoke(main, ["run", "t.yaml", "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "results").exists()


SMALL_SWEEP = (HEAD + "budget: {mode: iterations, iterations: 2}\n" "pairings: [[heuristics, random]]\n"
               "sweep: {budget.iterations: [1, 2]}\n")


def test_the_dry_run_of_a_sweep_shows_each_rows_point(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SMALL_SWEEP)
    result = CliRunner().invoke(main, ["run", "s.yaml", "--dry-run"])
    assert result.exit_code == 0, result.output
    rows = [line.split()[:4] for line in result.stdout.splitlines() if " vs " in line]
    assert [" ".join(r) for r in rows] == [
        "heuristics vs random [budget.iterations=1]", "random vs heuristics [budget.iterations=1]",
        "heuristics vs random [budget.iterations=2]", "random vs heuristics [budget.iterations=2]"]
    assert not (tmp_path / "results").exists()


def test_tables_of_a_sweep_print_the_sweep_table_not_empty_paper_tables(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SMALL_SWEEP)
    assert CliRunner().invoke(main, ["run", "s.yaml", "--jobs", "1", "--quiet"]).exit_code == 0
    result = CliRunner().invoke(main, ["tables", "results/s", "--out", "tables"])
    assert result.exit_code == 0, result.output
    assert "Table I" not in result.stdout and "Table II" not in result.stdout
    assert result.stdout.startswith("## Sweep: win rate of the first agent")
    assert "| heuristics vs random | 1 |" in result.stdout and "| heuristics vs random | 2 |" in result.stdout
    assert result.stderr == ""  # several settings per pairing is what a sweep is: no warning
    # issue 20: the empty Table I/II files were still written ("(no rows)"): only what has rows
    written = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert not [name for name in written if name.startswith(("table1", "table2"))], written
    assert {"sweep.md", "sweep.csv"} <= set(written)
    assert not any("no rows" in (tmp_path / "tables" / name).read_text() for name in written
                   if name.endswith((".md", ".csv")))


def test_a_swept_run_tags_its_records_and_tables_draw_the_sweep(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(
        HEAD + "budget: {mode: iterations, iterations: 2}\n"
        "agents: {h2: {base: heuristics}}\n"
        "pairings: [[heuristics, random], [h2, h2]]\n"
        "sweep: {budget.iterations: [1, 2, 4]}\n"
    )
    run = CliRunner().invoke(main, ["run", "s.yaml", "--jobs", "1", "--quiet"])
    assert run.exit_code == 0, run.output
    records = [decode_record(r) for r in StoreReader(tmp_path / "results/s").records().records]
    assert len(records) == 3 * (4 + 4)
    assert sorted({r["sweep"]["budget.iterations"] for r in records}) == [1, 2, 4]
    assert all(r["budget"]["iterations"] == r["sweep"]["budget.iterations"] for r in records)
    status = CliRunner().invoke(main, ["status", "results/s"])
    assert "heuristics vs random [budget.iterations=2]" in status.output and "24/24" in status.output
    tables = CliRunner().invoke(main, ["tables", "results/s", "--out", "tables"])
    assert tables.exit_code == 0, tables.output
    for name in ("sweep.csv", "sweep.md", "sweep.png", "sweep.svg"):
        assert (tmp_path / "tables" / name).is_file(), name
    rows = list(csv.DictReader(open(tmp_path / "tables/sweep.csv")))
    assert [(r["pairing"], r["budget.iterations"]) for r in rows] == [
        ("h2 vs h2", "1"), ("h2 vs h2", "2"), ("h2 vs h2", "4"),
        ("heuristics vs random", "1"), ("heuristics vs random", "2"), ("heuristics vs random", "4"),
    ]
    for r in rows:
        assert int(r["games"]) == 4 and int(r["wins"]) + int(r["losses"]) + int(r["no_winner"]) == 4
        if int(r["wins"]) + int(r["losses"]):
            assert float(r["ci_low"]) <= float(r["win_rate"]) <= float(r["ci_high"])
