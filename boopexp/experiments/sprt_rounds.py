"""With ``sprt:``, the rounds of blocks that stop a pairing at its SPRT decision.

With ``sprt:``, a plan is played in rounds of blocks so that each tested pairing stops at its
decision (:func:`sprt_outcomes`; the test itself is :mod:`boopexp.experiments.sprt`)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from typing import Any

from boopexp.experiments.config import PlannedPairing
from boopexp.experiments.pool import GameOutcome, PlayedGame, PoolOptions, iter_outcomes
from boopexp.experiments.sprt import SprtSpec, plan_tests
from boopexp.play.contract import GameTask


def sprt_outcomes(
    spec: SprtSpec,
    plan: Sequence[PlannedPairing],
    todo: Iterable[GameTask],
    stored: Sequence[Mapping[str, Any]],
    pool: PoolOptions | None = None,
    on_message: Callable[[str, bool], None] | None = None,
) -> Generator[GameOutcome, None, None]:
    """Play ``todo`` in rounds so that each tested pairing stops at its SPRT decision.

    A pairing played both ways is played block by block: a block is ``spec.batch`` consecutive
    game indices of both seatings. After every round, each pairing's test is read off the stored
    games in identity order (:func:`boopexp.experiments.sprt.plan_tests`); a decided pairing gets no further
    block, an undecided one its first block with games missing. Which games are played is thus a
    function of the games' outcomes alone, never of the number of workers or of finishing order:
    every block is played to the end before the next decision (``pool`` and ``on_message``:
    :func:`boopexp.experiments.pool.iter_outcomes`). Other games (mirrors, pairings
    played one way) are played in the first round. A pairing with a failed game gets no more
    blocks in this run (its test cannot pass the gap; a rerun retries the game).
    """
    records: list[Mapping[str, Any]] = list(stored)
    todo = list(todo)
    tested: dict[str, tuple[str, str]] = {}
    for test in plan_tests(spec, plan, []):
        for pairing in test.pairings:
            tested[pairing] = test.pairings
    first_round = [t for t in todo if t.pairing not in tested]
    waiting = [t for t in todo if t.pairing in tested]
    stalled: set[tuple[str, str]] = set()
    while True:
        batch = list(first_round)
        first_round = []
        states = {t.pairings: t.state for t in plan_tests(spec, plan, records)}
        for group, state in states.items():
            if state.decided or group in stalled:
                continue
            missing = sorted({t.game_index for t in waiting if t.pairing in group})
            if not missing:
                continue
            block = missing[0] // spec.batch
            batch += [t for t in waiting if t.pairing in group and t.game_index // spec.batch == block]
        if not batch:
            return
        scheduled = {t.key for t in batch}
        waiting = [t for t in waiting if t.key not in scheduled]
        outcomes = iter_outcomes(batch, pool, on_message)
        try:
            for outcome in outcomes:
                if isinstance(outcome, PlayedGame):
                    records.append(outcome.record)
                elif outcome.task.pairing in tested:
                    stalled.add(tested[outcome.task.pairing])
                yield outcome
        finally:
            outcomes.close()
