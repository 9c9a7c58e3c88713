"""The robustness study's report: claims.csv, the tables, the figures' data, and the files written.

:mod:`boopexp.studies.robustness.analysis` reads the stores and runs the plan's tests; this module lays
the results out as :class:`~boopexp.analysis.tables.Table` objects (claims, components, ratings,
factorial effects, direct pairings, deviance, ladder, sensitivity, the robustness summary, the
differing mirror cell) and writes them with the figures of
:mod:`boopexp.studies.robustness.figures` (``boopexp robustness``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from boopexp.analysis.stats import boschloo_bound_note, boschloo_p, fisher_exact
from boopexp.analysis.tables import DASH, Table, fmt_p, fmt_rate_ci, is_missing
from boopexp.play.identity import pairing_name
from boopexp.studies import claims as cl
from boopexp.studies import report as studies_report
from boopexp.studies.robustness.analysis import (
    A9_AGENT,
    ABLATIONS,
    BUDGETS,
    CAP_FLAG,
    CLAIMS_COLUMNS,
    FOCUS,
    SCALES,
    STORES,
    TABLE1_OPPONENTS,
    RatingsResult,
    StudyGames,
    at_point,
    co_beats,
    co_edge_shrinks_with_budget,
    d1_ratings,
    has_mirror,
    has_pairing,
    judge_all,
    load_study,
    mirror_count,
    pair_count,
    profile_games,
    rating_claims,
)

if TYPE_CHECKING:  # for the annotations only: matplotlib is loaded by the figures' drawing
    from matplotlib.figure import Figure

# ---------------------------------------------------------------------------------------------
# Tables


def claims_table(judged: Sequence[cl.Judged]) -> Table:
    rows: list[dict[str, Any]] = [{
        "claim": j.outcome.claim, "condition": j.condition, "estimate": j.outcome.estimate,
        "ci_low": j.outcome.ci_low, "ci_high": j.outcome.ci_high, "p_value": j.outcome.p_value,
        "p_holm": j.p_holm, "verdict": j.verdict, "n": j.outcome.n, "no_winner": j.outcome.no_winner,
        "test": j.outcome.test,
    } for j in judged]
    data = pd.DataFrame(rows, columns=list(CLAIMS_COLUMNS)).astype({"n": "int64", "no_winner": "int64"})
    display = tuple(
        (r["claim"], r["condition"], _fmt_estimate(r["claim"], r["estimate"], r["ci_low"], r["ci_high"]),
         fmt_p(r["p_value"]), fmt_p(r["p_holm"]), r["verdict"], f"{r['n']:,}", f"{r['no_winner']:,}")
        for r in rows
    )
    return Table(
        name="claims", title="The claims: one row per claim and condition (docs/robustness-plan.md)",
        data=data, headers=("claim", "condition", "estimate [95% CI]", "p", "Holm p", "verdict", "n", "no winner"),
        align="llrrrlrr", rows=display,
        notes=(
            "Estimates: win rates and P2 shares in %, rating contrasts in Elo (C4, C5), the logistic "
            "slope per doubling of the budget (C8); a conjunction shows its deciding component (the "
            "largest p). Holm p: adjusted within the row's condition (the default condition's 14 "
            "tests are one family; C5a is C4-E's test shown again; C8-heuristics is a family of its "
            "own). claims.csv has the test of every row.",
        ),
    )


def _fmt_estimate(claim: str, x: float, low: float, high: float) -> str:
    if is_missing(x):
        return DASH
    if claim.startswith(("C4", "C5")):
        return f"{x:+.0f} [{low:+.0f}, {high:+.0f}] Elo"
    if claim.startswith("C8"):
        return f"{x:+.3f} [{low:+.3f}, {high:+.3f}]"
    if claim == "C7b":
        return f"{100 * x:.1f}% [{100 * low:.1f}, {100 * high:.1f}]" if x >= 0 and low >= 0 else \
            f"{100 * x:+.1f} pp [{100 * low:+.1f}, {100 * high:+.1f}]"
    return fmt_rate_ci(x, low, high)


def components_table(study: StudyGames, ratings: RatingsResult | None) -> Table:
    """Every component of every claim at the default condition (what each conjunction is made of)."""
    parts: list[cl.Outcome] = []
    d1 = study.get("d1")
    for opponent, claim in (("vanilla", "C1"), ("heuristics", "C2"), *((x, "C3") for x in ABLATIONS)):
        if has_pairing(d1, FOCUS, opponent):
            parts.append(co_beats(claim, d1, opponent))
    rc = rating_claims(ratings, d1)
    for claim in ("C4-E", "C4-P", "C4-S"):
        if claim in rc:
            parts.append(rc[claim])
    if ratings is not None:
        boot = ratings.boot
        n, none = int(d1["winner"].notna().sum()), int(d1["winner"].isna().sum())
        pairs = [("C5b", "mcts+SE", "mcts+S"), ("C5b", "mcts+EP", "mcts+P")]
        pairs += [("C5c", "mcts+EP", x) for x in ABLATIONS if x != "mcts+EP"]
        pairs += [("C5d", x, "mcts+P") for x in ABLATIONS if x != "mcts+P"]
        for claim, a, b in pairs:
            if a in boot.agents and b in boot.agents:
                parts.append(cl.elo_above(claim, f"Elo({a}) − Elo({b})", *boot.contrast({a: 1.0, b: -1.0}), n, none))
    vanilla = study.get("d4-vanilla")
    if has_mirror(vanilla, "vanilla"):
        parts.append(cl.share_balanced("C6a", "vanilla mirror", *mirror_count(vanilla, "vanilla"), margin=0.05))
    se = study.get("d4-se")
    for a in ("mcts+S", "mcts+E"):
        if has_mirror(se, a):
            parts.append(cl.share_balanced("C6b", f"{a} mirror", *mirror_count(se, a), margin=0.10))
    bias = at_point(study.get("d4-bias"), 1.0)
    for agent, games in ((FOCUS, bias), ("mcts+P", study.get("mirror"))):
        if has_mirror(games, agent):
            parts.append(cl.rate_above("C7a", f"{agent} mirror", *mirror_count(games, agent), p0=0.6, what="P2 share"))
    if has_mirror(bias, FOCUS) and has_mirror(bias, A9_AGENT):
        k_fix, n_fix, none_fix = mirror_count(bias, A9_AGENT)
        k_faith, n_faith, none_faith = mirror_count(bias, FOCUS)
        parts.append(cl.share_balanced("C7b", f"{A9_AGENT} mirror", k_fix, n_fix, none_fix, margin=0.10))
        parts.append(cl.share_greater("C7b", f"{FOCUS} mirror P2 share > {A9_AGENT} mirror's", (k_faith, n_faith),
                                      (k_fix, n_fix), none_faith + none_fix))
    d3 = study.get("d3")
    for opponent, claim in (("vanilla", "C8"), ("heuristics", "C8-heuristics")):
        if has_pairing(d3, FOCUS, opponent):
            parts.append(co_edge_shrinks_with_budget(d3, opponent, claim=claim))
    data = pd.DataFrame([{
        "claim": p.claim, "component": p.component, "estimate": p.estimate, "ci_low": p.ci_low, "ci_high": p.ci_high,
        "p_value": p.p_value, "p_opposite": p.p_contra, "p_weak": p.p_weak, "n": p.n, "no_winner": p.no_winner,
        "test": p.test,
    } for p in parts], columns=["claim", "component", "estimate", "ci_low", "ci_high", "p_value", "p_opposite",
                                "p_weak", "n", "no_winner", "test"])
    rows = tuple((r["claim"], r["component"], _fmt_estimate(r["claim"], r["estimate"], r["ci_low"], r["ci_high"]),
                  fmt_p(r["p_value"]), f"{r['n']:,}") for r in data.to_dict("records"))
    return Table(
        name="components", title="Components at the default condition (unadjusted p-values)",
        data=data, headers=("claim", "component", "estimate [95% CI]", "p", "n"), align="llrrr", rows=rows,
        # The committed robustness-tables.md names the tests' module where it was when the study was
        # written (since issue 34: boopexp/studies/claims.py); kept so that the output rebuilds byte for byte.
        notes=("p_opposite: the test in the other direction; p_weak: the negligible-effect TOST (directional) "
               "or the two-sided test of no difference (equivalence), as in boopexp/analysis/claims.py.",),
    )


def factorial_table(ratings: RatingsResult) -> Table:
    data = ratings.factorial
    rows = tuple((r["effect"], f"{r['estimate']:+.0f}", f"[{r['ci_low']:+.0f}, {r['ci_high']:+.0f}]")
                 for r in data.to_dict("records"))
    return Table(
        name="factorial", title="Factorial effects on the D1 ratings (Elo; reported, not a claim)",
        data=data, headers=("effect", "Elo", "95% CI"), align="lrr", rows=rows,
        notes=("The 2×2×2 design: vanilla = no injection … mcts-co = S+E+P. An effect is the mean rating of "
               "the agents with the factor (or with an even number of the interacting factors absent) minus "
               "the mean of the others: Σ ±r / 4 (Yates' convention). Intervals: percentiles of the ratings' "
               "bootstrap.",),
    )


def deviance_table(ratings: RatingsResult) -> Table:
    data = ratings.deviance
    rows = tuple((pairing_name(r["agent"], r["opponent"]), f"{r['wins']}/{r['games']}", f"{r['expected_wins']:.1f}",
                  f"{r['p1_wins']}/{r['p1_games']}", f"{r['p2_wins']}/{r['p2_games']}", f"{r['deviance']:.2f}")
                 for r in data.to_dict("records"))
    total = float(data["deviance"].sum())
    cells = int(2 * len(data))
    params = len(ratings.boot.agents)  # free ratings + the first-move term
    return Table(
        name="deviance", title="Where the Bradley–Terry model fits: deviance per pairing (D1)",
        data=data, headers=("pairing", "wins of the first / decided", "expected wins", "as P1", "as P2", "deviance"),
        align="lrrrrr",
        rows=rows,
        notes=(f"Deviance: 2 Σ observed·log(observed/expected) over both seats' wins and losses (2 cells per "
               f"pairing). Total {total:.1f} on {cells} cells − {params} parameters = {cells - params} degrees "
               "of freedom; a pairing with a deviance well above 2 is where transitivity with one first-move "
               "term fails.",),
    )


def direct_table(ratings: RatingsResult) -> Table:
    data = ratings.direct
    rows = tuple((r["agent"], f"{r['wins']}-{r['losses']}", fmt_rate_ci(r["win_rate"], r["ci_low"], r["ci_high"]),
                  f"{r['direct_elo']:+.0f}", f"{r['rating_elo']:+.0f}") for r in data.to_dict("records"))
    return Table(
        name="direct", title="Each injection alone against vanilla: direct pairing beside the ratings (D1)",
        data=data, headers=("agent", "wins-losses", "win rate [95% CI]", "Elo of the rate", "rating contrast"),
        align="lrrrr", rows=rows,
        notes=("A check that the model does not manufacture C4: the direct pairing's win rate (both seats, "
               "Wilson) and its Elo equivalent beside the fitted contrast.",),
    )


RATE_COLUMNS = ["series", "wins", "n", "no_winner", "rate", "ci_low", "ci_high"]


def _series_rows(games: pd.DataFrame, opponents: Sequence[str], mirrors: Sequence[str]) -> list[dict]:
    """mcts-co's rate against each of ``opponents`` and each of ``mirrors``' P2 share (Wilson 95 %),
    one row per series with games (a series without a decided game has rate NaN)."""
    pairs = [(opponent, pair_count(games, FOCUS, opponent)) for opponent in opponents]
    counts = [(pairing_name(FOCUS, opponent), c.wins, c.n, c.no_winner) for opponent, c in pairs]
    counts += [(f"{agent} mirror (P2 share)", *mirror_count(games, agent)) for agent in mirrors]
    rows = []
    for series, wins, n, none in counts:
        if n + none:
            low, high = cl.wilson(wins, n)
            rows.append({"series": series, "wins": wins, "n": n, "no_winner": none,
                         "rate": wins / n if n else math.nan, "ci_low": low, "ci_high": high})
    return rows


def ladder_frame(study: StudyGames) -> pd.DataFrame:
    """Per budget: mcts-co's rate against vanilla and heuristics, and the mirror's P2 share (D3)."""
    d3 = study.get("d3")
    rows = [{"budget": budget, **row} for budget in BUDGETS
            for row in _series_rows(at_point(d3, budget), ("vanilla", "heuristics"), (FOCUS,))]
    return pd.DataFrame(rows, columns=["budget", *RATE_COLUMNS])


def sensitivity_frame(study: StudyGames) -> pd.DataFrame:
    """Per profile (solver scale, and cpu): mcts-co's rate against each Table I opponent, mirror P2 shares."""
    profiles = [(f"×{s:g}", profile_games(study, s)) for s in SCALES]
    profiles.append(("cpu", pd.concat([study.get("ablation-cpu"), study.get("mirror-cpu")], ignore_index=True)))
    rows = [{"profile": profile, **row} for profile, games in profiles
            for row in _series_rows(games, TABLE1_OPPONENTS, (FOCUS, "mcts+P"))]
    return pd.DataFrame(rows, columns=["profile", *RATE_COLUMNS])


