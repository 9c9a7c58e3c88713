"""Shards (``run --shard I/N``) and ``boopexp merge``: a deterministic 1/N of the plan by game
identity, and the shards' stores combined into the store an unsharded run writes (docs/cluster.md)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import DEMO_CONFIG, fake_play_game, one_line, without_timing
from store_helpers import patch_store, summaries

from boopexp.experiments.config import load_yaml, parse_config
from boopexp.experiments.pool import PoolOptions
from boopexp.experiments.runner import run_plan
from boopexp.experiments.store import GameStore, StoreReader, segment_data, segment_paths
from boopexp.interfaces.cli import main
from boopexp.play.identity import Shard, record_key

SWEPT = DEMO_CONFIG + "sweep:\n  budget.iterations: [2, 3, 4]\n"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def config_of(text, games_per_side=None):
    c = parse_config(load_yaml(text, "t.yaml"), "t.yaml")
    return c if games_per_side is None else c.with_games_per_side(games_per_side)


@pytest.mark.parametrize("text", [DEMO_CONFIG, SWEPT])
def test_the_shards_of_any_n_are_disjoint_and_together_the_plan(text):
    whole = config_of(text, 5)
    plan = [t.key for t in whole.iter_tasks(whole.plan())]
    for n in range(1, 8):
        parts = []
        for i in range(1, n + 1):
            c = whole.with_shard(Shard(i, n))
            keys = [t.key for t in c.iter_tasks(c.plan())]
            # what the store counts as planned is exactly what is played
            assert sum(p.share for p in c.plan()) == len(keys)
            assert all(any(e.counts(k[2]) for e in (p.entry() for p in c.plan())
                           if (e.config_hash, e.pairing) == k[:2]) for k in keys)
            parts.append(keys)
        union = [k for part in parts for k in part]
        assert len(union) == len(set(union)) and set(union) == set(plan), n
        # each pairing's games are dealt round-robin: its shares differ by at most one game
        for p in whole.plan():
            shares = [Shard(i, n).share(p.config_hash, p.pairing, p.games) for i in range(1, n + 1)]
            assert max(shares) - min(shares) <= 1 and sum(shares) == p.games


def test_a_game_belongs_to_the_same_shard_whatever_else_is_planned():
    # the shard of a game is a function of its identity: more games per side, or another pairing
    # planned beside it, move no game to another shard
    small, large = config_of(DEMO_CONFIG, 3), config_of(DEMO_CONFIG, 9)
    for i in range(1, 4):
        a, b = small.with_shard(Shard(i, 3)), large.with_shard(Shard(i, 3))
        keys_a = {t.key for t in a.iter_tasks(a.plan())}
        keys_b = {t.key for t in b.iter_tasks(b.plan())}
        games = {(p.config_hash, p.pairing): p.games for p in small.plan()}
        assert keys_a == {k for k in keys_b if k[2] < games[k[:2]]}
        one = a.plan()[:1]
        assert {t.key for t in a.iter_tasks(one)} == {k for k in keys_a if k[:2] == (one[0].config_hash,
                                                                                     one[0].pairing)}


def test_shards_played_with_any_jobs_are_the_unsharded_run_game_for_game(tmp_path):
    whole = config_of(DEMO_CONFIG, 3)
    run_plan(whole, whole.plan(), tmp_path / "all", PoolOptions(jobs=1, play=fake_play_game))
    expected = {k: without_timing(r) for k, r in _records(tmp_path / "all").items()}
    got = {}
    for i, jobs in ((1, 1), (2, 2), (3, 1)):
        c = whole.with_shard(Shard(i, 3))
        report = run_plan(c, c.plan(), tmp_path / f"s{i}", PoolOptions(jobs=jobs, play=fake_play_game))
        assert report.complete and report.planned == sum(p.share for p in c.plan())
        mine = _records(tmp_path / f"s{i}")
        assert not set(mine) & set(got)
        got.update({k: without_timing(r) for k, r in mine.items()})
    assert got == expected


@pytest.mark.e2e_real
def test_real_games_as_three_shards_merged_are_the_unsharded_run(tmp_path, real_play_game):
    config = tmp_path / "real.yaml"
    config.write_text(DEMO_CONFIG.replace("games_per_side: 2", "games_per_side: 3"))
    assert invoke("run", config, "--jobs", "1", "-q", "--out", tmp_path / "all").exit_code == 0
    for i, jobs in ((1, 1), (2, 2), (3, 1)):
        result = invoke("run", config, "--shard", f"{i}/3", "--jobs", jobs, "-q", "--out", tmp_path / f"shard-{i}")
        assert result.exit_code == 0, result.output
    result = invoke("merge", *(tmp_path / f"shard-{i}" for i in (1, 2, 3)), "--out", tmp_path / "merged")
    assert result.exit_code == 0, result.output
    merged = {k: without_timing(r) for k, r in _records(tmp_path / "merged").items()}
    assert merged == {k: without_timing(r) for k, r in _records(tmp_path / "all").items()} and len(merged) == 12


def _records(folder):
    return {(r["config_hash"], r["pairing"], r["game_index"]): r for r in StoreReader(folder).records().records}


def test_shard_option_errors_are_one_line_and_exit_2(tmp_path):
    config = tmp_path / "t.yaml"
    config.write_text(DEMO_CONFIG)
    out = tmp_path / "out"
    assert one_line(invoke("run", config, "--shard", "3/2", "--out", out), 2) == (
        "Error: --shard 3/2: I must be in 1..N (shard I of N, 1-based like sbatch --array=1-2)")
    assert one_line(invoke("run", config, "--shard", "0/4", "--out", out), 2) == (
        "Error: --shard 0/4: I must be in 1..N (shard I of N, 1-based like sbatch --array=1-4)")
    for bad in ("2", "a/b", "1/0", "/3"):
        line = one_line(invoke("run", config, "--shard", bad, "--out", out), 2)
        assert line.startswith(f"Error: --shard {bad}: expected I/N, shard I of N shards"), line
    for bad in ("99999999999999999999/99999999999999999999", "1/10000001"):  # issue 33: was a traceback
        line = one_line(invoke("run", config, "--shard", bad, "--out", out), 2)
        assert line == (f"Error: --shard {bad}: N must be at most 10000000 shards (a Slurm array has at most its "
                        "MaxArraySize jobs, 4000001 at the largest)"), line
    assert Shard.parse("10000000/10000000").count == 10**7
    sprt = tmp_path / "sprt.yaml"
    sprt.write_text(DEMO_CONFIG.replace("  - [vanilla, vanilla]\n", "") + "sprt: {elo0: 0, elo1: 30}\n")
    line = one_line(invoke("run", sprt, "--shard", "1/2", "--out", out), 2)
    assert line.startswith(f"Error: --shard 1/2: {sprt} has sprt:, which decides after each block of games"), line
    assert not out.exists()


def test_dry_run_and_status_show_the_shard_share(tmp_path):
    config = tmp_path / "t.yaml"
    config.write_text(DEMO_CONFIG)
    c = config_of(DEMO_CONFIG).with_shard(Shard(2, 3))
    shares = [p.share for p in c.plan()]
    dry = invoke("run", config, "--shard", "2/3", "--out", tmp_path / "s2", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "shard 2/3 (its share of the plan)" in dry.output.splitlines()[0]
    assert f"{sum(shares)} game(s) to play" in dry.output
    assert not (tmp_path / "s2").exists()
    run_plan(c, c.plan(), tmp_path / "s2", PoolOptions(jobs=1, play=fake_play_game))
    status = invoke("status", tmp_path / "s2", "--json")
    assert status.exit_code == 0, status.output
    (doc,) = json.loads(status.output)
    assert [p["planned"] for p in doc["pairings"]] == shares == [p["done"] for p in doc["pairings"]]
    assert doc["settings"]["shard"] == {"index": 2, "count": 3} and doc["other_records"] == 0
    total = [line.split() for line in invoke("status", tmp_path / "s2").output.splitlines() if "total" in line]
    assert total == [["total", f"{sum(shares)}/{sum(shares)}"]]


def test_status_takes_several_folders_and_refuses_a_missing_one(tmp_path):
    c = config_of(DEMO_CONFIG)
    for i in (1, 2):
        s = c.with_shard(Shard(i, 2))
        run_plan(s, s.plan(), tmp_path / f"s{i}", PoolOptions(jobs=1, play=fake_play_game))
    result = invoke("status", tmp_path / "s1", tmp_path / "s2", "--json")
    assert result.exit_code == 0, result.output
    docs = json.loads(result.stdout)
    assert [d["folder"] for d in docs] == [str(tmp_path / "s1"), str(tmp_path / "s2")]
    assert sum(d["total"]["done"] for d in docs) == sum(p.games for p in c.plan())
    text = invoke("status", tmp_path / "s1", tmp_path / "s2")
    assert f"{tmp_path / 's1'}: " in text.output and f"{tmp_path / 's2'}: " in text.output
    assert one_line(invoke("status", tmp_path / "s1", tmp_path / "nope"), 2) == (
        f"Error: no results folder {str(tmp_path / 'nope')!r}")


# --------------------------------------------------------------------------------------------
# merge


def snapshot(folder):
    """Every file's bytes (the empty advisory lock file is no data)."""
    if not folder.exists():
        return None
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "games.jsonl.lock"}


