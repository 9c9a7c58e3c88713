"""``boopexp game`` and ``boopexp calibrate`` through click's CliRunner."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from boopexp.interfaces.cli import main


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_game_json_record_has_the_documented_fields():
    result = invoke("game", "--p1", "mcts-co", "--p2", "heuristics", "--seed", "3", "--budget", "iterations",
                    "--iterations", "3", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
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
    _assert_the_last_board_names_the_winner(shown.output, "Blue" if "p1 (vanilla, blue) wins" in a.output else "Red")


def _assert_the_last_board_names_the_winner(output: str, colour: str) -> None:
    # issue 33: the board after the winning move said "Red to move" after Blue had won
    states = re.findall(r"^  ply \d+, (.*)$", output, flags=re.M)
    assert states[-1] == f"{colour} has won" and all(s.endswith(" to move") for s in states[:-1]), states[-3:]


def test_game_parameter_override_reaches_the_agent():
    result = invoke("game", "--p1", "mcts-co", "--p2", "random", "--budget", "iterations", "--iterations", "2",
                    "--p1-param", "fix_a9=true", "--p1-param", "uct_c=0.5", "--json")
    params = json.loads(result.stdout)["p1_spec"]["params"]
    assert params["fix_a9"] is True and params["uct_c"] == 0.5


def test_game_bad_input_is_one_line_and_exit_2():
    cases = [
        (("--p1", "vanila", "--p2", "random"), "unknown agent 'vanila'"),
        (("--p1", "vanilla", "--p2", "random", "--seconds", "-1"), "budget.seconds = -1.0"),
        (("--p1", "vanilla", "--p2", "random", "--seconds", "inf"), "budget.seconds = inf"),
        (("--p1", "vanilla", "--p2", "random", "--seconds", "nan"), "budget.seconds = nan"),
        (("--p1", "vanilla", "--p2", "random", "--p1-param", "uct=1"), "unknown key uct (value 1); allowed: "),
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
    assert bad.exit_code == 2 and "Invalid value for '--seconds': 0.0 is not in the range 0<x<=600.0." in bad.output


def _store_one_game(folder, p1="mcts-co", p2="random", seed=9):
    from boopexp.agents.budget import Budget
    from boopexp.agents.specs import resolve_agent
    from boopexp.play.match import GameTask, play_game

    task = GameTask("t", "ab" * 8, f"{p1} vs {p2}", 0, resolve_agent(p1), resolve_agent(p2),
                    Budget(mode="iterations", iterations=3), "code-0.6.2", seed)
    record = play_game(task)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "games.jsonl").write_text(json.dumps(record) + "\n")
    return record


def test_replay_walks_the_moves_and_re_plays_the_same_game(tmp_path):
    record = _store_one_game(tmp_path / "r")
    result = invoke("replay", str(tmp_path / "r"), "--pairing", "mcts-co vs random", "--game", "0",
                    "--search", "--show")
    assert result.exit_code == 0, result.output
    assert f"{record['plies']} legal moves replayed" in result.output
    assert "the same game, move for move" in result.output and "ply 1: Blue plays" in result.output
    _assert_the_last_board_names_the_winner(result.output, record["winner_colour"].capitalize())


def test_replay_detects_a_tampered_record(tmp_path):
    record = _store_one_game(tmp_path / "r")
    record["winner"], record["winner_colour"] = ("p2", "red") if record["winner"] == "p1" else ("p1", "blue")
    (tmp_path / "r" / "games.jsonl").write_text(json.dumps(record) + "\n")
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "r"), "--pairing", "mcts-co vs random", "--game", "0"])
    assert result.exit_code == 1 and "the record says" in result.output
    # the values as stored and as replayed, quoted as strings (Side and Colour members read as their strings)
    said, replayed = (record["winner"], "p2" if record["winner"] == "p1" else "p1")
    assert f"the record says winner = {said!r}; its moves and agents give {replayed!r}" in result.output


def test_replay_unknown_game_lists_the_pairings(tmp_path):
    _store_one_game(tmp_path / "r")
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "r"), "--pairing", "x vs y", "--game", "0"])
    assert result.exit_code == 2 and "pairings there: mcts-co vs random" in result.output
    missing = CliRunner().invoke(main, ["replay", str(tmp_path / "nope"), "--pairing", "x vs y", "--game", "0"])
    assert missing.exit_code == 2 and "no results folder" in missing.output  # 2 as in status and tables
    (tmp_path / "empty").mkdir()
    empty = CliRunner().invoke(main, ["replay", str(tmp_path / "empty"), "--pairing", "x vs y", "--game", "0"])
    assert empty.exit_code == 2 and "no games.jsonl" in empty.output


def test_agent_spec_round_trips_through_its_record_form():
    from boopexp.agents.specs import AGENT_NAMES, AgentSpec, resolve_agent
    from boopexp.errors import ConfigError

    overrides = {"heuristics": None, "random": None, "alphabeta": {"node_cost_scale": 2.0}}
    for name in AGENT_NAMES:
        spec = resolve_agent(name, overrides=overrides.get(name, {"uct_c": 0.5}))
        assert AgentSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    for bad in ({"name": "x"}, {"name": "x", "kind": "alien"}, {"name": "x", "kind": "mcts", "params": {"foo": 1}}):
        try:
            AgentSpec.from_dict(bad)
        except ConfigError:
            continue
        raise AssertionError(f"{bad} was accepted")


#: each budget mode with a budget of a few milliseconds per move (cpu: 0.1 emulated s x 0.01)
TINY_BUDGETS = {
    "device": ("--seconds", "0.05"),
    "cpu": ("--seconds", "0.1", "--throttle", "0.01"),
    "wall": ("--seconds", "0.002"),
    "iterations": ("--iterations", "3"),
}


def test_every_budget_mode_is_tried_below():
    from boopexp.agents.budget import BUDGET_MODES

    assert set(TINY_BUDGETS) == set(BUDGET_MODES)


@pytest.mark.parametrize("mode", sorted(TINY_BUDGETS))
def test_game_in_every_budget_mode(mode):
    result = invoke("game", "--p1", "vanilla", "--p2", "mcts-co", "--seed", "2", "--budget", mode,
                    *TINY_BUDGETS[mode], "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["budget"]["mode"] == mode and record["winner"] in ("p1", "p2", None)
    assert all(t["iterations"] >= 1 for t in record["telemetry"])


def test_a_bad_parameter_names_the_option_it_was_typed_with(tmp_path, monkeypatch):
    """A mistake in a --p1-param / --p2-param / --param names that option and the key as typed: with
    both players the same agent, "agent 'mcts-co': uct_c = -1 …" could be either of them."""
    def error_line(*args):
        result = CliRunner().invoke(main, list(args))
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
        return result.stderr.strip()

    for option in ("--p1-param", "--p2-param"):
        assert error_line("game", "--p1", "mcts-co", "--p2", "mcts-co", option, "uct_c=-1") == \
            f"Error: {option}: uct_c = -1 must be a number in [0.0, 100.0]"
    assert error_line("game", "--p1", "random", "--p2", "mcts-co", "--p2-param", "uct=1").startswith(
        "Error: --p2-param: unknown key uct (value 1); allowed: preselect_m, ")
    assert error_line("game", "--p1", "random", "--p2", "mcts-co", "--p1-param", "uct_c=1") == \
        "Error: --p1-param: unknown key uct_c (value 1); a baseline takes no parameters"
    assert error_line("play", "--agent", "mcts-co", "--param", "discount=.nan") == \
        "Error: --param: discount = nan must be a number in [0.0, 1.0]"
    # with --config: an override of a declared variant, not the config, is at fault
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v.yaml").write_text("name: v\nseed: 1\ngames_per_side: 1\npairings: [[co-wide, vanilla]]\n"
                                     "agents: {co-wide: {base: mcts-co, uct_c: 1.0}}\n")
    assert error_line("game", "--config", "v.yaml", "--p1", "co-wide", "--p2", "co-wide", "--p2-param",
                      "preselect_m=99") == "Error: --p2-param: preselect_m = 99 must be an integer in [0, 72]"
    # and a budget option is still named from the error's key, as before
    assert error_line("game", "--p1", "random", "--p2", "random", "--seconds", "inf") == \
        "Error: --seconds inf: budget.seconds = inf must be a positive number of seconds, at most 600"


def test_a_game_stopped_by_its_ply_cap_says_so_and_no_more():
    """It said "(ply limit; a position cycle)" of any game without a winner: a cycle is named only
    when a position came back (random players at 6 plies: none did)."""
    result = invoke("game", "--p1", "random", "--p2", "random", "--max-plies", "6")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "random vs random: no winner after 6 plies: stopped at the ply cap (6)"


def test_ctrl_c_before_the_game_command_handles_it_is_one_line_and_130(monkeypatch):
    """A Ctrl-C after the command line is imported but before ``game`` handles it (its own imports,
    reading the config, building plugins): click printed "Aborted!" and exited 1."""
    from boopexp.interfaces.commands import play

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(play, "_settings", ctrl_c)
    result = CliRunner().invoke(main, ["game", "--p1", "random", "--p2", "random"])
    assert (result.exit_code, result.stderr) == (
        130, "Interrupted by Ctrl-C: boopexp game stopped before it finished; run it again.\n")


def _stored_game(folder, budget, p1="mcts-co", p2="vanilla", seed=4):
    from boopexp.agents.budget import Budget
    from boopexp.agents.specs import resolve_agent
    from boopexp.play.match import GameTask, play_game

    task = GameTask("t", "cd" * 8, f"{p1} vs {p2}", 0, resolve_agent(p1), resolve_agent(p2), Budget(**budget),
                    "code-0.6.2", seed)
    record = play_game(task)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "games.jsonl").write_text(json.dumps(record) + "\n")
    return record


@pytest.mark.parametrize("budget", [{"mode": "iterations", "iterations": 40},
                                    {"mode": "device", "seconds": 0.3, "profile": "android-2023"}])
def test_the_search_re_run_at_each_ply_ranks_first_the_move_the_record_holds(tmp_path, budget):
    """replay.root_search re-plays the game up to a ply and reads the root of that ply's search:
    at every ply its best-ranked move (final_choice's order) is the move the game played, and the
    visits are those of the search (each iteration visits one root child, but for the new node's
    own first visit, QUIRK-A8); a search taken at the wrong ply would rank another position's moves."""
    from boopexp.play.replay import root_search

    record = _stored_game(tmp_path / "r", budget)
    assert len(record["moves"]) >= 6
    for ply, move in enumerate(record["moves"], start=1):
        found = root_search(record, ply)
        assert (found.ply, found.agent, found.move) == (ply, record["telemetry"][ply - 1]["agent"], move)
        assert found.children[0].move == found.chosen == move.split(":")[0], (ply, found.children[:3])
        assert all(c.selectable for c in found.children if c.visits)
        iterations = record["telemetry"][ply - 1]["iterations"]
        assert 0 < sum(c.visits for c in found.children) <= iterations
    again = root_search(record, 5)
    assert again == root_search(record, 5)  # the same search each time


def test_the_root_of_an_mcts_solver_search_is_ranked_as_its_final_choice_ranks_it(tmp_path):
    """MCTS-Solver's final choice takes a move that wins at once, then a proven win (best mean),
    then the best move not proven lost: the ranking follows it (seed 4: at ply 49 three moves are
    proven wins, and the one played wins at once with the lowest mean)."""
    from boopexp.play.replay import root_search

    record = _stored_game(tmp_path / "r", {"mode": "iterations", "iterations": 60}, p1="mcts-solver", seed=4)
    solver_plies = [ply for ply in range(1, len(record["moves"]) + 1) if ply % 2 == 1]
    assert 49 in solver_plies
    for ply in solver_plies:
        found = root_search(record, ply)
        assert found.children[0].move == found.chosen, (ply, found.children[:3])


def test_replay_root_at_prints_the_root_ranked_and_marks_the_move_played(tmp_path):
    record = _stored_game(tmp_path / "r", {"mode": "iterations", "iterations": 40})
    result = invoke("replay", str(tmp_path / "r"), "--pairing", "mcts-co vs vanilla", "--game", "0", "--root-at", "3")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("ply 3: p1 (mcts-co) played")))
    assert lines[header + 1].split() == ["move", "visits", "value"]
    first = lines[header + 2].split()
    assert first[0] == record["moves"][2].split(":")[0] and first[-2:] == ["<-", "played"]
    assert "moves not selectable: left out by the Selection injection" in lines[-1]  # m = 5 of mcts-co


