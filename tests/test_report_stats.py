"""Wilson intervals, Fisher's and Boschloo's exact tests against known values (boopexp.analysis.stats).

The functions wrap scipy.stats; these tests pin the numbers (published values, and the values
the hand-written versions gave before the move to SciPy) so that a SciPy change shows up here.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boopexp.analysis.stats import boschloo_exact, fisher_exact, verdict, wilson_interval


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (50, 100, 0.404, 0.596),
        (96, 100, 0.902, 0.984),
        (0, 10, 0.000, 0.278),
        (10, 10, 0.722, 1.000),
        (1, 1, 0.207, 1.000),
    ],
)
def test_wilson_known_values(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert round(lo, 3) == low
    assert round(hi, 3) == high


def test_wilson_edges_are_exact_bounds():
    assert wilson_interval(0, 50)[0] == 0.0
    assert wilson_interval(50, 50)[1] == 1.0
    assert 0.0 < wilson_interval(0, 50)[1] < 0.1
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


@pytest.mark.parametrize(("k", "n"), [(-1, 10), (11, 10), (1, -1)])
def test_wilson_rejects_bad_counts(k, n):
    with pytest.raises(ValueError, match=str(k)):
        wilson_interval(k, n)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_estimate_and_mirrors(kn):
    k, n = kn
    lo, hi = wilson_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    mlo, mhi = wilson_interval(n - k, n)
    assert math.isclose(lo, 1.0 - mhi, abs_tol=1e-12)
    assert math.isclose(hi, 1.0 - mlo, abs_tol=1e-12)


@pytest.mark.parametrize(
    ("table", "p"),
    [
        ([[3, 1], [1, 3]], 0.4857142857142857),  # Fisher's tea-tasting lady
        ([[1, 9], [11, 3]], 0.0027594561852200836),
        ([[8, 2], [1, 5]], 0.034965034965034965),
        ([[0, 5], [5, 0]], 2 / 252),
    ],
)
def test_fisher_known_values(table, p):
    assert fisher_exact(table) == pytest.approx(p, rel=1e-9)


@pytest.mark.parametrize("table", [[[47, 53], [47, 53]], [[0, 10], [0, 10]], [[96, 4], [96, 4]], [[0, 0], [3, 4]]])
def test_fisher_identical_or_degenerate_tables_give_one(table):
    assert fisher_exact(table) == 1.0


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_fisher_symmetries(a, b, c, d):
    p = fisher_exact([[a, b], [c, d]])
    assert 0.0 <= p <= 1.0
    assert fisher_exact([[c, d], [a, b]]) == pytest.approx(p, rel=1e-9)
    assert fisher_exact([[a, c], [b, d]]) == pytest.approx(p, rel=1e-9)


def test_fisher_large_counts_close_to_chi_square():
    # No float overflow at thousands of games; agrees with the normal approximation there.
    a, b, c, d = 1500, 1500, 1400, 1600
    p = fisher_exact([[a, b], [c, d]])
    n = a + b + c + d
    chi2 = n * (abs(a * d - b * c) - n / 2) ** 2 / ((a + b) * (c + d) * (a + c) * (b + d))
    assert p == pytest.approx(math.erfc(math.sqrt(chi2 / 2)), rel=0.05)
    assert p < 0.05


@pytest.mark.parametrize("table", [[[1, 2], [3, -1]], [[1.5, 2], [3, 4]], [[1, 2, 3], [4, 5, 6]]])
def test_fisher_rejects_bad_tables(table):
    with pytest.raises(ValueError):
        fisher_exact(table)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [  # full precision, as the hand-written formula gave them before the move to SciPy
        (96, 100, 0.9016292856411208, 0.9843366960084523),
        (37, 77, 0.3725303790298501, 0.590359949227907),
        (0, 50, 0.0, 0.07134759913335872),
    ],
)
def test_wilson_matches_the_closed_form(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, rel=1e-12, abs=1e-15)
    assert hi == pytest.approx(high, rel=1e-12)


def test_boschloo_known_value():
    # SciPy's documented example (Boschloo 1970 data layout): one-sided p = 0.0355 for
    # alternative="greater"; two-sided is twice the smaller one-sided p.
    from scipy.stats import boschloo_exact as scipy_boschloo

    assert scipy_boschloo([[74, 31], [43, 32]], alternative="greater").pvalue == pytest.approx(0.03556, abs=5e-5)
    # SciPy's samples are its table's columns (74 of 117 against 31 of 63); ours are rows.
    assert boschloo_exact([[74, 43], [31, 32]]) == pytest.approx(0.0711281, abs=1e-6)


def test_boschloo_takes_the_rows_as_the_samples():
    """Our wins/losses against the paper's: the samples are the rows, as in Fisher's table.

    The unconditional test depends on which margin is fixed: transposing the table changes the
    p-value (0.028 here against 0.033 with the samples read as columns).
    """
    from scipy.stats import boschloo_exact as scipy_boschloo

    rows = [[93, 7], [82, 17]]
    assert boschloo_exact(rows) == pytest.approx(scipy_boschloo([[93, 82], [7, 17]]).pvalue, rel=1e-12)
    assert boschloo_exact(rows) != pytest.approx(scipy_boschloo(rows).pvalue, rel=1e-3)


@pytest.mark.parametrize(
    ("table", "p"),
    [  # Table II, mirror games: (ours, paper) x (P1 wins, P2 wins), device budget
        ([[32, 68], [46, 54]], 0.044),  # mcts+E: Fisher 0.059, the one row where the tests disagree
        ([[19, 79], [7, 93]], 0.013),  # mcts-co
    ],
)
def test_boschloo_committed_rows(table, p):
    assert round(boschloo_exact(table), 3) == p


@pytest.mark.parametrize("table", [[[0, 0], [3, 4]], [[0, 3], [0, 4]], [[5, 0], [7, 0]], [[47, 53], [47, 53]]])
def test_boschloo_degenerate_or_identical_tables_give_one(table):
    assert boschloo_exact(table) == pytest.approx(1.0)


@pytest.mark.parametrize("table", [[[1, 2], [3, -1]], [[1.5, 2], [3, 4]], [[1, 2, 3], [4, 5, 6]], [[None, 2], [3, 4]]])
def test_boschloo_rejects_bad_tables(table):
    with pytest.raises(ValueError):
        boschloo_exact(table)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_boschloo_is_at_least_as_powerful_as_fisher_one_sided(a, b, c, d):
    # Boschloo's statistic is Fisher's one-sided p, and its p-value is the supremum over the
    # common rate of P(Fisher p <= observed), which Fisher's validity bounds by that p: so the
    # two-sided Boschloo p is at most twice the smaller one-sided Fisher p.
    from scipy.stats import fisher_exact as scipy_fisher

    p = boschloo_exact([[a, b], [c, d]])
    assert 0.0 <= p <= 1.0
    assert boschloo_exact([[c, d], [a, b]]) == pytest.approx(p, rel=1e-6, abs=1e-9)
    if min(a + b, c + d, a + c, b + d) > 0:
        one_sided = min(scipy_fisher([[a, b], [c, d]], alternative=alt).pvalue for alt in ("less", "greater"))
        assert p <= min(1.0, 2 * one_sided) * (1 + 1e-7) + 1e-12


def test_verdict_threshold():
    assert verdict(0.05) == "consistent"
    assert verdict(0.0499) == "differs"
    assert verdict(math.nan) == "—"
