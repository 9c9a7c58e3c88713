"""docs/architecture.md's module tables, generated from the modules' docstrings.

Every module is described once, in the first paragraph of its docstring (what it owns); the
tables of architecture.md's "The layers" part are that paragraph, one row per module, in each
folder's section. The prose around the tables is written by hand; the rows are not:
``tests/test_docs.py`` fails when a row differs from what this script writes, and

    .venv/bin/python tests/architecture_doc.py --write

rewrites them (a new module's row goes at the end of its folder's table; a row whose module is
gone goes away). A row keeps its place and the module's name as written (``commands/runs.py``
in the interfaces/ section, ``../openspiel.py`` from the folder below).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "boopexp"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# a folder's section: a bold line naming the folder in backticks (**`engine/` — compiled kernels.**)
SECTION = re.compile(r"^\*\*`([\w/]+/)`")
ROW = re.compile(r"^\| (`(?:\.\./)?[\w/]+\.py`(?:, `(?:\.\./)?[\w/]+\.py`)*) \|")
HEADER = "| module | owns |"
# Sphinx roles of the docstrings as Markdown code: :func:`~a.b.c` -> `c`, :mod:`a.b` -> `a.b`
ROLE = re.compile(r":(?:func|meth|class|mod|data|attr|exc|obj):`(~?)([^`]+)`")


def modules() -> list[str]:
    """Every module of the package but the folders' front doors, relative to boopexp/."""
    return sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
                  if "__pycache__" not in p.parts and (p.name != "__init__.py" or p.parent == PACKAGE))


def summary(path: str) -> str:
    """The first paragraph of the module's docstring, as one line of Markdown."""
    doc = ast.get_docstring(ast.parse((PACKAGE / path).read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.split("\n\n", 1)[0].split())
    if not first:
        raise SystemExit(f"boopexp/{path} has no docstring: its first paragraph says what the module owns")
    first = ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", first)
    return first.replace("``", "`").replace("|", "\\|")


def _resolve(folder: str, name: str) -> str:
    path = folder + name
    while "/../" in "/" + path:
        path = re.sub(r"(^|/)[\w]+/\.\./", r"\1", path, count=1)
    return path


def generate(text: str) -> str:
    """``text`` (architecture.md) with every module table's rows rewritten from the docstrings."""
    head, rest = text.split("## The layers", 1)
    layers, sep, tail = rest.partition("\n## ")
    lines = layers.split("\n")
    sections: list[tuple[str, int]] = []  # (folder, index of the table's last row)
    placed: set[str] = set()
    out: list[str] = []
    folder = None
    for line in lines:
        match = SECTION.match(line)
        if match:
            folder = "" if match.group(1) == "boopexp/" else match.group(1)
        row = ROW.match(line)
        if row and folder is not None:
            for name in row.group(1).strip("`").split("`, `"):  # a row per module
                path = _resolve(folder, name)
                if not (PACKAGE / path).is_file():
                    continue  # the module is gone
                placed.add(path)
                out.append(f"| `{name}` | {summary(path)} |")
                sections.append((folder, len(out) - 1))
            continue
        if line == HEADER and folder is not None:
            sections.append((folder, len(out) + 1))  # an empty table ends at its |---| line
        out.append(line)
    for path in [p for p in modules() if p not in placed]:
        owners = [(f, i) for f, i in sections if path.startswith(f)]
        if not owners:
            raise SystemExit(f"boopexp/{path}: no section of {ARCHITECTURE.name} is its folder's")
        folder, _ = max(owners, key=lambda owner: len(owner[0]))
        last = max(i for f, i in sections if f == folder)
        out.insert(last + 1, f"| `{path[len(folder):]}` | {summary(path)} |")
        sections = [(f, i + 1 if i > last else i) for f, i in sections] + [(folder, last + 1)]
    return head + "## The layers" + "\n".join(out) + sep + tail


def main(argv: list[str]) -> int:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    new = generate(text)
    if "--write" in argv:
        ARCHITECTURE.write_text(new, encoding="utf-8")
        print(f"{ARCHITECTURE.relative_to(ROOT)}: {'rewritten' if new != text else 'already up to date'}")
        return 0
    print("up to date" if new == text else f"{ARCHITECTURE.relative_to(ROOT)} differs: run with --write")
    return int(new != text)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
