"""``boopexp game`` and ``boopexp calibrate`` through click's CliRunner."""

from __future__ import annotations

import json

from click.testing import CliRunner

from boopexp.cli import main


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_game_json_record_has_the_documented_fields():
    result = invoke("game", "--p1", "mcts-co", "--p2", "heuristics", "--seed", "3", "--budget", "iterations",
                    "--iterations", "3", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    for key in ("p1", "p2", "winner", "plies", "moves", "seed", "telemetry", "winner_agent", "termination"):
        assert key in record
    assert (record["p1"], record["p2"]) == ("mcts-co", "heuristics")
    assert record["winner"] in ("p1", "p2") and record["plies"] == len(record["moves"]) == len(record["telemetry"])
    first = record["telemetry"][0]
    assert first["agent"] == "mcts-co" and first["iterations"] == 3 and first["solver_calls"] > 0


def test_game_same_seed_same_game_and_show_renders_boards():
    args = ("game", "--p1", "vanilla", "--p2", "random", "--seed", "5", "--budget", "device", "--seconds", "0.05")
    a, b = invoke(*args), invoke(*args)
    assert a.exit_code == 0 and a.output.splitlines()[:2] == b.output.splitlines()[:2]
    shown = invoke(*args, "--show")
    assert shown.exit_code == 0 and "ply 1: Blue plays" in shown.output and "a b c d e f" in shown.output


def test_game_parameter_override_reaches_the_agent():
    result = invoke("game", "--p1", "mcts-co", "--p2", "random", "--budget", "iterations", "--iterations", "2",
                    "--p1-param", "fix_a9=true", "--p1-param", "uct_c=0.5", "--json")
    params = json.loads(result.output)["p1_spec"]["params"]
    assert params["fix_a9"] is True and params["uct_c"] == 0.5


def test_game_bad_input_is_one_line_and_exit_2():
    cases = [
        (("--p1", "vanila", "--p2", "random"), "unknown agent 'vanila'"),
        (("--p1", "vanilla", "--p2", "random", "--seconds", "-1"), "budget.seconds = -1.0"),
        (("--p1", "vanilla", "--p2", "random", "--p1-param", "uct=1"), "unknown parameter 'uct'"),
        (("--p1", "vanilla", "--p2", "random", "--p1-param", "uct_c"), "KEY=VALUE"),
        (("--p1", "heuristics", "--p2", "random", "--p1-param", "uct_c=1"), "takes no parameters"),
    ]
    for args, message in cases:
        result = CliRunner().invoke(main, ["game", *args])
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_calibrate_prints_host_rates_and_the_throttle():
    result = invoke("calibrate", "--seconds", "0.05")
    assert result.exit_code == 0, result.output
    assert "host vanilla iterations per CPU second" in result.output
    assert "cpu-mode throttle (auto)" in result.output
    bad = CliRunner().invoke(main, ["calibrate", "--seconds", "0"])
    assert bad.exit_code == 2 and "--seconds must be > 0" in bad.output
