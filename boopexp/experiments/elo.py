"""**The** logistic Elo scale: ``ELO_SCALE`` (ln 10 / 400), ``expected_score`` and its inverse
``elo_of_score``, ``logistic``; here, not in ``analysis/``, because the SPRT (this layer) states its
hypotheses in Elo, and the ratings, their bootstrap and the robustness study's deviance import it
downward; no layer below needs a scale of strength.

An agent ``d`` Elo stronger than its opponent is expected to score

    L(d) = 1 / (1 + 10 ** (-d / 400))  =  σ(d · ln 10 / 400),   σ(x) = 1 / (1 + e^-x),

so ``ELO_SCALE = ln 10 / 400`` turns an Elo difference into the logistic model's logit and back.
The SPRT (``experiments.sprt``: its hypotheses in Elo), the Bradley–Terry fit and its bootstrap
(``analysis.ratings``, ``analysis.ratings_bootstrap``) and the robustness study's deviance
(``studies.robustness.analysis``) all read the scale from here. It sits in ``experiments/`` because the
SPRT, the lowest of its users, is there (the layers below play single games and know no scale of
strength); everything above imports it downward.
"""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np

#: ln(10) / 400: logits per Elo (an Elo difference times this is the logistic model's logit).
ELO_SCALE = math.log(10.0) / 400.0

_X = TypeVar("_X", float, np.ndarray)


def expected_score(elo: float) -> float:
    """The expected score of a player ``elo`` Elo stronger: 1 / (1 + 10^(−elo/400))."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of_score(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (the inverse of :func:`expected_score`; ±inf at 0, 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return 400.0 * math.log10(score / (1.0 - score))


def logistic(x: _X) -> _X:
    """σ(x) = 1 / (1 + e^-x) on the logit scale, elementwise; as 0.5 (1 + tanh(x / 2)), which no x overflows."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))
