"""The knowledge study (docs/knowledge-plan.md): its stores → pairs of games from one opening →
every claim's sign test, the families, the ladder.

Reads the six stores of ``results/knowledge/`` (``claims``, ``charge-co``, ``charge-vanilla``,
``ladder-1``, ``ladder-0.25``, ``ladder-4``; configs/knowledge-*.yaml) through every study's
reader (:func:`boopexp.studies.stores.read_outcomes`: the store's own reader, each game once,
only the games of the store's plan, the store's warnings and errors).
Each game's condition — its budget in device-seconds and, in a pairing with ``alphabeta``, the
node charge (``node_cost_scale``) — comes from its settings in the store's plan (config.yaml),
keyed by the game's ``config_hash``.

**Pairs** (plan §2): pair i of the pairing A–B at one condition of one store is game i of
"A vs B" and game i of "B vs A" (both from position i of the suite). A pair scores A 1, ½ or 0;
a pair with a game without a winner is left out and counted (a pairing with more than 5 % of its
pairs left out is flagged); a game whose partner is not stored (an incomplete store) is counted
as unpaired. A is the first agent of the first planned pairing that names the two
(:func:`boopexp.experiments.sprt.pairing_groups`, as the SPRT orients its pairs).

**Tests** (plan §5): :func:`boopexp.studies.claims.pairs_above` (the exact sign test on the pairs
not split, its opposite, the TOST on the mean pair score), conjunctions by
:func:`boopexp.studies.claims.conjunction`, Holm and verdicts by
:func:`boopexp.studies.claims.judge_family`.

**Families** (plan §6): ``default`` (C1, C3 at 1 s; C2, C4 over the three budgets; node charge
×1), ``charge=0.5`` and ``charge=2`` (C1, C2 with alpha-beta's node charge ×0.5 / ×2; C1's other
three components are the ×1 games), ``budget=0.25|1|4`` (C1, C2, C3, C4 at that budget, ×1).
A claim whose components have no pair yet is left out of its family and named in the notes.

**The ladder** (plan §3, §5): per budget, a Bradley–Terry fit of every agent from all the decided
games of that budget in the six stores (anchor vanilla, a Blue-seat term), with a seeded
bootstrap (2,000 resamples, seed 2027) of the pairs within each pairing
(:func:`boopexp.analysis.ratings_bootstrap.bootstrap_ratings` with ``pairs=``). alpha-beta at
node charge ×0.5 and ×2 (K3) is rated as its own agent, ``alphabeta×0.5`` / ``alphabeta×2``
(plan §1 lists them as agents).

The tables, figures and files are :mod:`boopexp.studies.knowledge.report`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from boopexp.studies import claims as cl
from boopexp.studies.pairs import (  # noqa: F401  (the paired design's names, as this study's)
    ABSENT,
    LEFT_OUT_FLAG,
    LOST,
    PAIR_KEYS,
    UNDECIDED,
    WON,
    ClaimTest,
    Component,
    Judgement,
    Ladder,
    PairCounts,
    charge_label,
    claim_test,
    count_pairs,
    fit_ladder,
    judge_families,
    pair_counts,
    pair_frame,
)
from boopexp.studies.pairs import StudyGames as KnowledgeGames
from boopexp.studies.pairs import load_study as load_paired_study

STUDY = "knowledge"
#: The six stores of the study, under the study folder (configs/knowledge-<store>.yaml).
STORES: tuple[str, ...] = ("claims", "charge-co", "charge-vanilla", "ladder-1", "ladder-0.25", "ladder-4")
BUDGETS: tuple[float, ...] = (0.25, 1.0, 4.0)
CHARGES: tuple[float, ...] = (0.5, 1.0, 2.0)
FOCUS = "mcts-co"
ALPHABETA = "alphabeta"
ANCHOR = "vanilla"
#: C1's classical agents (plan §1), in the order of its components.
CLASSICAL: tuple[str, ...] = ("alphabeta", "mcts-solver", "vanilla", "os-mcts")
#: The agents of the ladder in display order (the alpha-beta charge variants after alphabeta).
AGENTS: tuple[str, ...] = ("mcts-co", "mcts-prior", "mcts-solver", "alphabeta", "alphabeta×0.5", "alphabeta×2",
                           "vanilla", "heuristics", "os-mcts")
DEFAULT = "default"
#: The ladder's bootstrap (plan §5).
RESAMPLES = 2000
SEED = 2027


def ladder_store(budget: float) -> str:
    """The K2 store of a budget: ``ladder-0.25``, ``ladder-1``, ``ladder-4``."""
    return f"ladder-{budget:g}"


# ---------------------------------------------------------------------------------------------
# Reading


def node_charge(store: str, item: Mapping[str, Any], top: Mapping[str, Any]) -> float:
    """A plan item's condition charge: alpha-beta's node charge (``node_cost_scale``) in a pairing
    with alpha-beta, NaN otherwise."""
    charge = math.nan
    for spec in (item.get("p1_spec"), item.get("p2_spec")):
        if isinstance(spec, Mapping) and spec.get("kind") == ALPHABETA:
            charge = float((spec.get("params") or {}).get("node_cost_scale", 1.0))
    return charge


def load_study(root: Path | str) -> KnowledgeGames:
    """Read the six stores under ``root`` (those present; the others are listed as missing).

    Raises:
        ConfigError: ``root`` is not a folder, holds none of the six stores, or one of them holds
            another experiment's games (nothing is read or written).
    """
    return load_paired_study(root, STORES, STUDY, node_charge)


# ---------------------------------------------------------------------------------------------
# Pairs


# ---------------------------------------------------------------------------------------------
# The claims


def co_beats_classical(budget: float, charge: float) -> list[Component]:
    """C1: mcts-co against each classical agent: alpha-beta at ``charge`` (K1 at ×1, K3 otherwise),
    the other three from the budget's ladder (plan §3)."""
    store = "claims" if charge == 1.0 else "charge-co"
    parts = [Component("C1", store, FOCUS, ALPHABETA, budget, charge)]
    parts += [Component("C1", ladder_store(budget), FOCUS, x, budget, math.nan) for x in CLASSICAL[1:]]
    return parts


