"""The SPRT table of ``boopexp tables``: each tested pairing's LLR, bounds and decision (sprt.md/.csv).

Read from the folders whose saved config has ``sprt:`` (:mod:`boopexp.experiments.sprt` does the test, on
the folder's games of the planned settings, in identity order — as the runner and ``status`` do).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from boopexp.analysis.tables import Table
from boopexp.experiments.config import plan_entries
from boopexp.experiments.sprt import parse_sprt, plan_tests
from boopexp.experiments.store import GameStore, StoreReader
from boopexp.play.identity import pairing_name

SPRT_COLUMNS = ("experiment", "first", "second", "elo0", "elo1", "alpha", "beta", "llr", "lower", "upper",
                "decision", "pairs", "pairs_lost", "pairs_split", "pairs_won", "left_out", "last_index")


def sprt_table(sources: Sequence[Path]) -> Table | None:
    """The table for the folders among ``sources`` whose config has ``sprt:``; None if there is none."""
    records = []
    for folder in sources:
        store = GameStore(folder)
        doc = store.read_config()
        if not doc:
            continue
        source = str(store.config_path)
        spec = parse_sprt(source, doc.get("sprt"))
        if spec is None:
            continue
        for test in plan_tests(spec, plan_entries(doc, source), StoreReader(folder).records().records):
            s = test.state
            # without a draw the three pair scores 0, 1/2, 1; with one, the quarter points too
            five = len(s.counts) == 5
            lost, split, won = (s.counts[0], s.counts[2], s.counts[4]) if five else s.counts
            quarters = {"pairs_quarter": s.counts[1], "pairs_three_quarters": s.counts[3]} if five else {}
            records.append({
                "experiment": doc.get("name", folder.name), "first": test.first, "second": test.second,
                "elo0": spec.elo0, "elo1": spec.elo1, "alpha": spec.alpha, "beta": spec.beta,
                "llr": s.llr, "lower": s.lower, "upper": s.upper, "decision": s.decision, "pairs": s.pairs,
                "pairs_lost": lost, "pairs_split": split, "pairs_won": won, **quarters,
                "left_out": s.left_out, "last_index": s.last_index,
            })
    if not records:
        return None
    draws = any("pairs_quarter" in r for r in records)
    columns = list(SPRT_COLUMNS)
    if draws:  # a test that saw a draw: its pairs in quarter points (the pentanomial categories)
        columns[columns.index("pairs_split"):columns.index("pairs_split")] = ["pairs_quarter"]
        columns[columns.index("pairs_won"):columns.index("pairs_won")] = ["pairs_three_quarters"]
    frame = pd.DataFrame(records, columns=columns)
    if draws:
        frame = frame.fillna({"pairs_quarter": 0, "pairs_three_quarters": 0}).astype(
            {"pairs_quarter": "int64", "pairs_three_quarters": "int64"})
    rows = tuple(
        (r.experiment, pairing_name(r.first, r.second), f"[{r.elo0:g}, {r.elo1:g}]", f"{r.llr:.2f}",
         f"({r.lower:.2f}, {r.upper:.2f})", r.decision, f"{r.pairs}",
         f"{r.pairs_lost}/{r.pairs_quarter}/{r.pairs_split}/{r.pairs_three_quarters}/{r.pairs_won}" if draws
         else f"{r.pairs_lost}/{r.pairs_split}/{r.pairs_won}",
         f"{r.left_out}")
        for r in frame.itertuples()
    )
    notes = (
        "SPRT of each pairing played both ways (boopexp/experiments/sprt.py, docs/runner.md): H0 = the first agent is "
        "elo0 Elo stronger, H1 = elo1 Elo stronger (logistic Elo). LLR: fastchess's generalised SPRT, "
        "logistic model, on pairs of games with the seats swapped (game i of 'A vs B' and of 'B vs A'), "
        "read in game-index order up to the first pair not stored. H1 at or above the upper bound "
        "ln((1-beta)/alpha), H0 at or below the lower ln(beta/(1-alpha)); 'max reached': every game played "
        "without a decision; 'running': games still to play.",
        "Pairs 0/1/2: pairs in which the first agent won 0, 1 or 2 games; no winner: pairs left out "
        "because a game had no winner.",
        *(("Draws: a drawn game scores 1/2, so a pair scores 0, 1/2, 1, 3/2 or 2 points (pairs 0/0.5/1/1.5/2); "
           "a test that saw a draw reads its pairs in these five (pentanomial) categories.",) if draws else ()),
    )
    return Table(
        name="sprt",
        title="SPRT: sequential tests per pairing",
        data=frame,
        headers=("experiment", "pairing (both ways)", "H0, H1 (Elo)", "LLR", "bounds", "decision", "pairs",
                 "pairs 0/0.5/1/1.5/2" if draws else "pairs 0/1/2", "no winner"),
        align="llrrrlrrr",
        rows=rows,
        notes=notes,
    )
