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
            records.append({
                "experiment": doc.get("name", folder.name), "first": test.first, "second": test.second,
                "elo0": spec.elo0, "elo1": spec.elo1, "alpha": spec.alpha, "beta": spec.beta,
                "llr": s.llr, "lower": s.lower, "upper": s.upper, "decision": s.decision, "pairs": s.pairs,
                "pairs_lost": s.counts[0], "pairs_split": s.counts[1], "pairs_won": s.counts[2],
                "left_out": s.left_out, "last_index": s.last_index,
            })
    if not records:
        return None
    frame = pd.DataFrame(records, columns=list(SPRT_COLUMNS))
    rows = tuple(
        (r.experiment, pairing_name(r.first, r.second), f"[{r.elo0:g}, {r.elo1:g}]", f"{r.llr:.2f}",
         f"({r.lower:.2f}, {r.upper:.2f})", r.decision, f"{r.pairs}", f"{r.pairs_lost}/{r.pairs_split}/{r.pairs_won}",
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
    )
    return Table(
        name="sprt",
        title="SPRT: sequential tests per pairing",
        data=frame,
        headers=("experiment", "pairing (both ways)", "H0, H1 (Elo)", "LLR", "bounds", "decision", "pairs",
                 "pairs 0/1/2", "no winner"),
        align="llrrrlrrr",
        rows=rows,
        notes=notes,
    )