def alphabeta_beats_vanilla(budget: float, charge: float) -> Component:
    """C2 at one budget: alpha-beta with H (at node charge ``charge``) against vanilla MCTS."""
    return Component("C2", "claims" if charge == 1.0 else "charge-vanilla", ALPHABETA, ANCHOR, budget, charge)


def prior_beats_preselection(budget: float) -> Component:
    """C3: knowledge as a prior (mcts-prior) against knowledge as a pre-selection (mcts-co)."""
    return Component("C3", "claims", "mcts-prior", FOCUS, budget, math.nan)


def vanilla_beats_openspiel(budget: float) -> Component:
    """C4 at one budget: the paper's vanilla MCTS against OpenSpiel's MCTSBot (os-mcts)."""
    return Component("C4", ladder_store(budget), ANCHOR, "os-mcts", budget, math.nan)


def families() -> list[tuple[str, list[tuple[str, list[Component]]]]]:
    """Every family of plan §6: (condition, [(claim, its components)])."""
    out: list[tuple[str, list[tuple[str, list[Component]]]]] = [(DEFAULT, [
        ("C1", co_beats_classical(1.0, 1.0)),
        ("C2", [alphabeta_beats_vanilla(t, 1.0) for t in BUDGETS]),
        ("C3", [prior_beats_preselection(1.0)]),
        ("C4", [vanilla_beats_openspiel(t) for t in BUDGETS]),
    ])]
    for charge in CHARGES:
        if charge != 1.0:
            out.append((f"charge={charge:g}", [("C1", co_beats_classical(1.0, charge)),
                                               ("C2", [alphabeta_beats_vanilla(t, charge) for t in BUDGETS])]))
    for t in BUDGETS:
        out.append((f"budget={t:g}", [("C1", co_beats_classical(t, 1.0)), ("C2", [alphabeta_beats_vanilla(t, 1.0)]),
                                      ("C3", [prior_beats_preselection(t)]), ("C4", [vanilla_beats_openspiel(t)])]))
    return out


def judge_all(pairs: pd.DataFrame) -> Judgement:
    """Every family of plan §6, each judged under its own Holm correction (``claims.judge_family``)."""
    return judge_families(pairs, families())


def charge_robustness(judged: tuple[cl.Judged, ...] | list[cl.Judged]) -> dict[str, tuple[list[str], str]]:
    """C1 and C2: the verdicts at ×0.5, ×1 (the default family), ×2 and the label (plan §3):
    ``robust`` (supported at all three), ``charge-dependent`` (at some), ``supported at no charge``,
    or ``incomplete`` (not tested at every charge yet)."""
    by = {(j.outcome.claim, j.condition): j.verdict for j in judged}
    out = {}
    for claim in ("C1", "C2"):
        verdicts = [by.get((claim, DEFAULT if c == 1.0 else f"charge={c:g}"), "") for c in CHARGES]
        label = cl.sensitivity_label(verdicts, missing="", varies="charge-dependent", nowhere="supported at no charge")
        out[claim] = (verdicts, label)
    return out


# ---------------------------------------------------------------------------------------------
# The ladder


def ladder_name(agent: str, charge: float) -> str:
    """An agent's name on the ladder: alpha-beta at a node charge other than ×1 is ``alphabeta×0.5`` etc."""
    return f"{agent}×{charge:g}" if agent == ALPHABETA and not math.isnan(charge) and charge != 1.0 else agent


def ladder(study: KnowledgeGames, budget: float, *, resamples: int = RESAMPLES, seed: int = SEED) -> Ladder | str:
    """The budget's ladder from every decided game at that budget (all six stores) whose pair is
    complete (both games stored: every game of a complete store), or why there is none yet."""
    return fit_ladder(study.games, budget, agents=AGENTS, anchor=ANCHOR, resamples=resamples, seed=seed,
                      name_of=ladder_name)
