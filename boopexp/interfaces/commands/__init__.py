"""Sub-commands of ``boopexp``; one module per family, registered on the main group here."""

from __future__ import annotations

import importlib

import click

# module name -> names of the click commands it defines (attribute names)
_COMMANDS: dict[str, tuple[str, ...]] = {
    "tables": ("tables",),
    "ratings": ("ratings",),
    "robustness": ("robustness",),
    "runs": ("run", "mirror", "status"),
    "bench": ("bench",),
    "play": ("game", "calibrate", "replay", "play"),
    "stores": ("seal", "migrate"),
    "tune": ("tune",),
}


def register(group: click.Group) -> None:
    """Attach every sub-command to ``group``."""
    for module_name, names in _COMMANDS.items():
        module = importlib.import_module(f"boopexp.interfaces.commands.{module_name}")
        for name in names:
            group.add_command(getattr(module, name))
