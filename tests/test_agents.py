"""The agent registry, presets and configurations (AGENTS.md §C), and whole games between the
agents: determinism, legality (replayed with Position.play in REAL) and the device budget."""

from __future__ import annotations

import dataclasses
import re
import statistics
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from mcts_helpers import Kit, cfg_of, code, hand_root, pos, ref_playout, replay_record, strip_host_timing

from boopexp.agents.budget import Budget, device_costs
from boopexp.agents.specs import (
    AGENT_NAMES,
    ALIASES,
    BEYOND_NAMES,
    CLASSICAL,
    LATE_PARAMETERS,
    LOG_LABELS,
    MCTS_PARAMETERS,
    MCTS_PARAMS,
    PAPER_PARAMS,
    PRESETS,
    MCTSConfig,
    resolve_agent,
)
from boopexp.engine import mcts
from boopexp.engine import params as engine_params
from boopexp.engine.rng import new_rng_state
from boopexp.errors import ConfigError, StoreError
from boopexp.game.position import Move, Position
from boopexp.interfaces.cli import main
from boopexp.play import contract, match
from boopexp.play.contract import MAX_PLIES, GameTask

PAPER_NAMES = ("vanilla", "mcts+S", "mcts+E", "mcts+P", "mcts+SE", "mcts+SP", "mcts+EP", "mcts-co")
BASELINES = ("heuristics", "random")

#: AGENTS.md §C.1 under code-0.6.2: m, CO expansion, first_n_strategy, playout_depth
C1_TABLE = {
    "vanilla": (0, False, 0, 0),
    "mcts+S": (5, False, 0, 0),
    "mcts+E": (0, True, 0, 0),
    "mcts+P": (0, False, 21, 21),
    "mcts+SE": (5, True, 0, 0),
    "mcts+SP": (5, False, 21, 21),
    "mcts+EP": (0, True, 21, 21),
    "mcts-co": (5, True, 21, 21),
}
TELEMETRY_KEYS = {"iterations", "solver_calls", "equivalent_moves", "tree_nodes", "device_seconds",
                  "host_cpu_seconds", "nodes_created", "playout_plies", "solver_moves"}
DEVICE_SMALL = Budget(mode="device", seconds=0.05)
ITER_SMALL = Budget(mode="iterations", iterations=3)


# ------------------------------------------------------------------------------------------
# registry


def test_registry_has_exactly_the_paper_names_and_those_beyond():
    assert set(AGENT_NAMES) == set(PAPER_NAMES) | {"mcts-co2", "mcts-solver", "mcts-prior"} | set(BASELINES) \
        | {"alphabeta"}
    assert CLASSICAL == ("alphabeta",)
    assert len(AGENT_NAMES) == 14
    assert ALIASES == {"mcts+SEP": "mcts-co"}
    assert set(PRESETS) == {"code-0.6.2", "paper"}


@pytest.mark.parametrize("name", PAPER_NAMES)
def test_c1_table_under_code_preset(name):
    spec = resolve_agent(name)
    assert spec.name == name and spec.kind == "mcts"
    c = spec.mcts
    assert (c.preselect_m, c.co_expansion, c.co_playout_plies, c.playout_depth) == C1_TABLE[name]
    # the other parameters are the defaults of AGENTS.md §B.1
    assert (c.early_mask_plies, c.discount, c.discount_offset, c.uct_c, c.fix_a9) == (6, 0.9, 1, 0.3, False)
    assert resolve_agent(name, preset="code-0.6.2") == spec


@pytest.mark.parametrize("name", PAPER_NAMES)
def test_c1_table_under_paper_preset(name):
    """``paper``: k = 20 for the P agents' playouts and the exponent d**i (offset 0)."""
    m, exp, first_n, depth = C1_TABLE[name]
    c = resolve_agent(name, preset="paper").mcts
    assert (c.preselect_m, c.co_expansion) == (m, exp)
    assert (c.co_playout_plies, c.playout_depth) == ((20, 20) if first_n else (0, 0))
    assert c.discount_offset == 0
    assert c.fix_a9 is False


