"""Its pairings.csv, claims.csv, verdicts.csv, games.csv, ladder.csv, gain.csv, first-move.csv and
figures (``boopexp generality``).

:mod:`boopexp.studies.generality.analysis` reads the stores and runs the plan's tests; this module
lays the results out with the paired study's tables (:mod:`boopexp.studies.pairs_report`) and
three of its own — the claims per game (``games``: one verdict a claim and game, and on every
game), the gains and the first-mover advantage — draws the ladder per game and budget, the gain
against the move space and the forest plot, and writes them (no date, no host: the bytes rebuild).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from boopexp.analysis.ratings_report import fmt_elo
from boopexp.analysis.tables import DASH, Table, fmt_p, is_missing
from boopexp.studies import claims as cl
from boopexp.studies import pairs as pr
from boopexp.studies import pairs_report as prr
from boopexp.studies import report as studies_report
from boopexp.studies.generality import analysis as ga

PLAN = "docs/generality-plan.md"
GAMES_COLUMNS = ("claim", *ga.GAMES, ga.ALL_GAMES)
GAIN_COLUMNS = ("game", "move_space", "log2_move_space", "elo", "ci_low", "ci_high", "games", "no_winner")
FIRST_MOVE_COLUMNS = ("game", "agent", "games", "first_wins", "second_wins", "no_winner", "share", "ci_low",
                      "ci_high", "p_two_sided")
#: verdicts.csv's condition of a game's G1/G4 label across the solver cost scales.
ACROSS_COSTS = "across costs"


def _components(judgement: pr.Judgement) -> dict[tuple[str, str], int]:
    parts = {(t.claim, t.condition): len(t.parts) for t in judgement.tests}
    parts[("G2", ga.ALL_GAMES)] = len(ga.GAMES)
    return parts


def verdicts_table(judgement: pr.Judgement) -> Table:
    """Per claim and family: the Holm-adjusted p-values and the verdict; then each game's G1 and
    G4 across the solver cost scales."""
    parts = _components(judgement)
    rows = prr.judged_rows(judgement, lambda claim, condition: parts[(claim, condition)])
    for (game, claim), (verdicts, label) in ga.cost_robustness(judgement.judged).items():
        rows.append(prr.across_row(claim, f"game={game}, {ACROSS_COSTS}", ga.COST_SCALES, verdicts, label))
    return prr.verdicts_table(rows, PLAN, (
        "Families: all games (G1, G2, G3a, G3b, G4 on every game), game=G (G1, G3a, G3b, G4 on G), "
        "game=G, budget=0.25/4 and game=G, costs=×0.5/×2 (G1, G4). supported: Holm p < 0.05; contradicted: "
        "Holm p opposite < 0.05; not supported: Holm p negligible < 0.05; else inconclusive. Across costs: "
        "robust (supported at solver_move cost ×0.5, ×1, ×2), cost-dependent (at some), supported at no cost "
        "scale, incomplete (not tested at every scale)."))


def games_table(judgement: pr.Judgement) -> Table:
    """The claims per game: each claim's verdict in each game's family and in ``all games``."""
    by = {(j.outcome.claim, j.condition): j.verdict for j in judgement.judged}
    rows: list[dict[str, Any]] = []
    for claim in ("G1", "G2", "G3a", "G3b", "G4"):
        row: dict[str, Any] = {"claim": claim}
        for g in ga.GAMES:
            row[g] = "" if claim == "G2" else by.get((claim, ga.game_condition(g)), "not tested")
        row[ga.ALL_GAMES] = by.get((claim, ga.ALL_GAMES), "not tested")
        rows.append(row)
    data = pd.DataFrame(rows, columns=list(GAMES_COLUMNS))
    display = tuple(tuple(DASH if v == "" else v for v in r.values()) for r in data.to_dict("records"))
    return Table(
        name="games", title="The claims per game: verdicts (each game's family; all games: the conjunction over the "
                            "four, G2 the slope across them)",
        data=data, headers=GAMES_COLUMNS, align="l" * len(GAMES_COLUMNS), rows=display,
        notes=("G1 mcts-co beats vanilla (1 device-s); G2 CO's gain over vanilla grows with the move space; G3a "
               "mcts-co beats each one- and two-injection ablation; G3b Expansion is the keystone (SE beats S and "
               "E, EP beats P and E); G4 alpha-beta with the same H and f beats mcts-co (1 device-s).",),
    )


def ladder_table(ladders: Sequence[pr.Ladder]) -> Table:
    return prr.ladder_table(
        ladders, ga.ANCHOR, labelled=True,
        title="The ladder per game and budget: Bradley–Terry ratings (reported, not a claim)",
        notes=(f"Anchor {ga.ANCHOR} = 0; '{prr.BLUE_SEAT}' is the first-move term. Each game's claims and budgets "
               "stores (device costs as calibrated); a bootstrap of the pairs."))


def gain_table(gains: Sequence[ga.Gain]) -> Table:
    rows = [{"game": g.game, "move_space": g.move_space, "log2_move_space": math.log2(g.move_space),
             "elo": g.elo, "ci_low": g.ci_low, "ci_high": g.ci_high, "games": g.games, "no_winner": g.no_winner}
            for g in gains]
    data = pd.DataFrame(rows, columns=list(GAIN_COLUMNS))
    display = tuple((r["game"], f"{r['move_space']:.1f}", fmt_elo(r["elo"]),
                     f"[{fmt_elo(r['ci_low'])}, {fmt_elo(r['ci_high'])}]") for r in data.to_dict("records"))
    return Table(
        name="gain", title="CO's gain over vanilla against the move space (G2)",
        data=data, headers=("game", "move space", "gain (Elo)", "95% CI"), align="lrrr", rows=display,
        notes=("Gain: mcts-co's Elo on the game's 1 s ladder (vanilla = 0), a bootstrap of the pairs. Move space: "
               "the mean number of legal moves over the game's 200 bench positions (plan §3).",),
    )


def first_move_table(moves: Sequence[ga.FirstMove]) -> Table:
    from scipy.stats import binomtest

    rows = []
    for m in moves:
        low, high = cl.wilson(m.first_wins, m.decided)
        p = float(binomtest(m.first_wins, m.decided, 0.5).pvalue) if m.decided else math.nan
        rows.append({"game": m.game, "agent": m.agent, "games": m.games, "first_wins": m.first_wins,
                     "second_wins": m.second_wins, "no_winner": m.no_winner,
                     "share": m.first_wins / m.decided if m.decided else math.nan, "ci_low": low, "ci_high": high,
                     "p_two_sided": p})
    data = pd.DataFrame(rows, columns=list(FIRST_MOVE_COLUMNS))
    display = tuple((r["game"], r["agent"], f"{r['first_wins']}/{r['second_wins']}/{r['no_winner']}",
                     prr.score_text(r["share"], r["ci_low"], r["ci_high"]), fmt_p(r["p_two_sided"]))
                    for r in data.to_dict("records"))
    return Table(
        name="first-move", title="Each game's first-mover advantage from mirror games (reported, not claimed)",
        data=data, headers=("game", "mirror", "first/second/no winner", "first mover's share [95% CI]",
                            "p (two-sided)"), align="llrrr", rows=display,
        notes=("An agent against itself from the game's own start (no opening suite), 1 device-s; the share "
               "over the decided games with its Wilson interval, the exact binomial test of ½.",),
    )


# ---------------------------------------------------------------------------------------------
# Figures


def gain_figure(gains: Sequence[ga.Gain], slope: cl.Outcome | None) -> Figure | None:
    """Each game's gain (Elo) against log2 of its move space, with the least-squares line."""
    from boopexp.analysis import figures

    if not gains:
        return None
    with matplotlib.rc_context(figures.STYLE):
        fig = Figure(figsize=(6.0, 4.5), dpi=figures.DPI, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        x = np.log2([g.move_space for g in gains])
        y = np.array([g.elo for g in gains])
        err = np.maximum(np.vstack([y - [g.ci_low for g in gains], np.array([g.ci_high for g in gains]) - y]), 0.0)
        ax.errorbar(x, y, yerr=err, fmt="o", color=figures.OURS_COLOUR, capsize=3)
        for xi, yi, g in zip(x, y, gains):
            ax.annotate(g.game, (xi, yi), textcoords="offset points", xytext=(6, 4))
        if slope is not None and len(gains) > 1:
            line = np.array([x.min(), x.max()])
            ax.plot(line, y.mean() + slope.estimate * (line - x.mean()), color="0.5", linewidth=0.8, linestyle="--")
        ax.axhline(0.0, color="0.7", linewidth=0.8, linestyle=":")
        ax.set_xlabel("log2 of the move space (mean legal moves)")
        ax.set_ylabel("mcts-co's Elo over vanilla, 1 device-s")
        ax.set_title("CO's gain against the move space (G2)" + (
            "" if slope is None else f": slope {slope.estimate:+.0f} Elo per doubling"))
    return fig


# ---------------------------------------------------------------------------------------------
# The whole report


@dataclass(frozen=True)
class GeneralityReport:
    """Everything ``boopexp generality`` writes."""

    tables: tuple[Table, ...]
    judgement: pr.Judgement
    ladders: tuple[pr.Ladder, ...]
    gains: tuple[ga.Gain, ...]
    slope: cl.Outcome | None
    notes: tuple[str, ...]

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def analyse(study: pr.StudyGames, *, resamples: int | None = None) -> GeneralityReport:
    """Every table and figure datum of the study from its games (pure; nothing written)."""
    pairs = pr.pair_frame(study)
    notes: list[str] = []
    notes += prr.partial_notes(study)
    ladders: list[pr.Ladder] = []
    gains: list[ga.Gain] = []
    for g in ga.GAMES:
        for t in ga.BUDGETS:
            lad = ga.ladder(study, g, t, resamples=ga.RESAMPLES if resamples is None else resamples)
            if isinstance(lad, str):
                notes.append(lad)
                continue
            ladders.append(lad)
            if (note := prr.corrected_note(lad)) is not None:
                notes.append(note)
            if t == 1.0 and ga.FOCUS in lad.boot.agents:
                gains.append(ga.gain(lad, g, ga.MOVE_SPACE[g]))
    slope = None
    if len(gains) == len(ga.GAMES) and not any(math.isnan(g.move_space) for g in gains):
        slope = ga.gain_slope(gains)
    else:
        notes.append(f"G2 at {ga.ALL_GAMES} not tested: mcts-co's gain on {len(gains)} of {len(ga.GAMES)} games"
                     + ("" if all(not math.isnan(v) for v in ga.MOVE_SPACE.values()) else ", move spaces unset")
                     + ".")
    judgement = ga.judge_all(pairs, slope)
    notes += judgement.untested
    pairings = prr.pairings_table(pairs, ga.STORES, PLAN)
    for r in pairings.data.to_dict("records"):
        where = f"{r['store']}: {r['agent']} vs {r['opponent']} at {r['budget']:g} s" + (
            "" if is_missing(r["charge"]) or r["charge"] == 1.0 else f", solver_move {pr.charge_label(r['charge'])}")
        if r["flagged"]:
            notes.append(f"{where}: {r['left_out']} of {r['pairs']} pairs ({100 * r['left_out_share']:.1f}%) left "
                         "out for a game without a winner (more than 5 %).")
        if r["unpaired"]:
            notes.append(f"{where}: {r['unpaired']} game(s) whose partner is not stored yet (not in any test).")
    tables = [games_table(judgement), prr.claims_table(judgement.tests, [slope] if slope is not None else []),
              verdicts_table(judgement), pairings]
    if ladders:
        tables.append(ladder_table(ladders))
    if gains:
        tables.append(gain_table(gains))
    moves = ga.first_moves(study)
    if moves:
        tables.append(first_move_table(moves))
    return GeneralityReport(tables=tuple(tables), judgement=judgement, ladders=tuple(ladders), gains=tuple(gains),
                            slope=slope, notes=tuple(notes))


OUTPUT_CSV = ("games", "claims", "verdicts", "pairings", "ladder", "gain", "first-move")
FIGURES = ("ladder", "gain", "forest")


def write_report(report: GeneralityReport, out_dir: Path | str) -> list[Path]:
    """Write the CSVs, generality-tables.md (every table, the notes) and the figures into ``out_dir``
    (a figure without data is not drawn and an older file of it is removed).

    Raises:
        StoreError: out_dir cannot be written.
    """
    return studies_report.write_report(Path(out_dir), report.tables, OUTPUT_CSV, ga.STUDY, report.notes,
                                       _figures(report), drop_stale=True)


def _figures(report: GeneralityReport) -> Iterator[tuple[str, Figure | None]]:
    yield "ladder", prr.ladder_panels(report.ladders, ga.ANCHOR, columns=len(ga.BUDGETS),
                                      title="The ladder per game and budget: Bradley–Terry ratings, 95% intervals "
                                            "from a bootstrap of the pairs")
    yield "gain", gain_figure(report.gains, report.slope)
    yield "forest", prr.forest_figure(report.table("claims").data)


def rebuild(root: Path | str, out_dir: Path | str | None = None, *,
            resamples: int | None = None) -> tuple[GeneralityReport, list[Path]]:
    """Read the study under ``root``, analyse it and write everything into ``out_dir`` (default: root)."""
    study = ga.load_study(root)
    report = analyse(study, resamples=resamples)
    return report, write_report(report, Path(root) if out_dir is None else out_dir)