def shards(tmp_path, n=3, text=DEMO_CONFIG, games_per_side=3, unsharded=True):
    """The folders of ``n`` shards of a config (and of its unsharded run), played by the fake."""
    whole = config_of(text, games_per_side)
    if unsharded:
        run_plan(whole, whole.plan(), tmp_path / "all", PoolOptions(jobs=1, play=fake_play_game))
    folders = []
    for i in range(1, n + 1):
        c = whole.with_shard(Shard(i, n))
        run_plan(c, c.plan(), tmp_path / f"shard-{i}", PoolOptions(jobs=1, play=fake_play_game))
        folders.append(tmp_path / f"shard-{i}")
    return folders


def test_merged_shards_are_the_unsharded_store_game_for_game(tmp_path):
    folders = shards(tmp_path)
    result = invoke("merge", *folders, "--out", tmp_path / "merged")
    assert result.exit_code == 0, result.output
    games = len(_records(tmp_path / "all"))
    assert result.output == f"{tmp_path / 'merged'}: {games} games merged from 3 store(s) into games-0001.jsonl.zst " \
                            f"({games} games in all)\n"
    merged = {k: without_timing(r) for k, r in _records(tmp_path / "merged").items()}
    assert merged == {k: without_timing(r) for k, r in _records(tmp_path / "all").items()}
    # its summary (what status and a resumed run read) is what decoding its games gives
    from boopexp.experiments.store.summary import game_summary

    store = GameStore(tmp_path / "merged")
    assert StoreReader(store.directory).outcomes().scan.notes == ()
    assert summaries(store.directory) == [game_summary(r) for r in StoreReader(store.directory).records().records]
    # the settings are the unsharded run's, byte for byte; status counts the whole plan as done
    assert (tmp_path / "merged" / "config.yaml").read_bytes() == (tmp_path / "all" / "config.yaml").read_bytes()
    (doc,) = json.loads(invoke("status", tmp_path / "merged", "--json").output)
    assert doc["total"] == {"done": games, "planned": games} and doc["other_records"] == 0
    # in identity order: the shards' order on the command line does not change a byte
    assert invoke("merge", *reversed(folders), "--out", tmp_path / "again").exit_code == 0
    assert snapshot(tmp_path / "again") == snapshot(tmp_path / "merged")


