"""Its pairings.csv, claims.csv, verdicts.csv, ladder.csv and figures (``boopexp knowledge``).

:mod:`boopexp.studies.knowledge.analysis` reads the stores, forms the pairs and runs the plan's tests;
this module lays the results out as :class:`~boopexp.analysis.tables.Table` objects, draws the
ladder per budget and the forest plot of the claims' pairings (the project's figure helpers:
fixed rc, SVG hash salt, no date, so the bytes rebuild) and writes them (``boopexp knowledge``).
The columns of every file are in docs/knowledge.md's "How to rebuild" (and
tests/test_report_knowledge.py holds them).
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
from boopexp.experiments.elo import elo_of_score
from boopexp.studies import claims as cl
from boopexp.studies import report as studies_report
from boopexp.studies.knowledge import analysis as kn

PAIRINGS_COLUMNS = ("store", "agent", "opponent", "budget", "charge", "games", "pairs", "unpaired", "won_both",
                    "split", "lost_both", "left_out", "left_out_share", "flagged", "k", "n", "p_greater", "p_less",
                    "wilson_low", "wilson_high", "score", "score_low", "score_high", "elo", "elo_low", "elo_high",
                    "p_tost")
CLAIMS_COLUMNS = ("claim", "condition", "role", "component", "store", "budget", "charge", "won_both", "split",
                  "lost_both", "left_out", "k", "n", "estimate", "ci_low", "ci_high", "p_value", "p_opposite",
                  "p_negligible", "test")
VERDICTS_COLUMNS = ("claim", "condition", "components", "family_size", "p_value", "p_holm", "p_opposite",
                    "p_opposite_holm", "p_negligible", "p_negligible_holm", "verdict", "detail")
LADDER_COLUMNS = ("budget", "agent", "elo", "ci_low", "ci_high", "games", "wins", "losses", "no_winner")
#: The ladder's row of the Blue-seat term (the ratings' first-move term: p1 is Blue, docs/openings.md).
BLUE_SEAT = "Blue seat"
#: verdicts.csv's condition of the charge-robustness rows (C1, C2 across ×0.5, ×1, ×2).
ACROSS_CHARGES = "across charges"


def _signed_elo(x: float) -> str:
    return DASH if is_missing(x) else ("+∞" if x == math.inf else "−∞" if x == -math.inf else fmt_elo(x))


def _charge(x: float) -> str:
    return "" if is_missing(x) else kn.charge_label(x)


# ---------------------------------------------------------------------------------------------
# Tables


def pairings_table(pairs: pd.DataFrame) -> Table:
    """One row per store × pairing × budget × node charge: the pairs, the sign test, the estimates."""
    rows: list[dict[str, Any]] = []
    if len(pairs):
        for (store, a, b, budget, charge), grp in pairs.groupby(kn.PAIR_KEYS, sort=False, dropna=False):
            c = kn.count_pairs(grp["forward"].to_numpy(), grp["backward"].to_numpy())
            out = cl.pairs_above("", "", c.zero, c.half, c.one, c.left_out)
            k, n = c.one, c.one + c.zero
            low, high = cl.wilson(k, n)
            rows.append({
                "store": store, "agent": a, "opponent": b, "budget": budget, "charge": charge, "games": c.games,
                "pairs": c.pairs, "unpaired": c.unpaired, "won_both": c.one, "split": c.half, "lost_both": c.zero,
                "left_out": c.left_out, "left_out_share": c.left_out_share, "flagged": c.flagged, "k": k, "n": n,
                "p_greater": out.p_value, "p_less": out.p_contra, "wilson_low": low, "wilson_high": high,
                "score": out.estimate, "score_low": out.ci_low, "score_high": out.ci_high,
                "elo": _elo(out.estimate), "elo_low": _elo(out.ci_low), "elo_high": _elo(out.ci_high),
                "p_tost": out.p_weak,
            })
    order = {s: i for i, s in enumerate(kn.STORES)}
    data = pd.DataFrame(rows, columns=list(PAIRINGS_COLUMNS))
    if len(data):
        data = data.assign(_order=data["store"].map(order)).sort_values(
            ["_order", "budget", "charge", "agent", "opponent"], kind="stable", na_position="first"
        ).drop(columns="_order").reset_index(drop=True)
    display = tuple(
        (r["store"], f"{r['agent']} vs {r['opponent']}", f"{r['budget']:g} s", _charge(r["charge"]),
         f"{r['won_both']}/{r['split']}/{r['lost_both']}",
         f"{r['left_out']}" + (" ⚑" if r["flagged"] else ""), f"{r['k']}/{r['n']}", fmt_p(r["p_greater"]),
         _score(r["score"], r["score_low"], r["score_high"]), _signed_elo(r["elo"]), fmt_p(r["p_tost"]))
        for r in data.to_dict("records")
    )
    return Table(
        name="pairings", title="Every pairing's pairs (docs/knowledge-plan.md §2, §5)",
        data=data,
        headers=("store", "pairing (A vs B)", "budget", "charge", "pairs 1/½/0", "left out", "sign k/n", "p (A > B)",
                 "pair score [95% CI]", "Elo", "p TOST ±50 Elo"),
        align="llrlrrrrrrr", rows=display,
        notes=("A pair: game i of both orders, from opening i. 1/½/0: pairs A won both games of, split, lost "
               "both. Left out: pairs with a game without a winner (⚑: more than 5 % of the pairs). Sign test: "
               "exact binomial on the pairs not split, one-sided; pair score: A's mean pair score with a 95 % "
               "normal interval from the pairs' variance; TOST: |score − ½| < 0.0715 (±50 Elo). pairings.csv "
               "also has the opposite p, the Wilson interval of k/n and the unpaired games.",),
    )


def _elo(score: float) -> float:
    return math.nan if is_missing(score) else elo_of_score(score)


def _score(x: float, low: float, high: float) -> str:
    if is_missing(x):
        return DASH
    if is_missing(low):
        return f"{x:.3f}"
    return f"{x:.3f} [{low:.3f}, {high:.3f}]"


def claims_table(tests: Sequence[kn.ClaimTest]) -> Table:
    """Per claim and condition: the claim's row (its conjunction, shown through the deciding
    component), then one row per component (``deciding`` for the one that decides)."""
    rows: list[dict[str, Any]] = []

    def row(t: kn.ClaimTest, role: str, part: tuple[kn.Component, kn.PairCounts, cl.Outcome],
            outcome: cl.Outcome) -> dict[str, Any]:
        c, counts, _ = part
        return {
            "claim": t.claim, "condition": t.condition, "role": role, "component": c.name, "store": c.store,
            "budget": c.budget, "charge": c.charge, "won_both": counts.one, "split": counts.half,
            "lost_both": counts.zero, "left_out": counts.left_out, "k": counts.one, "n": counts.one + counts.zero,
            "estimate": outcome.estimate, "ci_low": outcome.ci_low, "ci_high": outcome.ci_high,
            "p_value": outcome.p_value, "p_opposite": outcome.p_contra, "p_negligible": outcome.p_weak,
            "test": outcome.test,
        }

    for t in tests:
        rows.append(row(t, "claim", t.parts[t.deciding], t.outcome))
        for i, part in enumerate(t.parts):
            rows.append(row(t, "deciding" if i == t.deciding else "component", part, part[2]))
    data = pd.DataFrame(rows, columns=list(CLAIMS_COLUMNS))
    display = tuple(
        (r["claim"] if r["role"] == "claim" else "", r["condition"] if r["role"] == "claim" else "",
         r["component"] + (" (deciding)" if r["role"] == "deciding" and len(data) else ""),
         f"{r['won_both']}/{r['split']}/{r['lost_both']}", _score(r["estimate"], r["ci_low"], r["ci_high"]),
         fmt_p(r["p_value"]), fmt_p(r["p_opposite"]), fmt_p(r["p_negligible"]))
        for r in data.to_dict("records")
    )
    return Table(
        name="claims", title="The claims and their components (unadjusted p-values)",
        data=data, headers=("claim", "condition", "component", "pairs 1/½/0", "pair score [95% CI]", "p",
                            "p opposite", "p negligible"),
        align="lllrrrrr", rows=display,
        notes=("A claim's row shows its deciding component (the largest primary p: an intersection–union "
               "test); its p opposite and p negligible are the smallest components' × their number "
               "(claims.conjunction). The component rows follow, each with its own tests.",),
    )


def verdicts_table(judgement: kn.Judgement) -> Table:
    """Per claim and family: the Holm-adjusted p-values and the verdict; then C1's and C2's
    robustness across the node charges."""
    sizes: dict[str, int] = {}
    for j in judgement.judged:
        sizes[j.condition] = sizes.get(j.condition, 0) + 1
    parts = {(t.claim, t.condition): len(t.parts) for t in judgement.tests}
    rows: list[dict[str, Any]] = [{
        "claim": j.outcome.claim, "condition": j.condition, "components": parts[(j.outcome.claim, j.condition)],
        "family_size": sizes[j.condition], "p_value": j.outcome.p_value, "p_holm": j.p_holm,
        "p_opposite": j.outcome.p_contra, "p_opposite_holm": j.p_contra_holm, "p_negligible": j.outcome.p_weak,
        "p_negligible_holm": j.p_weak_holm, "verdict": j.verdict, "detail": "",
    } for j in judgement.judged]
    for claim, (verdicts, label) in kn.charge_robustness(judgement.judged).items():
        rows.append({
            "claim": claim, "condition": ACROSS_CHARGES, "components": len(kn.CHARGES), "family_size": math.nan,
            "p_value": math.nan, "p_holm": math.nan, "p_opposite": math.nan, "p_opposite_holm": math.nan,
            "p_negligible": math.nan, "p_negligible_holm": math.nan, "verdict": label,
            "detail": "; ".join(f"{kn.charge_label(c)} {v or 'not tested'}" for c, v in zip(kn.CHARGES, verdicts)),
        })
    data = pd.DataFrame(rows, columns=list(VERDICTS_COLUMNS))
    display = tuple(
        (r["claim"], r["condition"], fmt_p(r["p_holm"]), fmt_p(r["p_opposite_holm"]), fmt_p(r["p_negligible_holm"]),
         r["verdict"] if not r["detail"] else f"{r['verdict']} ({r['detail']})")
        for r in data.to_dict("records")
    )
    return Table(
        name="verdicts", title="Verdicts: each family under its own Holm correction (docs/knowledge-plan.md §6)",
        data=data, headers=("claim", "family", "Holm p", "Holm p opposite", "Holm p negligible", "verdict"),
        align="llrrrl", rows=display,
        notes=("Families: default (C1, C3 at 1 s; C2, C4 over the three budgets; node charge ×1), charge=0.5 and "
               "charge=2 (C1, C2), budget=0.25/1/4 (C1–C4 at that budget). supported: Holm p < 0.05; "
               "contradicted: Holm p opposite < 0.05; not supported: Holm p negligible < 0.05; else "
               "inconclusive. Across charges: robust (supported at ×0.5, ×1, ×2), charge-dependent (at some), "
               "supported at no charge, incomplete (not tested at every charge).",),
    )


def ladder_table(ladders: Sequence[kn.Ladder]) -> Table:
    rows: list[dict[str, Any]] = []
    for lad in ladders:
        fit = lad.boot.fit
        for r in fit.ratings:
            rows.append({"budget": lad.budget, "agent": r.agent, "elo": r.elo, "ci_low": r.ci_low,
                         "ci_high": r.ci_high, "games": r.games, "wins": r.wins, "losses": r.losses,
                         "no_winner": r.no_winner})
        rows.append({"budget": lad.budget, "agent": BLUE_SEAT, "elo": fit.first_move, "ci_low": fit.first_move_ci[0],
                     "ci_high": fit.first_move_ci[1], "games": fit.games, "wins": 0, "losses": 0,
                     "no_winner": fit.no_winner})
    data = pd.DataFrame(rows, columns=list(LADDER_COLUMNS))
    display = tuple(
        (f"{r['budget']:g} s", r["agent"], fmt_elo(r["elo"]),
         DASH if r["agent"] == kn.ANCHOR else f"[{fmt_elo(r['ci_low'])}, {fmt_elo(r['ci_high'])}]",
         f"{r['games']:,}")
        for r in data.to_dict("records")
    )
    methods = [f"{lad.budget:g} s: {lad.boot.fit.method}." for lad in ladders]
    return Table(
        name="ladder", title="The ladder: Bradley–Terry ratings per budget (reported, not a claim)",
        data=data, headers=("budget", "agent", "Elo", "95% CI", "games"), align="llrrr", rows=display,
        notes=(f"Anchor {kn.ANCHOR} = 0; '{BLUE_SEAT}' is the first-move term (p1 is Blue; its games: every "
               "decided game of the budget). alphabeta×0.5 and ×2: alpha-beta at node charge ×0.5, ×2 (K3).",
               *methods),
    )


# ---------------------------------------------------------------------------------------------
# Figures


_MARKERS = ("o", "s", "^")


def ladder_figure(ladders: Sequence[kn.Ladder]) -> Figure | None:
    """One panel per budget: each agent's Elo with its 95 % bootstrap interval, the Blue seat last."""
    from boopexp.analysis import figures

    if not ladders:
        return None
    with matplotlib.rc_context(figures.STYLE):
        fig = Figure(figsize=(4.0 * len(ladders), 4.5), dpi=figures.DPI, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, len(ladders), squeeze=False)[0]
        for ax, lad in zip(axes, ladders):
            fit = lad.boot.fit
            labels = [r.agent for r in fit.ratings] + [BLUE_SEAT]
            elo = np.array([r.elo for r in fit.ratings] + [fit.first_move])
            low = np.array([r.ci_low for r in fit.ratings] + [fit.first_move_ci[0]])
            high = np.array([r.ci_high for r in fit.ratings] + [fit.first_move_ci[1]])
            y = np.arange(len(labels))[::-1]
            # a percentile interval need not hold the point estimate (a skewed bootstrap): no negative bar
            err = np.maximum(np.vstack([elo - low, high - elo]), 0.0)
            ax.errorbar(elo[:-1], y[:-1], xerr=err[:, :-1], fmt="o", color=figures.OURS_COLOUR, capsize=3)
            ax.errorbar(elo[-1:], y[-1:], xerr=err[:, -1:], fmt="s", color=figures.P2_COLOUR, capsize=3)
            ax.axvline(0.0, color="0.7", linewidth=0.8, linestyle="--")
            ax.set_yticks(y, labels)
            ax.set_xlabel(f"Elo relative to {kn.ANCHOR}")
            ax.set_title(f"{lad.budget:g} device-s")
        fig.suptitle("The ladder: Bradley–Terry ratings, 95% intervals from a bootstrap of the pairs")
    return fig