def test_alias_mcts_sep_is_mcts_co():
    for preset in PRESETS:
        assert resolve_agent("mcts+SEP", preset=preset) == resolve_agent("mcts-co", preset=preset)
    assert resolve_agent("mcts+SEP").name == "mcts-co"


@pytest.mark.parametrize("name", BASELINES)
def test_baselines(name):
    spec = resolve_agent(name)
    assert spec.kind == name and spec.mcts is None
    assert spec.to_dict() == {"name": name, "kind": name}


@pytest.mark.parametrize("name", PAPER_NAMES)
def test_log_label_derived_from_parameters(name):
    """AGENTS.md §C.1 notes: ``Full`` when m > 0, CO expansion and first_n > 0, else ``MCTS``
    followed by `` + Selection``, `` + Expansion``, `` + Playout`` as applicable."""
    c = resolve_agent(name).mcts
    if c.preselect_m > 0 and c.co_expansion and c.co_playout_plies > 0:
        label = "Full"
    else:
        label = "MCTS" + " + Selection" * (c.preselect_m > 0) + " + Expansion" * c.co_expansion \
            + " + Playout" * (c.co_playout_plies > 0)
    assert LOG_LABELS[name] == label


OVERRIDES = {
    "preselect_m": 7,
    "co_expansion": False,
    "co_playout_plies": 3,
    "playout_depth": 9,
    "early_mask_plies": 4,
    "discount": 0.5,
    "discount_offset": 0,
    "uct_c": 1.4,
    "fix_a9": True,
    "co_lookahead": 1,
    "solver": True,
    "prior": 1,
    "prior_c": 2.0,
    "prior_temp": 0.5,
    "uct_rule": 1,
    "playout_value": 1,
    "reward_win": 100.0,
    "reward_loss": -100.0,
    "reward_draw": 0.5,
    "final_rule": 1,
    "reuse_tree": True,
    "textbook_backup": True,
    "terminal_check": 2,
}


def test_override_table_covers_every_parameter():
    assert set(OVERRIDES) == set(MCTS_PARAMETERS) == {f.name for f in dataclasses.fields(MCTSConfig)}


@pytest.mark.parametrize("key", sorted(OVERRIDES))
def test_any_parameter_can_be_overridden_by_name(key):
    base = resolve_agent("mcts-co").mcts
    spec = resolve_agent("mcts-co", overrides={key: OVERRIDES[key]})
    assert getattr(spec.mcts, key) == OVERRIDES[key] != getattr(base, key)
    # nothing else moves
    for other in MCTS_PARAMETERS:
        if other != key:
            assert getattr(spec.mcts, other) == getattr(base, other)
    assert spec.to_dict()["params"][key] == OVERRIDES[key]


def test_paper_level_params_k_m_d():
    c = resolve_agent("mcts-co", params={"k": 7, "m": 3, "d": 0.5}).mcts
    assert (c.co_playout_plies, c.playout_depth, c.preselect_m, c.discount) == (7, 7, 3, 0.5)
    v = resolve_agent("vanilla", params={"k": 7, "m": 3, "d": 0.5}).mcts
    assert (v.co_playout_plies, v.playout_depth, v.preselect_m, v.discount) == (0, 0, 0, 0.5)


@pytest.mark.parametrize("bad", ["mcts", "MCTS-CO", "mcts+PS", "heuristic", "", "vanilla "])
def test_unknown_agent_lists_valid_names(bad):
    with pytest.raises(ConfigError) as err:
        resolve_agent(bad)
    msg = str(err.value)
    assert repr(bad) in msg
    for name in AGENT_NAMES + tuple(ALIASES):
        assert name in msg


def test_unknown_parameter_lists_valid_parameters():
    with pytest.raises(ConfigError) as err:
        resolve_agent("vanilla", overrides={"playout_len": 3})
    msg = str(err.value)
    assert "playout_len" in msg
    for name in MCTS_PARAMETERS:
        assert name in msg


def test_baselines_take_no_parameters():
    with pytest.raises(ConfigError, match="heuristics"):
        resolve_agent("heuristics", overrides={"uct_c": 1.0})


