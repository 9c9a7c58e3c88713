"""The knowledge study's analysis (docs/knowledge-plan.md §3–§6) on synthetic stores.

Every outcome below is known by construction: pair counts chosen so that each claim must come out
supported, contradicted or not supported, p-values recomputed by hand from the binomial and normal
formulas, and the stores written as ``boopexp run`` writes them (a config.yaml with the plan's
settings, one record a game) so the command reads them as it will read the study's.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from study_helpers import Cell, write_paired_store

from boopexp.analysis.ratings_bootstrap import bootstrap_ratings
from boopexp.interfaces.cli import main
from boopexp.studies import claims as cl
from boopexp.studies.knowledge import analysis as kn
from boopexp.studies.knowledge import report as kr

# ---------------------------------------------------------------------------------------------
# The tests on pair counts


def _tail(k: int, n: int, greater: bool) -> float:
    """P(X >= k) (greater) or P(X <= k) for X ~ Binomial(n, ½), by hand."""
    ks = range(k, n + 1) if greater else range(0, k + 1)
    return sum(math.comb(n, i) for i in ks) / 2**n


def test_sign_test_on_pairs_is_the_exact_binomial_on_the_pairs_not_split():
    # 15 pairs won, 5 split, 5 lost: the splits do not enter the test, they do enter the score
    out = cl.pairs_above("C", "a vs b", zero=5, half=5, one=15, left_out=2)
    assert out.p_value == pytest.approx(_tail(15, 20, True), rel=1e-12)
    assert out.p_contra == pytest.approx(_tail(15, 20, False), rel=1e-12)
    assert out.estimate == pytest.approx((15 + 2.5) / 25)
    scores = np.array([0.0] * 5 + [0.5] * 5 + [1.0] * 15)
    se = scores.std(ddof=1) / math.sqrt(25)
    assert (out.ci_low, out.ci_high) == pytest.approx((0.7 - 1.959963984540054 * se, 0.7 + 1.959963984540054 * se))
    assert (out.n, out.no_winner) == (25, 2)
    assert "15 of 20 not split (5 split, 2 left out)" in out.test
    # a split is no evidence either way: adding splits leaves the sign test's p unchanged
    assert cl.pairs_above("C", "x", 5, 500, 15, 0).p_value == out.p_value


def test_negligible_effect_is_the_tost_on_the_mean_pair_score():
    from scipy.stats import norm

    out = cl.pairs_above("C", "x", zero=60, half=80, one=60, left_out=0)
    scores = np.array([0.0] * 60 + [0.5] * 80 + [1.0] * 60)
    se = scores.std(ddof=1) / math.sqrt(200)
    margin = 1 / (1 + 10 ** (-50 / 400)) - 0.5
    assert cl.PAIR_SCORE_MARGIN == pytest.approx(margin) and round(margin, 4) == 0.0715
    assert out.p_weak == pytest.approx(max(norm.sf((0.5 - (0.5 - margin)) / se), norm.cdf((0.5 - (0.5 + margin)) / se)))
    assert cl.judge_family("c", [out])[0].verdict == "not supported"
    # every pair split: no pair is won or lost, the effect is exactly ½ (standard error 0)
    splits = cl.pairs_above("C", "x", 0, 200, 0, 0)
    assert math.isnan(splits.p_value) and splits.p_weak == 0.0
    assert cl.judge_family("c", [splits])[0].verdict == "not supported"
    # 200 pairs all won: supported, and the TOST can never say negligible
    swept = cl.pairs_above("C", "x", 0, 0, 200, 0)
    assert swept.p_value == pytest.approx(0.5**200) and swept.p_weak == 1.0


def test_verdicts_on_pairs():
    assert cl.judge_family("c", [cl.pairs_above("C", "x", 20, 100, 80, 0)])[0].verdict == "supported"
    assert cl.judge_family("c", [cl.pairs_above("C", "x", 80, 100, 20, 0)])[0].verdict == "contradicted"
    assert cl.judge_family("c", [cl.pairs_above("C", "x", 4, 2, 6, 0)])[0].verdict == "inconclusive"


def test_pair_counts_a_split_an_undecided_game_and_an_unpaired_game():
    W, L, U, A = kn.WON, kn.LOST, kn.UNDECIDED, kn.ABSENT
    forward = [W, W, L, L, W, U, W, A]
    backward = [W, L, W, L, U, U, A, L]
    c = kn.count_pairs(np.array(forward), np.array(backward))
    # won both; two splits (either seat); lost both; two left out (one or both undecided); two unpaired
    assert (c.one, c.half, c.zero, c.left_out, c.unpaired, c.games) == (1, 2, 1, 2, 2, 14)
    assert c.pairs == 6 and c.swapped().one == 1 and c.swapped().zero == 1


@pytest.mark.parametrize(("left_out", "flagged"), [(5, False), (6, True)])
def test_more_than_five_percent_of_pairs_left_out_is_flagged(left_out, flagged):
    c = kn.PairCounts(zero=30, half=40, one=30 - left_out, left_out=left_out, unpaired=0, games=200)
    assert c.pairs == 100 and c.flagged is flagged


def test_holm_orders_the_family_and_steps_down():
    # p-values 0.01, 0.04, 0.03, 0.2: Holm multiplies by 4, 3, 2, 1 in increasing order, monotone
    parts = [cl.Outcome("C", str(i), "directional", 0.5, 0, 1, p, 0.5, 0.5, False, 1, 0, "")
             for i, p in enumerate((0.01, 0.04, 0.03, 0.2))]
    judged = cl.judge_family("f", parts)
    assert [j.p_holm for j in judged] == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert [j.verdict for j in judged] == ["supported", "inconclusive", "inconclusive", "inconclusive"]


def test_the_conjunction_takes_the_largest_component_p():
    strong = cl.pairs_above("C1", "a", 10, 100, 90, 0)
    weaker = cl.pairs_above("C1", "b", 30, 100, 60, 0)
    both = cl.conjunction("C1", [strong, weaker])
    assert both.p_value == weaker.p_value == max(strong.p_value, weaker.p_value) and both.component == "b"
    assert both.p_contra == pytest.approx(min(1.0, 2 * min(strong.p_contra, weaker.p_contra)))


# ---------------------------------------------------------------------------------------------
# The pair bootstrap


def test_the_pair_bootstrap_keeps_the_two_games_of_a_pair_together():
    # Every pair of a vs b is a split: the Blue seat won both games, or Red won both. In any
    # resample of whole pairs, "a vs b" and "b vs a" hold the same Blue wins, so b's rating stays
    # exactly a's (the seat term takes it all). Resampling the games one by one breaks that.
    p1, p2, winner, pair = [], [], [], []
    for i in range(40):
        seat = "p1" if i % 2 else "p2"
        p1 += ["a", "b"]
        p2 += ["b", "a"]
        winner += [seat, seat]
        pair += [("a-b", i), ("a-b", i)]
    paired = bootstrap_ratings(p1, p2, winner, agents=["a", "b"], anchor="a", resamples=300, seed=2027,
                               pairs=pair)
    games = bootstrap_ratings(p1, p2, winner, agents=["a", "b"], anchor="a", resamples=300, seed=2027)
    _, diff_paired = paired.contrast({"a": 1.0, "b": -1.0})
    _, diff_games = games.contrast({"a": 1.0, "b": -1.0})
    assert np.max(np.abs(diff_paired)) < 1e-6
    assert np.std(diff_games) > 10.0
    assert "resamples of the pairs of games" in paired.fit.method
    again = bootstrap_ratings(p1, p2, winner, agents=["a", "b"], anchor="a", resamples=300, seed=2027, pairs=pair)
    assert np.array_equal(paired.draws, again.draws)
    # the games' order does not change the draws (strata and pair kinds in a fixed order)
    order = np.random.default_rng(0).permutation(len(p1))
    shuffled = bootstrap_ratings(*([v[i] for i in order] for v in (p1, p2, winner)), agents=["a", "b"],
                                 anchor="a", resamples=300, seed=2027, pairs=[pair[i] for i in order])
    assert np.array_equal(paired.draws, shuffled.draws)


def test_a_pair_of_two_pairings_is_refused():
    with pytest.raises(ValueError, match="two pairings"):
        bootstrap_ratings(["a", "b", "a", "c"], ["b", "a", "c", "a"], ["p1", "p2", "p1", "p2"], agents=["a", "b", "c"],
                          anchor="a", resamples=5, pairs=[1, 2, 1, 2])


# ---------------------------------------------------------------------------------------------
# Synthetic stores


def _spec(agent: str, budget: float, charge: float) -> dict:
    if agent == "alphabeta":
        return {"spec": {"name": agent, "kind": "alphabeta", "params": {"node_cost_scale": charge, "max_depth": 0}}}
    return {"spec": {"name": agent, "kind": "mcts", "params": {}}}


def write_store(root: Path, store: str, cells: list[Cell], *, planned_extra: int = 0, tail: str = "",
                swept: bool = True) -> Path:
    """A store of ``cells`` (A, B, budget, charge, (won both, split, lost both, left out)) as
    boopexp run writes it, config.yaml named knowledge-<store> (study_helpers.write_paired_store)."""
    return write_paired_store(root, f"knowledge-{store}", store, cells, item=_spec, planned_extra=planned_extra,
                              tail=tail, swept=swept)


NAN = math.nan
STRONG, WEAK, EVEN = (50, 40, 10, 0), (10, 40, 50, 0), (10, 80, 10, 0)


def synthetic_study(root: Path) -> Path:
    """The six stores with known verdicts: C1 supported at ×1 and ×0.5, not supported at ×2
    (alpha-beta even with mcts-co): charge-dependent; C2 supported at ×1 and ×0.5, contradicted at
    ×2: charge-dependent; C3 contradicted; C4 supported."""
    claims = []
    for t in kn.BUDGETS:
        claims += [("alphabeta", "vanilla", t, 1.0, STRONG), ("mcts-prior", "mcts-co", t, NAN, WEAK),
                   ("mcts-co", "alphabeta", t, 1.0, STRONG)]
    write_store(root, "claims", claims)
    write_store(root, "charge-co", [("mcts-co", "alphabeta", 1.0, 0.5, STRONG),
                                    ("mcts-co", "alphabeta", 1.0, 2.0, EVEN)])
    write_store(root, "charge-vanilla", [("alphabeta", "vanilla", t, c, STRONG if c == 0.5 else WEAK)
                                         for t in kn.BUDGETS for c in (0.5, 2.0)])
    for t in kn.BUDGETS:
        write_store(root, kn.ladder_store(t), [("mcts-co", x, t, NAN, (30, 15, 5, 0)) for x in kn.CLASSICAL[1:]]
                    + [("vanilla", "os-mcts", t, NAN, (40, 8, 2, 0)),
                       ("mcts-co", "heuristics", t, NAN, (20, 20, 10, 0))], swept=False)
    return root


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> tuple[Path, kr.KnowledgeReport]:
    root = synthetic_study(tmp_path_factory.mktemp("knowledge") / "results" / "knowledge")
    report = kr.analyse(kn.load_study(root), resamples=200)
    return root, report


def _verdicts(report: kr.KnowledgeReport) -> dict[tuple[str, str], str]:
    data = report.table("verdicts").data
    return {(c, k): v for c, k, v in zip(data["claim"], data["condition"], data["verdict"])}


def test_synthetic_study_verdicts(synthetic):
    _, report = synthetic
    verdicts = _verdicts(report)
    assert {k: v for k, v in verdicts.items() if k[1] == "default"} == {
        ("C1", "default"): "supported", ("C2", "default"): "supported", ("C3", "default"): "contradicted",
        ("C4", "default"): "supported"}
    assert verdicts[("C1", "charge=0.5")] == verdicts[("C2", "charge=0.5")] == "supported"
    assert verdicts[("C1", "charge=2")] == "not supported"
    assert verdicts[("C2", "charge=2")] == "contradicted"
    assert verdicts[("C1", "across charges")] == verdicts[("C2", "across charges")] == "charge-dependent"
    for t in ("0.25", "1", "4"):
        assert {c for c, k in verdicts if k == f"budget={t}"} == {"C1", "C2", "C3", "C4"}
    assert len(verdicts) == 4 + 2 + 2 + 12 + 2
    assert not [n for n in report.notes if "PARTIAL" in n or "not tested" in n]


def test_synthetic_families_are_holm_adjusted_within_themselves(synthetic):
    _, report = synthetic
    data = report.table("verdicts").data
    default = data[data["condition"] == "default"]
    assert set(default["family_size"]) == {4}
    expected = cl.holm(list(default["p_value"]))
    assert list(default["p_holm"]) == pytest.approx(expected)
    # C1 at ×0.5 is in a family of two: its Holm p is at most twice its own
    charge = data[data["condition"] == "charge=0.5"]
    assert set(charge["family_size"]) == {2}


def test_synthetic_claims_name_the_deciding_component(synthetic):
    _, report = synthetic
    claims = report.table("claims").data
    c1 = claims[(claims["claim"] == "C1") & (claims["condition"] == "default")]
    # the three ladder components tie (30/15/5 each): the first of them decides
    assert list(c1["role"]) == ["claim", "component", "deciding", "component", "component"]
    head = c1[c1["role"] == "claim"].iloc[0]
    parts = c1[c1["role"] != "claim"]
    assert head["p_value"] == parts["p_value"].max()
    deciding = parts[parts["role"] == "deciding"].iloc[0]
    assert deciding["component"] == head["component"] and deciding["p_value"] == head["p_value"]
    # the classical agents of the ladder: 100 pairs, 30/15/5 — weaker evidence than 50/40/10 of 100
    assert deciding["store"] == "ladder-1"
    assert set(parts["component"]) == {"mcts-co vs alphabeta (1 s, ×1)", "mcts-co vs mcts-solver (1 s)",
                                       "mcts-co vs vanilla (1 s)", "mcts-co vs os-mcts (1 s)"}


def test_synthetic_pairings_rows(synthetic):
    _, report = synthetic
    pairings = report.table("pairings").data
    assert list(pairings.columns) == list(kr.PAIRINGS_COLUMNS)
    row = pairings[(pairings["store"] == "claims") & (pairings["agent"] == "alphabeta")
                   & (pairings["budget"] == 1.0)].iloc[0]
    assert (row["won_both"], row["split"], row["lost_both"], row["k"], row["n"]) == (50, 40, 10, 50, 60)
    assert row["p_greater"] == pytest.approx(_tail(50, 60, True), rel=1e-9)
    assert row["p_less"] == pytest.approx(_tail(50, 60, False), rel=1e-9)
    from boopexp.analysis.stats import wilson_interval

    assert (row["wilson_low"], row["wilson_high"]) == pytest.approx(wilson_interval(50, 60))
    assert row["score"] == pytest.approx(0.7) and row["elo"] == pytest.approx(400 * math.log10(0.7 / 0.3))
    assert len(pairings) == 9 + 2 + 6 + 3 * 5


def test_synthetic_ladder(synthetic):
    _, report = synthetic
    ladder = report.table("ladder").data
    assert list(ladder.columns) == list(kr.LADDER_COLUMNS)
    one = ladder[ladder["budget"] == 1.0].set_index("agent")
    assert one.loc["vanilla", "elo"] == 0.0
    assert {"alphabeta×0.5", "alphabeta×2", kr.BLUE_SEAT} <= set(one.index)
    assert one.loc["mcts-co", "elo"] > one.loc["mcts-solver", "elo"]
    assert all("resamples of the pairs of games" in n for n in report.table("ladder").notes[1:])


def test_the_command_writes_every_file_and_rebuilds_byte_for_byte(synthetic, tmp_path):
    root, _ = synthetic
    first = CliRunner().invoke(main, ["knowledge", str(root), "--out", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    # C3 contradicted in 4 families, C2 at ×2; C1 at ×2 not supported; the rest supported
    assert first.stdout.splitlines()[0] == "20 claim tests: 5 contradicted, 1 not supported, 14 supported"
    kr.rebuild(root, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(["claims.csv", "verdicts.csv", "pairings.csv", "ladder.csv", "knowledge-tables.md",
                            "ladder.png", "ladder.svg", "forest.png", "forest.svg"])
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    for name, columns in (("claims.csv", kr.CLAIMS_COLUMNS), ("verdicts.csv", kr.VERDICTS_COLUMNS),
                          ("pairings.csv", kr.PAIRINGS_COLUMNS), ("ladder.csv", kr.LADDER_COLUMNS)):
        assert list(pd.read_csv(tmp_path / "a" / name).columns) == list(columns), name


def test_a_partial_study_is_labelled(tmp_path):
    root = tmp_path / "knowledge"
    # only the claims store, planned with 5 more games a pairing than stored, a truncated last line
    write_store(root, "claims", [("alphabeta", "vanilla", 1.0, 1.0, (12, 5, 2, 1)),
                                 ("mcts-co", "alphabeta", 0.25, 1.0, (3, 10, 3, 4))],
                planned_extra=5, tail='{"schema":2,"experi')
    result = CliRunner().invoke(main, ["knowledge", str(root), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("PARTIAL: ")
    err = result.stderr
    assert "games.jsonl line 81: truncated last line" in err
    assert "Note: PARTIAL ANALYSIS: stores without games (their claims are left out): charge-co, charge-vanilla, " \
           "ladder-1, ladder-0.25, ladder-4." in err
    assert "Note: PARTIAL ANALYSIS: store claims is incomplete: 80 of 100 planned games." in err
    assert "C1 at default not tested: no decided pair yet of mcts-co vs alphabeta (1 s, ×1) in claims" in err
    # 4 of 20 pairs left out: flagged
    assert "claims: mcts-co vs alphabeta at 0.25 s, ×1: 4 of 20 pairs (20.0%) left out" in err
    text = (tmp_path / "out" / "knowledge-tables.md").read_text(encoding="utf-8")
    assert "Note: PARTIAL ANALYSIS" in text
    verdicts = pd.read_csv(tmp_path / "out" / "verdicts.csv")
    assert dict(zip(verdicts["claim"] + "@" + verdicts["condition"], verdicts["verdict"]))["C2@budget=1"] == \
        "supported"


def test_missing_study_folder_is_one_line(tmp_path):
    result = CliRunner().invoke(main, ["knowledge", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"Error: study folder not found: {str(tmp_path / 'nope')!r}"]


def test_a_folder_without_the_stores_is_refused_and_nothing_is_written(tmp_path):
    (tmp_path / "other").mkdir()
    result = CliRunner().invoke(main, ["knowledge", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.splitlines() == [
        f"Error: {str(tmp_path)!r} is not the knowledge study's folder: it holds none of its stores claims, "
        "charge-co, charge-vanilla, ladder-1, ladder-0.25, ladder-4 (each a results folder of "
        "configs/knowledge-*.yaml); give the study's folder (default results/knowledge)"]
    assert not (tmp_path / "out").exists()


def test_another_experiment_under_a_store_name_is_refused(tmp_path):
    folder = write_store(tmp_path, "claims", [("alphabeta", "vanilla", 1.0, 1.0, (1, 1, 1, 0))])
    (folder / "config.yaml").write_text(json.dumps({"name": "demo", "plan": []}), encoding="utf-8")
    result = CliRunner().invoke(main, ["knowledge", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"Error: {str(folder)!r} is not the knowledge study's store claims: it holds the games of experiment "
        "'demo', not those of 'knowledge-claims' (configs/knowledge-claims.yaml); give the study's folder "
        "(default results/knowledge)"]
