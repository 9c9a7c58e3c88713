"""``boopexp seal`` and ``boopexp migrate`` from the command line: output, exit codes, user mistakes."""

from __future__ import annotations

import gzip
import json

from click.testing import CliRunner
from conftest import one_line as _one_line

from boopexp.interfaces.cli import main


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def write_log(folder, n):
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"config_hash": "aaaa", "pairing": "a vs b", "game_index": i, "winner": "p1"})
             for i in range(n)]
    (folder / "games.jsonl").write_text("".join(line + "\n" for line in lines))


def test_seal_says_what_it_moved(tmp_path):
    write_log(tmp_path / "r", 3)
    result = invoke("seal", str(tmp_path / "r"))
    assert result.exit_code == 0 and result.output == f"{tmp_path / 'r'}: 3 games sealed into games-0001.jsonl.zst\n"
    again = invoke("seal", str(tmp_path / "r"))
    assert again.exit_code == 0 and again.output == f"{tmp_path / 'r'}: no game to seal\n"


def test_seal_and_migrate_refuse_a_missing_folder_or_one_without_games(tmp_path):
    for command in ("seal", "migrate"):
        missing = invoke(command, str(tmp_path / "nope"))
        assert missing.exit_code == 2 and missing.output == f"Error: no results folder {str(tmp_path / 'nope')!r}\n"
        empty = invoke(command, str(tmp_path))
        assert empty.exit_code == 1 and "no store in" in empty.output and len(empty.output.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# issue 20, item 12: what seal, migrate and the readers refuse


def _segment(folder, number, *records):
    from boopexp.experiments.store import encode_record

    folder.mkdir(parents=True, exist_ok=True)
    data = gzip.compress(b"".join(encode_record(r) for r in records))
    (folder / f"games-{number:04d}.jsonl.gz").write_bytes(data)


def _rec(index, winner="p1"):
    return {"config_hash": "aaaa", "pairing": "a vs b", "game_index": index, "winner": winner}


def _snapshot(folder):
    """Every file's bytes and mtime; the empty advisory lock file that seal and migrate take
    before they read is no data and is left out."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())
            if p.name != "games.jsonl.lock"}


def test_a_zero_byte_segment_is_refused_as_a_corrupt_store_by_every_command(tmp_path):
    """A sealed segment is a compressed file (even a migrate of no game writes a 25-byte one): zero bytes
    is a segment lost, not a segment of no game; reading it as empty would replay its games."""
    folder = tmp_path / "r"
    write_log(folder, 2)
    (folder / "games-0001.jsonl.gz").write_bytes(b"")
    (folder / "config.yaml").write_text("seed: 1\n")  # merge compares the stores' settings first
    before = _snapshot(folder)
    for args in (("status", str(folder)), ("seal", str(folder)), ("migrate", str(folder)),
                 ("tables", str(folder), "--out", str(tmp_path / "t")),
                 ("merge", str(folder), "--out", str(tmp_path / "m"))):
        line = _one_line(invoke(*args), 1)
        assert line == (f"Error: {folder / 'games-0001.jsonl.gz'}: damaged sealed segment (0 bytes; a sealed "
                        "segment is never empty); restore it from a copy"), args
    assert _snapshot(folder) == before and not (tmp_path / "t").exists() and not (tmp_path / "m").exists()


def test_a_migrated_store_of_no_game_is_a_valid_segment(tmp_path):
    folder = tmp_path / "r"
    write_log(folder, 0)
    assert invoke("migrate", str(folder)).exit_code == 0
    assert (folder / "games-0001.jsonl.zst").stat().st_size > 0
    result = invoke("status", str(folder))
    assert result.exit_code == 0, result.output


def test_seal_and_migrate_refuse_a_duplicate_whose_winner_conflicts(tmp_path):
    folder = tmp_path / "r"
    _segment(folder, 1, _rec(0), _rec(1))
    (folder / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (_rec(2), _rec(1, "p2"))))
    before = _snapshot(folder)
    for command, done in (("seal", "sealed"), ("migrate", "migrated")):
        line = _one_line(invoke(command, str(folder)), 1)
        assert line == (f"Error: {folder / 'games.jsonl'} line 2: game 'a vs b' #1 (settings aaaa) is stored again "
                        f"with winner 'p2', but {folder / 'games-0001.jsonl.gz'} line 2 has 'p1'; nothing "
                        f"{done}: remove the wrong copy, then {command} again"), command
        assert _snapshot(folder) == before
    # an identical copy (a seal cut short) is still dropped
    (folder / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (_rec(2), _rec(1))))
    result = invoke("seal", str(folder))
    assert result.exit_code == 0 and "1 copies of sealed games dropped" in result.output


def test_the_duplicate_warning_names_the_files_that_hold_the_copies(tmp_path):
    folder = tmp_path / "r"
    _segment(folder, 1, _rec(0), _rec(1))
    _segment(folder, 2, _rec(1))
    write_log(folder, 0)
    result = invoke("status", str(folder))
    assert result.exit_code == 0, result.output
    warning = [line for line in result.output.splitlines() if line.startswith("Warning:")]
    assert warning == [f"Warning: {folder / 'games-0001.jsonl.gz'}, {folder / 'games-0002.jsonl.gz'}: 1 duplicate "
                       "game record(s) ignored (each game counted once)"]


def test_the_lock_message_fits_a_command_without_out(tmp_path):
    from boopexp.experiments.store import GameStore

    folder = tmp_path / "r"
    write_log(folder, 1)
    with GameStore(folder).open():
        for command in ("seal", "migrate"):
            line = _one_line(invoke(command, str(folder)), 1)
            assert "--out" not in line
            assert line == (f"Error: {folder} is being written by another boopexp process (lock "
                            f"{folder / 'games.jsonl.lock'}); wait for it to finish, then {command} again")