def test_unknown_preset_and_params_key_list_valid_names():
    with pytest.raises(ConfigError) as err:
        resolve_agent("vanilla", preset="paper-2024")
    assert "code-0.6.2" in str(err.value) and "paper" in str(err.value)
    with pytest.raises(ConfigError) as err:
        resolve_agent("vanilla", params={"K": 3})
    assert all(k in str(err.value) for k in ("k", "m", "d"))


@pytest.mark.parametrize(
    "key, value",
    [
        ("preselect_m", -1), ("preselect_m", 73), ("preselect_m", 2.5), ("co_expansion", 1),
        ("co_playout_plies", -3), ("playout_depth", -1), ("early_mask_plies", 37), ("discount", 1.5),
        ("discount", -0.1), ("discount_offset", 2), ("uct_c", -0.3), ("fix_a9", "yes"), ("discount", "0.9"),
    ],
)
def test_out_of_range_or_mistyped_value_is_rejected(key, value):
    with pytest.raises(ConfigError) as err:
        resolve_agent("mcts-co", overrides={key: value})
    msg = str(err.value)
    assert key in msg and repr(value) in msg and "mcts-co" in msg


@pytest.mark.parametrize("key, value", [("k", 0), ("m", 0), ("d", 2.0)])
def test_out_of_range_paper_params(key, value):
    with pytest.raises(ConfigError, match=f"params.{key}"):
        resolve_agent("mcts-co", params={key: value})


def test_config_is_frozen():
    c = resolve_agent("vanilla").mcts
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.preselect_m = 5  # type: ignore[misc]


# ------------------------------------------------------------------------------------------
# the parameter table: one row per parameter drives the checks, descriptions and the kernels


@pytest.mark.parametrize("row", list(MCTS_PARAMS.values()) + list(PAPER_PARAMS.values()), ids=lambda r: r.name)
def test_the_table_drives_validation(row):
    """Each row's type and range are what the checks refuse, in one line naming the key and the
    allowed values; its ends, its default and its tuning range are accepted."""
    paper = row.name in PAPER_PARAMS

    def build(value):
        where = "params" if paper else "overrides"
        return resolve_agent("mcts-co", **{where: {row.name: value}})

    key = f"params.{row.name}" if paper else row.name
    if row.kind is bool:
        assert row.low is row.high is row.tune is None and row.allowed == "true or false"
        refused = [(1, "must be true or false"), ("yes", "must be true or false")]
    else:
        assert row.low <= row.tune.low < row.tune.high <= row.high and (not row.tune.log or row.tune.low > 0)
        for value in (row.low, row.high, row.tune.low, row.tune.high):
            build(value)
        step = 1 if row.kind is int else 0.5
        # one message for a wrong type and a value out of range (boopexp.schema's "a number in a range")
        words = f"must be {'an integer' if row.kind is int else 'a number'} in [{row.low}, {row.high}]"
        assert words == f"must be {row.allowed}"
        refused = [(row.low - step, words), (row.high + step, words), ("1", words), (True, words)]
        if row.kind is int:
            refused.append((row.low + 0.5, words))
        else:
            refused += [(float("nan"), words), (float("inf"), words)]
    if row.default is not None:
        assert isinstance(row.default, row.kind)
        build(row.default)
    for value, words in refused:
        with pytest.raises(ConfigError) as err:
            build(value)
        assert str(err.value).endswith(f"{key} = {value!r} {words}")
    assert row.help and "\n" not in row.help and "|" not in row.help


def test_a_bad_range_through_the_cli_is_one_line_naming_the_key_and_the_range():
    result = CliRunner().invoke(main, ["game", "--p1", "mcts-co", "--p2", "random", "--p1-param", "uct_c=-1"])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "Error: --p1-param: uct_c = -1 must be a number in [0.0, 100.0]"]


