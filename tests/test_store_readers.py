"""One reading of a store: ``status`` and ``run --dry-run`` (the store's own reader) and ``tables``
and ``ratings`` (the analysis) accept or refuse the same damaged or odd store alike, with the
store's one line (file and line named, non-zero exit, nothing written) or its same warnings."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from report_fixtures import games_for, make_record

from boopexp.experiments import store as store_module
from boopexp.experiments.store.summary import summary_path, table_summary_bytes
from boopexp.interfaces.cli import main

#: Six good games of two pairings played both ways (the ratings can then be fitted).
GOOD = games_for("vanilla vs random", 2, 1) + games_for("random vs vanilla", 1, 2)
#: A config whose plan holds those pairings (``run --dry-run`` reads the store against it).
CONFIG = "name: s\nseed: 1\ngames_per_side: 3\nbudget: {mode: iterations, iterations: 2}\npairings:\n" \
         "  - [vanilla, random]\n"


def _line(record: Any) -> str:
    return record if isinstance(record, str) else json.dumps(record)


def _odd(**change: Any) -> dict[str, Any]:
    """A seventh game with ``change`` applied (a value ``...``: the key left out)."""
    record = make_record("vanilla vs random", 9, "p1")
    for key, value in change.items():
        if value is ...:
            record.pop(key)
        else:
            record[key] = value
    return record


def _store(folder: Path, lines: list[Any], tail: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "games.jsonl").write_text("".join(_line(r) + "\n" for r in lines) + tail, encoding="utf-8")
    return folder


def _snapshot(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _commands(tmp_path: Path, store: Path) -> dict[str, list[str]]:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    return {
        "status": ["status", str(store)],
        "run --dry-run": ["run", str(config), "--out", str(store), "--dry-run"],
        "tables": ["tables", str(store), "--out", str(tmp_path / "tables")],
        "ratings": ["ratings", str(store), "--out", str(tmp_path / "ratings")],
    }


def _all(tmp_path: Path, store: Path) -> dict[str, Any]:
    return {name: CliRunner().invoke(main, args) for name, args in _commands(tmp_path, store).items()}


def _error_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("Error:")]


# Records every reader refuses, the store's message for each (line 7: after the six good games).
REFUSED: dict[str, tuple[Callable[[], list[Any]], str]] = {
    # The analysis refused these, the store accepted them (status, resume): a store tabled by one
    # and resumed by the other.
    "pairing without ' vs '": (lambda: [*GOOD, _odd(pairing="solo")],
                               "invalid game record (pairing = 'solo' is not of the form 'A vs B')"),
    "empty settings hash": (lambda: [*GOOD, _odd(config_hash="")],
                            "invalid game record (config_hash = '' is not a non-empty string)"),
    # The store crashed on these (a pyarrow traceback), the analysis accepted them.
    "p1 not text": (lambda: [*GOOD, _odd(p1=3)], "invalid game record (p1 = 3 is not a string or null)"),
    "termination not text": (lambda: [*GOOD, _odd(termination=3)],
                             "invalid game record (termination = 3 is not a string or null)"),
    "experiment not text": (lambda: [*GOOD, _odd(experiment=4)],
                            "invalid game record (experiment = 4 is not a string or null)"),
    # Refused by both, in two wordings (the analysis: "path:7: ..."): now the store's line.
    "no winner key": (lambda: [*GOOD, _odd(winner=...)], "invalid game record (no 'winner' key)"),
    "winner 'draw'": (lambda: [*GOOD, _odd(winner="draw")],
                      "invalid game record (winner = 'draw' is not 'p1', 'p2' or null)"),
    "negative index": (lambda: [*GOOD, _odd(game_index=-1)],
                       "invalid game record (game_index = -1 is not an integer from 0 to 2^63-1)"),
    # issue 33: an index no int64 holds (an edited import) crashed every reader with a pyarrow
    # OverflowError; a count beyond one (plies) is no count
    "index beyond 2^63": (lambda: [*GOOD, _odd(game_index=2**63)],
                          "invalid game record (game_index = 9223372036854775808 is not an integer from 0 to 2^63-1)"),
    "no settings hash": (lambda: [*GOOD, _odd(config_hash=...)],
                         "invalid game record (config_hash = None is not a non-empty string)"),
    "not an object": (lambda: [*GOOD, "[1, 2]"], "invalid game record (not a JSON object but list)"),
    "newer schema": (lambda: [*GOOD, _odd(schema=3)], "record schema 3 is not 1 or 2 (written by a newer boopexp?)"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_bad_record_is_refused_by_every_reader_with_the_store_line(tmp_path, case):
    lines, problem = REFUSED[case]
    store = _store(tmp_path / "s", lines())
    before = _snapshot(store)
    results = _all(tmp_path, store)
    expected = f"Error: {store / 'games.jsonl'} line 7: {problem}"
    for name, result in results.items():
        assert result.exit_code == 1, (name, result.output)
        repair = "" if "schema" in problem else "; repair or remove that line"
        assert _error_lines(result) == [expected + repair], name
        assert "Traceback" not in result.output, name
    assert _snapshot(store) == before
    assert not (tmp_path / "tables").exists() and not (tmp_path / "ratings").exists()


def test_a_line_that_is_not_json_is_one_store_line_everywhere(tmp_path):
    store = _store(tmp_path / "s", [*GOOD[:3], '{"broken": ', *GOOD[3:]])
    results = _all(tmp_path, store)
    lines = {name: _error_lines(r) for name, r in results.items()}
    assert all(r.exit_code == 1 for r in results.values())
    assert len({tuple(v) for v in lines.values()}) == 1, lines
    assert lines["tables"][0].startswith(f"Error: {store / 'games.jsonl'} line 4: not valid JSON")


def _warnings(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("Warning:")]


# Stores every reader accepts, and the store's warning each gives (the same line everywhere).
ACCEPTED: dict[str, tuple[Callable[[Path], Path], str]] = {
    "truncated last line": (lambda d: _store(d, GOOD, tail='{"experiment": "x", "conf'),
                            "games.jsonl line 7: truncated last line (25 bytes without a newline"),
    # status said it, the tables said nothing
    "a game stored twice": (lambda d: _store(d, [*GOOD, GOOD[0]]),
                            "1 duplicate game record(s) ignored (each game counted once)"),
    "a game stored twice with another winner": (
        lambda d: _store(d, [*GOOD, {**GOOD[0], "winner": "p2"}]),
        "games.jsonl line 7: game 'vanilla vs random' #0 (settings 00000000000000aa) is stored again with "
        "winner 'p2', but"),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_an_odd_store_is_read_alike_with_the_store_warning(tmp_path, case):
    make, warning = ACCEPTED[case]
    store = make(tmp_path / "s")
    results = _all(tmp_path, store)
    for name, result in results.items():
        assert result.exit_code == 0, (name, result.output)
        if name != "run --dry-run":  # the plan only: it shows no reading's warnings
            assert any(warning in w for w in _warnings(result)), (name, _warnings(result))


def test_a_summary_row_that_is_no_game_is_not_used_by_any_reader(tmp_path):
    """A summary matching its segment but holding a row that is not a valid game (edited by hand:
    seal writes only checked records) is a cache gone wrong: every reader reads the segment instead
    (the analysis refused the store, status counted the bad row)."""
    store = _store(tmp_path / "s", GOOD)
    store_module.seal(store)
    (segment,) = store_module.segment_paths(store)
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(summary_path(segment))
    table = table.set_column(table.schema.get_field_index("winner"), "winner",
                             pa.array(["draw", *table["winner"].to_pylist()[1:]], pa.string()))
    summary_path(segment).write_bytes(table_summary_bytes(table.replace_schema_metadata(None), segment.read_bytes()))
    results = _all(tmp_path, store)
    for name, result in results.items():
        assert result.exit_code == 0, (name, result.output)
        note = f"{summary_path(segment)}: row 1 is not a valid game; the segment is read instead"
        assert name == "run --dry-run" or any(note in w for w in _warnings(result)), (name, result.stderr)
    assert "vanilla vs random: 3 games, p1 2 - p2 1" in results["status"].stdout  # the segment's games


@pytest.mark.parametrize("plan", ["plan: 5\n", "plan: [{pairing: 3}]\n"])
def test_a_damaged_plan_is_refused_by_every_reader(tmp_path, plan):
    """A config.yaml whose plan cannot be read: status refused it (exit 2), the tables counted every
    game of every settings instead (issue 20's silent mix)."""
    store = _store(tmp_path / "s", GOOD)
    (store / "config.yaml").write_text("name: s\n" + plan)
    results = {k: v for k, v in _all(tmp_path, store).items() if k != "run --dry-run"}
    lines = {name: _error_lines(r) for name, r in results.items()}
    assert all(r.exit_code == 2 for r in results.values()), {k: r.output for k, r in results.items()}
    assert len({tuple(v) for v in lines.values()}) == 1 and len(lines["status"]) == 1, lines
    assert str(store / "config.yaml") in lines["status"][0]
    assert not (tmp_path / "tables").exists() and not (tmp_path / "ratings").exists()


def test_a_config_without_a_plan_counts_every_game_everywhere(tmp_path):
    """A hand-written config.yaml without ``plan:`` (the tables counted every game; status refused
    the folder, exit 2): a store without a plan, as one without config.yaml, for every reader."""
    store = _store(tmp_path / "s", GOOD)
    (store / "config.yaml").write_text("name: s\n")
    results = {k: v for k, v in _all(tmp_path, store).items() if k != "run --dry-run"}
    assert all(r.exit_code == 0 for r in results.values()), {k: r.output for k, r in results.items()}
    assert "random vs vanilla" in results["status"].stdout and "vanilla vs random" in results["status"].stdout


def _knowledge_study(root: Path, extra: str = "", tail: str = "") -> Path:
    """A knowledge study folder whose one store, claims, holds a few pairs of games plus ``extra``
    (lines after them) and ``tail`` (a cut-short last line)."""
    from test_report_knowledge import write_store

    store = write_store(root, "claims", [("alphabeta", "vanilla", 1.0, 1.0, (3, 2, 1, 0))], tail="")
    with open(store / "games.jsonl", "a", encoding="utf-8") as fh:
        fh.write(extra + tail)
    return store


def test_the_studies_refuse_what_the_store_refuses(tmp_path):
    """``boopexp knowledge`` and ``robustness`` read a store through the store's reader too: a
    negative game index (status refused it, the studies' own line reader read it as a game)."""
    root = tmp_path / "knowledge"
    store = _knowledge_study(root)
    first = json.loads((store / "games.jsonl").read_text().splitlines()[0])
    line = len((store / "games.jsonl").read_text().splitlines()) + 1
    with open(store / "games.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({**first, "game_index": -1}) + "\n")
    before = _snapshot(root)
    status = CliRunner().invoke(main, ["status", str(store)])
    study = CliRunner().invoke(main, ["knowledge", str(root), "--out", str(tmp_path / "out")])
    expected = (f"Error: {store / 'games.jsonl'} line {line}: invalid game record (game_index = -1 is not an "
                "integer from 0 to 2^63-1); repair or remove that line")
    for result in (status, study):
        assert result.exit_code == 1, result.output
        assert _error_lines(result) == [expected]
    assert _snapshot(root) == before and not (tmp_path / "out").exists()


def test_the_studies_warn_as_the_store_does(tmp_path):
    root = tmp_path / "knowledge"
    store = _knowledge_study(root, tail='{"schema":2,"experi')
    status = CliRunner().invoke(main, ["status", str(store)])
    study = CliRunner().invoke(main, ["knowledge", str(root), "--out", str(tmp_path / "out")])
    warning = f"{store / 'games.jsonl'} line 13: truncated last line (19 bytes without a newline"
    for result in (status, study):
        assert result.exit_code == 0, result.output
        assert any(warning in w for w in _warnings(result)), result.stderr
