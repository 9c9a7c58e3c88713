"""Record schema 2 (compact, column-wise) against schema 1, and ``boopexp migrate``.

tests/data/schema1_games.jsonl holds four committed schema-1 records as the runner wrote them
before schema 2 (three device-mode games, one cpu-mode game).
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from store_helpers import summaries

from boopexp.analysis.builder import build_report
from boopexp.errors import StoreError
from boopexp.experiments.store import FAULT_ENV, GameStore, StoreReader, encode_record, migrate, seal, segment_data
from boopexp.experiments.store.summary import game_summary
from boopexp.game.sides import Colour, Side
from boopexp.play.contract import (
    FORFEITS,
    RECORD_SCHEMA,
    TELEMETRY_ORDER,
    ForfeitInfo,
    GameRecord,
    MoveTelemetry,
    Termination,
    build_record,
    pack_record,
    task_from_record,
    unpack_record,
    without_host_timing,
)
from boopexp.play.identity import record_key

SCHEMA1 = Path(__file__).parent / "data" / "schema1_games.jsonl"


def schema1_records() -> list[dict]:
    return [json.loads(line) for line in SCHEMA1.read_text().splitlines()]


def schema1_store(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(SCHEMA1, folder / "games.jsonl")
    return folder


def test_pack_is_column_wise_rounded_and_leaves_out_what_the_rest_determines():
    record = schema1_records()[0]
    packed = pack_record(record)
    assert packed["schema"] == RECORD_SCHEMA == 2
    for derived in ("p1", "p2", "winner_agent", "winner_colour", "termination", "plies"):
        assert derived not in packed
    assert list(packed["telemetry"]) == ["iterations", "solver_calls", "equivalent_moves", "equivalent_candidates",
                                         "nodes_created", "playout_plies", "solver_moves", "device_seconds",
                                         "host_cpu_seconds"]
    assert packed["telemetry"]["device_seconds"][:2] == [1.0063664, 1.0109996]  # 0.1 µs
    assert packed["telemetry"]["host_cpu_seconds"][:2] == [0.2425, 0.0028]  # 0.1 ms
    assert packed["moves"] == record["moves"] and packed["seed"] == record["seed"]
    assert len(encode_record(record)) < len(json.dumps(record)) / 4


@pytest.mark.parametrize("index", range(4))
def test_unpack_gives_back_the_record_with_its_floats_rounded(index):
    record = schema1_records()[index]
    back = unpack_record(json.loads(encode_record(record)))
    assert back == unpack_record(record)
    assert list(back) == list(record) and [list(m) for m in back["telemetry"]] == [list(m) for m in record["telemetry"]]
    for mine, theirs in zip(back["telemetry"], record["telemetry"]):
        assert mine["device_seconds"] == pytest.approx(theirs["device_seconds"], abs=5e-8)
        assert mine["host_cpu_seconds"] == pytest.approx(theirs["host_cpu_seconds"], abs=5e-5)
        assert ({k: v for k, v in mine.items() if "seconds" not in k}
                == {k: v for k, v in theirs.items() if "seconds" not in k})
    assert task_from_record(back) == task_from_record(record)
    assert pack_record(back) == pack_record(record) == pack_record(pack_record(record))


def test_fields_that_differ_from_their_derivation_and_unknown_keys_are_kept():
    record = unpack_record(schema1_records()[0])
    record.update(termination="forfeit", forfeit={"agent": "p2", "reason": "timeout"}, sweep={"uct_c": 0.5})
    record["telemetry"][3]["tree_nodes"] += 5  # a tree that is not the root plus the nodes created
    record["telemetry"][0]["agent"] = "someone else"
    packed = json.loads(encode_record(record))
    assert packed["termination"] == "forfeit" and packed["sweep"] == {"uct_c": 0.5} and "forfeit" in packed
    assert "tree_nodes" in packed["telemetry"] and "agent" in packed["telemetry"] and "ply" not in packed["telemetry"]
    assert unpack_record(packed) == record


def test_moves_with_different_telemetry_fields_are_kept_move_by_move():
    record = unpack_record(schema1_records()[1])
    record["telemetry"][2]["plugin_evals"] = 12
    packed = json.loads(encode_record(record))
    assert isinstance(packed["telemetry"], list)
    assert unpack_record(packed) == record


def test_a_newer_schema_is_an_error_naming_the_line(tmp_path):
    (tmp_path / "games.jsonl").write_text(json.dumps({**pack_record(schema1_records()[0]), "schema": 3}) + "\n")
    with pytest.raises(StoreError, match=r"games.jsonl line 1: .*schema 3"):
        StoreReader(tmp_path).records()


def test_migrate_rewrites_a_schema1_store_into_one_segment_and_is_idempotent(tmp_path):
    store = GameStore(schema1_store(tmp_path / "r"))
    before = StoreReader(store.directory).records().records
    report = migrate(store.directory)
    assert report.changed and report.games == 4 and report.segment.name == "games-0001.jsonl.zst"
    assert store.games_path.read_bytes() == b""
    lines = segment_data(report.segment).splitlines()
    assert [json.loads(line)["schema"] for line in lines] == [2, 2, 2, 2]
    assert StoreReader(store.directory).records().records == before
    assert report.segment.stat().st_size < SCHEMA1.stat().st_size / 10
    data = report.segment.read_bytes()
    again = migrate(store.directory)
    assert not again.changed and report.segment.read_bytes() == data
    # a migrated store takes new games, and migrating again folds them in
    with store.open() as w:
        w.append(schema1_records()[0])  # already there: a duplicate
        extra = unpack_record(schema1_records()[0])
        extra["game_index"] = 7
        w.append(extra)
    seal(store.directory)
    third = migrate(store.directory)
    assert third.changed and third.games == 5 and [p.name for p in third.removed] == ["games-0002.jsonl.zst"]
    assert [p.name for p in store.directory.glob("games-*")] == ["games-0001.jsonl.zst"]
    stored = StoreReader(store.directory).records().records
    assert [record_key(r) for r in stored] == [record_key(r) for r in before] + [
        (extra["config_hash"], extra["pairing"], 7)]


def test_schema1_and_schema2_stores_give_identical_tables(tmp_path):
    old = schema1_store(tmp_path / "old")
    new = schema1_store(tmp_path / "new")
    migrate(new)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build_report([old], tmp_path / "t-old")
        build_report([new], tmp_path / "t-new")
    texts = sorted(p.name for p in (tmp_path / "t-old").iterdir() if p.suffix in (".md", ".csv", ".tex"))
    assert texts
    for name in texts:
        assert (tmp_path / "t-old" / name).read_bytes() == (tmp_path / "t-new" / name).read_bytes(), name


def test_replay_comparison_holds_across_schemas():
    # what `boopexp replay --search` compares: a schema-1 record and its schema-2 form are the same game
    for record in schema1_records():
        stored2 = unpack_record(json.loads(encode_record(record)))
        assert without_host_timing(stored2) == without_host_timing(unpack_record(record))


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX only")
@pytest.mark.parametrize("step", ["migrate-summary:written", "migrate-summary:renamed", "migrate:written",
                                  "migrate:synced", "migrate:renamed", "migrate:truncated"])
def test_a_migrate_killed_at_any_step_loses_nothing_and_a_rerun_finishes_it(tmp_path, step):
    folder = schema1_store(tmp_path / "r")
    (folder / "games-0001.jsonl.gz").write_bytes(gzip.compress(encode_record(schema1_records()[1])))
    (folder / "games-0002.jsonl.gz").write_bytes(gzip.compress(encode_record(schema1_records()[2])))
    expected = [record_key(r) for r in StoreReader(folder).records().records]
    env = {**os.environ, FAULT_ENV: step}
    done = subprocess.run([sys.executable, "-m", "boopexp", "migrate", str(folder)], env=env, capture_output=True)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    assert [record_key(r) for r in StoreReader(folder).records().records] == expected
    # a summary written for the new segment while the old one is still in place is not trusted
    assert [record_key(r) for r in StoreReader(folder).outcomes().records()] == expected
    migrate(folder)
    # the older gzip segments converted (issue 22: zstd segments)
    assert [p.name for p in folder.glob("games-*")] == ["games-0001.jsonl.zst"] and not list(folder.glob(".games-*"))
    lines = segment_data(folder / "games-0001.jsonl.zst").splitlines()
    assert [record_key(json.loads(line)) for line in lines] == expected
    assert [p.name for p in folder.glob("summary-*")] == ["summary-0001.parquet"]
    assert not list(folder.glob(".summary-*"))
    assert summaries(folder) == [game_summary(r) for r in StoreReader(folder).records().records]
    assert StoreReader(folder).outcomes().scan.warnings() == []


def test_unpack_does_not_change_its_argument():
    record = schema1_records()[0]
    copied = copy.deepcopy(record)
    unpack_record(record)
    pack_record(record)
    assert record == copied
    # equal is not enough: a member equals its string; the argument keeps JSON's plain strings
    assert type(record["winner"]) is str and type(record["telemetry"][0]["player"]) is str


# ---------------------------------------------------------------------------------------------
# the record's type and vocabularies (contract.GameRecord, game/sides.py) against the stored JSON


def test_unpack_gives_the_vocabularies_as_members_equal_to_the_stored_strings():
    for stored in (schema1_records()[0], json.loads(encode_record(schema1_records()[0]))):  # schema 1 and 2
        record = unpack_record(stored)
        assert record["winner"] is Side.P1 and record["winner_colour"] is Colour.BLUE
        assert record["termination"] is Termination.VICTORY
        assert {type(m["player"]) for m in record["telemetry"]} == {Side}
        assert record["winner"] == "p1" and record["termination"] == "victory"
        assert record["telemetry"][1]["player"] == "p2"
    forfeited = unpack_record({**schema1_records()[0], "winner": "p2", "termination": "agent_error",
                               "forfeit": {"player": "p1", "agent": "x", "error": "boom"}})
    assert forfeited["termination"] is Termination.AGENT_ERROR and forfeited["forfeit"]["player"] is Side.P1
    damaged = unpack_record({**schema1_records()[0], "winner": "p3", "termination": 7})
    assert type(damaged["winner"]) is str and damaged["termination"] == 7  # left for the checks to name


def test_build_record_writes_members_and_takes_a_side_s_string():
    task = task_from_record(schema1_records()[0])
    record = build_record(task, "p2", ["c3"], [], 0.0)
    assert record["winner"] is Side.P2 and record["winner_colour"] is Colour.RED
    assert record["winner_agent"] == task.p2.name and record["termination"] is Termination.VICTORY
    assert build_record(task, None, ["c3"], [], 0.0)["termination"] is Termination.PLY_LIMIT
    with pytest.raises(ValueError):
        build_record(task, "p3", ["c3"], [], 0.0)  # once recorded as a red win


def test_members_are_stored_byte_for_byte_as_their_strings():
    """The stored JSON is what it was before the enums: members and their strings encode alike,
    in the store (compact) and in ``play --json`` (indented)."""
    raw = schema1_records()[2]
    members = unpack_record(raw)
    strings = json.loads(json.dumps(members))
    assert type(members["winner"]) is Side and type(strings["winner"]) is str
    assert encode_record(members) == encode_record(strings) == encode_record(unpack_record(strings))
    assert json.dumps(members, indent=1) == json.dumps(strings, indent=1)
    # a member the store keeps (not derived from the rest) is written as its string
    assert b',"termination":"agent_error",' in encode_record({**members, "termination": Termination.AGENT_ERROR})


def test_a_member_reads_as_its_string():
    for member, text in ((Side.P1, "p1"), (Colour.RED, "red"), (Termination.PLY_LIMIT, "ply_limit")):
        assert member == text and hash(member) == hash(text) and {text: 1}[member] == 1
        assert str(member) == f"{member}" == "%s" % member == text  # noqa: UP031 - %-formatting too
        assert repr(member) == repr(text)
        assert f"{member:>10}" == f"{text:>10}"
    assert Side.P1.colour is Colour.BLUE and Colour.RED.side is Side.P2 and Side.P2.opponent is Side.P1
    assert Colour.of(-1) is Colour.BLUE and Colour.of(1) is Colour.RED and Colour.RED.code == 1
    assert [s.seat for s in Side] == [0, 1]
    with pytest.raises(ValueError):
        Colour.of(0)
    assert "agent_error" in FORFEITS and "victory" not in FORFEITS


ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def _record_block() -> str:
    """The JSON-with-comments block of docs/architecture.md's "The game record"."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("## The game record", 1)[1]
    return section.split("```json\n", 1)[1].split("\n```", 1)[0]