def test_the_table_and_the_kernel_vector_agree():
    """The agents' table, MCTSConfig's fields and the kernels' layout (engine/params.py) name the
    same parameters in the same order; P_<NAME> is the index of each, and params_vector puts each
    value there (booleans as 0.0 / 1.0), as the hand-written builder did."""
    names = tuple(MCTS_PARAMS)
    assert names == MCTS_PARAMETERS == engine_params.PARAM_NAMES
    assert names == tuple(f.name for f in dataclasses.fields(MCTSConfig))
    constants = {k: v for k, v in vars(engine_params).items() if k.startswith("P_")}
    assert constants == {f"P_{name.upper()}": i for i, name in enumerate(names)}
    assert engine_params.N_PARAMS == len(names)
    for row in MCTS_PARAMS.values():
        assert row.kind is {"int": int, "float": float, "bool": bool}[_field_type(row.name)]
        assert getattr(MCTSConfig(), row.name) == row.default
    for agent in PAPER_NAMES + BEYOND_NAMES:
        for preset in PRESETS:
            cfg = resolve_agent(agent, preset=preset).mcts
            vector = mcts.params_vector(cfg)
            assert vector.dtype == np.float64 and vector.shape == (len(names),)
            assert list(vector) == [float(getattr(cfg, name)) for name in names]
    every = mcts.params_vector(resolve_agent("mcts-co", overrides=OVERRIDES).mcts)
    assert list(every) == [7.0, 0.0, 3.0, 9.0, 4.0, 0.5, 0.0, 1.4, 1.0, 1.0, 1.0, 1.0, 2.0, 0.5,
                           1.0, 1.0, 100.0, -100.0, 0.5, 1.0, 1.0, 1.0, 2.0]
    assert list(mcts.params_vector(MCTSConfig())) == [5.0, 1.0, 21.0, 21.0, 6.0, 0.9, 1.0, 0.3, 0.0, 0.0, 0.0, 0.0,
                                                      0.3, 0.1, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0]


def _field_type(name):
    return next(str(f.type) for f in dataclasses.fields(MCTSConfig) if f.name == name)


def _cell(value):
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return "the preset's" if value is None else f"`{value}`"


