"""One game between two agents: the pure function the runner maps over its pool.

``play_game(task)`` depends only on the task (agents, budget, seed): the same task gives the
same record on any machine in ``device`` and ``iterations`` modes, whatever the number of
workers or the order in which games finish.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from boopexp import __version__, mcts, notation, rules
from boopexp.agents import AgentSpec
from boopexp.budget import DEVICE_PROFILES, Budget
from boopexp.errors import BoopError
from boopexp.objective import best_move_ws, new_workspace
from boopexp.rng import new_rng_state
from boopexp.state import initial_state

#: A safety net, not a rule: the engine has no move limit (RULES.md §7) and every logged game of
#: the paper ended with a winner. Two agents that both answer deterministically can repeat a
#: position cycle forever (seen between mcts-co at 100 iterations and heuristics); such a game
#: stops here and is recorded with ``winner: null, termination: "ply_limit"`` (docs/agents.md).
MAX_PLIES = 1000


@dataclass(frozen=True)
class GameTask:
    """Everything that determines one game (p1 = Blue moves first)."""

    experiment: str
    config_hash: str
    pairing: str
    game_index: int
    p1: AgentSpec
    p2: AgentSpec
    budget: Budget
    preset: str
    seed: int


def task_from_record(record: dict) -> GameTask:
    """The GameTask that played a stored game: the record alone is enough to replay it.

    Raises:
        ConfigError: the record lacks a field or holds settings that are not valid any more.
    """
    from boopexp.errors import ConfigError

    try:
        return GameTask(
            experiment=record["experiment"],
            config_hash=record["config_hash"],
            pairing=record["pairing"],
            game_index=int(record["game_index"]),
            p1=AgentSpec.from_dict(record["p1_spec"]),
            p2=AgentSpec.from_dict(record["p2_spec"]),
            budget=Budget.from_mapping(record["budget"]),
            preset=record["preset"],
            seed=int(record["seed"]),
        )
    except KeyError as exc:
        raise ConfigError(f"game record {record.get('pairing')!r} #{record.get('game_index')} has no {exc}") from None


def device_costs(profile_name: str) -> np.ndarray:
    """The cost vector (device-µs) of a device profile, in the kernels' order."""
    p = DEVICE_PROFILES[profile_name]
    return np.array([p.node, p.random_ply, p.solver_call, p.solver_move, p.iteration], dtype=np.float64)


class Player:
    """An agent in a game: chooses moves and promotions with its own generator."""

    promotion = rules.PROMO_HEURISTIC  # AGENTS.md §B.11: every AI but the random one

    def __init__(self, spec: AgentSpec, budget: Budget, rng: np.ndarray, costs: np.ndarray, throttle: float):
        self.spec = spec
        self.budget = budget
        self.rng = rng
        self.costs = costs
        self.throttle = throttle

    def select(self, st: np.ndarray) -> tuple[int, dict]:
        raise NotImplementedError


class MCTSPlayer(Player):
    """MCTS_GHOST (AGENTS.md §B) under the game's budget."""

    def __init__(self, *args):
        super().__init__(*args)
        self.work = mcts.new_work()

    def select(self, st):
        return mcts.search(st, self.spec.mcts, self.budget, self.costs, self.rng, self.work, self.throttle)


class HeuristicsPlayer(Player):
    """Pure Heuristics (AGENTS.md §C.2): one best_move call, random fallback; no search."""

    def __init__(self, *args):
        super().__init__(*args)
        self.ws = new_workspace()
        self.mask = np.zeros(72, dtype=np.bool_)
        self.squares = np.empty(36, dtype=np.int64)

    def select(self, st):
        cpu0 = time.process_time()
        code, ties = best_move_ws(st, self.mask, self.rng, *self.ws)
        if code < 0:
            code = mcts.random_move(st, self.mask, self.rng, self.squares)
        # One solver call, as counted (and charged) inside a search: mcts.solver_best_move.
        n = int(mcts.count_legal(st))
        acc = np.zeros(mcts.N_ACC, dtype=np.int64)
        acc[mcts.ACC_SOLVER] = 1
        acc[mcts.ACC_SOLVER_MOVES] = n
        if ties > 1:
            acc[mcts.ACC_EQUIV] = 1
            acc[mcts.ACC_EQUIV_CANDS] = ties
        device_us = float(self.costs[mcts.C_SOLVER_CALL] + self.costs[mcts.C_SOLVER_MOVE] * n)
        return int(code), mcts.move_telemetry(acc, device_us, 0, cpu0)