def test_merge_is_idempotent_and_adds_a_late_shard(tmp_path):
    folders = shards(tmp_path, unsharded=False)
    out = tmp_path / "merged"
    assert invoke("merge", *folders[:2], "--out", out).exit_code == 0
    before = snapshot(out)
    result = invoke("merge", *folders[:2], "--out", out)
    assert result.exit_code == 0, result.output
    assert result.output == f"{out}: nothing to merge, every game of the 2 store(s) is there " \
                            f"({len(_records(out))} games)\n"
    assert snapshot(out) == before
    result = invoke("merge", *folders, "--out", out)  # the third shard, finished later
    assert result.exit_code == 0 and "into games-0002.jsonl.zst" in result.output, result.output
    assert set(_records(out)) == set().union(*(_records(f) for f in folders))
    after = snapshot(out)
    assert invoke("merge", *folders, "--out", out).exit_code == 0 and snapshot(out) == after


def test_merge_refuses_two_different_copies_of_one_game_and_writes_nothing(tmp_path):
    folders = shards(tmp_path, n=2, unsharded=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.yaml").write_bytes((folders[0] / "config.yaml").read_bytes())
    (first,) = [r for r in StoreReader(folders[0]).records().records][:1]
    for changed, what in ((dict(first, winner="p2" if first["winner"] == "p1" else "p1"), "winner"),
                          (dict(first, moves=list(reversed(first["moves"]))), "moves")):
        from boopexp.experiments.store import encode_record

        (other / "games.jsonl").write_bytes(encode_record(changed))
        out = tmp_path / f"merged-{what}"
        line = one_line(invoke("merge", *folders, other, "--out", out), 1)
        head = (f"Error: {other / 'games.jsonl'} line 1: game {first['pairing']!r} #{first['game_index']} "
                f"(settings {first['config_hash']}) is stored again")
        assert line.startswith(head) and line.endswith("nothing merged: remove the wrong copy, then merge again"), line
        assert ("with winner" in line) == (what == "winner") and ("as another game" in line) == (what == "moves")
        assert not out.exists() and not (tmp_path / f".merged-{what}.merging").exists()
    # a copy that is the same game (played again: other host timings) is merged once
    (other / "games.jsonl").write_bytes(encode_record(dict(first, host_seconds=first["host_seconds"] + 1)))
    assert invoke("merge", *folders, other, "--out", tmp_path / "fine").exit_code == 0


def sealed_shards(tmp_path, n=3, games_per_side=3):
    """``shards`` (no unsharded run), each sealed: what merge reads from summaries alone."""
    folders = shards(tmp_path, n=n, games_per_side=games_per_side, unsharded=False)
    for folder in folders:
        assert invoke("seal", folder).exit_code == 0
    return folders


def test_merge_reads_sealed_stores_from_their_summaries_and_decodes_no_record(tmp_path, monkeypatch):
    folders = sealed_shards(tmp_path)
    expected = set().union(*(_records(f) for f in folders))

    def refuse(*args):
        raise AssertionError(f"merge decoded a record: {args[:2]}")

    patch_store(monkeypatch, "parse_line", refuse)
    for out in (tmp_path / "merged", tmp_path / "merged"):  # new, then again (every game stored twice)
        result = invoke("merge", *folders, "--out", out)
        assert result.exit_code == 0, result.output
    monkeypatch.undo()
    assert set(_records(tmp_path / "merged")) == expected
    assert StoreReader(tmp_path / "merged").outcomes().scan.notes == ()


def test_a_large_merge_streams_into_several_segments_in_identity_order(tmp_path, monkeypatch):
    from boopexp.experiments.store.summary import game_summary

    folders = sealed_shards(tmp_path, games_per_side=5)
    assert invoke("merge", *folders, "--out", tmp_path / "whole").exit_code == 0
    # segments of 7 games, lines set aside in scratch files of 3 (the path of a merge of millions)
    patch_store(monkeypatch, "SEGMENT_GAMES", 7)
    patch_store(monkeypatch, "MERGE_BUCKET_GAMES", 3)
    out = tmp_path / "merged"
    result = invoke("merge", *folders, "--out", out)
    assert result.exit_code == 0, result.output
    segments = segment_paths(out)
    games = len(_records(tmp_path / "whole"))
    assert len(segments) == -(-games // 7) and result.output == (
        f"{out}: {games} games merged from 3 store(s) into games-0001.jsonl.zst .. {segments[-1].name} "
        f"({games} games in all)\n")
    # the same lines in the same (identity) order as the merge into one segment; each summary is
    # what decoding its segment gives; nothing left aside

    assert b"".join(segment_data(p) for p in segments) == segment_data(tmp_path / "whole" / "games-0001.jsonl.zst")
    scan = StoreReader(out).records()
    assert [record_key(r) for r in scan.records] == sorted(record_key(r) for r in scan.records)
    assert StoreReader(out).outcomes().scan.notes == ()
    assert summaries(out) == [game_summary(r) for r in scan.records]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    # again: nothing to add; into an earlier merge of two shards: the third's games in new segments
    before = snapshot(out)
    assert "nothing to merge" in invoke("merge", *folders, "--out", out).output and snapshot(out) == before
    late = tmp_path / "late"
    assert invoke("merge", *folders[:2], "--out", late).exit_code == 0
    assert invoke("merge", *folders, "--out", late).exit_code == 0
    assert set(_records(late)) == set(_records(out)) and StoreReader(late).outcomes().scan.notes == ()


def played_again(tmp_path, folders, name, change=None):
    """A store (a live log) of every game of ``folders`` played again: the same games with other
    host timings; ``change`` (a game's place -> a function of its record) makes some copies other games."""
    from boopexp.experiments.store import encode_record

    records = [r for f in folders for r in StoreReader(f).records().records]
    change = change or {}
    other = tmp_path / name
    other.mkdir()
    (other / "config.yaml").write_bytes((folders[0] / "config.yaml").read_bytes())
    (other / "games.jsonl").write_bytes(b"".join(
        encode_record(change.get(i, lambda r: r)(dict(r, host_seconds=r["host_seconds"] + 1)))
        for i, r in enumerate(records)))
    return other


def test_games_played_twice_are_compared_in_one_pass_over_the_stores_whatever_the_batch(tmp_path, monkeypatch):
    import collections

    from boopexp.experiments.store import merging

    folders = sealed_shards(tmp_path, n=2)
    # every game stored three times: twice more with other host timings (one copy sealed, one a log)
    copies = [played_again(tmp_path, folders, "again"), played_again(tmp_path, folders, "twice")]
    assert invoke("seal", copies[0]).exit_code == 0
    games = sum(len(_records(f)) for f in folders)
    reads, compared = collections.Counter(), collections.Counter()
    lines, same_game = merging._MergePlan._lines, merging.same_game

    def counted_lines(f):
        reads[f.path] += 1
        return lines(f)

    def counted_same_game(a, b):
        compared[a["pairing"], a["game_index"]] += 1
        return same_game(a, b)

    monkeypatch.setattr(merging._MergePlan, "_lines", staticmethod(counted_lines))
    patch_store(monkeypatch, "same_game", counted_same_game)
    assert invoke("merge", *folders, "--out", tmp_path / "shards").exit_code == 0
    seen = {}
    # all the pairs in one batch, then two pairs a batch (the path of a merge of millions of games)
    for pairs in (1 << 13, 2):
        patch_store(monkeypatch, "_COMPARE_PAIRS", pairs)
        reads.clear()
        compared.clear()
        out = tmp_path / f"merged-{pairs}"
        result = invoke("merge", *folders, *copies, "--out", out)
        assert result.exit_code == 0, result.output
        # each game compared with each of its two other copies, as games
        assert len(compared) == games and set(compared.values()) == {2}
        # a bounded number of reads of each source (its digests, the comparison, the new lines),
        # not one more per batch of pairs compared
        assert max(reads.values()) <= 3 and all(reads[p] == 2 for p in reads if p.parent in copies), reads
        seen[pairs] = (dict(reads), snapshot(out))
        # the first copies, byte for byte: what merging the shards alone writes; nothing left aside
        assert snapshot(out) == snapshot(tmp_path / "shards")
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".merging")]
    assert seen[2] == seen[1 << 13]
    # again into the merge: nothing to add (every game now stored four times), nothing changed
    before = snapshot(tmp_path / "merged-2")
    result = invoke("merge", *folders, *copies, "--out", tmp_path / "merged-2")
    assert "nothing to merge" in result.output and snapshot(tmp_path / "merged-2") == before


