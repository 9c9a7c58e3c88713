"""The robustness study's analysis (boopexp/studies/claims.py, robustness/analysis.py; analysis/ratings_bootstrap.py).

Synthetic games whose verdicts are known by construction: counts set to the expected wins of
chosen ratings, so every test below knows which claim must come out supported, contradicted,
not supported or inconclusive.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from report_fixtures import make_record, write_results

from boopexp.analysis.ratings_bootstrap import bootstrap_ratings
from boopexp.interfaces.cli import main
from boopexp.studies import claims as cl
from boopexp.studies.robustness import analysis as rb
from boopexp.studies.robustness import report as rr

# ---------------------------------------------------------------------------------------------
# The tests on counts


def test_holm_matches_the_hand_computation_and_skips_missing_tests():
    # sorted 0.01, 0.03, 0.04: 3 × 0.01 = 0.03, 2 × 0.03 = 0.06, max(0.06, 1 × 0.04) = 0.06
    assert cl.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    adjusted = cl.holm([0.01, math.nan, 0.04])
    assert adjusted[0] == pytest.approx(0.02) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.04)


def test_directional_rate_verdicts():
    strong = cl.rate_above("C1", "x", 150, 200, 0)
    assert strong.p_value < 1e-10 and cl.judge_family("c", [strong])[0].verdict == "supported"
    losing = cl.rate_above("C1", "x", 50, 200, 0)
    assert cl.judge_family("c", [losing])[0].verdict == "contradicted"
    # 1,000 games at 50%: the effect is shown to be inside ±5 points
    flat = cl.rate_above("C1", "x", 500, 1000, 0)
    assert cl.judge_family("c", [flat])[0].verdict == "not supported"
    # 20 games at 55%: too few to tell
    few = cl.rate_above("C1", "x", 11, 20, 0)
    assert cl.judge_family("c", [few])[0].verdict == "inconclusive"


def test_equivalence_share_verdicts():
    balanced = cl.share_balanced("C6a", "m", 500, 1000, 0, margin=0.05)
    assert balanced.p_value < 0.01 and cl.judge_family("c", [balanced])[0].verdict == "supported"
    lopsided = cl.share_balanced("C6a", "m", 800, 1000, 0, margin=0.05)
    assert lopsided.outside and cl.judge_family("c", [lopsided])[0].verdict == "contradicted"
    # real but small: 56% of 2,000 differs from 50% but its interval overlaps the margin
    small = cl.share_balanced("C6a", "m", 1120, 2000, 0, margin=0.05)
    assert not small.outside and cl.judge_family("c", [small])[0].verdict == "not supported"
    unclear = cl.share_balanced("C6a", "m", 11, 20, 0, margin=0.05)
    assert cl.judge_family("c", [unclear])[0].verdict == "inconclusive"


def test_conjunction_takes_the_largest_p_and_fails_with_one_part():
    parts = [cl.rate_above("C3", "a", 150, 200, 0), cl.rate_above("C3", "b", 120, 200, 0)]
    both = cl.conjunction("C3", parts)
    assert both.p_value == max(p.p_value for p in parts) and both.component == "b"
    one_loses = cl.conjunction("C3", [parts[0], cl.rate_above("C3", "c", 60, 200, 0)])
    assert cl.judge_family("c", [one_loses])[0].verdict == "contradicted"


def test_holm_counts_the_whole_family():
    p = 0.02  # alone supported, in a family of five it is not
    part = cl.rate_above("C1", "x", 113, 200, 0)
    assert 0.01 < part.p_value < 0.05
    assert cl.judge_family("c", [part])[0].verdict == "supported"
    others = [cl.rate_above("C2", "y", 100, 200, 0) for _ in range(4)]
    judged = cl.judge_family("c", [part, *others])
    assert judged[0].p_holm == pytest.approx(min(1.0, 5 * part.p_value)) and judged[0].verdict != "supported"
    assert p > 0


def test_boschloo_direction_and_fisher_beside():
    out = cl.share_greater("C7b", "faithful > corrected", (75, 100), (50, 100), 0)
    assert out.p_value < 1e-3 and out.p_contra > 0.99 and out.estimate == pytest.approx(0.25)
    assert out.ci_low < 0.25 < out.ci_high and "Fisher" in out.test


def test_logit_slope_sign():
    rng = np.random.default_rng(0)
    budgets = np.repeat(np.log2([0.125, 0.25, 0.5, 1, 2, 4]), 300)
    seat = np.tile([0, 1], len(budgets) // 2)
    falling = (rng.random(len(budgets)) < 1 / (1 + np.exp(-(1.0 - 0.5 * budgets)))).astype(int)
    out = cl.logit_slope_below("C8", "x", falling, budgets, seat, 0)
    assert out.estimate < -0.3 and out.p_value < 1e-6
    flat = np.tile([0, 0, 1, 1], len(budgets) // 4)  # exactly half won at every budget and seat
    assert cl.judge_family("c", [cl.logit_slope_below("C8", "x", flat, budgets, seat, 0)])[0].verdict == "not supported"


# ---------------------------------------------------------------------------------------------
# The bootstrap


def _games_from_ratings(elo: dict[str, float], n: int, first_move: float = 0.0):
    """Every ordered pairing, n games each, P1 winning exactly round(n · expected score)."""
    p1, p2, winner = [], [], []
    for a in elo:
        for b in elo:
            if a == b:
                continue
            p = 1.0 / (1.0 + 10 ** (-(elo[a] - elo[b] + first_move) / 400))
            k = round(n * p)
            p1 += [a] * n
            p2 += [b] * n
            winner += ["p1"] * k + ["p2"] * (n - k)
    return p1, p2, winner


def test_bootstrap_is_seeded_and_recovers_the_ratings():
    elo = {"vanilla": 0.0, "a": 100.0, "b": -50.0, "c": 200.0}
    p1, p2, winner = _games_from_ratings(elo, 200, first_move=30.0)
    one = bootstrap_ratings(p1, p2, winner, agents=list(elo), anchor="vanilla", resamples=300, seed=7)
    two = bootstrap_ratings(p1, p2, winner, agents=list(elo), anchor="vanilla", resamples=300, seed=7)
    other = bootstrap_ratings(p1, p2, winner, agents=list(elo), anchor="vanilla", resamples=300, seed=8)
    assert np.array_equal(one.draws, two.draws) and not np.array_equal(one.draws, other.draws)
    for r in one.fit.ratings:
        assert r.elo == pytest.approx(elo[r.agent], abs=3.0)
        assert r.ci_low <= r.elo <= r.ci_high
    assert one.fit.first_move == pytest.approx(30.0, abs=3.0)
    # the bootstrap's spread agrees with the likelihood's (Wald) standard error
    from boopexp.analysis.ratings import fit_ratings

    wald = fit_ratings(p1, p2, winner, agents=list(elo), anchor="vanilla").by_agent()["c"]
    boot = one.fit.by_agent()["c"]
    assert (boot.ci_high - boot.ci_low) == pytest.approx(wald.ci_high - wald.ci_low, rel=0.2)


def test_bootstrap_is_stratified_by_pairing_and_seat():
    # every stratum (ordered pairing) has one outcome only: every resample is the same games
    p1 = ["a"] * 30 + ["b"] * 30
    p2 = ["b"] * 30 + ["a"] * 30
    winner = ["p1"] * 30 + ["p1"] * 30
    p1 += ["a"] * 10 + ["c"] * 10 + ["b"] * 10 + ["c"] * 10
    p2 += ["c"] * 10 + ["a"] * 10 + ["c"] * 10 + ["b"] * 10
    winner += ["p1"] * 40
    boot = bootstrap_ratings(p1, p2, winner, agents=["a", "b", "c"], anchor="a", resamples=50, seed=1)
    assert np.allclose(boot.draws, boot.point, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# The whole analysis on a synthetic study

#: D1's true ratings: E and S equal to vanilla (C4-E, C4-S supported), P 100 below (C4-P
#: contradicted), EP the strongest ablation (C5c), P the weakest (C5d), heuristics above
#: mcts-co (C2 contradicted).
TRUE_ELO = {"vanilla": 0.0, "mcts+S": 0.0, "mcts+E": 0.0, "mcts+P": -100.0, "mcts+SE": 200.0, "mcts+SP": 100.0,
            "mcts+EP": 300.0, "mcts-co": 500.0, "heuristics": 700.0}


def _frame(rows):
    return pd.DataFrame(rows, columns=["pairing", "p1", "p2", "winner", "point"])


def _mirror(agent: str, p2_wins: int, games: int, point: float = math.nan):
    return [(f"{agent} vs {agent}", agent, agent, "p2" if i < p2_wins else "p1", point) for i in range(games)]


def _pair(a: str, b: str, a_wins_each_seat: int, per_seat: int, point: float = math.nan):
    rows = [(f"{a} vs {b}", a, b, "p1" if i < a_wins_each_seat else "p2", point) for i in range(per_seat)]
    rows += [(f"{b} vs {a}", b, a, "p2" if i < a_wins_each_seat else "p1", point) for i in range(per_seat)]
    return rows


def synthetic_study(d1_games: int = 100) -> rb.StudyGames:
    p1, p2, winner = _games_from_ratings(TRUE_ELO, d1_games)
    d1 = _frame([(f"{a} vs {b}", a, b, w, math.nan) for a, b, w in zip(p1, p2, winner)])
    d3 = []
    for budget in rb.BUDGETS:
        d3 += _pair("mcts-co", "vanilla", 150, 300, budget)  # flat at 50%: C8 not supported
        d3 += _pair("mcts-co", "heuristics", 150, 300, budget)
        d3 += _mirror("mcts-co", 140, 200, budget)
    bias = []
    for budget in (0.25, 1.0, 4.0):
        bias += _mirror("mcts-co", 300, 400, budget)
        bias += _mirror("mcts-co-a9", 10, 20, budget)  # 20 games: C7b inconclusive
    reference = []
    for opponent in rb.TABLE1_OPPONENTS:
        reference += _pair("mcts-co", opponent, 45, 50)
    d2 = []
    for scale in (0.5, 2.0, 4.0):
        for opponent in rb.TABLE1_OPPONENTS:
            d2 += _pair("mcts-co", opponent, 45 if scale < 4 else 10, 50, scale)
        d2 += _mirror("mcts-co", 80, 100, scale) + _mirror("mcts+P", 80, 100, scale)
    return rb.StudyGames(stores={
        "d1": d1, "d2": _frame(d2), "d3": _frame(d3),
        "d4-vanilla": _frame(_mirror("vanilla", 500, 1000)),
        "d4-se": _frame(_mirror("mcts+S", 320, 400) + _mirror("mcts+E", 200, 400)),
        "d4-bias": _frame(bias),
        "ablation": _frame(reference),
        "mirror": _frame(_mirror("mcts-co", 80, 100) + _mirror("mcts+P", 80, 100)),
    })


@pytest.fixture(scope="module")
def synthetic_report() -> rr.StudyReport:
    return rr.analyse(synthetic_study(), resamples=400)


def _verdicts(report: rr.StudyReport, condition: str) -> dict[str, str]:
    data = report.claims.data
    rows = data[data["condition"] == condition]
    return dict(zip(rows["claim"], rows["verdict"]))


def test_synthetic_study_default_verdicts(synthetic_report):
    assert _verdicts(synthetic_report, rb.DEFAULT) == {
        "C1": "supported", "C2": "contradicted", "C3": "supported",
        "C4-E": "supported", "C5a": "supported", "C4-P": "contradicted", "C4-S": "supported",
        "C5b": "supported", "C5c": "supported", "C5d": "supported",
        "C6a": "supported", "C6b": "contradicted", "C7a": "supported", "C7b": "inconclusive",
        "C8": "not supported", "C8-heuristics": "not supported",
    }
    data = synthetic_report.claims.data
    default = data[(data["condition"] == rb.DEFAULT) & ~data["claim"].isin(["C5a", "C8-heuristics"])]
    assert len(default) == 14  # the plan's family
    assert list(data.columns) == list(rb.CLAIMS_COLUMNS)
    # Holm over the 14: the smallest p is multiplied by 14
    smallest = default.sort_values("p_value").iloc[0]
    assert smallest["p_holm"] == pytest.approx(min(1.0, 14 * smallest["p_value"]))


def test_synthetic_study_profiles_and_budgets(synthetic_report):
    for scale in ("0.5", "1", "2"):
        assert _verdicts(synthetic_report, f"solver_scale={scale}")["C1"] == "supported"
    assert _verdicts(synthetic_report, "solver_scale=4")["C1"] == "contradicted"
    summary = next(t for t in synthetic_report.tables if t.name == "robustness").data
    assert dict(zip(summary["claim"], summary["robustness"]))["C1"] == "profile-dependent"
    assert dict(zip(summary["claim"], summary["robustness"]))["C7a"] == "robust"
    budget = _verdicts(synthetic_report, "budget=0.25")
    assert set(budget) == {"C1", "C2", "C7a", "C7b"}
    assert set(_verdicts(synthetic_report, "budget=0.125")) == {"C1", "C2", "C7a"}


def test_synthetic_factorial_effects(synthetic_report):
    effects = synthetic_report.ratings.factorial.set_index("effect")["estimate"]
    r = TRUE_ELO
    s_effect = (r["mcts+S"] + r["mcts+SE"] + r["mcts+SP"] + r["mcts-co"]
                - r["vanilla"] - r["mcts+E"] - r["mcts+P"] - r["mcts+EP"]) / 4
    assert effects["S"] == pytest.approx(s_effect, abs=5)
    deviance = synthetic_report.ratings.deviance
    assert len(deviance) == 36 and (deviance["deviance"] < 1.0).all()  # the model is true here


def _write_store(folder, frame: pd.DataFrame) -> None:
    records = []
    for i, g in enumerate(frame.itertuples()):
        record = make_record(g.pairing, i, g.winner, config_hash="00000000000000aa", plies=3)
        if not math.isnan(g.point):
            record["sweep"] = {"budget.seconds": g.point}
        records.append(record)
    write_results(folder, records)
    if folder.name in rb.STORES:  # a study store names its experiment (configs/robustness-*.yaml)
        (folder / "config.yaml").write_text(f"name: robustness-{folder.name}\n", encoding="utf-8")


def test_rebuild_from_stores_is_byte_identical(tmp_path):
    study = synthetic_study(d1_games=10)
    root = tmp_path / "results" / "robustness"
    for name in (*rb.STORES, *rb.REFERENCE):
        _write_store((root / name) if name in rb.STORES else (tmp_path / "results" / name), study.stores[name])
    runner = CliRunner()
    first = runner.invoke(main, ["robustness", str(root), "--out", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    assert "claim rows" in first.output
    rr.rebuild(root, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert {"claims.csv", "robustness-tables.md", "ladder.svg", "sensitivity.svg", "ratings.svg"} <= set(names)
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    claims = pd.read_csv(tmp_path / "a" / "claims.csv")
    assert set(claims["verdict"]) <= set(cl.VERDICTS)


def test_missing_study_folder_is_one_line(tmp_path):
    result = CliRunner().invoke(main, ["robustness", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("Error: study folder not found")


@pytest.mark.parametrize("holds", ["a game store", "nothing"])
def test_a_folder_that_is_not_the_study_is_refused_and_nothing_is_written(tmp_path, holds):
    """Issue 20: a plain game store gave "0 claim rows", exit 0, and 7 empty files in the store."""
    folder = tmp_path / "results" / "ablation"
    folder.mkdir(parents=True)
    if holds == "a game store":
        write_results(folder, [make_record("mcts-co vs vanilla", i, "p1", plies=3) for i in range(3)])
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    for extra in ([], ["--out", str(tmp_path / "out")]):
        result = CliRunner().invoke(main, ["robustness", str(folder), *extra])
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        assert result.stderr.splitlines() == [
            f"Error: {str(folder)!r} is not the robustness study's folder: it holds none of its stores "
            "d1, d2, d3, d4-vanilla, d4-se, d4-bias (each a results folder of configs/robustness-*.yaml); "
            "give the study's folder (default results/robustness)"]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in before if p.parent == folder)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("config", ["name: demo\n", None], ids=["another-experiment", "no-config"])
def test_a_copied_store_under_a_study_name_is_refused_and_nothing_is_written(tmp_path, config):
    """Issue 20 item 11, re-tried: ``cp -r <any store> fake2/d1`` gave "0 claim rows", exit 0, and
    7 files written into fake2/: a store counts by the experiment it holds, not by its folder's name."""
    store = tmp_path / "fake2" / "d1"
    write_results(store, [make_record("mcts-co vs vanilla", i, "p1", plies=3) for i in range(3)])
    if config is None:
        (store / "config.yaml").unlink()
    else:
        (store / "config.yaml").write_text(config, encoding="utf-8")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = CliRunner().invoke(main, ["robustness", str(tmp_path / "fake2")])
    assert result.exit_code == 2, result.output
    held = "the games of experiment 'demo'" if config else "no config.yaml"
    assert result.stderr.splitlines() == [
        f"Error: {str(store)!r} is not the robustness study's store d1: it holds {held}, not those of "
        "'robustness-d1' (configs/robustness-d1.yaml); give the study's folder (default results/robustness)"]
    assert result.stdout == ""
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
