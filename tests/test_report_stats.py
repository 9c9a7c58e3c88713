"""Wilson intervals and Fisher's exact test against known values (boopexp.report.stats)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boopexp.report.stats import fisher_exact, verdict, wilson_interval


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


def test_verdict_threshold():
    assert verdict(0.05) == "consistent"
    assert verdict(0.0499) == "differs"
    assert verdict(math.nan) == "—"
