"""The SPRT module (boopexp.experiments.sprt): fastchess's logistic GSPRT on game pairs, decisions in identity order."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from boopexp.errors import ConfigError
from boopexp.experiments.elo import expected_score
from boopexp.experiments.sprt import (
    H0,
    H1,
    MAX_REACHED,
    PAIR_SCORES,
    RUNNING,
    SprtSpec,
    bernoulli_llr,
    llr_logistic,
    pairing_groups,
    parse_sprt,
    sequential,
    state_from_records,
)

SPEC = SprtSpec(elo0=0.0, elo1=30.0, alpha=0.05, beta=0.05)


def test_bounds_are_walds():
    assert SPEC.lower == pytest.approx(math.log(0.05 / 0.95))
    assert SPEC.upper == pytest.approx(math.log(0.95 / 0.05))
    assert SPEC.upper == pytest.approx(2.944, abs=1e-3)  # fastchess prints (-2.94, 2.94)


def test_two_outcomes_reduce_to_walds_bernoulli_sprt():
    for wins, losses in [(70, 30), (12, 15), (3, 1)]:
        assert llr_logistic([losses, wins], (0.0, 1.0), 0.0, 30.0) == pytest.approx(
            bernoulli_llr(wins, losses, 0.0, 30.0), rel=1e-9)


def test_constrained_mle_matches_a_generic_optimiser():
    from scipy.optimize import minimize

    from boopexp.experiments.sprt import _constrained_mle

    observed = np.array([0.1, 0.55, 0.35])
    scores = np.array(PAIR_SCORES)
    s = expected_score(30.0)
    res = minimize(lambda p: -float(observed @ np.log(p)), np.full(3, 1 / 3), method="SLSQP",
                   bounds=[(1e-9, 1)] * 3,
                   constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1},
                                {"type": "eq", "fun": lambda p: p @ scores - s}],
                   options={"ftol": 1e-14, "maxiter": 500})
    ours = _constrained_mle(list(observed), PAIR_SCORES, s)
    assert sum(ours) == pytest.approx(1.0, abs=1e-12)
    assert float(np.dot(ours, scores)) == pytest.approx(s, abs=1e-12)
    assert ours == pytest.approx(list(res.x), abs=1e-6)


def test_llr_signs():
    assert llr_logistic([1, 10, 30], PAIR_SCORES, 0, 30) > 0  # A scores 0.85: for H1
    assert llr_logistic([15, 10, 15], PAIR_SCORES, 0, 30) < 0  # A scores 0.5: for H0


def _pairs(rng: random.Random, p_first: float, p_second: float, n: int):
    """A's score in game i of 'A vs B' (A moves first) and of 'B vs A'."""
    forward = {i: float(rng.random() < p_first) for i in range(n)}
    backward = {i: float(rng.random() < p_second) for i in range(n)}
    return forward, backward


def test_lopsided_pairing_accepts_h1_early():
    forward, backward = _pairs(random.Random(1), 0.9, 0.8, 200)
    state = sequential(forward, backward, SPEC, 200)
    assert state.decision == H1
    assert state.llr >= SPEC.upper
    assert state.last_index < 50  # under 100 of the 400 games


def test_equal_pairing_accepts_h0():
    # A strong seat effect (P2 wins 80%) but equal agents: pairs mostly split 1-1.
    spec = SprtSpec(elo0=0.0, elo1=50.0)
    forward, backward = _pairs(random.Random(2), 0.2, 0.8, 500)
    state = sequential(forward, backward, spec, 500)
    assert state.decision == H0 and state.llr <= spec.lower