def test_a_game_played_twice_as_another_game_in_a_later_batch_is_refused_and_nothing_written(tmp_path, monkeypatch):

    folders = sealed_shards(tmp_path, n=2)
    records = [r for f in folders for r in StoreReader(f).records().records]
    last = len(records) - 1
    # the last copy (the last pair compared) has other moves: the same winner, another game
    other = played_again(tmp_path, folders, "other", {last: lambda r: dict(r, moves=list(reversed(r["moves"])))})
    game = records[last]
    expected = (f"Error: {other / 'games.jsonl'} line {last + 1}: game {game['pairing']!r} #{game['game_index']} "
                f"(settings {game['config_hash']}) is stored again as another game (same winner {game['winner']!r}, "
                f"other moves or fields than ")
    existing = tmp_path / "existing"
    assert invoke("merge", *folders, "--out", existing).exit_code == 0
    before = snapshot(existing)
    lines = {}
    for pairs in (1 << 13, 2):
        patch_store(monkeypatch, "_COMPARE_PAIRS", pairs)
        out = tmp_path / "a" / "b" / "merged"  # a new folder whose parents do not exist
        lines[pairs] = one_line(invoke("merge", *folders, other, "--out", out), 1)
        assert lines[pairs].startswith(expected) and lines[pairs].endswith(
            "nothing merged: remove the wrong copy, then merge again"), lines[pairs]
        assert not (tmp_path / "a").exists()
        # into an existing store: as it was, nothing left aside beside it
        line = one_line(invoke("merge", other, "--out", existing), 1)
        assert line.startswith(expected), line
        assert snapshot(existing) == before and not (tmp_path / ".existing.merging").exists()
    assert lines[2] == lines[1 << 13]