def test_replay_root_at_mistakes_are_one_line_exit_2_before_anything_is_replayed(tmp_path):
    _stored_game(tmp_path / "r", {"mode": "iterations", "iterations": 5}, p1="mcts-co", p2="heuristics")
    _stored_game(tmp_path / "c", {"mode": "cpu", "seconds": 0.01}, p1="vanilla", p2="random")
    cases = [("r", "mcts-co vs heuristics", "0", "is not a move of the game (it has "),
             ("r", "mcts-co vs heuristics", "2", "ply 2 was played by heuristics (heuristics), not by an MCTS search"),
             ("c", "vanilla vs random", "1", "a cpu-budget game depends on the host's speed")]
    for folder, pairing, ply, message in cases:
        result = CliRunner().invoke(main, ["replay", str(tmp_path / folder), "--pairing", pairing, "--game", "0",
                                           "--root-at", ply])
        assert result.exit_code == 2, result.output
        assert result.output.startswith("Error: ") and message in result.output
        assert len(result.output.strip().splitlines()) == 1  # said before the walk


def test_replay_root_at_refuses_a_record_its_re_play_departs_from(tmp_path):
    from boopexp.errors import StoreError
    from boopexp.play.replay import root_search

    record = _stored_game(tmp_path / "r", {"mode": "iterations", "iterations": 40})

    tampered = dict(record, moves=[*record["moves"][:2], *record["moves"][3:4], *record["moves"][2:3],
                                   *record["moves"][4:]])
    with pytest.raises(StoreError, match=r"the re-played game differs from the record from ply 3, so its search at "
                                         r"ply 5 cannot be shown"):
        root_search(tampered, 5)
