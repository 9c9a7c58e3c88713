"""Budget modes, device profiles, ``budget.costs`` overrides and the cost vector (``device_costs``).

The compute budget an agent thinks under (EXPERIMENTS.md §6; docs/budget.md).

Modes:
    device      a deterministic emulated clock: every primitive the agent performs is charged a
                cost (in device-microseconds) from a named device profile; the agent thinks until
                ``seconds`` device-seconds are spent. Same seed, same game, on any machine.
    cpu         real CPU time of the worker process, scaled by ``throttle`` (``auto``: measured so
                that vanilla gets about 80 iterations per emulated second on this host).
    wall        real seconds, as on the paper's device.
    iterations  a fixed number of MCTS iterations per move.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from boopexp import schema
from boopexp.engine.costs import C_ITERATION, C_LOOKAHEAD_RATIO, C_NODE, C_RANDOM_PLY, C_SOLVER_CALL, C_SOLVER_MOVE

BUDGET_MODES = ("device", "cpu", "wall", "iterations")
#: the keys a ``budget:`` mapping may hold for each mode (the others would be silently ignored)
BUDGET_KEYS: dict[str, tuple[str, ...]] = {
    "device": ("mode", "seconds", "profile", "costs"),
    "cpu": ("mode", "seconds", "throttle"),
    "wall": ("mode", "seconds"),
    "iterations": ("mode", "iterations"),
}


#: The most a move may be given, whichever way its budget arrives (a config's ``budget:``, the
#: options of ``game``/``play``/``engine``, ``serve``'s /api/play, the engine protocol's ``go``):
#: every budget is a :class:`Budget`, so these bounds hold for all of them, and no setting starts
#: a search that holds a core for ever (docs/budget.md, "Limits"). Generous: the committed configs
#: give at most 4 seconds and 320 iterations a move. ``MAX_ITERATIONS`` also caps the iterations of
#: a device, cpu or wall move (:attr:`Budget.iteration_cap`): a device profile's costs overridden
#: to almost nothing cannot buy an endless search, and the tree's memory stays bounded (about
#: 200 MB at the cap).
MAX_SECONDS = 600.0
MAX_ITERATIONS = 1_000_000
#: cpu mode: host CPU seconds per emulated second (``auto`` measures about 0.005 on a laptop).
MAX_THROTTLE = 10.0


#: Host cost of one step of the two-stage check (a move examined or a reply tested) relative to
#: one objective evaluation inside a solver call, both in the compiled kernels: measured by
#: ``boopexp calibrate --lookahead`` (boopexp/play/calibrate.py, docs/budget.md, "The two-stage check").
LOOKAHEAD_RATIO = 0.57


@dataclass(frozen=True)
class DeviceProfile:
    """Costs, in device-microseconds, of the primitives an MCTS agent performs.

    Attributes:
        node: creating one tree node (copy the state, place, push, victory tests, promotion).
        random_ply: one random playout ply, including its heuristic reward.
        solver_call: fixed cost of one solver call (model set-up, JNI crossing).
        solver_move: cost of scoring one candidate move inside a solver call (simulate + H).
        iteration: fixed overhead of one MCTS iteration (selection descent, backpropagation).
        lookahead_ratio: the cost of one move examined or reply tested by the two-stage check
            (``co_lookahead``) as a fraction of ``solver_move`` (measured: :data:`LOOKAHEAD_RATIO`).
    """

    name: str
    node: float
    random_ply: float
    solver_call: float
    solver_move: float
    iteration: float
    description: str = ""
    lookahead_ratio: float = LOOKAHEAD_RATIO


#: Calibrated profiles. The numbers and how they were obtained are in docs/budget.md.
DEVICE_PROFILES: dict[str, DeviceProfile] = {
    "android-2023": DeviceProfile(
        name="android-2023",
        node=60.0,
        random_ply=381.2,
        solver_call=100.0,
        solver_move=7.4,
        iteration=40.0,
        description="Android virtual device of the paper (2023-24): ~80 vanilla iterations/s",
    ),
}
DEFAULT_PROFILE = "android-2023"

#: The costs of a device profile that ``budget.costs`` may override (device-µs each).
COST_FIELDS: tuple[str, ...] = ("node", "random_ply", "solver_call", "solver_move", "iteration")
#: ``budget.costs.solver_scale`` multiplies both solver costs (after any override of them): one
#: knob for "the solver is k times slower on this device", the robustness study's axis.
SOLVER_SCALE = "solver_scale"
SOLVER_COSTS: tuple[str, ...] = ("solver_call", "solver_move")

def device_costs(profile: str | DeviceProfile) -> np.ndarray:
    """The cost vector of a device profile (or its name), laid out as :mod:`boopexp.engine.costs` says."""
    p = DEVICE_PROFILES[profile] if isinstance(profile, str) else profile
    costs = np.empty(6, dtype=np.float64)
    costs[C_NODE], costs[C_RANDOM_PLY], costs[C_SOLVER_CALL] = p.node, p.random_ply, p.solver_call
    costs[C_SOLVER_MOVE], costs[C_ITERATION], costs[C_LOOKAHEAD_RATIO] = p.solver_move, p.iteration, p.lookahead_ratio
    return costs


@dataclass(frozen=True)
class Budget:
    """How long an agent may think per move.

    Attributes:
        mode: one of ``device``, ``cpu``, ``wall``, ``iterations``.
        seconds: seconds per move (device, cpu and wall modes).
        profile: device profile name (device mode).
        throttle: cpu mode: host CPU seconds per emulated second, or ``"auto"``.
        iterations: iterations per move (iterations mode).
        costs: device mode: the costs that differ from the profile's, as sorted
            ``(name, device-µs)`` pairs (a mapping is accepted and normalised; a value equal to
            the profile's is dropped, so it changes neither the games nor their hashes).
    """

    mode: str = "device"
    seconds: float = 1.0
    profile: str = DEFAULT_PROFILE
    throttle: float | str = "auto"
    iterations: int = 80
    costs: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        schema.choice(self.mode, "budget.mode", BUDGET_MODES)
        schema.number(self.seconds, "budget.seconds", 0, MAX_SECONDS, open_low=True,
                      want=f"a positive number of seconds, at most {MAX_SECONDS:g}")
        schema.choice(self.profile, "budget.profile", DEVICE_PROFILES)
        if self.throttle != "auto":
            schema.number(self.throttle, "budget.throttle", 0, MAX_THROTTLE, open_low=True,
                          want=f"a positive number of at most {MAX_THROTTLE:g}, or 'auto'")
        schema.integer(self.iterations, "budget.iterations", 1, MAX_ITERATIONS,
                       want=f"a positive integer, at most {MAX_ITERATIONS:,}")
        items = dict(self.costs.items() if isinstance(self.costs, Mapping) else self.costs)
        schema.check_keys(items, COST_FIELDS, "budget.costs")
        base = DEVICE_PROFILES[self.profile]
        costs = {}
        for name, value in items.items():
            schema.number(value, f"budget.costs.{name}", 0, open_low=True,
                          want="a positive number of device-microseconds")
            if float(value) != getattr(base, name):
                costs[name] = float(value)
        object.__setattr__(self, "costs", tuple(sorted(costs.items())))

    @property
    def iteration_cap(self) -> int:
        """The most iterations a move under this budget runs: ``iterations`` in iterations mode,
        else :data:`MAX_ITERATIONS` (a device, cpu or wall move stops there whatever its clock says;
        no committed game comes near it)."""
        return self.iterations if self.mode == "iterations" else MAX_ITERATIONS

    def device_profile(self, game_costs: Mapping[str, float] | None = None) -> DeviceProfile:
        """The named profile with this budget's cost overrides applied; ``game_costs``: a game's
        own costs of its primitives (docs/games.md), applied before the budget's overrides."""
        overrides: dict[str, Any] = dict(self.costs)  # cost fields only (checked in __post_init__)
        return dataclasses.replace(DEVICE_PROFILES[self.profile], **{**(game_costs or {}), **overrides})

    def to_dict(self) -> dict[str, Any]:
        """The keys that matter for the mode (used in hashes and records)."""
        if self.mode == "device":
            out: dict[str, Any] = {"mode": "device", "seconds": float(self.seconds), "profile": self.profile}
            if self.costs:  # only when overridden: the paper's budget keeps its hash
                out["costs"] = dict(self.costs)
            return out
        if self.mode == "cpu":
            return {"mode": "cpu", "seconds": float(self.seconds), "throttle": self.throttle}
        if self.mode == "wall":
            return {"mode": "wall", "seconds": float(self.seconds)}
        return {"mode": "iterations", "iterations": self.iterations}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None, game_costs: Mapping[str, float] | None = None) -> Budget:
        """Parse a YAML ``budget:`` mapping; a key the mode does not use raises ConfigError naming it.
        ``game_costs``: the game's own costs (:meth:`boopexp.games.registry.Game.device_costs`), which
        ``costs.solver_scale`` scales (boop.: none, the profile's)."""
        if data is None:
            return cls()
        schema.mapping(data, "budget", "a mapping like {mode: device, seconds: 1.0}")
        mode = schema.choice(data.get("mode", cls.mode), "budget.mode", BUDGET_MODES)
        schema.check_keys(data, BUDGET_KEYS[mode], "budget", note=f" for mode {mode!r}")
        values = dict(data)
        if "costs" in values:
            profile = schema.choice(values.get("profile", cls.profile), "budget.profile", DEVICE_PROFILES)
            base = dataclasses.replace(DEVICE_PROFILES[profile], **dict[str, Any](game_costs or {}))
            values["costs"] = effective_costs(values["costs"], base)
        return cls(**values)