def _rate_table(name: str, title: str, data: pd.DataFrame, key: str, notes: tuple[str, ...]) -> Table:
    rows = tuple((str(r[key]) if key == "profile" else f"{r[key]:g} s", r["series"], f"{r['wins']}/{r['n']}",
                  fmt_rate_ci(r["rate"], r["ci_low"], r["ci_high"]), f"{r['no_winner']:,}")
                 for r in data.to_dict("records"))
    return Table(name=name, title=title, data=data, headers=(key, "series", "wins/decided", "rate [95% CI]",
                                                             "no winner"), align="llrrr", rows=rows, notes=notes)


#: Short forms of the verdicts in the claim × condition table.
SHORT = {"supported": "S", "not supported": "n", "contradicted": "X", "inconclusive": "?"}


def verdict_matrix(judged: Sequence[cl.Judged]) -> Table:
    """One row per claim, one column per condition: the verdict (the plan's C1–C8 × conditions)."""
    claims = list(dict.fromkeys(j.outcome.claim for j in judged))
    conditions = list(dict.fromkeys(j.condition for j in judged))
    by = {(j.outcome.claim, j.condition): j.verdict for j in judged}
    data = pd.DataFrame([{"claim": c, **{k: by.get((c, k), "") for k in conditions}} for c in claims],
                        columns=["claim", *conditions])
    rows = tuple((c, *(SHORT.get(by.get((c, k), ""), DASH) for k in conditions)) for c in claims)
    return Table(
        name="verdicts", title="Verdicts: claims × conditions",
        data=data, headers=("claim", *(k.replace("solver_scale=", "solver×").replace("budget=", "") + (
            " s" if k.startswith("budget=") else "") for k in conditions)),
        align="l" + "c" * len(conditions), rows=rows,
        notes=("S supported, X contradicted, n not supported, ? inconclusive, — not tested at that condition "
               "(plan §3: D2's scales test C1, C2, C3, C7a; D3's budgets C1, C2, C7a on the mcts-co mirror, "
               "and C7b where D4 has the budget).",),
    )


