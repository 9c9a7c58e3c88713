"""The named agents of the paper, their parameters and presets (AGENTS.md §B.1, §C).

An agent is described by a frozen :class:`AgentSpec` (a name, a kind and its parameters). The
search itself lives in :mod:`boopexp.engine.mcts`; this module only knows names and numbers, so that a
configuration can be validated and hashed without compiling anything.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from boopexp.errors import ConfigError


@dataclass(frozen=True)
class MCTSConfig:
    """Parameters of MCTS_GHOST (AGENTS.md §B.1, §C.4); defaults are the full agent of code 0.6.2.

    Attributes:
        preselect_m: m of the Selection injection (best_m_moves at the root); 0 = off, which also
            turns on the early border mask (QUIRK-A5).
        co_expansion: Expansion move chosen by the solver (best_move) instead of at random.
        co_playout_plies: number of initial playout plies chosen by the solver (code name
            ``first_n_strategy``); the rest are random.
        playout_depth: maximum playout length in plies; 0 = play to the end of the game.
        early_mask_plies: ``action_masking_time`` (m = 0 only).
        discount: playout discount d.
        discount_offset: the discount exponent is ``ply - discount_offset`` with plies counted
            from 1 (code: 1, QUIRK-A10; paper: 0).
        uct_c: UCT exploration constant (hard-coded 0.3 in the code).
        fix_a9: correct QUIRK-A9 (terminal playout bonus in absolute colours). Off = faithful.
        co_lookahead: the paper's two-stage decision (its future work; docs/beyond.md): 1 = every
            solver call (Selection, Expansion, Playout) first excludes the moves after which the
            opponent has a reply that wins at once, unless every move is such; 0 = the paper.
    """

    preselect_m: int = 5
    co_expansion: bool = True
    co_playout_plies: int = 21
    playout_depth: int = 21
    early_mask_plies: int = 6
    discount: float = 0.9
    discount_offset: int = 1
    uct_c: float = 0.3
    fix_a9: bool = False
    co_lookahead: int = 0

    def __post_init__(self) -> None:
        _check_int("preselect_m", self.preselect_m, 0, 72)
        _check_bool("co_expansion", self.co_expansion)
        _check_int("co_playout_plies", self.co_playout_plies, 0, 10_000)
        _check_int("playout_depth", self.playout_depth, 0, 10_000)
        _check_int("early_mask_plies", self.early_mask_plies, 0, 36)
        _check_float("discount", self.discount, 0.0, 1.0)
        _check_int("discount_offset", self.discount_offset, 0, 1)
        _check_float("uct_c", self.uct_c, 0.0, 100.0)
        _check_bool("fix_a9", self.fix_a9)
        _check_int("co_lookahead", self.co_lookahead, 0, 1)


MCTS_PARAMETERS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(MCTSConfig))
#: Parameters added after games were recorded: in an agent's description (hashes, records) only
#: when they differ from their default, so every earlier agent keeps its settings hash.
LATE_PARAMETERS: dict[str, Any] = {"co_lookahead": 0}

#: Presets (AGENTS.md §C.4). ``code-0.6.2`` produced the paper's tables; ``paper`` is its prose.
PRESETS: dict[str, dict[str, Any]] = {
    "code-0.6.2": {"k": 21, "discount_offset": 1},
    "paper": {"k": 20, "discount_offset": 0},
}
DEFAULT_PRESET = "code-0.6.2"

#: The ablation switches of each MCTS agent (AGENTS.md §C.1): Selection, Expansion, Playout.
_MCTS_SWITCHES: dict[str, tuple[bool, bool, bool]] = {
    "vanilla": (False, False, False),
    "mcts+S": (True, False, False),
    "mcts+E": (False, True, False),
    "mcts+P": (False, False, True),
    "mcts+SE": (True, True, False),
    "mcts+SP": (True, False, True),
    "mcts+EP": (False, True, True),
    "mcts-co": (True, True, True),
    "mcts-co2": (True, True, True),
}
#: Agents beyond the paper (docs/beyond.md): their parameters on top of the switches above.
_EXTRA_PARAMETERS: dict[str, dict[str, Any]] = {
    "mcts-co2": {"co_lookahead": 1},  # mcts-co with the two-stage constraint at every injection
}
#: The named agents beyond the paper's eight (docs/beyond.md).
BEYOND_NAMES: tuple[str, ...] = tuple(_EXTRA_PARAMETERS)
ALIASES: dict[str, str] = {"mcts+SEP": "mcts-co"}
BASELINES: tuple[str, ...] = ("heuristics", "random")
AGENT_NAMES: tuple[str, ...] = tuple(_MCTS_SWITCHES) + BASELINES

#: The paper-level parameters of a config's ``params:`` block and what they set.
PAPER_PARAMS: dict[str, str] = {
    "k": "playout solver plies and playout depth of the P agents",
    "m": "pre-selected moves of the S agents",
    "d": "playout discount of every MCTS agent",
}

#: Label printed by the original app for each agent (AGENTS.md §C.1).
LOG_LABELS: dict[str, str] = {
    "vanilla": "MCTS",
    "mcts+S": "MCTS + Selection",
    "mcts+E": "MCTS + Expansion",
    "mcts+P": "MCTS + Playout",
    "mcts+SE": "MCTS + Selection + Expansion",
    "mcts+SP": "MCTS + Selection + Playout",
    "mcts+EP": "MCTS + Expansion + Playout",
    "mcts-co": "Full",
    "mcts-co2": "Full + two-stage",
    "heuristics": "Pure Heuristics",
    "random": "RandomPlay",
}


#: The kinds of agent: MCTS_GHOST, the two baselines, and any Python agent (docs/agents.md).
AGENT_KINDS: tuple[str, ...] = ("mcts", "heuristics", "random", "plugin")


@dataclass(frozen=True)
class AgentSpec:
    """A fully resolved agent: registry name, kind and (for MCTS) its configuration.

    Attributes:
        name: the name pairings, records and tables use (a built-in or a config's own name).
        kind: one of AGENT_KINDS.
        mcts: the MCTS parameters (kind ``mcts``).
        base: the agent a config variant was declared from (``{base: mcts-co, ...}``), else None.
        plugin: ``"module:callable"`` of a plugin agent (kind ``plugin``).
        kwargs: the keyword arguments the plugin's callable is called with.
        directory: a folder where the plugin's module may also be found (the config's folder);
            where a file lives does not change a game, so it is in neither hash nor record.
    """

    name: str
    kind: str  # one of AGENT_KINDS
    mcts: MCTSConfig | None = field(default=None)
    base: str | None = None
    plugin: str | None = None
    kwargs: Mapping[str, Any] | None = field(default=None, hash=False)
    directory: str | None = field(default=None, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description, used in hashes and game records.

        A built-in agent's description is exactly what it was before variants and plugins
        existed (no ``base``, ``plugin`` or ``kwargs`` key), so its settings hashes are unchanged.
        """
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.mcts is not None:
            params = dataclasses.asdict(self.mcts)
            for key, default in LATE_PARAMETERS.items():
                if params[key] == default:
                    del params[key]
            out["params"] = params
        if self.base is not None:
            out["base"] = self.base
        if self.plugin is not None:
            out["plugin"] = self.plugin
            out["kwargs"] = dict(self.kwargs or {})
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AgentSpec":
        """The inverse of :meth:`to_dict` (e.g. the ``p1_spec`` of a game record).

        Raises:
            ConfigError: not an agent description, or parameters out of range.
        """
        try:
            name, kind = data["name"], data["kind"]
            params = data.get("params")
            base = data.get("base")
        except (KeyError, TypeError, AttributeError):
            raise ConfigError(f"{data!r} is not an agent description (needs name, kind)") from None
        if kind not in AGENT_KINDS:
            raise ConfigError(f"agent kind {kind!r} is unknown; allowed: {', '.join(AGENT_KINDS)}")
        if kind == "plugin":
            plugin, kwargs = data.get("plugin"), data.get("kwargs", {})
            if not isinstance(plugin, str) or not isinstance(kwargs, Mapping):
                raise ConfigError(f"agent {name!r}: a plugin agent description needs plugin and kwargs")
            return cls(name=name, kind=kind, base=base, plugin=plugin, kwargs=dict(kwargs))
        if kind != "mcts":
            return cls(name=name, kind=kind, base=base)
        if not isinstance(params, Mapping):
            raise ConfigError(f"agent {name!r}: an MCTS agent description needs its params")
        unknown = set(params) - set(MCTS_PARAMETERS)
        if unknown:
            raise ConfigError(f"agent {name!r}: unknown parameters {sorted(unknown)}; valid: {', '.join(MCTS_PARAMETERS)}")
        return cls(name=name, kind=kind, mcts=MCTSConfig(**params), base=base)