def test_merge_into_a_new_folder_whose_parents_do_not_exist_creates_them(tmp_path):
    folders = sealed_shards(tmp_path, n=2)
    out = tmp_path / "a" / "b" / "merged"
    result = invoke("merge", *folders, "--out", out)
    assert result.exit_code == 0, result.output
    assert set(_records(out)) == set().union(*(_records(f) for f in folders))
    assert [p.name for p in out.parent.iterdir()] == ["merged"]


def test_merge_into_an_existing_store_refuses_a_conflict_before_writing(tmp_path):
    from boopexp.experiments.store import encode_record

    folders = sealed_shards(tmp_path, n=2)
    out = tmp_path / "merged"
    assert invoke("merge", folders[0], "--out", out).exit_code == 0
    before = snapshot(out)
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.yaml").write_bytes((folders[0] / "config.yaml").read_bytes())
    first = StoreReader(folders[0]).records().records[0]
    # a copy of one of out's games with other moves, after the games the second shard would add
    (other / "games.jsonl").write_bytes(encode_record(dict(first, moves=list(reversed(first["moves"])))))
    line = one_line(invoke("merge", folders[1], other, "--out", out), 1)
    assert line.startswith(f"Error: {other / 'games.jsonl'} line 1: game {first['pairing']!r} #{first['game_index']}") \
        and f"other moves or fields than {out / 'games-0001.jsonl.zst'} line " in line, line
    assert snapshot(out) == before and not (tmp_path / ".merged.merging").exists()