def forest_figure(claims: pd.DataFrame) -> Figure | None:
    """The pair score of every pairing a claim tests (each once), with its 95 % interval."""
    from boopexp.analysis import figures

    parts = claims[claims["role"] != "claim"].drop_duplicates(["claim", "component"])
    parts = parts[parts["estimate"].notna()]
    if parts.empty:
        return None
    height = max(3.0, 0.8 + 0.28 * len(parts))
    with matplotlib.rc_context(figures.STYLE):
        fig = Figure(figsize=(7.0, height), dpi=figures.DPI, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        y = np.arange(len(parts))[::-1]
        x = parts["estimate"].to_numpy(float)
        low = parts["ci_low"].to_numpy(float)
        high = parts["ci_high"].to_numpy(float)
        err = np.vstack([x - np.where(np.isnan(low), x, low), np.where(np.isnan(high), x, high) - x])
        ax.errorbar(x, y, xerr=err, fmt="o", color=figures.OURS_COLOUR, capsize=3)
        ax.axvline(0.5, color="0.5", linewidth=0.8, linestyle="--")
        for edge in (0.5 - cl.PAIR_SCORE_MARGIN, 0.5 + cl.PAIR_SCORE_MARGIN):
            ax.axvline(edge, color="0.7", linewidth=0.8, linestyle=":")
        ax.set_yticks(y, [f"{c}: {name}" for c, name in zip(parts["claim"], parts["component"])])
        ax.set_xlim(-0.05, 1.05)  # a normal interval may pass 1 (or 0) a little
        ax.set_xlabel("mean pair score of the first agent, 95% normal interval\n(dashed: ½; dotted: ±50 Elo)")
        ax.set_title("The claims' pairings")
    return fig


# ---------------------------------------------------------------------------------------------
# The whole report


@dataclass(frozen=True)
class KnowledgeReport:
    """Everything ``boopexp knowledge`` writes."""

    tables: tuple[Table, ...]
    judgement: kn.Judgement
    ladders: tuple[kn.Ladder, ...]
    notes: tuple[str, ...]

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def analyse(study: kn.KnowledgeGames, *, resamples: int | None = None) -> KnowledgeReport:
    """Every table and figure datum of the study from its games (pure; nothing written)."""
    pairs = kn.pair_frame(study)
    judgement = kn.judge_all(pairs)
    ladders: list[kn.Ladder] = []
    notes: list[str] = []
    if study.missing:
        notes.append("PARTIAL ANALYSIS: stores without games (their claims are left out): "
                     + ", ".join(study.missing) + ".")
    for name, (have, planned) in sorted(study.incomplete.items()):
        notes.append(f"PARTIAL ANALYSIS: store {name} is incomplete: {have:,} of {planned:,} planned games.")
    notes += judgement.untested
    for t in kn.BUDGETS:
        lad = kn.ladder(study, t, resamples=kn.RESAMPLES if resamples is None else resamples)
        if isinstance(lad, str):
            notes.append(lad)
        else:
            ladders.append(lad)
            if lad.boot.corrected_resamples:
                notes.append(f"ladder at {t:g} s: {lad.boot.corrected_resamples} of {lad.boot.resamples} resamples "
                             "needed half a virtual win (a group of agents never lost in them).")
    pairings = pairings_table(pairs)
    for r in pairings.data.to_dict("records"):
        where = f"{r['store']}: {r['agent']} vs {r['opponent']} at {r['budget']:g} s" + (
            "" if is_missing(r["charge"]) else f", {kn.charge_label(r['charge'])}")
        if r["flagged"]:
            notes.append(f"{where}: {r['left_out']} of {r['pairs']} pairs ({100 * r['left_out_share']:.1f}%) left "
                         "out for a game without a winner (more than 5 %).")
        if r["unpaired"]:
            notes.append(f"{where}: {r['unpaired']} game(s) whose partner is not stored yet (not in any test).")
    tables = [claims_table(judgement.tests), verdicts_table(judgement), pairings]
    if ladders:
        tables.append(ladder_table(ladders))
    return KnowledgeReport(tables=tuple(tables), judgement=judgement, ladders=tuple(ladders), notes=tuple(notes))


OUTPUT_CSV = ("claims", "verdicts", "pairings", "ladder")
FIGURES = ("ladder", "forest")


def write_report(report: KnowledgeReport, out_dir: Path | str) -> list[Path]:
    """Write the CSVs, knowledge-tables.md (every table, the notes) and the figures into ``out_dir``.

    A figure without data is not drawn and an older file of it is removed (it would contradict the
    tables beside it).

    Raises:
        StoreError: out_dir cannot be written.
    """
    return studies_report.write_report(Path(out_dir), report.tables, OUTPUT_CSV, "knowledge", report.notes,
                                       _figures(report), drop_stale=True)


def _figures(report: KnowledgeReport) -> Iterator[tuple[str, Figure | None]]:
    """The ladder and the forest plot, each drawn when reached."""
    yield "ladder", ladder_figure(report.ladders)
    yield "forest", forest_figure(report.table("claims").data)


def rebuild(root: Path | str, out_dir: Path | str | None = None, *,
            resamples: int | None = None) -> tuple[KnowledgeReport, list[Path]]:
    """Read the study under ``root``, analyse it and write everything into ``out_dir`` (default: root)."""
    study = kn.load_study(root)
    report = analyse(study, resamples=resamples)
    return report, write_report(report, Path(root) if out_dir is None else out_dir)