def effective_costs(data: Any, profile: DeviceProfile, where: str = "budget.costs") -> dict[str, float]:
    """The costs a ``budget.costs`` mapping sets: overrides, then ``solver_scale`` on both solver costs
    (those of ``profile``, the game's costs applied: :meth:`Budget.from_mapping`).

    Raises:
        ConfigError: not a mapping, an unknown cost, or a value that is not a positive number.
    """
    schema.mapping(data, where, "a mapping like {solver_move: 14.8} or {solver_scale: 2}")
    schema.check_keys(data, COST_FIELDS + (SOLVER_SCALE,), where)
    for key, value in data.items():
        schema.number(value, f"{where}.{key}", 0, open_low=True)
    out = {k: float(v) for k, v in data.items() if k != SOLVER_SCALE}
    scale = data.get(SOLVER_SCALE)
    if scale is not None:
        for key in SOLVER_COSTS:
            out[key] = out.get(key, getattr(profile, key)) * float(scale)
    return out


#: An agent's own ``budget:`` key (``agents.NAME.budget``, docs/runner.md "An agent's own budget")
#: and the keys it may hold: factors of the config's budget of a move (every mode: seconds in
#: device, cpu and wall modes, iterations in iterations mode), ``first_move_scale`` for the
#: agent's first move of a game (default: ``scale``).
AGENT_BUDGET_KEY = "budget"
AGENT_BUDGET_KEYS: tuple[str, ...] = ("scale", "first_move_scale")
#: The agent kinds that think under a budget (the others' moves take what they take).
BUDGETED_KINDS: tuple[str, ...] = ("mcts", "alphabeta")


