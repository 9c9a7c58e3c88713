"""``boopexp bench``: the CLI runs and reports every metric (no timing assertion)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from boopexp.game.positions import sample_positions
from boopexp.interfaces.bench import METRICS, BenchContext
from boopexp.interfaces.cli import main

KEYS = ("heuristic_per_s", "objective_per_s", "solver_calls_per_s", "random_plies_per_s")


def test_bench_json_keys_and_positive_values():
    result = CliRunner().invoke(main, ["bench", "--json", "--seconds", "0.05", "--repeats", "1"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in KEYS:
        assert report[key] > 0, key
        assert len(report["runs"][key]) == 1
    assert set(METRICS) <= set(report)
    assert {"platform", "cpu_count"} <= set(report["machine"])
    assert {"python", "numpy", "numba"} <= set(report["versions"])


def test_bench_rejects_bad_options():
    result = CliRunner().invoke(main, ["bench", "--seconds", "0"])
    assert result.exit_code == 2
    result = CliRunner().invoke(main, ["bench", "--repeats", "0"])
    assert result.exit_code == 2


def test_sample_positions_fixed_and_non_terminal():
    a = sample_positions(20)
    b = sample_positions(20)
    assert a.shape == (20, 44) and (a == b).all()
    assert ((a[:, 43] >= 4) & (a[:, 43] <= 40)).all()  # plies 4..40
    ctx = BenchContext(states=a)
    assert ctx.pidx.shape[0] > 20 * 20  # every legal move of every position


def test_run_bench_rejects_bad_arguments_with_a_boop_error():
    from boopexp.errors import ConfigError
    from boopexp.interfaces.bench import run_bench

    for kwargs in ({"seconds": 0}, {"repeats": 0}, {"names": ["no_such_metric"]}):
        try:
            run_bench(**kwargs, ctx=object())
        except ConfigError:
            continue
        raise AssertionError(f"{kwargs} was accepted")


def test_bench_compare_prints_ratios_to_a_saved_run(tmp_path):
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"heuristic_per_s": 1.0, "gone_per_s": 5.0, "runs": {}}))
    result = CliRunner().invoke(
        main, ["bench", "--seconds", "0.02", "--repeats", "1", "--compare", str(saved)]
    )
    assert result.exit_code == 0, result.output
    out = result.output.split("compared with")[1]
    line = next(li for li in out.splitlines() if li.startswith("heuristic_per_s"))
    assert line.rstrip().endswith("x") and "-" not in line  # now / 1.0
    assert next(li for li in out.splitlines() if li.startswith("gone_per_s")).split()[1] == "-"
    result = CliRunner().invoke(
        main, ["bench", "--json", "--seconds", "0.02", "--repeats", "1", "--compare", str(saved)]
    )
    report = json.loads(result.stdout)
    assert report["compare"]["ratios"]["heuristic_per_s"] == report["heuristic_per_s"]


def test_bench_compare_bad_file_is_one_line_error(tmp_path):
    for text in (None, "not json", json.dumps({"runs": {}})):
        path = tmp_path / "x.json"
        if text is not None:
            path.write_text(text)
        result = CliRunner().invoke(main, ["bench", "--compare", str(path)])
        assert result.exit_code == 1
        assert result.output.startswith("Error: ") and len(result.output.strip().splitlines()) == 1
        if text is not None:
            path.unlink()


def test_committed_baseline_is_a_bench_report():
    from pathlib import Path

    from boopexp.interfaces.bench import load_report

    report = load_report(Path(__file__).resolve().parents[1] / "benchmarks" / "baseline.json")
    # the rates of agents that did not exist when the baseline was measured (issue 23):
    # --compare lists them with a dash; every other metric must be in it
    newer = {"mcts_solver_iterations_per_s", "mcts_prior_iterations_per_s", "alphabeta_nodes_per_s"}
    assert set(METRICS) - newer <= set(report) and not newer & set(report)


def test_bench_of_another_game_reports_boops_metrics_through_its_kernels(tmp_path):
    """``bench --game connect-four``: every metric of boop.'s bench under its name, measured on
    Connect Four positions (the report says which game); a saved run of another game is refused."""
    from boopexp.games import registry
    from boopexp.interfaces.bench import GAME_METRICS, game_positions

    result = CliRunner().invoke(main, ["bench", "--game", "connect-four", "--json", "--seconds", "0.01",
                                       "--repeats", "1"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(GAME_METRICS) == set(METRICS) and all(report[key] > 0 for key in METRICS)
    assert report["settings"]["game"] == "connect-four" and report["settings"]["positions"] == 200
    game = registry.get("connect-four")
    states = game_positions(game, 20)
    assert (states == game_positions(game, 20)).all() and states.shape == (20, 4)
    assert ((states[:, 3] >= 4) & (states[:, 3] <= 40)).all()  # plies 4..40, every one a game in progress
    kernels = game.kernels()
    assert all(kernels.legal_move_count(st) > 0 and not kernels.has_won(st, -1) and not kernels.has_won(st, 1)
               for st in states)
    saved = tmp_path / "boop.json"
    saved.write_text(json.dumps({"heuristic_per_s": 1.0, "runs": {}}))
    result = CliRunner().invoke(main, ["bench", "--game", "connect-four", "--compare", str(saved)])
    assert result.exit_code == 1
    assert result.output == (f"Error: {str(saved)!r} is a bench of boop, this one of connect-four: compare runs "
                             "of one game\n")