def robustness_summary(judged: Sequence[cl.Judged]) -> Table:
    """Per claim tested on D2: its verdict at each solver-cost scale, and robust / profile-dependent."""
    by = {(j.outcome.claim, j.condition): j.verdict for j in judged}
    rows, data_rows = [], []
    for claim in ("C1", "C2", "C3", "C7a"):
        verdicts = [by.get((claim, f"solver_scale={s:g}"), DASH) for s in SCALES]
        label = cl.sensitivity_label(verdicts, missing=DASH, varies="profile-dependent",
                                     nowhere="supported at no scale")
        rows.append((claim, *verdicts, label))
        data_rows.append({"claim": claim, **{f"×{s:g}": v for s, v in zip(SCALES, verdicts)}, "robustness": label})
    return Table(
        name="robustness", title="Profile sensitivity: the verdicts at each solver-cost scale (D2)",
        data=pd.DataFrame(data_rows), headers=("claim", *(f"×{s:g}" for s in SCALES), "robustness"),
        align="l" + "l" * (len(SCALES) + 1), rows=tuple(rows),
        notes=("Robust: supported at every scale; profile-dependent: supported at some, not at others "
               "(plan §3). × 1 is the committed reproduction (results/ablation, results/mirror).",),
    )


def mirror_cell(study: StudyGames) -> Table | None:
    """The one differing cell: the faithful mcts-co mirror at 1 s (D4, 400 games) against the paper's 7/93."""
    bias = at_point(study.get("d4-bias"), 1.0)
    if not has_mirror(bias, FOCUS):
        return None
    k, n, none = mirror_count(bias, FOCUS)
    from boopexp.analysis.paper import table2_reference

    paper = table2_reference()[FOCUS]  # Table II: 7 P1 wins, 93 P2 wins
    pk, pn = paper.p2_wins, paper.p1_wins + paper.p2_wins
    table = [[k, n - k], [pk, pn - pk]]  # rows: the samples (ours, the paper's), as in Table II
    (boschloo, exact), fisher = boschloo_p(table), fisher_exact(table)
    low, high = cl.wilson(k, n)
    plow, phigh = cl.wilson(pk, pn)
    data = pd.DataFrame([{"ours_p2_wins": k, "ours_decided": n, "ours_no_winner": none, "ours_p2_share": k / n,
                          "ours_ci_low": low, "ours_ci_high": high, "paper_p2_wins": pk, "paper_games": pn,
                          "paper_ci_low": plow, "paper_ci_high": phigh, "p_boschloo": boschloo,
                          "p_fisher": fisher}])
    return Table(
        name="mirror_cell", title="The differing cell: the mcts-co mirror (faithful, 1 s) against the paper's 7/93",
        data=data, headers=("ours: P2 wins/decided", "P2 share [95% CI]", "paper", "paper share [95% CI]",
                            "Boschloo p", "Fisher p"),
        align="rrrrrr",
        rows=((f"{k}/{n}", fmt_rate_ci(k / n, low, high), f"{pk}/{pn}", fmt_rate_ci(pk / pn, plow, phigh),
               fmt_p(boschloo), fmt_p(fisher)),),
        notes=("Two-sided exact tests of one common P2 share (reported, no claim). "
               f"{none} game(s) without a winner left out.",
               *(() if exact else (boschloo_bound_note(["the mcts-co mirror"]),))),
    )


