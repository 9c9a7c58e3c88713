"""The games read from the summaries and the moves streamed (analysis/records.py, analysis/moves.py):
the same as decoding every record, on every committed store and on records of every shape."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from store_helpers import patch_store, sampled_store

from boopexp.analysis import figures, moves, tables
from boopexp.analysis.builder import build_report
from boopexp.analysis.records import load_results
from boopexp.errors import StoreError
from boopexp.experiments.store import StoreReader, has_games_files, seal
from boopexp.experiments.tally import PairingScore
from boopexp.play.contract import is_draw
from boopexp.play.identity import pairing_agents

RESULTS = Path(__file__).resolve().parent.parent / "results"
#: every committed store (a folder holding sealed segments)
STORES = sorted({p.parent for p in RESULTS.rglob("games-*.jsonl.*")})


def _oracle(dirs: list[Path]) -> dict[str, dict[str, float]]:
    """Per agent, what the telemetry table read of the moves before they were streamed: every
    record decoded, one pandas row a move (the code this replaced, kept here as the test's oracle)."""
    rows = []
    decided = {}
    seen = set()
    for d in dirs:
        for record in StoreReader(d).records().records:  # the store's whole records, each game once
            key = (record["config_hash"], record["pairing"], record["game_index"])
            if key in seen:  # the first copy counts
                continue
            seen.add(key)
            names = record["pairing"].split(" vs ")
            game = {"config_hash": key[0], "pairing": key[1], "game_index": key[2],
                    "p1": record.get("p1") if isinstance(record.get("p1"), str) else names[0],
                    "p2": record.get("p2") if isinstance(record.get("p2"), str) else names[1]}
            decided[key] = record["winner"] is not None or is_draw(record)  # finished: not the ply cap
            rows += moves.ply_rows(record, game)
    plies = pd.DataFrame(rows)
    out: dict[str, dict[str, float]] = {}
    for agent, grp in plies.groupby("agent"):
        row = {"moves": len(grp)}
        for f in moves.DISTRIBUTION_FIELDS:
            row[f"{f}_median"] = grp[f].median()
            row[f"{f}_q25"] = grp[f].quantile(0.25)
            row[f"{f}_q75"] = grp[f].quantile(0.75)
        mine = grp[[decided[k] for k in zip(grp["config_hash"], grp["pairing"], grp["game_index"])]]
        keys = [mine[k] for k in ("config_hash", "pairing", "game_index", "player")]
        for f in moves.SIDE_FIELDS:
            total = mine.groupby(keys)[f].sum(min_count=1)
            incomplete = mine[f].isna().groupby(keys).any()
            row[f] = total.where(~incomplete).mean() if len(mine) else math.nan
        row["iterations"] = list(grp["iterations"].dropna())
        out[str(agent)] = row
    return out


def _streamed(dirs: list[Path]) -> dict[str, dict[str, float]]:
    stats = load_results(dirs).moves
    out: dict[str, dict[str, float]] = {}
    ordered = stats.ordered_iterations()
    for agent in stats.agents:
        row = {"moves": stats.moves[agent]}
        for f in moves.DISTRIBUTION_FIELDS:
            row[f"{f}_median"] = stats.median(agent, f)
            row[f"{f}_q25"] = stats.quantile(agent, f, 0.25)
            row[f"{f}_q75"] = stats.quantile(agent, f, 0.75)
        for f in moves.SIDE_FIELDS:
            row[f] = stats.side_mean(agent, f)
        row["iterations"] = list(ordered[agent]) if ordered is not None else None
        out[agent] = row
    return out


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for agent in a:
        for k, v in a[agent].items():
            w = b[agent][k]
            if k == "iterations" and w is None:  # above ORDERED_MOVES_LIMIT: only the distribution is kept
                continue
            if isinstance(v, float) and math.isnan(v):
                assert isinstance(w, float) and math.isnan(w), (agent, k, w)
            else:
                assert v == w, (agent, k, v, w)  # exactly: the same float, not a close one


@pytest.mark.parametrize("store", STORES, ids=[str(s.relative_to(RESULTS)) for s in STORES])
def test_streamed_moves_equal_decoding_every_record(store, tmp_path):
    """On every k-th game of each committed store (store_helpers.SAMPLE_GAMES; the sample holds
    every pairing and settings: test_export.py), sealed as a run seals its log: a game's moves are
    streamed from its own line, so the records of every shape a store holds are compared; the
    committed summaries are read whole by test_games_from_summaries_equal_decoding_on_every_store.
    (Every game of the largest stores took minutes of CI, the oracle's decoding most of it.)"""
    sample = sampled_store(store, tmp_path / "sample")
    seal(sample)
    _same(_oracle([sample]), _streamed([sample]))


def test_games_from_summaries_equal_decoding_and_tables_too(tmp_path):
    """Tables from stores without summaries (every record decoded) == with them, byte for byte."""
    plain = []
    for name in ("ablation", "mirror"):
        shutil.copytree(RESULTS / name, tmp_path / name)
        shutil.copytree(RESULTS / name, tmp_path / "plain" / name)
        for summary in (tmp_path / "plain" / name).glob("summary-*.parquet"):
            summary.unlink()
        plain.append(tmp_path / "plain" / name)
    with_summaries = [tmp_path / "ablation", tmp_path / "mirror"]
    a, b = load_results(with_summaries), load_results(plain)
    pd.testing.assert_frame_equal(a.games.drop(columns="source"), b.games.drop(columns="source"))
    build_report(with_summaries, tmp_path / "out-a")
    build_report(plain, tmp_path / "out-b")
    for path in sorted((tmp_path / "out-a").iterdir()):
        if path.suffix in (".md", ".csv", ".tex", ".svg"):
            assert path.read_bytes() == (tmp_path / "out-b" / path.name).read_bytes(), path.name


def _tally_one_by_one(games: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """tables.outcome_counts as it was: PairingScore.with_game one game at a time, draws too (the oracle)."""
    rows = []
    for key, group in games.groupby(keys, sort=True)[["winner", "termination"]]:
        tally = PairingScore.blank()
        for winner, termination in zip(group["winner"], group["termination"]):
            tally = tally.with_game(winner if isinstance(winner, str) else None, termination)
        rows.append((*(key if isinstance(key, tuple) else (key,)), tally.done, tally.p1_wins, tally.p2_wins,
                     tally.no_winner, tally.draws))
    columns = [*tables.COUNT_COLUMNS, tables.DRAWS]
    frame = pd.DataFrame(rows, columns=[*keys, *columns]).set_index(keys)
    if not frame[tables.DRAWS].any():  # the draws column only when a game was drawn
        frame = frame.drop(columns=tables.DRAWS)
        columns = list(tables.COUNT_COLUMNS)
    return frame.astype({c: "int64" for c in columns})


@pytest.mark.parametrize("store", STORES, ids=[str(s.relative_to(RESULTS)) for s in STORES])
def test_games_from_summaries_equal_decoding_on_every_store(store, monkeypatch):
    """What tables, ratings and sweep read of a store (one row a game, from the summaries'
    columns) equals every record decoded (no summary read), and so do the counts of Tables I/II
    and the pairwise table (counted on the columns) and the one-game-at-a-time tally."""
    with warnings.catch_warnings(record=True) as fast_warnings:
        warnings.simplefilter("always")
        fast = load_results([store])
    patch_store(monkeypatch, "read_summary_table", lambda *_a, **_k: (None, None))
    with warnings.catch_warnings(record=True) as slow_warnings:
        warnings.simplefilter("always")
        slow = load_results([store])
    assert [str(w.message) for w in fast_warnings] == [str(w.message) for w in slow_warnings]
    pd.testing.assert_frame_equal(fast.games, slow.games)
    for keys in (["pairing"], ["config_hash", "pairing"], ["p1", "p2"]):
        pd.testing.assert_frame_equal(tables.outcome_counts(fast.games, keys), _tally_one_by_one(slow.games, keys))


def test_outcome_counts_refuse_a_winner_as_the_tally_does():
    games = pd.DataFrame({"pairing": ["a vs b"] * 3, "winner": ["p1", "draw", None]})
    with pytest.raises(StoreError, match="winner 'draw' of a"):
        tables.outcome_counts(games, ["pairing"])


def _odd_store(folder: Path) -> Path:
    """A sealed store of real records plus records of every shape the fast path leaves to Python."""
    lines = gzip.decompress((RESULTS / "ablation" / "games-0001.jsonl.gz").read_bytes()).splitlines()[:40]
    records = [json.loads(line) for line in lines]
    odd = records[:8]
    odd[0]["telemetry"]["iterations"][3] = None  # a null counter: nothing derived
    odd[1]["telemetry"]["player"] = ["p2" if i % 3 else "p1" for i in range(len(odd[1]["moves"]))]
    odd[2]["telemetry"]["agent"] = ["someone"] * len(odd[2]["moves"])
    odd[3]["telemetry"]["equivalent_moves"] = odd[3]["telemetry"]["equivalent_moves"][:-1]  # shorter
    del odd[4]["telemetry"]["nodes_created"]
    odd[5]["telemetry"]["device_seconds"][0] = None
    odd[6]["telemetry"]["equivalent_candidates"][1] = None  # an incomplete side
    odd[7]["winner"] = None
    odd[7]["termination"] = "ply_limit"
    folder.mkdir()
    (folder / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    seal(folder)
    # a block pyarrow cannot read (a telemetry of another shape): every game in it decoded
    schema1 = dict(records[9], schema=1, game_index=999)
    schema1["telemetry"] = [{"iterations": 5, "player": "p1"}, {"iterations": True}, "junk"]
    (folder / "games.jsonl").write_text(json.dumps(schema1) + "\n")
    seal(folder)
    return folder


def test_records_of_every_shape_stream_as_decoded(tmp_path):
    store = _odd_store(tmp_path / "odd")
    assert has_games_files(store) and len(list(store.glob("summary-*.parquet"))) == 2
    _same(_oracle([store]), _streamed([store]))


def test_games_from_a_start_with_red_to_move_stream_as_decoded(tmp_path):
    # the stored telemetry leaves the player out; the first mover is p2 (contract.first_mover):
    # the fast path must give p2 the first move, as decoding the record does
    lines = gzip.decompress((RESULTS / "ablation" / "games-0001.jsonl.gz").read_bytes()).splitlines()[:40]
    records = [json.loads(line) for line in lines]
    assert any(len(set(pairing_agents(r["pairing"]))) == 2 for r in records)
    assert all("player" not in r["telemetry"] for r in records)
    for r in records[::2]:
        r["start"] = "....../....../....../....../....../...... 8,0 8,0 r 0,0 0"
    folder = tmp_path / "red"
    folder.mkdir()
    (folder / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    seal(folder)
    _same(_oracle([folder]), _streamed([folder]))


@pytest.mark.parametrize("seed", range(4))
def test_quantiles_from_counts_are_pandas(seed):
    rng = np.random.default_rng(seed)
    for sample in (rng.integers(0, 50, size=int(rng.integers(1, 200))).astype(float),
                   np.round(1 + rng.random(int(rng.integers(1, 300))) / 50, 7)):
        values, counts = np.unique(sample, return_counts=True)
        series = pd.Series(sample)
        for q in (0.25, 0.5, 0.75):
            assert moves.quantile(values, counts, q) == series.quantile(q)
        assert moves.median(values, counts) == pd.DataFrame({"g": 0, "v": sample}).groupby("g")["v"].median().iat[0]


def test_committed_tables_draw_every_move_below_the_limit():
    """The committed iterations figures were drawn from every move: their stores stay below the
    limit above which the figure draws from the distribution (and rebuild byte for byte)."""
    for dirs in (["ablation", "mirror"], ["ablation-cpu", "mirror-cpu"], ["a9-fixed"], ["preset-paper"],
                 ["ablation-paper"]):
        stats = load_results([RESULTS / d for d in dirs]).moves
        assert stats.ordered_iterations() is not None
        assert sum(int(stats.distribution(a, "iterations")[1].sum()) for a in stats.agents) \
            <= moves.ORDERED_MOVES_LIMIT


def test_iterations_figure_above_the_limit_draws_at_most_max_fliers(tmp_path, monkeypatch):
    import matplotlib.cbook as cbook

    data = load_results([RESULTS / "ablation"])
    monkeypatch.setattr(moves, "ORDERED_MOVES_LIMIT", 1000)
    monkeypatch.setattr(figures, "MAX_FLIERS", 7)
    fig = figures.iterations_figure(data)
    assert data.moves.ordered_iterations() is None
    assert fig is not None
    ax = fig.axes[0]
    stats = data.moves
    agents = [t.get_text() for t in ax.get_xticklabels()]
    fliers = [line for line in ax.lines if line.get_linestyle() == "None"]
    assert len(fliers) == len(agents) and agents
    for agent, line in zip(agents, fliers):
        values, counts = stats.distribution(agent, "iterations")
        ours = figures._box_stats(values, counts, agent)
        (theirs,) = cbook.boxplot_stats(np.repeat(values, counts))
        assert [ours[k] for k in ("med", "q1", "q3", "whislo", "whishi")] == \
            [theirs[k] for k in ("med", "q1", "q3", "whislo", "whishi")]
        drawn = line.get_ydata()
        assert len(drawn) <= 7 and set(drawn) <= set(theirs["fliers"])
        if len(theirs["fliers"]):
            assert min(drawn) == min(theirs["fliers"]) and max(drawn) == max(theirs["fliers"])


@pytest.mark.parametrize("seed", range(3))
def test_distribution_merged_block_by_block_equals_every_value_at_once(seed, monkeypatch):
    """Blocks set aside and merged whenever they outnumber what is kept (a small threshold here,
    so that a few blocks merge many times) give the distinct values and counts of all at once."""
    monkeypatch.setattr(moves, "_MERGE_VALUES", 5)
    rng = np.random.default_rng(seed)
    blocks = [np.round(rng.random(int(rng.integers(0, 40))) * 30, 1) for _ in range(25)]
    blocks[3][:2] = np.nan
    dist = moves._Distribution()
    for block in blocks:
        dist.add(block)
    everything = np.concatenate(blocks)
    values, counts = np.unique(everything[~np.isnan(everything)], return_counts=True)
    got_values, got_counts = dist.merged()
    assert np.array_equal(got_values, values) and np.array_equal(got_counts, counts)


def test_alphabeta_and_solver_counters_stream_as_decoded_and_show_in_the_telemetry_table(tmp_path):
    """search_depth, tt_hits (alpha-beta) and proven_nodes (MCTS-Solver) are optional columns: a
    game with such an agent has them on every move (0 on the other agent's), the others none. Read
    as decoding gives them (the fast path and Python alike), and the telemetry table shows them only
    when some agent reported one; the committed tables, without them, are unchanged (test_results)."""
    from boopexp.analysis.run_tables import telemetry

    lines = gzip.decompress((RESULTS / "ablation" / "games-0001.jsonl.gz").read_bytes()).splitlines()[:40]
    records = [json.loads(line) for line in lines]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for i, r in enumerate(records[:12]):
        n = len(r["moves"])
        # p1 searched (odd plies): depth 2 or 3, hits 10 × ply; p2's moves 0
        r["telemetry"]["search_depth"] = [(2 + k % 2) if k % 2 == 0 else 0 for k in range(n)]
        r["telemetry"]["tt_hits"] = [10 * k if k % 2 == 0 else 0 for k in range(n)]
        if i % 3 == 0:
            r["telemetry"]["proven_nodes"] = [k % 5 if k % 2 else 0 for k in range(n)]
    records[1]["telemetry"]["tt_hits"][2] = None  # a null counter on one move
    # a column of another length: that game read in Python (the last one, so that the moves' order,
    # fast-path games first in a block, is the records' order)
    records[-1]["telemetry"]["search_depth"] = [1] * (len(records[-1]["moves"]) - 1)
    store = tmp_path / "ab"
    store.mkdir()
    (store / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    seal(store)
    streamed = _streamed([store])
    _same(_oracle([store]), streamed)
    assert any(row["search_depth_median"] >= 2 for row in streamed.values())
    table = telemetry(load_results([store]))
    assert {"search_depth_median", "tt_hits_median", "proven_nodes_median"} <= set(table.data.columns)
    assert table.headers[-3:] == ("alpha-beta depth/move median", "TT hits/move median", "proven nodes/move median")
    without = telemetry(load_results([plain]))
    assert not {"search_depth_median", "tt_hits_median", "proven_nodes_median"} & set(without.data.columns)
    assert without.headers[-1] == "plies/game median [IQR]"