def test_merge_refuses_stores_of_other_settings_in_one_line(tmp_path):
    folders = shards(tmp_path, n=2, unsharded=False)
    c = config_of(DEMO_CONFIG.replace("seed: 11", "seed: 12"), 3).with_shard(Shard(1, 2))
    run_plan(c, c.plan(), tmp_path / "seed12", PoolOptions(jobs=1, play=fake_play_game))
    out = tmp_path / "merged"
    line = one_line(invoke("merge", folders[0], tmp_path / "seed12", "--out", out), 2)
    assert line == (f"Error: {folders[0] / 'config.yaml'} and {tmp_path / 'seed12' / 'config.yaml'} differ in seed "
                    "(11 vs 12): merge only stores of the same settings (the shards of one run)")
    assert not out.exists()
    assert one_line(invoke("merge", folders[0], tmp_path / "nope", "--out", out), 2) == (
        f"Error: no results folder {str(tmp_path / 'nope')!r}")
    # a shard's own folder is no place for the merge: its config.yaml is the shard's
    before = snapshot(folders[0])
    line = one_line(invoke("merge", *folders, "--out", folders[0]), 2)
    assert line == (f"Error: --out {folders[0]} holds a store of other settings: its config.yaml has shard = "
                    "{'index': 1, 'count': 2}, the merged stores' None; merge into a new folder (or an earlier "
                    "merge's)"), line
    assert snapshot(folders[0]) == before


@pytest.mark.parametrize("fault, existing", [("merge:written", False), ("merge:built", False),
                                             ("merge:synced", True), ("merge-summary:renamed", True),
                                             ("merge:renamed", True)])
def test_a_merge_killed_leaves_out_as_it_was_or_complete_and_a_rerun_finishes(tmp_path, fault, existing):
    import os
    import signal
    import subprocess
    import sys

    folders = shards(tmp_path, unsharded=False)
    out = tmp_path / "merged"
    if existing:
        assert invoke("merge", folders[0], "--out", out).exit_code == 0
    before = snapshot(out)
    env = {**os.environ, "BOOPEXP_STORE_FAULT": fault}
    done = subprocess.run([sys.executable, "-m", "boopexp", "merge", *map(str, folders), "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    whole = set().union(*(_records(f) for f in folders))
    # as it was (nothing, or the earlier merge; a temporary file, or a summary whose segment was
    # never renamed into place, is never read) or complete
    now = None if not out.exists() else {
        k: v for k, v in snapshot(out).items()
        if not k.endswith(".tmp") and not (k.startswith("summary-") and not (out / k.replace(
            "summary-", "games-").replace(".parquet", ".jsonl.zst")).exists())}
    assert now == before or set(_records(out)) == whole
    result = invoke("merge", *folders, "--out", out)
    assert result.exit_code == 0, result.output
    assert set(_records(out)) == whole and StoreReader(out).records().duplicates == 0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".merging")]
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    # every segment has its summary, equal to what decoding the segment gives
    assert StoreReader(out).outcomes().scan.notes == () and len(list(out.glob("summary-*.parquet"))) == len(
        segment_paths(out))
