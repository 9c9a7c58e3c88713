"""A run's tally (:class:`boopexp.experiments.tally.RunTally`): the store's games, then each game the
run stores, counted as the store's own tally counts them once they are stored."""

from __future__ import annotations

import pytest
from conftest import DEMO_CONFIG, fake_play_game

from boopexp.experiments.config import load_yaml, parse_config
from boopexp.experiments.store import GameStore, StoreReader
from boopexp.experiments.tally import RunTally, forfeits, score
from boopexp.game.sides import Side
from boopexp.play.identity import record_key


def forfeiting(task) -> dict:
    """A fake game whose p1 forfeits it when its index is odd."""
    record = fake_play_game(task)
    if task.game_index % 2:
        record.update(winner=Side.P2, winner_agent=task.p2.name, termination="agent_error",
                      forfeit={"player": Side.P1, "agent": task.p1.name, "error": "boom"})
    return record


@pytest.mark.parametrize("sprt", [False, True])
def test_a_run_tally_counts_as_the_store_does_once_its_games_are_stored(tmp_path, sprt):
    c = parse_config(load_yaml(DEMO_CONFIG, "demo.yaml"), "demo.yaml")
    entries = [p.entry() for p in c.plan()]
    records = [forfeiting(t) for t in c.tasks(c.plan())]
    with GameStore(tmp_path).open() as writer:
        for r in records[::2]:  # a previous run's games
            writer.append(r)
    with GameStore(tmp_path).open() as writer:
        tally = RunTally(entries, writer.stored, sprt=sprt)
        assert (tally.planned, tally.skipped, tally.played, tally.done) == (8, 4, 0, 4)
        for r in records[1::2]:  # this run's
            writer.append(r)
            tally.add(r)
    every = StoreReader(tmp_path).records().records
    assert tally.scores == score(entries, every) and (tally.skipped, tally.played, tally.done) == (4, 4, 8)
    assert tally.forfeits == forfeits(entries, every) == {
        "vanilla": {"agent_error": 2}, "heuristics": {"agent_error": 1}, "random": {"agent_error": 1}}
    # the SPRT reads every game of the run, stored before or by it (and none without ``sprt:``)
    assert [record_key(r) for r in tally.records] == ([record_key(r) for r in every] if sprt else [])
