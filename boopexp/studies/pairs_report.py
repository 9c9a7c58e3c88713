"""**The** tables and figures of a paired study (:mod:`boopexp.studies.pairs`): every pairing's pairs,
the claims with their components, the verdicts' rows, the ladders' rows, a ladder panel per fit and
the forest plot of the claims' pairings.

The knowledge study (``boopexp knowledge``) and the generality study (``boopexp generality``) lay
their results out with these; what differs (the stores' order, the plan named in a title, the
charge's meaning, the extra columns) is handed in. Figures use the project's figure helpers (fixed
rc, SVG hash salt, no date), so the bytes rebuild.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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
from boopexp.studies import pairs as pr

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


def signed_elo(x: float) -> str:
    return DASH if is_missing(x) else ("+∞" if x == math.inf else "−∞" if x == -math.inf else fmt_elo(x))


def charge_text(x: float) -> str:
    return "" if is_missing(x) else pr.charge_label(x)


def elo(score: float) -> float:
    return math.nan if is_missing(score) else elo_of_score(score)


def score_text(x: float, low: float, high: float) -> str:
    if is_missing(x):
        return DASH
    if is_missing(low):
        return f"{x:.3f}"
    return f"{x:.3f} [{low:.3f}, {high:.3f}]"


def partial_notes(study: pr.StudyGames) -> list[str]:
    """The notes that label a partial analysis: the stores without games, the incomplete ones."""
    notes = []
    if study.missing:
        notes.append("PARTIAL ANALYSIS: stores without games (their claims are left out): "
                     + ", ".join(study.missing) + ".")
    for name, (have, planned) in sorted(study.incomplete.items()):
        notes.append(f"PARTIAL ANALYSIS: store {name} is incomplete: {have:,} of {planned:,} planned games.")
    return notes


# ---------------------------------------------------------------------------------------------
# Tables


def pairings_table(pairs: pd.DataFrame, stores: Sequence[str], plan: str) -> Table:
    """One row per store × pairing × budget × charge: the pairs, the sign test, the estimates;
    stores in the order of ``stores``; ``plan`` names the plan in the title."""
    rows: list[dict[str, Any]] = []
    if len(pairs):
        for (store, a, b, budget, charge), grp in pairs.groupby(pr.PAIR_KEYS, sort=False, dropna=False):
            c = pr.count_pairs(grp["forward"].to_numpy(), grp["backward"].to_numpy())
            out = cl.pairs_above("", "", c.zero, c.half, c.one, c.left_out)
            k, n = c.one, c.one + c.zero
            low, high = cl.wilson(k, n)
            rows.append({
                "store": store, "agent": a, "opponent": b, "budget": budget, "charge": charge, "games": c.games,
                "pairs": c.pairs, "unpaired": c.unpaired, "won_both": c.one, "split": c.half, "lost_both": c.zero,
                "left_out": c.left_out, "left_out_share": c.left_out_share, "flagged": c.flagged, "k": k, "n": n,
                "p_greater": out.p_value, "p_less": out.p_contra, "wilson_low": low, "wilson_high": high,
                "score": out.estimate, "score_low": out.ci_low, "score_high": out.ci_high,
                "elo": elo(out.estimate), "elo_low": elo(out.ci_low), "elo_high": elo(out.ci_high),
                "p_tost": out.p_weak,
            })
    order = {s: i for i, s in enumerate(stores)}
    data = pd.DataFrame(rows, columns=list(PAIRINGS_COLUMNS))
    if len(data):
        data = data.assign(_order=data["store"].map(order)).sort_values(
            ["_order", "budget", "charge", "agent", "opponent"], kind="stable", na_position="first"
        ).drop(columns="_order").reset_index(drop=True)
    display = tuple(
        (r["store"], f"{r['agent']} vs {r['opponent']}", f"{r['budget']:g} s", charge_text(r["charge"]),
         f"{r['won_both']}/{r['split']}/{r['lost_both']}",
         f"{r['left_out']}" + (" ⚑" if r["flagged"] else ""), f"{r['k']}/{r['n']}", fmt_p(r["p_greater"]),
         score_text(r["score"], r["score_low"], r["score_high"]), signed_elo(r["elo"]), fmt_p(r["p_tost"]))
        for r in data.to_dict("records")
    )
    return Table(
        name="pairings", title=f"Every pairing's pairs ({plan} §2, §5)",
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


def claims_table(tests: Sequence[pr.ClaimTest], extra: Sequence[cl.Outcome] = ()) -> Table:
    """Per claim and condition: the claim's row (its conjunction, shown through the deciding
    component), then one row per component (``deciding`` for the one that decides). ``extra``:
    claims not tested on pairs (one row each, ``role`` claim, no pair counts)."""
    rows: list[dict[str, Any]] = []

    def row(t: pr.ClaimTest, role: str, part: tuple[pr.Component, pr.PairCounts, cl.Outcome],
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
    for o in extra:
        rows.append({"claim": o.claim, "condition": "", "role": "claim", "component": o.component, "store": "",
                     "budget": math.nan, "charge": math.nan, "won_both": math.nan, "split": math.nan,
                     "lost_both": math.nan, "left_out": o.no_winner, "k": math.nan, "n": o.n,
                     "estimate": o.estimate, "ci_low": o.ci_low, "ci_high": o.ci_high, "p_value": o.p_value,
                     "p_opposite": o.p_contra, "p_negligible": o.p_weak, "test": o.test})
    data = pd.DataFrame(rows, columns=list(CLAIMS_COLUMNS))
    display = tuple(
        (r["claim"] if r["role"] == "claim" else "", r["condition"] if r["role"] == "claim" else "",
         r["component"] + (" (deciding)" if r["role"] == "deciding" and len(data) else ""),
         # whole numbers: a claim without pair counts (G2) makes the columns float
         DASH if is_missing(r["won_both"]) else f"{r['won_both']:.0f}/{r['split']:.0f}/{r['lost_both']:.0f}",
         score_text(r["estimate"], r["ci_low"], r["ci_high"]),
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


def judged_rows(judgement: pr.Judgement, components: Callable[[str, str], int]) -> list[dict[str, Any]]:
    """verdicts.csv's rows of every judged claim (``components(claim, condition)``: its number of
    components)."""
    sizes: dict[str, int] = {}
    for j in judgement.judged:
        sizes[j.condition] = sizes.get(j.condition, 0) + 1
    return [{
        "claim": j.outcome.claim, "condition": j.condition, "components": components(j.outcome.claim, j.condition),
        "family_size": sizes[j.condition], "p_value": j.outcome.p_value, "p_holm": j.p_holm,
        "p_opposite": j.outcome.p_contra, "p_opposite_holm": j.p_contra_holm, "p_negligible": j.outcome.p_weak,
        "p_negligible_holm": j.p_weak_holm, "verdict": j.verdict, "detail": "",
    } for j in judgement.judged]


def label_row(claim: str, condition: str, components: int, label: str, detail: str) -> dict[str, Any]:
    """A verdicts.csv row that labels a claim across conditions (no test of its own)."""
    return {"claim": claim, "condition": condition, "components": components, "family_size": math.nan,
            "p_value": math.nan, "p_holm": math.nan, "p_opposite": math.nan, "p_opposite_holm": math.nan,
            "p_negligible": math.nan, "p_negligible_holm": math.nan, "verdict": label, "detail": detail}


def across_row(claim: str, condition: str, scales: Sequence[float], verdicts: Sequence[str],
               label: str) -> dict[str, Any]:
    """The row labelling a claim across a sensitivity's scales (×0.5, ×1, ×2): each scale's verdict."""
    return label_row(claim, condition, len(scales), label, "; ".join(
        f"{pr.charge_label(x)} {v or 'not tested'}" for x, v in zip(scales, verdicts)))


def verdicts_table(rows: Sequence[dict[str, Any]], plan: str, notes: str) -> Table:
    """Per claim and family: the Holm-adjusted p-values and the verdict (rows of :func:`judged_rows`
    and :func:`label_row`)."""
    data = pd.DataFrame(list(rows), columns=list(VERDICTS_COLUMNS))
    display = tuple(
        (r["claim"], r["condition"], fmt_p(r["p_holm"]), fmt_p(r["p_opposite_holm"]), fmt_p(r["p_negligible_holm"]),
         r["verdict"] if not r["detail"] else f"{r['verdict']} ({r['detail']})")
        for r in data.to_dict("records")
    )
    return Table(
        name="verdicts", title=f"Verdicts: each family under its own Holm correction ({plan} §6)",
        data=data, headers=("claim", "family", "Holm p", "Holm p opposite", "Holm p negligible", "verdict"),
        align="llrrrl", rows=display, notes=(notes,),
    )


def corrected_note(lad: pr.Ladder) -> str | None:
    """The note under a ladder whose bootstrap corrected some resamples (or None): how many
    resamples had no finite maximum (their games were separated) and got half a virtual win."""
    if not lad.boot.corrected_resamples:
        return None
    where = f"ladder{' of ' + lad.label if lad.label else ''} at {lad.budget:g} s"
    return (f"{where}: {lad.boot.corrected_resamples} of {lad.boot.resamples} resamples needed half a virtual "
            "win (their games were separated: the fit had no finite maximum).")


def ladder_rows(lad: pr.Ladder) -> list[dict[str, Any]]:
    """ladder.csv's rows of one fit: each agent, then the Blue-seat term."""
    fit = lad.boot.fit
    rows = [{"budget": lad.budget, "agent": r.agent, "elo": r.elo, "ci_low": r.ci_low, "ci_high": r.ci_high,
             "games": r.games, "wins": r.wins, "losses": r.losses, "no_winner": r.no_winner} for r in fit.ratings]
    rows.append({"budget": lad.budget, "agent": BLUE_SEAT, "elo": fit.first_move, "ci_low": fit.first_move_ci[0],
                 "ci_high": fit.first_move_ci[1], "games": fit.games, "wins": 0, "losses": 0,
                 "no_winner": fit.no_winner})
    return rows