def canonical_name(name: str) -> str:
    """The registry name of ``name`` (resolving aliases), or ConfigError listing valid names."""
    if not isinstance(name, str):
        raise ConfigError(f"agent name {name!r} is not a string; valid agents: {', '.join(AGENT_NAMES)}")
    name = ALIASES.get(name, name)
    if name not in AGENT_NAMES:
        valid = ", ".join(AGENT_NAMES + tuple(ALIASES))
        raise ConfigError(f"unknown agent {name!r}; valid agents: {valid}")
    return name


def resolve_agent(
    name: str,
    preset: str = DEFAULT_PRESET,
    params: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> AgentSpec:
    """Build the AgentSpec of a named agent.

    Args:
        name: a registry name (``vanilla``, ``mcts+S``, …, ``mcts-co``/``mcts+SEP``, ``mcts-co2``,
            ``heuristics``, ``random``).
        preset: ``code-0.6.2`` (default, faithful to the code) or ``paper``.
        params: the paper-level parameters ``k``, ``m``, ``d`` (apply to agents that use them).
        overrides: any :class:`MCTSConfig` field by name, applied last.

    Raises:
        ConfigError: unknown agent, preset or parameter, or a value out of range.
    """
    name = canonical_name(name)
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; valid presets: {', '.join(PRESETS)}")
    params = dict(params or {})
    for key in params:
        if key not in PAPER_PARAMS:
            raise ConfigError(f"unknown params key {key!r}; valid keys: {', '.join(PAPER_PARAMS)}")
    overrides = dict(overrides or {})
    if name in BASELINES:
        if overrides:
            raise ConfigError(f"agent {name!r} takes no parameters (got {', '.join(sorted(overrides))})")
        return AgentSpec(name=name, kind=name)
    for key in overrides:
        if key not in MCTS_PARAMETERS:
            raise ConfigError(
                f"unknown parameter {key!r} for agent {name!r}; valid parameters: {', '.join(MCTS_PARAMETERS)}"
            )
    k = params.get("k", PRESETS[preset]["k"])
    m = params.get("m", 5)
    d = params.get("d", 0.9)
    _check_int("params.k", k, 1, 10_000)
    _check_int("params.m", m, 1, 72)
    _check_float("params.d", d, 0.0, 1.0)
    sel, exp, play = _MCTS_SWITCHES[name]
    values: dict[str, Any] = dict(
        preselect_m=m if sel else 0,
        co_expansion=exp,
        # QUIRK-A11: agents without P play random playouts to the end of the game.
        co_playout_plies=k if play else 0,
        playout_depth=k if play else 0,
        discount=float(d),
        discount_offset=PRESETS[preset]["discount_offset"],
    )
    values.update(_EXTRA_PARAMETERS.get(name, {}))
    values.update(overrides)
    try:
        cfg = MCTSConfig(**values)
    except ConfigError as exc:
        raise ConfigError(f"agent {name!r}: {exc}") from None
    return AgentSpec(name=name, kind="mcts", mcts=cfg)


def _check_int(key: str, value: Any, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{key} = {value!r} must be an integer in [{lo}, {hi}]")
    if not lo <= value <= hi:
        raise ConfigError(f"{key} = {value!r} is out of range; allowed: integers in [{lo}, {hi}]")


def _check_float(key: str, value: Any, lo: float, hi: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{key} = {value!r} must be a number in [{lo}, {hi}]")
    if not lo <= float(value) <= hi:
        raise ConfigError(f"{key} = {value!r} is out of range; allowed: numbers in [{lo}, {hi}]")


def _check_bool(key: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ConfigError(f"{key} = {value!r} must be true or false")