def parameter_table_rows(table):
    """docs/agents.md's Markdown table of a parameter table (MCTS_PARAMS or PAPER_PARAMS)."""
    paper = table is PAPER_PARAMS
    head = ["key" if paper else "parameter", "type", "default", "allowed", "tuner's range"]
    head += ["sets", "what it does"] if paper else ["what it does"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table.values():
        allowed = "`true`, `false`" if row.kind is bool else f"[{row.low}, {row.high}]"
        tune = "—" if row.tune is None else f"[{row.tune.low}, {row.tune.high}]" + (" log" if row.tune.log else "")
        cells = [f"`{row.name}`", row.kind.__name__, _cell(row.default), allowed, tune]
        cells += [", ".join(f"`{f}`" for f in row.sets)] if paper else []
        rows.append("| " + " | ".join(cells + [row.help]) + " |")
    return rows


@pytest.mark.parametrize("table", ["MCTS_PARAMS", "PAPER_PARAMS", "ALPHABETA_PARAMS"])
def test_docs_agents_md_shows_each_parameter_table(table):
    """docs/agents.md's tables are the parameter tables (a changed row fails here: paste the lines)."""
    from boopexp.agents.specs import ALPHABETA_PARAMS

    rows = parameter_table_rows({"MCTS_PARAMS": MCTS_PARAMS, "PAPER_PARAMS": PAPER_PARAMS,
                                 "ALPHABETA_PARAMS": ALPHABETA_PARAMS}[table])
    doc = (Path(__file__).resolve().parent.parent / "docs" / "agents.md").read_text(encoding="utf-8")
    assert "\n".join(rows) + "\n" in doc, "docs/agents.md should hold, verbatim:\n" + "\n".join(rows)


def test_late_parameters_are_the_rows_marked_late_and_leave_the_description_at_their_default():
    assert LATE_PARAMETERS == {row.name: row.default for row in MCTS_PARAMS.values() if row.late} == {
        "co_lookahead": 0, "solver": False, "prior": 0, "prior_c": 0.3, "prior_temp": 0.1, "uct_rule": 0,
        "playout_value": 0, "reward_win": 1.0, "reward_loss": -1.0, "reward_draw": 0.0, "final_rule": 0,
        "reuse_tree": False, "textbook_backup": False, "terminal_check": 1}
    assert "co_lookahead" not in resolve_agent("mcts-co").to_dict()["params"]
    assert resolve_agent("mcts-co2").to_dict()["params"]["co_lookahead"] == 1
    assert PAPER_PARAMS["m"].default == MCTSConfig().preselect_m and PAPER_PARAMS["d"].default == MCTSConfig().discount


# ------------------------------------------------------------------------------------------
# fix_a9 and the presets reach the kernels


def test_fix_a9_is_off_by_default_everywhere():
    assert MCTSConfig().fix_a9 is False
    for preset in PRESETS:
        for name in PAPER_NAMES:
            assert resolve_agent(name, preset=preset).mcts.fix_a9 is False


def test_paper_preset_changes_playout_depth_and_discount_exponent_in_the_kernel():
    """mcts+P under ``paper``: at most 20 playout plies and exponent i (offset 0); the compiled
    playout equals the reference playout of that configuration and differs from code-0.6.2's."""
    code_cfg = cfg_of("mcts+P")
    paper_cfg = cfg_of("mcts+P", preset="paper")
    pv, cv = mcts.params_vector(paper_cfg), mcts.params_vector(code_cfg)
    at = [engine_params.P_CO_PLAYOUT_PLIES, engine_params.P_PLAYOUT_DEPTH, engine_params.P_DISCOUNT_OFFSET]
    assert list(pv[at]) == [20, 20, 0] and list(cv[at]) == [21, 21, 1]
    # from the initial position 20 solver plies reach no victory: the depth limit bites
    text = Position.initial().to_string()
    seen_limit = False
    for seed in range(3):
        values = {}
        for label, cfg in (("paper", paper_cfg), ("code", code_cfg)):
            k = hand_root(Kit(cfg, seed=seed), pos(text).state)
            e = k.create(0, code("f1"))
            r = new_rng_state(50 + seed)
            values[label] = k.playout(e, r.copy())
            ref, n, winner = ref_playout(k.state(e), int(k.tree.player[0]), cfg, r.copy())
            assert values[label] == pytest.approx(ref, rel=1e-12)
            assert n == k.acc[mcts.ACC_PLIES] <= cfg.playout_depth
            if label == "paper" and winner == 0:
                seen_limit = True
                assert n == 20
        assert values["paper"] != pytest.approx(values["code"], rel=1e-9)
    assert seen_limit


# ------------------------------------------------------------------------------------------
# whole games


def _task(p1: str, p2: str, budget: Budget, seed: int, preset: str = "code-0.6.2") -> GameTask:
    return GameTask("test", "0" * 16, f"{p1} vs {p2}", seed % 7, resolve_agent(p1, preset=preset),
                          resolve_agent(p2, preset=preset), budget, preset, seed)


def _pairings():
    """(p1, p2, budget, seed) of the games every test of this section shares."""
    out = []
    for i, name in enumerate(AGENT_NAMES):
        out.append((name, "random", DEVICE_SMALL, 100 + i))  # agent as Blue, device clock
        out.append(("random", name, ITER_SMALL, 200 + i))  # agent as Red, fixed iterations
    return out


@pytest.fixture(scope="module")
def games():
    """Each pairing played once: {(p1, p2, mode, seed): record}."""
    return {(a, b, bud.mode, s): match.play_game(_task(a, b, bud, s)) for a, b, bud, s in _pairings()}


@pytest.fixture(scope="module")
def more_games():
    """MCTS agents against each other and against the heuristic agent, both budget modes."""
    recs = []
    pairs = [("vanilla", "mcts-co"), ("mcts+P", "mcts+S"), ("mcts+SE", "mcts+EP"), ("mcts+E", "mcts+SP"),
             ("mcts-co", "mcts+SEP"), ("heuristics", "mcts+P"), ("mcts+S", "heuristics"), ("heuristics", "random")]
    for i, (a, b) in enumerate(pairs):
        for j, bud in enumerate((DEVICE_SMALL, Budget(mode="iterations", iterations=5))):
            for seed in (300 + 10 * i + j, 400 + 10 * i + j):
                recs.append(match.play_game(_task(a, b, bud, seed)))
    return recs


@pytest.mark.parametrize("p1, p2, budget, seed", _pairings(),
                         ids=[f"{a}-{b}-{bud.mode}" for a, b, bud, _ in _pairings()])
def test_same_seed_same_game(games, p1, p2, budget, seed):
    again = match.play_game(_task(p1, p2, budget, seed))
    first = games[(p1, p2, budget.mode, seed)]
    assert strip_host_timing(again) == strip_host_timing(first)
    assert "host_seconds" in first and all("host_cpu_seconds" in t for t in first["telemetry"])


def test_different_seeds_give_different_games_for_vanilla():
    runs = [match.play_game(_task("vanilla", "vanilla", ITER_SMALL, s))["moves"] for s in (1, 2, 3)]
    assert runs[0] != runs[1] and runs[1] != runs[2] and runs[0] != runs[2]


def test_no_illegal_move_and_recorded_winner_is_right(games, more_games):
    """Replay every record in REAL (Position.play checks the square and the pool; the ':group'
    suffix picks the promoted group): nobody wins before the last ply, and the last ply wins
    for the recorded colour."""
    recs = list(games.values()) + more_games
    assert len(recs) >= 50
    for rec in recs:
        replay_record(rec)
    finished = [r for r in recs if r["winner"] is not None]
    assert len(finished) >= 0.9 * len(recs)


def test_replay_catches_a_tampered_record(games):
    """The legality check can fail: a move onto an occupied square, a wrong winner."""
    rec = dict(next(iter(games.values())))
    bad = dict(rec, moves=[rec["moves"][0]] * 2 + rec["moves"][2:])
    with pytest.raises(StoreError, match="ply 2"):
        replay_record(bad)
    other = "red" if rec["winner_colour"] == "blue" else "blue"
    with pytest.raises(StoreError, match="the record says"):
        replay_record(dict(rec, winner_colour=other))
    with pytest.raises(StoreError, match="plies"):
        replay_record(dict(rec, plies=rec["plies"] + 1))


def test_telemetry_keys_for_every_move(games, more_games):
    for rec in list(games.values()) + more_games:
        assert len(rec["telemetry"]) == rec["plies"]
        for ply, tel in enumerate(rec["telemetry"], start=1):
            assert TELEMETRY_KEYS <= set(tel), set(tel) ^ TELEMETRY_KEYS
            assert tel["ply"] == ply
            agent = rec["p1"] if tel["player"] == "p1" else rec["p2"]
            assert tel["agent"] == agent
            if resolve_agent(agent).kind == "mcts":
                assert tel["iterations"] >= 1 and tel["tree_nodes"] == 1 + tel["nodes_created"]
                assert tel["nodes_created"] <= 72 + tel["iterations"]
                if rec["budget"]["mode"] == "device":
                    assert tel["device_seconds"] >= rec["budget"]["seconds"]
                else:
                    assert tel["iterations"] == rec["budget"]["iterations"]
            elif agent == "heuristics":
                assert (tel["iterations"], tel["solver_calls"]) == (0, 1)
            elif agent == "alphabeta":  # its own counters (tests/test_alphabeta.py)
                assert tel["iterations"] == 0 and tel["search_depth"] >= 1 and tel["search_nodes"] > 0
                assert tel["device_seconds"] > 0.0
            else:
                assert (tel["iterations"], tel["solver_calls"], tel["device_seconds"]) == (0, 0, 0.0)


def test_solver_calls_only_for_agents_with_co(games):
    for (p1, p2, _mode, _seed), rec in games.items():
        name = p1 if p1 != "random" else p2
        if name in ("vanilla", "random"):
            assert all(t["solver_calls"] == 0 for t in rec["telemetry"])
        elif name in PAPER_NAMES:
            mine = [t for t in rec["telemetry"] if t["agent"] == name]
            assert any(t["solver_calls"] > 0 for t in mine)


def test_vanilla_plays_no_ring_square_in_the_first_six_plies():
    """QUIRK-A5 in whole games: Blue's and Red's first three moves are all inner squares."""
    ring = {i for i in range(36) if i // 6 in (0, 5) or i % 6 in (0, 5)}
    for seed in range(4):
        rec = match.play_game(_task("vanilla", "vanilla", Budget(mode="iterations", iterations=20), seed))
        first = [Move.parse(m).square for m in rec["moves"][:6]]
        assert not ring & set(first), rec["moves"][:6]


# ------------------------------------------------------------------------------------------
# device budget


@pytest.fixture(scope="module")
def vanilla_1s_games():
    budget = Budget(mode="device", seconds=1.0)
    return [match.play_game(_task("vanilla", "vanilla", budget, seed)) for seed in (0, 1)]


def test_vanilla_median_iterations_per_move_at_one_device_second(vanilla_1s_games):
    """The android-2023 profile reproduces the paper's device: ~80 vanilla iterations per move."""
    its = [t["iterations"] for rec in vanilla_1s_games for t in rec["telemetry"]]
    assert 60 <= statistics.median(its) <= 100


def test_device_seconds_reach_the_budget_with_a_bounded_overrun(vanilla_1s_games):
    """Every MCTS move spends at least the budget; the overrun is one iteration at most (an
    iteration costs its node, its overhead and one random playout: far below 0.1 device-s)."""
    costs = device_costs("android-2023")
    for rec in vanilla_1s_games:
        for t in rec["telemetry"]:
            assert t["device_seconds"] >= 1.0
            assert t["device_seconds"] - 1.0 < 0.1
            # the clock is the sum of the charged primitives (vanilla: no solver)
            charged = (t["nodes_created"] * costs[0] + t["playout_plies"] * costs[1]
                       + t["iterations"] * costs[4])
            assert t["device_seconds"] == pytest.approx(charged / 1e6, rel=1e-9)


def test_same_game_in_device_mode_whatever_the_host_speed(monkeypatch):
    """Device mode never reads a host clock to decide: a slowed-down process_time changes
    nothing but host timing fields."""
    import time as _time

    task = _task("mcts-co", "vanilla", Budget(mode="device", seconds=0.1), 9)
    first = match.play_game(task)
    real = _time.process_time
    monkeypatch.setattr(_time, "process_time", lambda: real() * 3.0)
    monkeypatch.setattr(_time, "perf_counter", lambda: real() * 3.0)
    assert strip_host_timing(match.play_game(task)) == strip_host_timing(first)


# ------------------------------------------------------------------------------------------
# baselines and the ply limit


def test_heuristics_agent_plays_a_maximum_of_f():
    """AGENTS.md §C.2: one best_move call, i.e. a move of maximal objective value."""
    for seed in (1, 2):
        rec = match.play_game(_task("heuristics", "random", DEVICE_SMALL, seed))
        p = Position.initial()
        for i, mv in enumerate(rec["moves"]):
            if i % 2 == 0:
                f = {m.code: p.objective(m, rng=0) for m in p.legal_moves()}
                assert f[Move.parse(mv).code] == max(f.values()), (i, mv)
            p = p.play(mv, rng=0).position


def test_ply_limit_is_recorded_as_an_outcome(monkeypatch):
    """MAX_PLIES is a safety net, not a rule: a game that reaches it has no winner and
    ``termination: ply_limit`` (docs/agents.md)."""
    monkeypatch.setattr(contract, "MAX_PLIES", 6)  # the default cap a task resolves (GameTask.ply_cap)
    rec = match.play_game(_task("vanilla", "random", ITER_SMALL, 5))
    assert (rec["plies"], rec["winner"], rec["winner_agent"], rec["winner_colour"], rec["termination"]) == \
        (6, None, None, None, "ply_limit")
    replay_record(rec)


def test_ply_limit_default():
    assert MAX_PLIES == 1000


def test_the_readmes_agent_list_is_the_registry():
    """README's "Agents:" sentence names every built-in agent and alias, and nothing else (it once
    omitted mcts-co2)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    sentence = " ".join(readme.split("\nAgents: ", 1)[1].split("Presets:", 1)[0].split())
    aliases = dict(re.findall(r"`([^`]+)`\s*\(alias `([^`]+)`\)", sentence))
    names = re.findall(r"`([^`]+)`", re.sub(r"\(alias `[^`]+`\)", "", sentence))
    assert names == list(AGENT_NAMES)
    assert {alias: name for name, alias in aliases.items()} == ALIASES
