"""Tournament formats: the pairings a config's ``tournament:`` block plays.

* ``{format: round-robin, agents: [A, B, C]}`` plays every pair of distinct agents, both ways
  (``games_per_side`` games with each as Blue), as TAG's and cutechess's round robins do;
* ``{format: gauntlet, agent: X, opponents: [A, B]}`` plays X against each opponent, both ways:
  the shape of the paper's Table I.

A tournament only chooses pairings ``[A, B]``; the plan, the hashes and the games are exactly those
of the same pairings written out under ``pairings:``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boopexp import schema
from boopexp.errors import ConfigError
from boopexp.errors import show_value as _show

FORMATS: dict[str, tuple[str, ...]] = {
    "round-robin": ("format", "agents"),
    "gauntlet": ("format", "agent", "opponents"),
}


@dataclass(frozen=True)
class Tournament:
    """A validated tournament (agent names canonical).

    Attributes:
        format: ``round-robin`` or ``gauntlet``.
        agents: round-robin: the agents, in the given order; gauntlet: ``(agent, *opponents)``.
    """

    format: str
    agents: tuple[str, ...]

    def pairings(self) -> tuple[tuple[str, str], ...]:
        """The pairings ``(A, B)``, each played both ways; A first as listed."""
        if self.format == "gauntlet":
            head, *opponents = self.agents
            return tuple((head, o) for o in opponents)
        return tuple((a, b) for i, a in enumerate(self.agents) for b in self.agents[i + 1:])

    def to_dict(self) -> dict[str, Any]:
        """The ``tournament:`` block of a resolved config."""
        if self.format == "gauntlet":
            return {"format": "gauntlet", "agent": self.agents[0], "opponents": list(self.agents[1:])}
        return {"format": "round-robin", "agents": list(self.agents)}


def parse_tournament(data: Any, canonical: Callable[[Any], str]) -> Tournament:
    """Validate a ``tournament:`` block.

    Args:
        data: the block.
        canonical: maps an agent name to its registry name (ConfigError if unknown).

    Raises:
        ConfigError: one line naming ``tournament.KEY``, the value and what is allowed.
    """
    example = ("{format: round-robin, agents: [vanilla, mcts-co]} "
               "or {format: gauntlet, agent: mcts-co, opponents: [vanilla]}")
    data = schema.mapping(data, "tournament", f"a mapping like {example}")
    fmt = schema.choice(data.get("format"), "tournament.format", FORMATS)
    allowed = FORMATS[fmt]
    schema.check_keys(data, allowed, "tournament", note=f" for format {fmt}")
    schema.require_keys(data, allowed, "tournament", note=f" for format {fmt}")
    if fmt == "round-robin":
        agents = _names("tournament.agents", data["agents"], canonical, minimum=2)
        return Tournament(fmt, agents)
    with schema.under("tournament.agent"):
        head = canonical(data["agent"])
    opponents = _names("tournament.opponents", data["opponents"], canonical, minimum=1)
    if head in opponents:
        raise ConfigError(
            f"tournament.opponents = {_show(data['opponents'])} contains the gauntlet's own agent {head!r}"
        )
    return Tournament(fmt, (head, *opponents))


def _names(key: str, value: Any, canonical: Callable[[Any], str], minimum: int) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) < minimum:
        raise schema.invalid(key, value, f"a list of at least {minimum} agent name(s)")
    out: list[str] = []
    for i, raw in enumerate(value):
        with schema.under(f"{key}[{i}]"):
            name = canonical(raw)
        if name in out:
            raise ConfigError(f"{key}[{i}] = {_show(raw)} repeats agent {name!r}")
        out.append(name)
    return tuple(out)