def _documented(block: str) -> tuple[dict[tuple[str, ...], list[tuple[str, bool]]], dict[str, str]]:
    """The keys the block shows: ``{path of the keys holding it: [(key, optional), ...]}`` in order
    (a commented-out key, ``// "max_plies": 200``, is optional), and each top-level key's comment
    (with its continuation lines, ``// | ...``)."""
    keys: dict[tuple[str, ...], list[tuple[str, bool]]] = {}
    comments: dict[str, str] = {}
    stack: list[str | None] = []
    last: str | None = None
    last_top = ""
    for line in block.splitlines():
        text, optional = line.strip(), False
        if text.startswith("//"):
            if not text[2:].lstrip().startswith('"'):  # a comment: the previous key's, if it goes on
                if text[2:].lstrip().startswith("|") and last_top in comments:
                    comments[last_top] += " " + text[2:]
                continue
            text, optional = text[2:], True  # a key commented out: shown, but optional
        # the code, and its comment after the first // outside a string
        cut = re.sub(r'"[^"]*"', lambda m: "_" * len(m.group()), text).find("//")
        code, comment = (text, "") if cut < 0 else (text[:cut], text[cut + 2:])
        for token in re.finditer(r'"([^"]*)"\s*(:)?|[{\[]|[}\]]', code):
            if token.group(0) in ("{", "["):
                stack.append(last)
                last = None
            elif token.group(0) in ("}", "]"):
                stack.pop()
            elif token.group(2):
                last = token.group(1)
                path = tuple(k for k in stack if k is not None)
                keys.setdefault(path, []).append((last, optional))
                if path == ():
                    last_top = last
                    comments[last] = comment
    return keys, comments