def cap_notes(study: StudyGames) -> list[str]:
    """The cells with more than 5% of their games at the ply cap (plan §1)."""
    notes = []
    for name in STORES:
        games = study.get(name)
        if games.empty:
            continue
        keys = games.assign(pair=[" / ".join(sorted((a, b))) for a, b in zip(games["p1"], games["p2"])],
                            none=games["winner"].isna())
        for (pair, point), grp in keys.groupby(["pair", "point"], sort=True, dropna=False):
            share = float(grp["none"].mean())
            if share > CAP_FLAG:
                where = "" if math.isnan(point) else f" at {point:g}"
                notes.append(f"{name}: {pair}{where}: {int(grp['none'].sum())} of {len(grp)} games "
                             f"({100 * share:.1f}%) stopped at the ply cap.")
    return notes


# ---------------------------------------------------------------------------------------------
# The whole report


@dataclass(frozen=True)
class StudyReport:
    """Everything ``boopexp robustness`` writes."""

    claims: Table
    tables: tuple[Table, ...]
    ratings: RatingsResult | None
    ladder: pd.DataFrame
    sensitivity: pd.DataFrame
    notes: tuple[str, ...]


def analyse(study: StudyGames, *, resamples: int | None = None, seed: int | None = None) -> StudyReport:
    """Every claim, table and figure datum of the study from its games (pure; nothing written)."""
    from boopexp.analysis import ratings_bootstrap as rb
    from boopexp.analysis.ratings_report import ratings_table

    ratings = d1_ratings(study.get("d1"), rb.RESAMPLES if resamples is None else resamples,
                         rb.SEED if seed is None else seed)
    judged = judge_all(study, ratings)
    claims = claims_table(judged)
    tables: list[Table] = [claims, verdict_matrix(judged), robustness_summary(judged),
                           components_table(study, ratings)]
    if ratings is not None:
        tables += [ratings_table(ratings.boot.fit)]
        if not ratings.factorial.empty:
            tables.append(factorial_table(ratings))
        tables += [direct_table(ratings), deviance_table(ratings)]
    ladder = ladder_frame(study)
    sensitivity = sensitivity_frame(study)
    tables.append(_rate_table("ladder", "Budget ladder (D3): mcts-co's win rate and the mirror's P2 share", ladder,
                              "budget", ("Wilson 95% intervals; decided games only.",)))
    tables.append(_rate_table("sensitivity", "Profile sensitivity (D2): mcts-co by solver-cost scale, and cpu",
                              sensitivity, "profile",
                              ("× 1: results/ablation + results/mirror (seed 2024); cpu: results/ablation-cpu + "
                               "results/mirror-cpu, not bit-reproducible, in no test.",)))
    cell = mirror_cell(study)
    if cell is not None:
        tables.append(cell)
    notes = []
    if study.missing:
        notes.append("Stores without games (their claims are left out): " + ", ".join(study.missing) + ".")
    for name, (have, planned) in sorted(study.incomplete.items()):
        notes.append(f"Store {name} is incomplete: {have:,} of {planned:,} planned games.")
    notes += cap_notes(study)
    return StudyReport(claims=claims, tables=tuple(tables), ratings=ratings, ladder=ladder, sensitivity=sensitivity,
                       notes=tuple(notes))


