"""The agents a config declares: overrides of built-ins, named variants and plugin agents.

A config's ``agents:`` block maps a name to a declaration:

* a built-in name (or alias) with parameters overrides that agent, as before
  (``mcts-co: {uct_c: 0.3}``);
* a new name with ``base:`` declares a variant of another agent, built-in or declared
  (``co-wide: {base: mcts-co, uct_c: 1.0, preselect_m: 8}``); the base's parameters come first,
  the variant's own last;
* a new name with ``plugin: "module:callable"`` declares a Python agent (docs/agents.md); the other
  keys are the callable's keyword arguments, except ``move_timeout_s`` (its time limit per move);
* a new name with ``engine: [command, args...]`` declares a program speaking btp
  (docs/protocol.md), with ``options`` (sent as ``setoption``), ``move_timeout_s`` and
  ``memory_mb``; a variant of it (``base:``) may set its own ``options`` (merged over the base's),
  ``move_timeout_s`` and ``memory_mb``.

A declared name is a first-class agent name: it plays in pairings, it is the name in game
records, hashes and tables. This module knows names and numbers only (no engine): a plugin's
module is imported by :mod:`boopexp.agents.plugins` when the config is checked.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from boopexp import schema
from boopexp.agents.budget import AGENT_BUDGET_KEY, AgentBudget
from boopexp.agents.specs import (
    AGENT_NAMES,
    ALIASES,
    BASELINES,
    ENGINE_KEY,
    MEMORY_KEY,
    MOVE_TIMEOUT_KEY,
    OPTIONS_KEY,
    AgentSpec,
    canonical_name,
    check_agent_budget,
    check_engine,
    check_move_timeout,
    parameters_of,
    resolve_agent,
    unknown_agent,
)
from boopexp.errors import ConfigError
from boopexp.errors import show_value as _show

#: The keys of a declaration that are not parameters.
BASE_KEY = "base"
PLUGIN_KEY = "plugin"
#: What a plugin's factory is not given (``move_timeout_s``: its time limit per move).
_NOT_PARAMETERS = (BASE_KEY, PLUGIN_KEY, MOVE_TIMEOUT_KEY, AGENT_BUDGET_KEY)

# A declared name appears in pairing strings "<p1> vs <p2>" and in file names of tables.
_AGENT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def canonical(name: Any, declared: Mapping[str, Mapping[str, Any]]) -> str:
    """The registry name of ``name``: a built-in (aliases resolved) or a declared agent.

    Raises:
        ConfigError: neither, with the valid names.
    """
    if isinstance(name, str) and name in declared:
        return name
    try:
        return canonical_name(name)
    except ConfigError:
        extra = [n for n in declared if n not in AGENT_NAMES]
        if not extra:
            raise
        raise unknown_agent(name, AGENT_NAMES + tuple(ALIASES) + tuple(extra)) from None


def parse_agents(
    data: Any, preset: str, params: Mapping[str, Any], directory: str | None = None
) -> dict[str, dict[str, Any]]:
    """Validate an ``agents:`` block; returns {name: declaration} with built-in names canonical.

    Every declared agent is resolved once (so a bad parameter, an unknown base, a cycle of bases,
    or a plugin that cannot be imported is reported here, before any game).

    Raises:
        ConfigError: one line naming the key ``agents.NAME[.PARAM]``, the value and what is allowed.
    """
    if data is None:
        return {}
    schema.mapping(data, "agents", "a mapping like {mcts-co: {uct_c: 0.3}}")
    out: dict[str, dict[str, Any]] = {}
    for raw_name, decl in data.items():
        if decl is None:
            decl = {}
        key = schema.key_path("agents", raw_name)
        decl = dict(schema.mapping(decl, key, "a mapping of parameters like {uct_c: 0.3}"))
        builtin = _builtin(raw_name)
        if sum(k in decl for k in (BASE_KEY, PLUGIN_KEY, ENGINE_KEY)) > 1:
            raise ConfigError(f"agents.{raw_name}: give one of base, plugin or engine, not several")
        if builtin is None:
            if not isinstance(raw_name, str) or not _AGENT_NAME_RE.match(raw_name):
                raise ConfigError(
                    f"agents: {_show(raw_name)} is not a valid agent name (letters, digits, '.', '_', '+' or '-')"
                )
            if BASE_KEY not in decl and PLUGIN_KEY not in decl and ENGINE_KEY not in decl:
                valid = ", ".join(AGENT_NAMES + tuple(ALIASES))
                raise ConfigError(
                    f"agents: unknown agent {raw_name!r}; valid agents: {valid} "
                    f"(a new agent needs base: AGENT, plugin: \"module:callable\" or engine: [command, args...])"
                )
            name = raw_name
        else:
            name = builtin
            base = decl.get(BASE_KEY)
            shadows = PLUGIN_KEY in decl or ENGINE_KEY in decl or (BASE_KEY in decl and _builtin(base) != builtin)
            if shadows:
                what = (f"plugin {decl[PLUGIN_KEY]!r}" if PLUGIN_KEY in decl else
                        f"engine {decl[ENGINE_KEY]!r}" if ENGINE_KEY in decl else f"base {base!r}")
                raise ConfigError(
                    f"agents.{raw_name}: {what} would shadow the built-in agent {builtin!r}; "
                    "give the new agent its own name"
                )
            decl.pop(BASE_KEY, None)  # {base: itself} is a plain override
        if name in out:
            raise ConfigError(f"agents: {raw_name!r} and another entry both name agent {name!r}")
        if PLUGIN_KEY in decl and not isinstance(decl[PLUGIN_KEY], str):
            raise ConfigError(
                f"agents.{raw_name}.plugin = {_show(decl[PLUGIN_KEY])} must be a string \"module:callable\""
            )
        out[name] = decl
    specs = [resolve(name, out, preset, params, directory) for name in out]
    plugins = [spec for spec in specs if spec.kind == "plugin"]
    if plugins:
        from boopexp.agents.plugins import check_plugin  # imports the user's modules: only when there are some

        for spec in plugins:
            check_plugin(spec, where=f"agents.{spec.name}")
    return out


def resolve(
    name: str,
    declared: Mapping[str, Mapping[str, Any]],
    preset: str,
    params: Mapping[str, Any],
    directory: str | None = None,
) -> AgentSpec:
    """The AgentSpec of ``name`` (built-in, overridden built-in, variant or plugin).

    Raises:
        ConfigError: an unknown agent or base, a cycle of bases, a parameter the agent does not
            take or out of range (the message names ``agents.NAME.PARAM``).
    """
    name = canonical(name, declared)
    chain = _chain(name, declared)
    root = chain[-1]
    overrides: dict[str, Any] = {}
    timeout = None
    for link in reversed(chain):  # the root's parameters first, the agent's own last
        overrides.update({k: v for k, v in declared.get(link, {}).items() if k not in _NOT_PARAMETERS})
        if MOVE_TIMEOUT_KEY in declared.get(link, {}):
            where = f"agents.{link}.{MOVE_TIMEOUT_KEY}"
            if root in AGENT_NAMES:
                raise ConfigError(f"{where}: only plugin agents have a move time limit "
                                  f"({root!r} is built in: its budget limits its moves)")
            timeout = check_move_timeout(declared[link][MOVE_TIMEOUT_KEY], where)
    budget = _agent_budget(chain, declared)
    own = declared.get(name, {})
    base = own.get(BASE_KEY)
    if ENGINE_KEY in declared.get(root, {}):
        return _engine(name, chain, declared, timeout)
    if root not in AGENT_NAMES:  # a plugin
        target = declared[root][PLUGIN_KEY]
        return AgentSpec(name=name, kind="plugin", base=base, plugin=target, kwargs=overrides, directory=directory,
                         move_timeout_s=timeout)
    for link in chain:
        own_params = {k: v for k, v in declared.get(link, {}).items() if k not in _NOT_PARAMETERS}
        if root in BASELINES:
            what = f"a variant of {root}" if link != root else "a baseline"
            schema.check_keys(own_params, (), f"agents.{link}", note=f"; agent {link!r} ({what}) takes no parameters")
        else:
            schema.check_keys(own_params, parameters_of(resolve_agent(root).kind), f"agents.{link}")
    try:
        spec = resolve_agent(root, preset, params, overrides)
    except ConfigError as exc:
        # A parameter's check (keyed by the MCTSConfig field): the key is where it is in the config.
        raise exc.replace(where=None).under(f"agents.{name}") from None
    if budget is not None:
        spec = dataclasses.replace(spec, budget=budget)
    if name == root:
        return spec
    return dataclasses.replace(spec, name=name, base=base)  # the root's parameters, whatever its kind


def _agent_budget(chain: list[str], declared: Mapping[str, Mapping[str, Any]]) -> AgentBudget | None:
    """The agent's own budget (``budget:``), its bases' first and its own keys last (``chain``:
    the agent, its bases, the root last); None if no link sets one.

    Raises:
        ConfigError: a link's ``budget`` is not one (named ``agents.LINK.budget``), or the agent's
            kind thinks under no budget.
    """
    links = [link for link in reversed(chain) if AGENT_BUDGET_KEY in declared.get(link, {})]
    if not links:
        return None
    root = chain[-1]
    kind = ("engine" if ENGINE_KEY in declared.get(root, {}) else
            resolve_agent(root).kind if root in AGENT_NAMES else "plugin")
    merged: dict[str, Any] = {}
    for link in links:
        where = f"agents.{link}.{AGENT_BUDGET_KEY}"
        check_agent_budget(declared[link][AGENT_BUDGET_KEY], kind, where)  # each link's own mistakes named there
        merged.update(declared[link][AGENT_BUDGET_KEY])
    own = AgentBudget(**merged)
    return None if own.is_identity else own  # factors of 1: the config's budget, the hash as without them


def _engine(name: str, chain: list[str], declared: Mapping[str, Mapping[str, Any]],
            timeout: float | None) -> AgentSpec:
    """The AgentSpec of an engine agent ``name`` (``chain``: it, its bases, the engine's entry last)."""
    root = chain[-1]
    options: dict[str, Any] = {}
    memory = None
    for link in reversed(chain):
        decl = declared.get(link, {})
        allowed = (ENGINE_KEY,) if link == root else (BASE_KEY,)
        schema.check_keys(decl, (*allowed, OPTIONS_KEY, MOVE_TIMEOUT_KEY, MEMORY_KEY), f"agents.{link}",
                          note=" (an engine agent: docs/protocol.md)")
        if decl.get(OPTIONS_KEY) is not None:
            options.update(schema.mapping(decl[OPTIONS_KEY], f"agents.{link}.{OPTIONS_KEY}",
                                          "a mapping of option names to values, e.g. {depth: 3}"))
        memory = decl.get(MEMORY_KEY, memory)
    command, options, memory = check_engine(declared[root][ENGINE_KEY], options, memory, f"agents.{name}")
    return AgentSpec(name=name, kind="engine", base=declared.get(name, {}).get(BASE_KEY), engine=command,
                     options=options, memory_mb=memory, move_timeout_s=timeout)


def _builtin(name: Any) -> str | None:
    """The canonical built-in name of ``name``, or None if it is not one."""
    if not isinstance(name, str):
        return None
    name = ALIASES.get(name, name)
    return name if name in AGENT_NAMES else None


def _chain(name: str, declared: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``name``, its base, the base's base, ... down to a built-in or a plugin."""
    chain = [name]
    while True:
        decl = declared.get(chain[-1], {})
        if PLUGIN_KEY in decl or ENGINE_KEY in decl or BASE_KEY not in decl:
            if chain[-1] not in AGENT_NAMES and PLUGIN_KEY not in decl and ENGINE_KEY not in decl:
                raise ConfigError(f"unknown agent {chain[-1]!r}")
            return chain
        raw = decl[BASE_KEY]
        base = _builtin(raw) or (raw if isinstance(raw, str) and raw in declared else None)
        if base is None:
            valid = AGENT_NAMES + tuple(n for n in declared if n not in AGENT_NAMES)
            raise ConfigError(template="{key} = {value} is not an agent; valid bases: {allowed}",
                              key=f"agents.{chain[-1]}.base", value=raw, allowed=valid)
        if base in chain:
            cycle = " -> ".join(chain[chain.index(base):] + [base])
            raise ConfigError(f"agents.{chain[-1]}.base: the bases form a cycle ({cycle})")
        chain.append(base)