@dataclass(frozen=True)
class AgentBudget:
    """An agent's own budget: the config's budget of a move scaled for this agent alone.

    A factor, not an amount, so that it means the same in every budget mode and along a sweep
    of the config's budget (the agent keeps its ratio to its opponent at every point).

    Attributes:
        scale: the factor of every move's budget but the first (1: the config's).
        first_move_scale: the factor of the agent's first move of a game (its first search,
            whoever moves first or from whichever start); None: ``scale``.
    """

    scale: float = 1.0
    first_move_scale: float | None = None

    def __post_init__(self) -> None:
        want = "a positive factor of the config's budget of a move (1: the same)"
        schema.number(self.scale, f"{AGENT_BUDGET_KEY}.scale", 0, open_low=True, want=want)
        object.__setattr__(self, "scale", float(self.scale))
        if self.first_move_scale is not None:
            schema.number(self.first_move_scale, f"{AGENT_BUDGET_KEY}.first_move_scale", 0, open_low=True, want=want)
            object.__setattr__(self, "first_move_scale", float(self.first_move_scale))

    @property
    def is_identity(self) -> bool:
        """Every move the config's budget (factors 1): no budget of the agent's own."""
        return self.scale == 1.0 and self.first == 1.0

    @property
    def first(self) -> float:
        """The factor of the agent's first move."""
        return self.scale if self.first_move_scale is None else self.first_move_scale

    def scaled(self, budget: Budget, factor: float) -> Budget:
        """``budget`` times ``factor``: its seconds (device, cpu, wall), or its iterations rounded
        (at least 1); the profile, costs and throttle are the budget's. The bounds of every budget
        hold (:data:`MAX_SECONDS`, :data:`MAX_ITERATIONS`).

        Raises:
            ConfigError: the scaled budget is out of bounds (named as this agent's ``budget``).
        """
        if factor == 1.0:
            return budget
        if budget.mode == "iterations":
            iterations = max(1, round(budget.iterations * factor))
            if iterations > MAX_ITERATIONS:
                raise schema.invalid(AGENT_BUDGET_KEY, self.to_dict(), f"at most {MAX_ITERATIONS:,} iterations a move "
                                     f"(the config's {budget.iterations:,} x {factor:g} = {iterations:,})")
            return dataclasses.replace(budget, iterations=iterations)
        seconds = budget.seconds * factor
        if seconds > MAX_SECONDS:
            raise schema.invalid(AGENT_BUDGET_KEY, self.to_dict(), f"at most {MAX_SECONDS:g} s a move "
                                 f"(the config's {budget.seconds:g} s x {factor:g} = {seconds:g} s)")
        return dataclasses.replace(budget, seconds=seconds)

    def move_budgets(self, budget: Budget) -> tuple[Budget, Budget]:
        """(the agent's first move's budget, every later move's) under the config's ``budget``."""
        return self.scaled(budget, self.first), self.scaled(budget, self.scale)

    def to_dict(self) -> dict[str, float]:
        """The keys set (in agents' descriptions: hashes and game records)."""
        out = {"scale": self.scale}
        if self.first_move_scale is not None:
            out["first_move_scale"] = self.first_move_scale
        return out

    @classmethod
    def from_mapping(cls, data: Any) -> AgentBudget:
        """Parse an agent's ``budget:`` mapping (``{scale: 1.5}``, ``{first_move_scale: 13.2}``).

        Raises:
            ConfigError: not a mapping, an unknown key (a mode's own keys such as ``seconds``
                included: the amount is the config's), a factor that is not a positive number.
        """
        schema.mapping(data, AGENT_BUDGET_KEY, "a mapping like {scale: 1.5, first_move_scale: 10}")
        schema.check_keys(data, AGENT_BUDGET_KEYS, AGENT_BUDGET_KEY,
                          note=" (factors of the config's budget; the amount and mode are the config's)")
        return cls(**data)
