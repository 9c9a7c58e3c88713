"""boopexp export / import (experiments/export.py; docs/protocol.md, "Export"): the committed stores
go out as text and come back the same games, byte for byte; the CSV is one row per game; a
malformed file or a conflicting game is one line and nothing written."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import stat
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_helpers import SAMPLE_GAMES, sampled_store, stored_lines

from boopexp.errors import ConfigError
from boopexp.experiments.export import CSV_COLUMNS, export_games, game_text, headers, import_games
from boopexp.experiments.store import GameStore, StoreReader, has_games_files
from boopexp.games.registry import EXPORT_HEADERS
from boopexp.interfaces.cli import main
from boopexp.play import replay
from tests.conftest import one_line

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
ABLATION = RESULTS / "ablation"
#: every committed store (a folder holding games files)
STORES = sorted(p for p in RESULTS.rglob("*") if p.is_dir() and has_games_files(p))


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_the_committed_stores_are_found():
    assert ABLATION in STORES and len(STORES) >= 10


def test_the_round_trip_sample_takes_every_pairing_of_every_store(tmp_path):
    """The sample holds at most SAMPLE_GAMES games and every (pairing, settings) of the store."""
    def pairings(lines: list[bytes]) -> set[tuple[str, str]]:
        return {(r["pairing"], r["config_hash"]) for r in map(json.loads, lines)}

    for i, folder in enumerate(STORES):
        lines = stored_lines(folder).splitlines()
        sample = (sampled_store(folder, tmp_path / str(i)) / "games.jsonl").read_bytes().splitlines()
        assert len(sample) <= SAMPLE_GAMES and (sample == lines or len(lines) > SAMPLE_GAMES)
        assert pairings(sample) == pairings(lines), folder


@pytest.mark.parametrize("folder", STORES, ids=lambda p: str(p.relative_to(RESULTS)))
def test_round_trip_of_every_committed_store(tmp_path, folder, monkeypatch):
    """export then import gives back every game exactly: the decoded records are equal (moves,
    winner, identity, settings, telemetry) and, the store having no duplicate, the lines too —
    on every k-th game of each store (SAMPLE_GAMES: the records of a pairing share their
    form; the 42,000 games took minutes of CI). (The format is tested here: playing the games is
    tested below.)"""
    monkeypatch.setattr(replay, "check_replays", lambda record, search: None)
    sample = sampled_store(folder, tmp_path / "sample")
    text = tmp_path / "games.txt"
    exported = export_games([sample], text, "text")
    report = import_games(text, tmp_path / "store")
    original = StoreReader(sample).records()
    assert exported.games == report.added == len(original.records) > 0
    if original.duplicates:
        assert StoreReader(tmp_path / "store").records().records == original.records
    else:
        assert (tmp_path / "store" / "games.jsonl").read_bytes() == (sample / "games.jsonl").read_bytes()


def test_export_import_cli_and_replay(tmp_path):
    """Through the CLI; the imported game replays; a second import adds nothing."""
    text = tmp_path / "ablation.txt"
    result = invoke("export", ABLATION, "--out", text)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{text}: 800 games from 1 store(s) (text)"
    block = text.read_text().split("\n\n")[0].splitlines()
    assert block[:8] == ['[Event "ablation"]', '[Date "????.??.??"]', '[Blue "mcts-co"]', '[Red "vanilla"]',
                         '[Result "1-0"]', '[Termination "victory"]',
                         '[StartPosition "....../....../....../....../....../...... 8,0 8,0 b 0,0 0"]',
                         '[Seed "4480965923850433173"]']
    assert text.read_text().split("\n\n")[1].startswith("1. c4 c2 2. c3 c4 3. c3 e4")
    out = tmp_path / "imported"
    result = invoke("import", text, "--out", out, "--no-search")
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (f"{out}: 800 games imported from {text} (0 already there; "
                                     "0 played again by search)")
    result = invoke("replay", out, "--pairing", "mcts-co vs vanilla", "--game", "3")
    assert result.exit_code == 0 and "as recorded" in result.output, result.output
    before = (out / "games.jsonl").read_bytes()
    result = invoke("import", text, "--out", out)  # stored games are walked, not searched again
    assert result.output.strip() == (f"{out}: 0 games imported from {text} (800 already there; "
                                     "0 played again by search)")
    assert (out / "games.jsonl").read_bytes() == before


def test_csv_is_one_row_per_game(tmp_path):
    out = tmp_path / "games.csv"
    result = invoke("export", ABLATION, RESULTS / "mirror", "--out", out, "--format", "csv")
    assert result.exit_code == 0, result.output
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS
    records = StoreReader(ABLATION).records().records + StoreReader(RESULTS / "mirror").records().records
    assert [(r["pairing"], int(r["game_index"]), r["winner"]) for r in rows] == \
        [(r["pairing"], r["game_index"], r["winner"] or "") for r in records]
    assert {r["store"] for r in rows} == {str(ABLATION), str(RESULTS / "mirror")}


def test_export_headers_are_every_header_but_the_two_sides():
    """games.registry.EXPORT_HEADERS (what a game's side names may not be) is what a block has
    besides its players' headers, a boop. game's (Blue, Red) and another game's."""
    record = dict(StoreReader(ABLATION).records().records[0])
    assert set(headers(record)) | {"Game", "Record"} == {*EXPORT_HEADERS, "Blue", "Red"}
    pentago = dict(next(iter(StoreReader(RESULTS / "seed-games" / "pentago-swap").records().records)))
    assert set(headers(pentago)) | {"Record"} == {*EXPORT_HEADERS, "White", "Black"}
    # in the order a block is written (the Record last, game_text)
    assert [h for h in headers(pentago) if h not in ("White", "Black")] + ["Record"] == list(EXPORT_HEADERS)


def test_a_game_red_opens_is_numbered_from_one_ellipsis():
    record = dict(StoreReader(ABLATION).records().records[0])
    record["start"] = "....../....../....../....../....../...... 8,0 8,0 r 0,0 0"
    moves = game_text(record).split("\n\n")[1]
    assert moves.startswith("1... c4 2. c2 c3 3. c4 c3")


def _one_game(tmp_path: Path) -> tuple[Path, list[str]]:
    text = tmp_path / "one.txt"
    export_games([ABLATION], text, "text")
    block = text.read_text().split("\n\n")
    return text, [block[0], block[1]]


@pytest.mark.parametrize("edit, line, message", [
    (lambda h, m: (h.replace('[Blue "mcts-co"]', '[Blue mcts-co]'), m), 3, "is not a header"),
    (lambda h, m: (h.replace('[Blue "mcts-co"]', '[Blue "random"]'), m), 3, "disagrees with the game's record"),
    (lambda h, m: (h, m.replace(" c2 ", " g9 ", 1)), 16, "'g9' is not a move"),
    (lambda h, m: (h, m.replace("1-0", "0-1")), 17, "the result '0-1' disagrees"),
    (lambda h, m: (h, m.replace(" 1-0", "")), 17, "must end with the result"),
    (lambda h, m: ("\n".join(x for x in h.splitlines() if not x.startswith("[Record")), m), 1, "has no [Record"),
    (lambda h, m: (h.replace('[Record "{', '[Record "{,'), m), 14, "is not JSON"),
    # issue 33: a seed of more digits than Python converts was a ValueError traceback
    (lambda h, m: (re.sub(r'(\[Seed "|\\"seed\\":)\d+', lambda g: g.group(1) + "9" * 5000, h), m), 14,
     "<an integer of 5000 digits>"),
])
def test_a_malformed_file_is_one_line_naming_file_and_line(tmp_path, edit, line, message):
    text, (heads, moves) = _one_game(tmp_path)
    heads, moves = edit(heads, moves)
    bad = tmp_path / "bad.txt"
    bad.write_text(heads + "\n\n" + moves + "\n")
    out = tmp_path / "out"
    error = one_line(invoke("import", bad, "--out", out), 2)
    assert error.startswith(f"Error: {bad}:{line}: ") and message in error, error
    assert not out.exists()


def test_a_conflicting_game_is_refused_and_nothing_is_written(tmp_path):
    """A game under a stored game's identity but another game (the stored copy of other code, here
    another seed): refused as merge refuses it."""
    text, (heads, moves) = _one_game(tmp_path)
    out = tmp_path / "out"
    from boopexp.experiments.export import read_games

    record = next(read_games(text))[1]
    text.write_text(heads + "\n\n" + moves + "\n")  # that one game
    with GameStore(out).open() as writer:
        writer.append({**record, "seed": record["seed"] + 1})
    before = (out / "games.jsonl").read_bytes()
    error = one_line(invoke("import", text, "--out", out), 1)
    assert "'mcts-co vs vanilla' #0 (1d3c3dac7ecca76f) differs from the copy in" in error, error
    assert error.endswith("nothing imported")
    assert (out / "games.jsonl").read_bytes() == before
    other = moves.replace("1. c4 c2", "1. c4 d2")
    twice = tmp_path / "twice.txt"
    twice.write_text(heads + "\n\n" + moves + "\n\n" + heads + "\n\n" + other + "\n")
    error = one_line(invoke("import", twice, "--out", tmp_path / "new"), 1)
    assert "is in the file twice as different games; nothing imported" in error
    assert not (tmp_path / "new").exists()


def test_user_mistakes_are_one_line(tmp_path):
    error = one_line(invoke("export", tmp_path / "nowhere", "--out", tmp_path / "x.txt"), 2)
    assert error == f"Error: no results folder {str(tmp_path / 'nowhere')!r}"
    error = one_line(invoke("import", tmp_path / "none.txt", "--out", tmp_path / "out"), 2)
    assert error == f"Error: no game file {str(tmp_path / 'none.txt')!r}"
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    assert "no game" in one_line(invoke("import", empty, "--out", tmp_path / "out"), 2)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# import plays every game before it stores it (issue 33)


def _edit_seed(heads: str, moves: str) -> tuple[str, str]:
    """Another seed, consistently in the Seed header and the Record: every move still legal."""
    seed = "4480965923850433173"
    assert heads.count(seed) == 2
    return heads.replace(seed, "4480965923850433174"), moves


def _edit_iterations(heads: str, moves: str) -> tuple[str, str]:
    """The iterations counted at ply 3 (the Record's telemetry) edited: the moves are the game's."""
    start = heads.index('iterations\\":[') + len('iterations\\":[')
    counts = heads[start:heads.index("]", start)].split(",")
    counts[2] = str(int(counts[2]) + 1)
    return heads[:start] + ",".join(counts) + heads[heads.index("]", start):], moves


def _flip_winner(heads: str, moves: str) -> tuple[str, str]:
    """Red said to win, consistently in the Record, the Result header and the result token."""
    assert '\\"winner\\":\\"p1\\"' in heads
    heads = heads.replace('[Result "1-0"]', '[Result "0-1"]').replace('\\"winner\\":\\"p1\\"',
                                                                      '\\"winner\\":\\"p2\\"')
    return heads, moves.replace("1-0", "0-1")


EDITS = {
    "a move changed": (lambda h, m: (h, m.replace("1. c4 c2", "1. c4 d2")),
                       "ply 9 ('D3'): 'D3' is illegal in "),
    "the winner flipped": (_flip_winner, "the record says winner = 'p2'; its moves and agents give 'p1' "
                                         "(the game's end, ply 27)"),
    "the seed changed": (_edit_seed, "played again by search from its settings and seed, the game differs from "
                                     "the record at ply 1"),
    "a search's count changed": (_edit_iterations, "played again by search from its settings and seed, the game "
                                                   "differs from the record at ply 3"),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_an_edited_game_is_refused_naming_the_game_and_the_ply(tmp_path, edit):
    """Each edit keeps the headers consistent with the Record: only playing the game finds it. A
    valid game before it in the file is not stored either, and the store is left as it was."""
    change, message = EDITS[edit]
    text = tmp_path / "all.txt"
    export_games([ABLATION], text, "text")
    blocks = text.read_text().split("\n\n")
    heads, moves = change(blocks[0], blocks[1])
    out = tmp_path / "out"
    bad = tmp_path / "bad.txt"
    bad.write_text(heads + "\n\n" + moves + "\n")
    error = one_line(invoke("import", bad, "--out", out), 2)
    assert error.startswith(f"Error: {bad}:1: game 'mcts-co vs vanilla' #0: {message}"), error
    assert error.endswith("; it does not replay, nothing imported"), error
    assert not out.exists()
    # in an existing store, after a good game: nothing of the file is stored
    good = "\n\n".join(blocks[2:4]) + "\n"
    (tmp_path / "good.txt").write_text(good)
    assert invoke("import", tmp_path / "good.txt", "--out", out).exit_code == 0
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    line = good.count("\n") + 2
    bad.write_text(good + "\n" + heads + "\n\n" + moves + "\n" + blocks[4] + "\n\n" + blocks[5] + "\n")
    error = one_line(invoke("import", bad, "--out", out), 2)
    assert error.startswith(f"Error: {bad}:{line}: game 'mcts-co vs vanilla' #0: {message}"), error
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files


def test_without_search_a_game_is_played_through_the_rules_only(tmp_path):
    """--no-search: what the rules check is still checked; a search's own choices are not."""
    text, (heads, moves) = _one_game(tmp_path)
    seed = tmp_path / "seed.txt"
    seed.write_text("\n\n".join(_edit_seed(heads, moves)) + "\n")
    result = invoke("import", seed, "--out", tmp_path / "a", "--no-search")
    assert result.exit_code == 0 and "1 games imported" in result.output, result.output
    move = tmp_path / "move.txt"
    move.write_text(heads + "\n\n" + moves.replace("1. c4 c2", "1. c4 d2") + "\n")
    assert "ply 9 ('D3')" in one_line(invoke("import", move, "--out", tmp_path / "b", "--no-search"), 2)
    assert not (tmp_path / "b").exists()


def test_import_searches_by_default_and_a_plugin_game_only_walks(tmp_path):
    """The default re-plays a device game by search; a game whose agent is a plugin (a module the
    file names) or whose budget depends on the host is walked only: no code a file names is run."""
    text, (heads, moves) = _one_game(tmp_path)
    text.write_text(heads + "\n\n" + moves + "\n")
    result = invoke("import", text, "--out", tmp_path / "a")
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("(0 already there; 1 played again by search)"), result.output
    from boopexp.experiments.export import read_games
    from boopexp.play.replay import reproducible

    (record,) = [r for _, r in read_games(text)]
    assert reproducible(record)
    plugin = {**record["p2_spec"], "kind": "plugin", "plugin": "os:system", "kwargs": {"command": "false"}}
    assert not reproducible({**record, "p2_spec": plugin})
    assert not reproducible({**record, "budget": {"mode": "cpu", "seconds": 1.0}})


def test_import_reads_the_file_game_by_game(tmp_path):
    """The file is streamed: the first game is read before the reader meets a later line (a
    140 MB export is never whole in memory, issue 33: 1.6 GB peak before)."""
    text, (heads, moves) = _one_game(tmp_path)
    from boopexp.experiments.export import read_games

    text.write_text(heads + "\n\n" + moves + "\n\n" + "[Event ablation]\n")
    games = read_games(text)
    line, record = next(games)
    assert line == 1 and record["game_index"] == 0
    with pytest.raises(ConfigError, match=r":19: '\[Event ablation\]' is not a header"):
        next(games)


def test_a_long_header_costs_its_own_size_not_a_hundred_times_more(tmp_path):
    """Hostile trial of issue 33: a 5 MB [Comment] header made import peak at 1 GB (50 MB: 8.5 GB):
    the header pattern's alternation held backtracking state for every character."""
    import tracemalloc

    from boopexp.experiments.export import read_games

    text, (heads, moves) = _one_game(tmp_path)
    text.write_text('[Comment "' + "x" * 2_000_000 + '"]\n' + heads + "\n\n" + moves + "\n")
    tracemalloc.start()
    try:
        (line, record), = read_games(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert line == 1 and record["game_index"] == 0
    assert peak < 40_000_000, peak  # the line read and decoded, a few times its 2 MB; not 340 MB


# ---------------------------------------------------------------------------------------------
# export --out: links written through, - and devices streamed (issue 33)


def test_export_writes_through_a_link_and_streams_into_a_device(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    result = invoke("export", RESULTS / "a9-fixed", "--out", link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and target.read_text().startswith('[Event "a9-fixed"]')
    # a link to a character device (here /dev/null): written into, neither link nor device replaced
    null = tmp_path / "null"
    null.symlink_to(os.devnull)
    assert invoke("export", RESULTS / "a9-fixed", "--out", null).exit_code == 0
    assert null.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    # a FIFO: streamed to its reader
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()))
    reader.start()
    assert invoke("export", RESULTS / "a9-fixed", "--out", fifo).exit_code == 0
    reader.join(60)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and read == [target.read_bytes()]


def test_export_to_dash_is_standard_output_and_a_store_named_twice_is_read_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["export", str(RESULTS / "a9-fixed"), f"{RESULTS / 'a9-fixed'}/", "--out", "-"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "-").exists()
    assert result.stdout.startswith('[Event "a9-fixed"]') and result.stdout.count("[Event ") == 200
    assert result.stderr == "-: 200 games from 1 store(s) (text)\n"


def test_export_into_the_store_it_exports_is_refused(tmp_path):
    store = tmp_path / "store"
    shutil.copytree(RESULTS / "a9-fixed", store)
    before = {p.name: p.read_bytes() for p in store.iterdir()}
    for out in (store / "games.jsonl", store / "x.txt"):
        error = one_line(invoke("export", store, "--out", out), 2)
        assert error == f"Error: --out {out} is inside the store {str(store)!r} it exports; write it elsewhere"
    assert {p.name: p.read_bytes() for p in store.iterdir()} == before