OUTPUT_CSV = ("claims", "verdicts", "components", "ratings", "factorial", "deviance", "direct", "ladder", "sensitivity",
              "robustness", "mirror_cell")


def write_report(report: StudyReport, out_dir: Path | str) -> list[Path]:
    """Write claims.csv, one CSV per table, robustness-tables.md and the figures into ``out_dir``.

    Raises:
        StoreError: out_dir cannot be written.
    """
    return studies_report.write_report(Path(out_dir), report.tables, OUTPUT_CSV, "robustness", report.notes,
                                       _figures(report))


def _figures(report: StudyReport) -> Iterator[tuple[str, Figure | None]]:
    """The ladder, the sensitivity and (with D1's ratings) the ratings figure, each drawn when reached."""
    from boopexp.studies.robustness import figures as rf

    yield "ladder", rf.ladder_figure(report.ladder)
    yield "sensitivity", rf.sensitivity_figure(report.sensitivity)
    if report.ratings is not None:
        from boopexp.analysis.ratings_report import ratings_figure

        yield "ratings", ratings_figure(report.ratings.boot.fit)


def rebuild(root: Path | str, out_dir: Path | str | None = None, reference_root: Path | str | None = None,
            *, resamples: int | None = None) -> tuple[StudyReport, list[Path]]:
    """Read the study under ``root``, analyse it and write everything into ``out_dir`` (default: root)."""
    study = load_study(root, reference_root)
    report = analyse(study, resamples=resamples)
    return report, write_report(report, Path(root) if out_dir is None else out_dir)
