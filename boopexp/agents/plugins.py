"""Plugin agents: any Python object with ``choose(position, rng)`` plays boop. (docs/agents.md).

A config declares ``greedy: {plugin: "my_agents:make_greedy", depth: 1}``: the module
``my_agents`` is imported from ``PYTHONPATH`` or, failing that, from the config file's folder;
``make_greedy(depth=1)`` is called once per game and returns the agent. The protocol:

* ``choose(position: boopexp.Position, rng: numpy.random.Generator) -> boopexp.Move | str``
  (required): the move of the side to move;
* ``promote(position, groups, rng) -> int`` (optional): when a move lines up several candidate
  groups, the index of the group to promote among ``groups`` (the position is the one before the
  move); without it the paper's promotion heuristic chooses.

This module imports plugins and checks them; it does not import the engine itself.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from boopexp.agents.specs import AgentSpec
from boopexp.errors import ConfigError

#: The method every plugin agent has, and the optional one.
REQUIRED_METHOD = "choose"
OPTIONAL_METHOD = "promote"


def one_line(exc: BaseException) -> str:
    """``"TypeError: message"`` on one line (what a forfeit record and an error message show)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def load_factory(target: str, directory: str | None = None) -> Callable[..., Any]:
    """The callable named by ``"module:callable"`` (``callable`` may be dotted).

    The module is imported from ``sys.path`` (``PYTHONPATH``) first, then from ``directory``.

    Raises:
        ConfigError: a malformed target, a module that cannot be imported, or no such callable.
    """
    module_name, sep, attr = target.partition(":") if isinstance(target, str) else ("", "", "")
    if not sep or not module_name or not attr:
        raise ConfigError(f"plugin = {target!r} must look like \"module:callable\", e.g. \"my_agents:make_greedy\"")
    try:
        module = _import(module_name, directory)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import: say why, on one line
        raise ConfigError(f"plugin {target!r}: importing {module_name!r} raised {one_line(exc)}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"plugin {target!r}: module {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigError(f"plugin {target!r}: {attr!r} is not callable")
    return obj


def build_agent(spec: AgentSpec) -> Any:
    """A fresh agent object of plugin ``spec``: ``factory(**kwargs)`` (exceptions propagate)."""
    factory = load_factory(spec.plugin or "", spec.directory)
    return factory(**dict(spec.kwargs or {}))


def check_plugin(spec: AgentSpec, where: str = "agents") -> None:
    """Import ``spec``'s plugin and build one agent, so that a broken plugin stops a run before
    any game (the agent built here is thrown away; each game builds its own).

    Raises:
        ConfigError: one line naming ``where``: import failure, no such callable, the callable
            raising on these keyword arguments, or an agent without ``choose``.
    """
    try:
        factory = load_factory(spec.plugin or "", spec.directory)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    try:
        agent = factory(**dict(spec.kwargs or {}))
    except Exception as exc:  # noqa: BLE001 - reported as a config error
        raise ConfigError(f"{where}: {spec.plugin}(**{dict(spec.kwargs or {})!r}) raised {one_line(exc)}") from None
    if not callable(getattr(agent, REQUIRED_METHOD, None)):
        raise ConfigError(
            f"{where}: {spec.plugin} returned {type(agent).__name__!s}, "
            f"which has no {REQUIRED_METHOD}(position, rng) method"
        )


def _import(module_name: str, directory: str | None) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not directory or not (module_name == missing or module_name.startswith(missing + ".")):
            if module_name == missing or module_name.startswith(missing + "."):
                raise ConfigError(
                    f"plugin module {module_name!r} not found; put it on PYTHONPATH or beside the config"
                ) from None
            raise
    # Not on sys.path: look beside the config. Appended, so PYTHONPATH keeps precedence.
    if directory not in sys.path:
        sys.path.append(directory)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ConfigError(
                f"plugin module {module_name!r} not found on PYTHONPATH or in {directory}"
            ) from None
        raise