def ladder_table(ladders: Sequence[pr.Ladder], anchor: str, *, title: str, notes: str,
                 labelled: bool = False) -> Table:
    """ladder.csv: every fit's rows (:func:`ladder_rows`), each fit's method in the notes;
    ``labelled``: a first column ``game`` holding each fit's label (several ladders a budget)."""
    rows: list[dict[str, Any]] = [({"game": lad.label} if labelled else {}) | row
                                  for lad in ladders for row in ladder_rows(lad)]
    columns = (("game",) if labelled else ()) + LADDER_COLUMNS
    data = pd.DataFrame(rows, columns=list(columns))
    display = tuple(
        ((r["game"],) if labelled else ()) + (
            f"{r['budget']:g} s", r["agent"], fmt_elo(r["elo"]),
            DASH if r["agent"] == anchor else f"[{fmt_elo(r['ci_low'])}, {fmt_elo(r['ci_high'])}]", f"{r['games']:,}")
        for r in data.to_dict("records")
    )
    methods = [f"{lad.label + ', ' if labelled else ''}{lad.budget:g} s: {lad.boot.fit.method}." for lad in ladders]
    return Table(
        name="ladder", title=title, data=data,
        headers=(("game",) if labelled else ()) + ("budget", "agent", "Elo", "95% CI", "games"),
        align=("l" if labelled else "") + "llrrr", rows=display, notes=(notes, *methods),
    )


