"""Sweeps (skill ladders): play a whole experiment once per point of a grid of settings.

A config's ``sweep:`` block maps axes to lists of values::

    sweep:
      budget.seconds: [0.25, 0.5, 1, 2, 4]
      budget.costs.solver_scale: [1, 2]

The grid is the Cartesian product of the axes (the first axis varies slowest). Each point is the
config with those keys set, validated like any config; its games have the settings hashes of that
config (a point equal to another experiment's settings shares its games) and their records carry
the point as ``sweep: {axis: value, ...}``. Axes:

* ``budget.KEY`` — a budget key of the config's mode (``seconds``, ``iterations``, ``throttle``,
  ``profile``);
* ``budget.costs.COST`` — a device-profile cost, or ``solver_scale`` (device mode);
* ``agents.NAME.PARAM`` — a parameter of a built-in, variant or plugin agent;
* ``agents.NAME.options.OPTION`` — an option of an engine agent (sent as ``setoption``,
  docs/protocol.md), set beside the options it has;
* ``params.k``, ``params.m``, ``params.d`` — the paper parameters.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from boopexp import schema
from boopexp.agents.budget import BUDGET_KEYS, COST_FIELDS, SOLVER_SCALE
from boopexp.agents.specs import OPTIONS_KEY, PAPER_PARAMS
from boopexp.errors import ConfigError
from boopexp.errors import show_value as _show

AXIS_FORMS = (f"budget.KEY, budget.costs.COST, agents.NAME.PARAM, agents.NAME.{OPTIONS_KEY}.OPTION, params."
              + "|".join(PAPER_PARAMS))
#: The most grid points a sweep may have. A larger grid is refused at once, before any point is
#: validated or planned (a 10^6-point grid was planned point by point for a minute, dry run
#: included, before a word; and no one plays its millions of games in one config).
MAX_POINTS = 10_000
#: axes drawn on a log scale in the sweep figure (budgets and costs span orders of magnitude)
LOG_AXES_PREFIXES: tuple[str, ...] = ("budget.seconds", "budget.iterations", "budget.costs.")


@dataclass(frozen=True)
class Sweep:
    """The validated axes of a ``sweep:`` block, in file order."""

    axes: tuple[tuple[str, tuple[Any, ...]], ...]

    def points(self) -> list[dict[str, Any]]:
        """Every point of the grid, ``{axis: value}``, the first axis varying slowest."""
        names = [a for a, _ in self.axes]
        return [dict(zip(names, values)) for values in itertools.product(*(v for _, v in self.axes))]

    def to_dict(self) -> dict[str, list[Any]]:
        """The ``sweep:`` block of a resolved config."""
        return {a: list(v) for a, v in self.axes}


def parse_sweep(data: Any, budget_mode: str, games_per_point: int) -> Sweep:
    """Validate the shape of a ``sweep:`` block (each point's values are checked by the config).

    Args:
        data: the block.
        budget_mode: the config's budget mode (which budget keys exist).
        games_per_point: the games the config plans at one point (for the size message).

    Raises:
        ConfigError: one line naming ``sweep.AXIS``, the value and what is allowed, or the grid's
            size when it has more than :data:`MAX_POINTS` points.
    """
    if not isinstance(data, Mapping) or not data:
        raise schema.invalid("sweep", data, "a non-empty mapping like {budget.seconds: [0.5, 1, 2]}")
    for axis, values in data.items():
        check_axis(axis, budget_mode)
        if not isinstance(values, list) or not values:
            raise schema.invalid(f"sweep.{axis}", values, "a non-empty list of values")
    check_size([len(values) for values in data.values()], games_per_point)
    axes = []
    for axis, values in data.items():
        for i, value in enumerate(values):
            if isinstance(value, (list, dict)) or value is None:
                raise schema.invalid(f"sweep.{axis}[{i}]", value, "a single value")
            if any(_same(value, v) for v in values[:i]):
                raise ConfigError(f"sweep.{axis}[{i}] = {_show(value)} repeats an earlier value")
        axes.append((axis, tuple(values)))
    return Sweep(tuple(axes))


def check_size(lengths: list[int], games_per_point: int) -> None:
    """Refuse a grid of more than :data:`MAX_POINTS` points (``lengths``: the axes' numbers of values).

    Raises:
        ConfigError: ``sweep: 1,000,000 points (1000 x 1000 values) is more than 10,000: 4,000,000
            games; split it ...``.
    """
    points = math.prod(lengths)
    if points > MAX_POINTS:
        raise ConfigError(
            f"sweep: {points:,} points ({' x '.join(map(str, lengths))} values) is more than {MAX_POINTS:,}: "
            f"{points * games_per_point:,} games; split it into configs of at most {MAX_POINTS:,} points each"
        )


def check_axis(axis: Any, budget_mode: str) -> None:
    """Refuse an axis that is not one of AXIS_FORMS (budget keys of the config's mode only)."""
    parts = axis.split(".") if isinstance(axis, str) else []
    if len(parts) == 2 and parts[0] == "budget":
        allowed = [k for k in BUDGET_KEYS[budget_mode] if k not in ("mode", "costs")]
        if parts[1] not in allowed:
            raise ConfigError(
                f"sweep: axis {axis!r} is not a budget key of mode {budget_mode!r}; allowed: "
                + ", ".join(f"budget.{k}" for k in allowed)
                + (", budget.costs.COST" if "costs" in BUDGET_KEYS[budget_mode] else "")
            )
        return
    if len(parts) == 3 and parts[:2] == ["budget", "costs"]:
        if "costs" not in BUDGET_KEYS[budget_mode]:
            raise ConfigError(f"sweep: axis {axis!r} needs budget mode 'device' (the config's mode is {budget_mode!r})")
        if parts[2] not in COST_FIELDS + (SOLVER_SCALE,):
            raise ConfigError(f"sweep: axis {axis!r}: allowed costs: {', '.join(COST_FIELDS + (SOLVER_SCALE,))}")
        return
    if len(parts) == 3 and parts[0] == "agents" and all(parts[1:]):
        return
    if len(parts) == 4 and parts[0] == "agents" and parts[2] == OPTIONS_KEY and all(parts[1:]):
        return  # an engine's option; the point's config checks that the agent is an engine
    if len(parts) == 2 and parts[0] == "params" and parts[1] in PAPER_PARAMS:
        return
    raise ConfigError(f"sweep: unknown axis {_show(axis)}; allowed: {AXIS_FORMS}")


def apply_point(data: Mapping[str, Any], point: Mapping[str, Any], canonical: Callable[[str], str]) -> dict[str, Any]:
    """A copy of the config document ``data`` (without ``sweep``) with the point's keys set.

    Args:
        canonical: maps an agent name to its registry name (so ``agents.mcts+SEP.uct_c`` sets the
            declaration of ``mcts-co``, whichever spelling the config used).
    """
    doc = copy.deepcopy({k: v for k, v in data.items() if k != "sweep"})
    for axis, value in point.items():
        parts = axis.split(".")
        if parts[0] == "agents":
            name = canonical(parts[1])
            agents = doc.setdefault("agents", {}) or {}
            doc["agents"] = agents
            key = next((k for k in agents if _canonical_or_none(canonical, k) == name), name)
            decl = agents.get(key) or {}
            if len(parts) == 4:  # agents.NAME.options.OPTION: one option, beside the others
                options = decl.get(OPTIONS_KEY)
                value = {**(options if isinstance(options, Mapping) else {}), parts[3]: value}
            agents[key] = {**decl, parts[2]: value}
            continue
        node = doc
        for part in parts[:-1]:
            child = node.get(part)
            node[part] = dict(child) if isinstance(child, Mapping) else {}
            node = node[part]
        node[parts[-1]] = value
    return doc


def label(point: Mapping[str, Any]) -> str:
    """``budget.seconds=0.5, agents.x.uct_c=1`` (messages, status rows, figure legends)."""
    return ", ".join(f"{k}={v}" for k, v in point.items())


def is_log_axis(axis: str) -> bool:
    """Budgets and costs are drawn on a log scale."""
    return any(axis == p or (p.endswith(".") and axis.startswith(p)) for p in LOG_AXES_PREFIXES)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                              and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def _canonical_or_none(canonical: Callable[[str], str], name: Any) -> str | None:
    try:
        return canonical(name)
    except ConfigError:
        return None
