"""``boopexp tables`` through click's CliRunner: files written, errors as one line, warnings."""

from __future__ import annotations

import json

from click.testing import CliRunner
from report_fixtures import games_for, make_record, write_results

from boopexp.interfaces.cli import main

TABLE_FILES = {
    f"{stem}.{ext}" for stem in ("table1", "table2", "telemetry", "pairwise") for ext in ("md", "csv", "tex")
}


def _results(root):
    write_results(root / "ablation", games_for("mcts-co vs vanilla", 40, 10, iterations=20, experiment="ablation")
                  + games_for("vanilla vs mcts-co", 2, 48, iterations=20, experiment="ablation"))
    write_results(root / "mirror", games_for("mcts-co vs mcts-co", 10, 90, iterations=20, experiment="mirror"))
    return root


def test_tables_writes_everything(tmp_path):
    root = _results(tmp_path)
    out = tmp_path / "tables"
    result = CliRunner().invoke(main, ["tables", str(root / "ablation"), str(root / "mirror"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = {p.name for p in out.iterdir()}
    assert TABLE_FILES | {"game_length.csv", "table1.png", "table2.svg", "iterations.png"} <= written
    assert "| vanilla | 40/50 | 48/50 | 0 | 88.0% [" in result.stdout
    assert "| mcts-co | 10 | 90 | 0 | 100 |" in result.stdout
    # the files on one line, last, as ``boopexp ratings`` says them (19 lines of paths before)
    names = result.stdout.splitlines()[-1].removeprefix(f"Wrote {len(written)} files to {out}/: ").split(", ")
    assert sorted(names) == sorted(written) and str(out / "table1.md") not in result.stdout
    assert result.stderr == ""


def test_tables_brief_prints_the_tables_without_their_notes(tmp_path):
    root = _results(tmp_path)
    out = tmp_path / "tables"
    args = ["tables", str(root / "ablation"), str(root / "mirror"), "--out", str(out)]
    full = CliRunner().invoke(main, args)
    brief = CliRunner().invoke(main, [*args, "--brief"])
    assert brief.exit_code == 0, brief.output
    assert "| vanilla | 40/50 | 48/50 | 0 | 88.0% [" in brief.stdout
    assert "| mcts-co | 10 | 90 | 0 | 100 |" in brief.stdout
    assert "Fisher exact test" in full.stdout and "Fisher exact test" not in brief.stdout
    assert f"Notes (what the columns and tests are): {out}/table1.md, {out}/table2.md" in brief.stdout
    assert brief.stdout.splitlines()[-1] == full.stdout.splitlines()[-1]  # the same files written
    assert len(brief.stdout.splitlines()) < len(full.stdout.splitlines()) - 10


def test_tables_default_directories(tmp_path, monkeypatch):
    _results(tmp_path / "results")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["tables"])
    assert result.exit_code == 0, result.output
    assert TABLE_FILES <= {p.name for p in (tmp_path / "results" / "tables").iterdir()}


def test_missing_directory_is_one_error_line(tmp_path):
    missing = tmp_path / "no-such-results"
    result = CliRunner().invoke(main, ["tables", str(missing), "--out", str(tmp_path / "out")])
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:") and str(missing) in lines[0]
    assert not (tmp_path / "out").exists()


def test_some_directories_missing_warns(tmp_path):
    root = _results(tmp_path)
    result = CliRunner().invoke(main, ["tables", str(root / "ablation"), str(root / "gone"),
                                       "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "Warning: results directory" in result.stderr and "gone" in result.stderr


def test_corrupt_middle_line_names_file_and_line(tmp_path):
    root = _results(tmp_path)
    path = root / "ablation" / "games.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[6] = lines[6][:40] + "\n"
    path.write_text("".join(lines))
    result = CliRunner().invoke(main, ["tables", str(root / "ablation"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert f"Error: {path} line 7: not valid JSON" in result.stderr
    assert "Traceback" not in result.output


def test_truncated_last_line_warns_and_succeeds(tmp_path):
    root = _results(tmp_path)
    path = root / "mirror" / "games.jsonl"
    path.write_text(path.read_text() + '{"experiment": "mirror", "config_h')
    result = CliRunner().invoke(main, ["tables", str(root / "ablation"), str(root / "mirror"),
                                       "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert f"Warning: {path} line 101: truncated last line" in result.stderr
    assert "| mcts-co | 10 | 90 | 0 | 100 |" in result.stdout


def test_tables_has_help():
    result = CliRunner().invoke(main, ["tables", "--help"])
    assert result.exit_code == 0
    assert "Build Tables I and II" in result.output and "--out" in result.output


def test_tables_with_ply_limit_games(tmp_path):
    # Two games stopped at the ply limit (winner null): a "no winner" column, rates on decided games.
    write_results(tmp_path / "ablation", games_for("mcts-co vs vanilla", 40, 9, 1, iterations=20, experiment="ablation")
                  + games_for("vanilla vs mcts-co", 2, 48, iterations=20, experiment="ablation"))
    write_results(tmp_path / "mirror", games_for("mcts-co vs mcts-co", 10, 89, 1, experiment="mirror"))
    out = tmp_path / "tables"
    args = ["tables", str(tmp_path / "ablation"), str(tmp_path / "mirror"), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert "| vanilla | 40/49 | 48/50 | 1 | 88.9% [" in result.stdout  # 88 of 99 decided games
    assert "| mcts-co | 10 | 89 | 1 | 100 | 89.9% [" in result.stdout  # P2 share 89/99
    assert "No winner: games stopped at the 1,000-ply safety cap" in result.stdout
    assert "no_winner" in (out / "table1.csv").read_text().splitlines()[0]
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first


def test_bogus_winner_names_file_and_line(tmp_path):
    root = _results(tmp_path)
    path = root / "ablation" / "games.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(3, json.dumps(make_record("mcts-co vs vanilla", 77, "p1") | {"winner": "draw"}) + "\n")
    path.write_text("".join(lines))
    result = CliRunner().invoke(main, ["tables", str(root / "ablation"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert f"Error: {path} line 4: invalid game record (winner = 'draw' is not 'p1', 'p2' or null)" in result.stderr
    assert "Traceback" not in result.output
