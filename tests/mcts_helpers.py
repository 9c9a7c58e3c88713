"""Shared helpers of the MCTS and agent tests.

* :class:`Kit` bundles what the compiled kernels of :mod:`boopexp.engine.mcts` take (tree, work
  buffers, parameter vector, counters, device clock, cost vector, RNG state), so a test can drive
  ``init_root`` / ``iterate`` / ``playout`` directly and then inspect the parallel arrays.
* :func:`hand_root` builds a root WITHOUT its children (unlike ``init_root``), so a test controls
  exactly which node is expanded next (``descend`` returns a node that is not fully expanded).
* :func:`ref_playout` is AGENTS.md §B.8 transcribed into plain Python over the engine's
  primitives (solver, random move, TREE move, H), drawing from the same RNG in the same order as
  the spec's pseudo-code, with switches that "fix" QUIRK-A9/A10. The quirk tests show that the
  compiled playout equals the faithful reference and differs from each fixed variant.
* :func:`replay_record` replays a game record's moves with :meth:`Position.play` (REAL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from boopexp.agents.budget import device_costs
from boopexp.agents.specs import resolve_agent
from boopexp.engine import heuristic, mcts, objective, rules
from boopexp.engine.buffers import new_work, solver_buffers
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import BLUE, MOVE_NUMBER, RED, TO_MOVE
from boopexp.game.position import Move, Position
from boopexp.play.contract import without_host_timing
from boopexp.play.replay import walk

PROFILE = "android-2023"
RING_SQUARES = frozenset(i for i in range(36) if i // 6 in (0, 5) or i % 6 in (0, 5))


def cfg_of(name: str, preset: str = "code-0.6.2", **overrides: Any):
    """The MCTSConfig of a named agent, with parameter overrides by name."""
    return resolve_agent(name, preset=preset, overrides=overrides).mcts


def pos(text: str) -> Position:
    return Position.from_string(text)


def code(text: str) -> int:
    """Move code ``(size-1)*36 + square`` of a move string (``c3`` small, ``C3`` large)."""
    return Move.parse(text).code


def n_empty(st: np.ndarray) -> int:
    return int(np.sum(np.asarray(st[:36]) == 0))


@dataclass
class Kit:
    """Everything the compiled MCTS kernels take, for one configuration and seed."""

    cfg: Any
    seed: int = 0
    capacity: int = 4096
    tree: Any = None
    work: Any = None
    params: np.ndarray = None
    acc: np.ndarray = None
    acc_us: np.ndarray = None
    costs: np.ndarray = None
    rng: np.ndarray = None
    flags: tuple = ()
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tree = mcts.new_tree(self.capacity)
        self.work = mcts.new_work()
        self.params = mcts.params_vector(self.cfg)
        self.acc = np.zeros(mcts.N_ACC, dtype=np.int64)
        self.acc_us = np.zeros(1, dtype=np.float64)
        self.costs = device_costs(PROFILE)
        self.rng = new_rng_state(self.seed)
        self.flags = mcts.feature_flags(self.params)  # the switches search() passes

    # kernel calls ----------------------------------------------------------------------------
    def init_root(self, state: np.ndarray) -> Kit:
        mcts.init_root(self.tree, np.asarray(state), self.params, self.rng, self.work, self.acc, self.acc_us,
                       self.costs, *self.flags)
        return self

    def iterate(self, n: int = 1) -> Kit:
        for _ in range(n):
            mcts.iterate(self.tree, self.params, self.rng, self.work, self.acc, self.acc_us, self.costs, *self.flags)
        return self

    def create(self, parent: int, move_code: int) -> int:
        return int(mcts.create_node(self.tree, parent, move_code, self.rng, self.work, self.acc, self.acc_us,
                                    self.costs))

    def playout(self, e_id: int, rng: np.ndarray | None = None) -> float:
        """The compiled playout of node ``e_id`` (with ``rng`` if given, else the kit's)."""
        return float(mcts.playout(self.tree, e_id, self.params, self.rng if rng is None else rng, self.work,
                                  self.acc, self.acc_us, self.costs, self.flags[0], self.flags[3]))

    # tree inspection ---------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return int(self.tree.count[0])

    def children(self, node: int = 0) -> list[int]:
        out = []
        c = int(self.tree.first_child[node])
        while c >= 0:
            out.append(c)
            c = int(self.tree.next_sibling[c])
        return out

    def depth(self, node: int) -> int:
        d = 0
        while node != 0:
            node = int(self.tree.parent[node])
            d += 1
        return d

    def state(self, node: int) -> np.ndarray:
        return self.tree.states[node]

    def mean(self, node: int) -> float:
        return float(self.tree.score[node]) / float(self.tree.visits[node])


def hand_root(kit: Kit, state: np.ndarray) -> Kit:
    """Install ``state`` as the root (as init_root does) but create none of its children."""
    mcts.install_root(kit.tree, np.asarray(state, dtype=np.int16))
    return kit


def ref_playout(state: np.ndarray, persp: int, cfg, rng: np.ndarray, *, a9_fixed: bool = False,
                offset: int | None = None, divide_by_depth: bool = False) -> tuple[float, int, int]:
    """AGENTS.md §B.8 in plain Python: (value, plies played n, winner) of a playout from ``state``.

    Draws from ``rng`` (advanced in place) in the spec's order: per ply a solver call (first
    ``co_playout_plies`` plies) or a random move, then the TREE move with the promotion heuristic.

    Args:
        a9_fixed: terminal bonus from ``persp``'s point of view instead of absolute colours.
        offset: discount exponent ``n - offset`` (default: the config's, code 1).
        divide_by_depth: divide by ``playout_depth`` (the paper's "by k") instead of by n.
    """
    st = np.array(state, dtype=np.int16, copy=True)
    ws = solver_buffers(new_work())
    mask = np.zeros(72, dtype=np.bool_)
    squares = np.empty(36, dtype=np.int64)
    groups = np.empty((rules.MAX_GROUPS, 3), dtype=np.int64)
    scores = np.empty(rules.MAX_GROUPS, dtype=np.int64)
    ties = np.empty(rules.MAX_GROUPS, dtype=np.int64)
    off = cfg.discount_offset if offset is None else offset
    n, total, winner = 0, 0.0, 0
    while winner == 0 and (cfg.playout_depth == 0 or n < cfg.playout_depth):
        mv = -1
        if n < cfg.co_playout_plies:
            mv, _ = objective.best_move_ws(st, mask, rng, *ws)
        if mv < 0:
            mv = int(rules.random_move(st, mask, rng, squares))
        winner, _, _ = rules.apply_move_inplace(st, mv // 36 + 1, mv % 36, rules.TREE, rules.PROMO_HEURISTIC, rng,
                                                groups, scores, ties)
        n += 1
        if winner == 0:
            total += cfg.discount ** (n - off) * float(heuristic.heuristic(st, persp))
    if winner != 0:
        bonus = cfg.discount ** (n - off)
        if a9_fixed:
            total += bonus if winner == persp else -bonus
        else:
            total += bonus if winner == RED else -bonus
    return total / (cfg.playout_depth if divide_by_depth else n), n, int(winner)


#: a record without the fields that measure the host (they vary run to run)
strip_host_timing = without_host_timing


def replay_record(record: dict) -> Position:
    """:func:`boopexp.play.replay.walk` (every move legal, the recorded outcome) plus the schema's
    own consistency: ``plies`` and ``termination`` agree with the moves."""
    return walk(record)


__all__ = [
    "BLUE", "RED", "MOVE_NUMBER", "TO_MOVE", "Kit", "cfg_of", "pos", "code", "n_empty", "hand_root", "ref_playout",
    "strip_host_timing", "replay_record", "RING_SQUARES", "PROFILE",
]