def test_decision_uses_the_consecutive_prefix_only():
    forward, backward = _pairs(random.Random(1), 0.9, 0.8, 200)
    full = sequential(forward, backward, SPEC, 200)
    # A game past the decision missing changes nothing; one before it stops the test there.
    later = dict(backward)
    del later[full.last_index + 1]
    assert sequential(forward, later, SPEC, 200) == full
    gap = dict(forward)
    del gap[2]
    state = sequential(gap, backward, SPEC, 200)
    assert state.decision == RUNNING and state.last_index == 1
    # Insertion order (finishing order) does not matter.
    shuffled = dict(sorted(forward.items(), key=lambda kv: -kv[0]))
    assert sequential(shuffled, backward, SPEC, 200) == full


def test_max_reached_and_pairs_without_winner_left_out():
    forward = {0: 1.0, 1: None, 2: 0.0}
    backward = {0: 0.0, 1: 1.0, 2: 1.0}
    state = sequential(forward, backward, SPEC, 3)
    assert state.decision == MAX_REACHED
    assert (state.pairs, state.left_out, state.counts) == (2, 1, (0, 2, 0))


def test_state_from_records_orients_and_filters_by_settings():
    records = [
        {"pairing": "x vs y", "game_index": 0, "winner": "p1", "config_hash": "h1"},
        {"pairing": "y vs x", "game_index": 0, "winner": "p2", "config_hash": "h2"},
        {"pairing": "y vs x", "game_index": 1, "winner": "p1", "config_hash": "old"},
    ]
    state = state_from_records("x", "y", records, SPEC, 5, hashes={"x vs y": "h1", "y vs x": "h2"})
    assert state.counts == (0, 0, 1) and state.last_index == 0 and state.decision == RUNNING


def test_pairing_groups():
    assert pairing_groups([("a", "b"), ("b", "a"), ("c", "c"), ("c", "a")]) == [("a", "b"), ("c", "a")]


def test_parse_sprt_defaults_and_values():
    assert parse_sprt("t.yaml", None) is None
    spec = parse_sprt("t.yaml", {"elo0": 0, "elo1": 30})
    assert (spec.alpha, spec.beta, spec.batch) == (0.05, 0.05, 8)
    assert parse_sprt("t.yaml", {"elo0": -5, "elo1": 5.5, "alpha": 0.1, "beta": 0.2, "batch": 3}).to_dict() == {
        "elo0": -5.0, "elo1": 5.5, "alpha": 0.1, "beta": 0.2, "batch": 3}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([0, 30], r"sprt = \[0, 30\] must be a mapping like \{elo0: 0"),
        ({"elo0": 0, "elo1": 30, "alpah": 0.1},
         r"unknown key sprt.alpah \(value 0.1\); allowed: elo0, elo1, alpha, beta, batch"),
        ({"elo1": 30}, "missing required key sprt.elo0; required: elo0, elo1"),
        ({"elo0": "0", "elo1": 30}, "sprt.elo0 = '0' must be a finite number"),
        ({"elo0": 0, "elo1": float("nan")}, "sprt.elo1 = nan must be a finite number"),
        ({"elo0": 0, "elo1": float("inf")}, "sprt.elo1 = inf must be a finite number"),
        ({"elo0": 30, "elo1": 0}, "sprt.elo0 must be less than sprt.elo1, got 30 and 0"),
        ({"elo0": 0, "elo1": 30, "alpha": 0}, "sprt.alpha = 0 must be a number strictly between 0 and 1"),
        ({"elo0": 0, "elo1": 30, "beta": 1.5}, "sprt.beta = 1.5 must be a number strictly between 0 and 1"),
        ({"elo0": 0, "elo1": 30, "alpha": 0.6, "beta": 0.5}, "alpha \\+ sprt.beta must be less than 1"),
        ({"elo0": 0, "elo1": 30, "batch": 0}, "sprt.batch = 0 must be a positive integer"),
        ({"elo0": 0, "elo1": 30, "batch": True}, "sprt.batch = True must be a positive integer"),
    ],
)
def test_parse_sprt_errors_are_one_line(data, message):
    with pytest.raises(ConfigError, match=message) as info:
        parse_sprt("t.yaml", data)
    assert "\n" not in str(info.value) and str(info.value).startswith("t.yaml: ")
