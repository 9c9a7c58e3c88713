"""Sub-commands of ``boopexp``; one module per family, registered on the main group here."""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from boopexp.agents.budget import MAX_SECONDS
from boopexp.errors import ConfigError

# module name -> names of the click commands it defines (attribute names)
_COMMANDS: dict[str, tuple[str, ...]] = {
    "tables": ("tables",),
    "ratings": ("ratings",),
    "studies": ("robustness", "knowledge", "generality", "seed_games"),
    "runs": ("run", "mirror", "status"),
    "bench": ("bench", "warmup"),
    "play": ("game", "calibrate", "replay", "play", "engine"),
    "stores": ("seal", "migrate", "merge"),
    "exports": ("export_games", "import_games"),
    "tune": ("tune",),
    "serve": ("serve",),
    "openings": ("openings",),
}


class FiniteFloat(click.FloatRange):
    """click's FloatRange that also refuses nan and infinity, which float() reads ('nan', 'inf',
    'infinity') and a range check lets through (nan compares false with every bound). The type of
    every float option that is not a config key (those go through the key's own check)."""

    name = "finite float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number", param, ctx)
        return number

    def _describe_range(self) -> str:
        """No range in the help where there is no bound (click would say ``x<=None``)."""
        return "" if self.min is None and self.max is None else super()._describe_range()


#: seconds of a measurement (bench, calibrate): at most a move's longest budget (a typo such as
#: 1e308 measured for ever)
POSITIVE_SECONDS = FiniteFloat(min=0, min_open=True, max=MAX_SECONDS)
#: the most runs or games of a measurement (bench --repeats, calibrate --device --games)
MAX_MEASUREMENTS = 1000
MEASUREMENTS = click.IntRange(1, MAX_MEASUREMENTS)


class Folder(click.Path):
    """A folder option or argument: a path that is not a file, and not ``-`` (click's Path takes
    a dash as a folder of that name; here it would be a store or report folder called ``-`` where
    the user meant standard output, which a folder cannot be)."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip() in ("-", ""):
            self.fail(f"{value!r} is not a folder: give a folder's path (standard output is for files)", param, ctx)
        return super().convert(value, param, ctx)


#: the type of every folder option and argument
FOLDER = Folder()


def check_out_apart(out: Path, inputs: Sequence[Path]) -> None:
    """Refuse a report's ``--out`` folder that is a store the command reads (``tables st --out st``
    wrote its tables among the store's games; a folder inside it, ``st/tables`` as ``make run``
    writes, is a folder of its own). (``merge`` refuses its own: a store inside or around a store
    it reads, :func:`boopexp.experiments.store.merge`.)

    Raises:
        ConfigError: ``--out st is the store st it reads: ...``.
    """
    from boopexp.experiments.store import has_games_files

    where = out.resolve()
    for store in inputs:
        if where == store.resolve() and has_games_files(store):
            raise ConfigError(f"--out {out} is the store {store} it reads (its files would lie among the "
                              "games): give another folder, e.g. its subfolder tables/")


def register(group: click.Group) -> None:
    """Attach every sub-command to ``group``."""
    for module_name, names in _COMMANDS.items():
        module = importlib.import_module(f"boopexp.interfaces.commands.{module_name}")
        for name in names:
            group.add_command(getattr(module, name))
