"""``boopexp seal`` and ``boopexp migrate`` from the command line: output, exit codes, user mistakes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from boopexp.cli import main


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def write_log(folder, n):
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"config_hash": "aaaa", "pairing": "a vs b", "game_index": i, "winner": "p1"}) for i in range(n)]
    (folder / "games.jsonl").write_text("".join(line + "\n" for line in lines))


def test_seal_says_what_it_moved(tmp_path):
    write_log(tmp_path / "r", 3)
    result = invoke("seal", str(tmp_path / "r"))
    assert result.exit_code == 0 and result.output == f"{tmp_path / 'r'}: 3 games sealed into games-0001.jsonl.gz\n"
    again = invoke("seal", str(tmp_path / "r"))
    assert again.exit_code == 0 and again.output == f"{tmp_path / 'r'}: no game to seal\n"


def test_seal_and_migrate_refuse_a_missing_folder_or_one_without_games(tmp_path):
    for command in ("seal", "migrate"):
        missing = invoke(command, str(tmp_path / "nope"))
        assert missing.exit_code == 2 and missing.output == f"Error: no results folder {str(tmp_path / 'nope')!r}\n"
        empty = invoke(command, str(tmp_path))
        assert empty.exit_code == 1 and "no store in" in empty.output and len(empty.output.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
