"""Docs tested like code: what docs/architecture.md, the folders' front doors and the command
modules say about the package is checked against the package itself."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import click

from boopexp.interfaces import commands

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "boopexp"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
COMMANDS = PACKAGE / "interfaces" / "commands"

# a folder's section of architecture.md: a bold line naming the folder in backticks, e.g.
# **`engine/` — compiled kernels.** or **`boopexp/` itself — beside the layers.**
SECTION = re.compile(r"^\*\*`([\w/]+/)`")
MODULE = re.compile(r"`((?:\.\./)?[\w/]+\.py)`")


def _modules(front_doors: bool = False) -> set[str]:
    """The modules of the package (relative to boopexp/), with or without the folders' ``__init__.py``."""
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
            if (front_doors or p.name != "__init__.py") and "__pycache__" not in p.parts}


def architecture_modules(text: str) -> dict[str, str]:
    """The modules the "layers" part of architecture.md names: path relative to boopexp/ -> the
    name as written. A backticked ``name.py`` names a module of the folder whose section it is in:
    ``commands/runs.py`` one of its subfolder, ``../openspiel.py`` one of the folder above;
    ``agents/specs.py`` (a layer folder) one of another layer, ``studies/beyond.py`` (a file of
    the repository's studies/, not of boopexp/studies/) a file outside the package, not counted."""
    part = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    named: dict[str, str] = {}
    folder = None
    for line in part.splitlines():
        head = SECTION.match(line)
        if head:
            folder = "" if head.group(1) == "boopexp/" else head.group(1)
        if folder is None:
            continue
        for name in MODULE.findall(line):
            first = name.split("/")[0]
            if "/" in name and first != ".." and not (PACKAGE / folder / first).is_dir():
                if not (PACKAGE / first).is_dir() or (ROOT / name).is_file():
                    continue  # outside the package (studies/beyond.py, beside boopexp/studies/)
                path = name
            else:
                path = re.sub(r"\w+/\.\./", "", folder + name)
            named[path] = name
    return named


def test_architecture_parser_reads_sections_subfolders_and_the_folder_above():
    text = ("intro `x.py`\n## The layers\n**`boopexp/` itself.**\n| `errors.py` | e |\n"
            "**`interfaces/` — how.**\n| `cli.py`, `commands/runs.py` | c |\n| `../openspiel.py` | o |\n"
            "**`engine/` — kernels.**\n| `params.py` | declared in `agents/specs.py`; see `studies/beyond.py` |\n"
            "## Next\n`late.py`\n")
    assert architecture_modules(text) == {
        "errors.py": "errors.py", "interfaces/cli.py": "cli.py", "interfaces/commands/runs.py": "commands/runs.py",
        "openspiel.py": "../openspiel.py", "engine/params.py": "params.py", "agents/specs.py": "agents/specs.py",
    }


def test_architecture_names_every_module_and_only_modules_that_exist():
    named = architecture_modules(ARCHITECTURE.read_text(encoding="utf-8"))
    missing = sorted(_modules() - set(named))
    assert not missing, f"docs/architecture.md does not name these modules (in their folder's section): {missing}"
    gone = sorted(f"{named[p]} (as boopexp/{p})" for p in set(named) - _modules(front_doors=True))
    assert not gone, f"docs/architecture.md names modules that do not exist: {gone}"


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def _names_in(doc: str) -> set[str]:
    """The names a docstring gives in double backticks or :mod: roles (a dotted name's last part)."""
    found = re.findall(r"``([\w.]+)``", doc) + re.findall(r":mod:`~?([\w.]+)`", doc)
    return {name.rsplit(".", 1)[-1] for name in found}


def test_every_front_door_names_the_modules_of_its_folder():
    """A folder's ``__init__`` says what the folder holds (the commands' registry is theirs: below)."""
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        names = _names_in(_docstring(init))
        folder = init.parent
        held = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
        held |= {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
        assert held <= names, f"{init.relative_to(ROOT)}'s docstring does not name {sorted(held - names)}"


def _command_modules() -> dict[str, list[click.Command]]:
    """commands/ module name -> the click commands the registry takes from it."""
    return {name: [getattr(importlib.import_module(f"boopexp.interfaces.commands.{name}"), attr) for attr in attrs]
            for name, attrs in commands._COMMANDS.items()}


def test_the_command_registry_holds_every_command_module_and_every_command():
    registered = _command_modules()
    assert set(registered) == {p.stem for p in COMMANDS.glob("*.py") if p.name != "__init__.py"}
    for name, cmds in registered.items():
        module = importlib.import_module(f"boopexp.interfaces.commands.{name}")
        defined = [v for v in vars(module).values() if isinstance(v, click.Command)]
        assert sorted(c.name for c in defined) == sorted(c.name for c in cmds), name


def test_each_command_module_docstring_names_its_commands():
    """The first paragraph of commands/X.py's docstring names exactly its commands (``boopexp NAME``)."""
    for name, cmds in _command_modules().items():
        first = _docstring(COMMANDS / f"{name}.py").split("\n\n", 1)[0]
        said = set(re.findall(r"``boopexp ([\w-]+)``", first))
        assert said == {c.name for c in cmds}, f"commands/{name}.py's docstring names {sorted(said)}"


def _recipe(target: str) -> list[str]:
    """The recipe lines of a Makefile target (tabs stripped)."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line[1:])
    return recipe


def test_make_run_ends_with_what_to_look_at_next_and_names_what_exists():
    # 'make run' ended in statistics paragraphs and a 'no ratings' warning (issue 20, item 13b)
    recipe = _recipe("run")
    assert any(line.startswith("$(BIN)/boopexp tables results/smoke") and "--brief" in line for line in recipe)
    last = next(i for i in range(len(recipe), 0, -1) if not recipe[i - 1].startswith("@echo"))
    shown = [line.removeprefix("@echo").strip().strip('"') for line in recipe[last:]]  # what it ends with
    assert any(line.endswith("Next:") for line in shown) and len(shown) <= 8, shown
    text = "\n".join(shown)
    for needle in ("results/smoke/tables/", "make reproduce", "boopexp --help", "README.md", "docs/tables.md"):
        assert needle in text, needle
    assert _recipe("reproduce") and (ROOT / "docs" / "tables.md").exists() and (ROOT / "docs" / "runner.md").exists()
    assert "make run" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_architecture_tables_are_the_modules_docstrings():
    """Every module is described once: its row in docs/architecture.md is the first paragraph of
    its docstring (tests/architecture_doc.py writes the rows: run it with --write)."""
    from architecture_doc import generate

    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert generate(text) == text, "docs/architecture.md's module rows differ from the docstrings: run " \
                                   ".venv/bin/python tests/architecture_doc.py --write"


def test_architecture_generator_places_a_new_module_and_drops_a_gone_one(tmp_path):
    from architecture_doc import generate

    text = ARCHITECTURE.read_text(encoding="utf-8")
    gone = text.replace("| `bits.py` |", "| `gone.py` | a module that was |\n| `bits.py` |", 1)
    assert generate(gone) == text  # the row of a module that does not exist goes
    missing = "\n".join(line for line in text.splitlines() if not line.startswith("| `bits.py` |")) + "\n"
    regenerated = generate(missing)
    assert "| `bits.py` |" in regenerated and len(regenerated.splitlines()) == len(text.splitlines())