# ---------------------------------------------------------------------------------------------
# Figures


def ladder_panels(ladders: Sequence[pr.Ladder], anchor: str, *, columns: int, title: str) -> Figure | None:
    """One panel per fit (``columns`` a row, titled by its label and budget): each agent's Elo with
    its 95 % bootstrap interval, the Blue seat last."""
    from boopexp.analysis import figures

    if not ladders:
        return None
    rows = -(-len(ladders) // columns)
    width = min(columns, len(ladders))
    with matplotlib.rc_context(figures.STYLE):
        fig = Figure(figsize=(4.0 * width, 4.5 * rows), dpi=figures.DPI, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(rows, width, squeeze=False).ravel()
        for ax, lad in zip(axes, ladders):
            fit = lad.boot.fit
            labels = [r.agent for r in fit.ratings] + [BLUE_SEAT]
            value = np.array([r.elo for r in fit.ratings] + [fit.first_move])
            low = np.array([r.ci_low for r in fit.ratings] + [fit.first_move_ci[0]])
            high = np.array([r.ci_high for r in fit.ratings] + [fit.first_move_ci[1]])
            y = np.arange(len(labels))[::-1]
            # a percentile interval need not hold the point estimate (a skewed bootstrap): no negative bar
            err = np.maximum(np.vstack([value - low, high - value]), 0.0)
            ax.errorbar(value[:-1], y[:-1], xerr=err[:, :-1], fmt="o", color=figures.OURS_COLOUR, capsize=3)
            ax.errorbar(value[-1:], y[-1:], xerr=err[:, -1:], fmt="s", color=figures.P2_COLOUR, capsize=3)
            ax.axvline(0.0, color="0.7", linewidth=0.8, linestyle="--")
            ax.set_yticks(y, labels)
            ax.set_xlabel(f"Elo relative to {anchor}")
            ax.set_title(f"{lad.label + ', ' if lad.label else ''}{lad.budget:g} device-s")
        for ax in axes[len(ladders):]:
            ax.set_visible(False)
        fig.suptitle(title)
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