class RandomPlayer(Player):
    """RandomPlay (AGENTS.md §C.3): random moves, uniformly random promotion group."""

    promotion = rules.PROMO_RANDOM

    def __init__(self, *args):
        super().__init__(*args)
        self.mask = np.zeros(72, dtype=np.bool_)
        self.squares = np.empty(36, dtype=np.int64)

    def select(self, st):
        cpu0 = time.process_time()
        code = mcts.random_move(st, self.mask, self.rng, self.squares)
        return int(code), mcts.move_telemetry(np.zeros(mcts.N_ACC, dtype=np.int64), 0.0, 0, cpu0)


_PLAYERS = {"mcts": MCTSPlayer, "heuristics": HeuristicsPlayer, "random": RandomPlayer}


def make_player(spec: AgentSpec, budget: Budget, seed_seq: np.random.SeedSequence, throttle: float = 1.0) -> Player:
    """A Player for ``spec`` drawing from its own generator seeded by ``seed_seq``."""
    return _PLAYERS[spec.kind](spec, budget, new_rng_state(seed_seq), device_costs(budget.profile), throttle)


def play_game(task: GameTask, on_ply=None) -> dict:
    """Play one game and return its record (docs/architecture.md).

    Args:
        task: the game's identity and settings.
        on_ply: optional callback ``on_ply(ply, state, move_text, winner)`` (e.g. ``--show``).
    """
    cpu0 = time.process_time()
    throttle = 1.0
    if task.budget.mode == "cpu":
        from boopexp.calibrate import resolve_throttle

        throttle = resolve_throttle(task.budget.throttle)
    ss = np.random.SeedSequence(task.seed)
    p1_ss, p2_ss = ss.spawn(2)
    players = (make_player(task.p1, task.budget, p1_ss, throttle), make_player(task.p2, task.budget, p2_ss, throttle))
    st = initial_state()
    groups = np.empty((rules.MAX_GROUPS, 3), dtype=np.int64)
    scores = np.empty(rules.MAX_GROUPS, dtype=np.int64)
    ties = np.empty(rules.MAX_GROUPS, dtype=np.int64)
    moves: list[str] = []
    telemetry: list[dict] = []
    winner = 0
    while winner == 0 and len(moves) < MAX_PLIES:
        side = 0 if st[42] < 0 else 1
        player = players[side]
        code, tel = player.select(st)
        if code < 0:
            raise BoopError(f"agent {player.spec.name} found no move in {notation.format_position(st)!r}")
        size, sq = code // 36 + 1, code % 36
        st = st.copy()
        winner, n, chosen = rules.apply_move_inplace(st, size, sq, rules.REAL, player.promotion, player.rng,
                                                     groups, scores, ties)
        group = tuple(int(q) for q in groups[chosen] if q >= 0) if n >= 2 else None
        text = notation.format_move(size, sq, group)
        moves.append(text)
        tel = {"ply": len(moves), "player": "p1" if side == 0 else "p2", "agent": player.spec.name, **tel}
        telemetry.append(tel)
        if on_ply is not None:
            on_ply(len(moves), st, text, winner)
    win_side = None if winner == 0 else ("p1" if winner < 0 else "p2")
    return build_record(task, win_side, moves, telemetry, time.process_time() - cpu0)


def without_host_timing(record: dict) -> dict:
    """A copy of a game record without the fields that measure the host (``host_seconds``, and
    ``host_cpu_seconds`` per move): what remains is a pure function of the game's identity in
    device and iterations modes, so two plays of one game compare equal."""
    out = {k: v for k, v in record.items() if k != "host_seconds"}
    if isinstance(out.get("telemetry"), list):
        out["telemetry"] = [{k: v for k, v in t.items() if k != "host_cpu_seconds"} for t in out["telemetry"]]
    return out


def build_record(task: GameTask, winner: str | None, moves: list[str], telemetry: list[dict],
                 host_seconds: float, version: str = __version__) -> dict:
    """The game record of docs/architecture.md (one line of games.jsonl).

    Args:
        winner: ``"p1"``, ``"p2"`` or None (a game stopped at MAX_PLIES).
    """
    return {
        "experiment": task.experiment,
        "config_hash": task.config_hash,
        "pairing": task.pairing,
        "game_index": task.game_index,
        "p1": task.p1.name,
        "p2": task.p2.name,
        "p1_spec": task.p1.to_dict(),
        "p2_spec": task.p2.to_dict(),
        "winner": winner,
        "winner_agent": None if winner is None else (task.p1.name if winner == "p1" else task.p2.name),
        "winner_colour": None if winner is None else ("blue" if winner == "p1" else "red"),
        "termination": "victory" if winner is not None else "ply_limit",
        "plies": len(moves),
        "moves": moves,
        "seed": task.seed,
        "budget": task.budget.to_dict(),
        "preset": task.preset,
        "telemetry": telemetry,
        "host_seconds": host_seconds,
        "version": version,
    }