def _keys(typed_dict) -> list[tuple[str, bool]]:
    return [(k, k in typed_dict.__optional_keys__) for k in typed_dict.__annotations__]


def test_the_documented_record_is_GameRecord():
    """docs/architecture.md shows the record that contract.GameRecord declares: the same keys in
    the same order, the same optional keys (commented out in the doc), per move and per forfeit too."""
    keys, _ = _documented(_record_block())
    assert keys[()] == _keys(GameRecord)
    assert keys[("telemetry",)] == _keys(MoveTelemetry)
    assert [k for k, _ in keys[("telemetry",)]] == list(TELEMETRY_ORDER)
    assert {k for k, _ in keys[("forfeit",)]} == set(ForfeitInfo.__annotations__)


def test_the_documented_vocabularies_are_the_enums():
    _, comments = _documented(_record_block())

    def listed(key: str) -> set[str | None]:
        words = re.findall(r'"(\w+)"|\b(null)\b', comments[key])
        return {None if null else word for word, null in words}

    assert listed("winner") == {*Side, None}
    assert listed("winner_colour") == {*Colour, None}
    assert listed("termination") == set(Termination)


def test_the_doc_reader_sees_what_it_should():
    keys, comments = _documented('{\n  "a": 1,  // "x" | "y"\n  // | "z"\n  "b": {"c": [{"d": 2}]},\n  // "e": 3\n}')
    assert keys == {(): [("a", False), ("b", False), ("e", True)], ("b",): [("c", False)], ("b", "c"): [("d", False)]}
    assert "z" in comments["a"]
