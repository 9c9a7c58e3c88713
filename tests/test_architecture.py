"""The module structure: imports run one way (no cycle), and the CLI starts without the engine."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from conftest import DEMO_CONFIG, fake_play_game

from boopexp.experiments.config import load_config
from boopexp.experiments.pool import PoolOptions
from boopexp.experiments.runner import run_plan

PACKAGE = Path(__file__).resolve().parent.parent / "boopexp"
HEAVY = ("numba", "pandas", "matplotlib", "joblib")

# Runs in a fresh interpreter: prints the heavy modules loaded after the given CLI invocations
# (a list of argument lists; "ALL_HELP" stands for ``<command> --help`` of every command).
PROBE = f"""
import json, sys
from boopexp.interfaces.cli import main
runs = json.loads(sys.argv[1])
if runs == "ALL_HELP":
    runs = [[name, "--help"] for name in sorted(main.commands)]
for args in runs:
    try:
        main(args, prog_name="boopexp")
    except SystemExit as exc:
        assert not exc.code, (args, exc.code)
print(json.dumps(sorted(m for m in {HEAVY} if m in sys.modules)))
"""


def _heavy_loaded(runs: list[list[str]] | str, cwd: Path | None = None) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(runs)], capture_output=True, text=True,
                          cwd=cwd, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_cli_import_and_help_load_no_heavy_library():
    assert _heavy_loaded([]) == []  # import boopexp.interfaces.cli
    assert _heavy_loaded([["--help"]]) == []
    assert _heavy_loaded("ALL_HELP") == []  # every command's --help, in one interpreter


def test_status_loads_no_engine(tmp_path):
    (tmp_path / "demo.yaml").write_text(DEMO_CONFIG)
    config = load_config(tmp_path / "demo.yaml")
    run_plan(config, config.plan(), tmp_path / "results" / "demo", PoolOptions(jobs=1, play=fake_play_game))
    loaded = _heavy_loaded([["status", "results/demo"]], cwd=tmp_path)
    assert "numba" not in loaded


# ---------------------------------------------------------------------------------------------
# the import graph


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(name: str, modules: set[str]) -> str | None:
    """The boopexp module ``name`` stands for (a package's __init__ for a package), else None."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _types_only(tree: ast.Module, mod: str) -> set[ast.AST]:
    """The imports of the package root under ``if TYPE_CHECKING:``: the names it serves lazily
    (the Python API, boopexp/api.py) declared for mypy, never imported when the package is. Only
    the root's: anywhere else a type is a dependency like any other."""
    if mod != "boopexp":
        return set()
    blocks = [n for n in tree.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name)
              and n.test.id == "TYPE_CHECKING"]
    return {inner for block in blocks for inner in ast.walk(block) if isinstance(inner, (ast.Import, ast.ImportFrom))}


def import_graph() -> dict[str, set[str]]:
    """module -> the boopexp modules it imports, at top level or inside any function."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if node in _types_only(tree, mod):
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                dep = _resolve(target, modules)
                if dep is not None and dep != mod:
                    graph[mod].add(dep)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_import_graph_has_no_cycle():
    graph = import_graph()
    assert "boopexp.play.match" in graph["boopexp.play.calibrate"]  # the graph sees function-level imports too
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_engine_free_modules_import_no_engine_module():
    """The game contract, config, store, report and studies read and write records without the engine."""
    graph = import_graph()
    engine = {"boopexp.play.match", "boopexp.engine.mcts", "boopexp.engine.rules", "boopexp.engine.heuristic",
              "boopexp.engine.objective"}

    def reach(m: str, seen: set[str]) -> set[str]:
        for d in graph[m] - seen:
            seen.add(d)
            reach(d, seen)
        return seen

    for m in ("boopexp.play.contract", "boopexp.experiments.config", "boopexp.experiments.store",
              "boopexp.analysis.tables", "boopexp.studies.robustness.report", "boopexp.studies.knowledge.report",
              "boopexp.studies.beyond.rows"):
        assert not reach(m, set()) & engine, m


# ---------------------------------------------------------------------------------------------
# the layers (docs/architecture.md): each folder imports only the folders below it

#: the layer folders, lowest first; the package root (``__version__``, lazy ``Position``),
#: ``boopexp.errors`` and ``boopexp.schema`` (the checks every config parser shares) sit below
#: them all; ``boopexp.openspiel`` (an adapter users import by that name), ``boopexp.api`` (the
#: Python API, docs/python.md) and ``__main__`` are interfaces.
LAYERS = ("engine", "game", "games", "agents", "play", "experiments", "analysis", "tuning", "studies", "interfaces")
BASE = {"boopexp", "boopexp.errors", "boopexp.schema"}
TOP_LEVEL_INTERFACES = {"boopexp.openspiel", "boopexp.__main__", "boopexp.api"}


def layer_of(module: str) -> int:
    """The rank of ``module``'s layer (-1 for the base)."""
    if module in BASE:
        return -1
    if module in TOP_LEVEL_INTERFACES:
        return LAYERS.index("interfaces")
    folder = module.split(".")[1]
    assert folder in LAYERS, f"{module} is in no layer folder (docs/architecture.md lists them)"
    return LAYERS.index(folder)


def test_every_import_runs_down_the_layers():
    graph = import_graph()
    upward = sorted(f"{m} ({LAYERS[layer_of(m)]}) imports {d} ({LAYERS[layer_of(d)]})"
                    for m, deps in graph.items() for d in deps if layer_of(d) > layer_of(m))
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_the_kernels_import_nothing_above_the_engine():
    graph = import_graph()
    for m, deps in graph.items():
        if m.startswith("boopexp.engine."):
            assert all(d in BASE or d.startswith("boopexp.engine") for d in deps), (m, deps)


def test_a_games_kernels_import_only_the_engine_and_their_own_game():
    graph = import_graph()
    kernels = sorted(m for m in graph if m.startswith("boopexp.games.") and m.endswith(".kernels"))
    assert "boopexp.games.connect_four.kernels" in kernels
    for m in kernels:
        game = m.rpartition(".")[0]
        assert all(d in BASE or d.startswith(("boopexp.engine.", game + ".")) for d in graph[m]), (m, graph[m])


def test_at_most_six_modules_at_the_top_level():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 6, top


def test_layer_check_sees_an_upward_import():
    assert layer_of("boopexp.engine.mcts") < layer_of("boopexp.agents.budget") < layer_of("boopexp.interfaces.cli")
    assert layer_of("boopexp.errors") == layer_of("boopexp.schema") < layer_of("boopexp.engine.state")


def test_make_lint_covers_every_folder_of_python_code():
    """`make lint` runs ruff on every top-level folder that holds Python (benchmarks/ included:
    a script nobody lints rots first) and mypy on the package and the benchmarks."""
    import tomllib

    root = PACKAGE.parent
    lint = next(line for line in (root / "Makefile").read_text().splitlines() if "ruff check" in line)
    linted = set(lint.split("ruff check", 1)[1].split())
    outputs = {"site", "build", "dist"}  # make docs' and make dist's (git-ignored): copies of linted files
    with_python = {path.relative_to(root).parts[0] for path in root.glob("*/**/*.py")
                   if not path.relative_to(root).parts[0].startswith(".")
                   and not path.relative_to(root).parts[0].endswith(".egg-info")
                   and path.relative_to(root).parts[0] not in outputs}
    assert with_python - linted == set(), f"folders with Python that `make lint` does not check: {with_python - linted}"
    mypy_files = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    assert {"boopexp", "benchmarks"} <= set(mypy_files)
