"""The module structure: imports run one way (no cycle), and the CLI starts without the engine."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from conftest import DEMO_CONFIG, fake_play_game

from boopexp.config import load_config
from boopexp.runner import run_plan

PACKAGE = Path(__file__).resolve().parent.parent / "boopexp"
HEAVY = ("numba", "pandas", "matplotlib", "joblib")

# Runs in a fresh interpreter: prints the heavy modules loaded after the given CLI invocations
# (a list of argument lists; "ALL_HELP" stands for ``<command> --help`` of every command).
PROBE = """
import json, sys
from boopexp.cli import main
runs = json.loads(sys.argv[1])
if runs == "ALL_HELP":
    runs = [[name, "--help"] for name in sorted(main.commands)]
for args in runs:
    try:
        main(args, prog_name="boopexp")
    except SystemExit as exc:
        assert not exc.code, (args, exc.code)
print(json.dumps(sorted(m for m in {heavy} if m in sys.modules)))
""".format(heavy=HEAVY)


def _heavy_loaded(runs: list[list[str]] | str, cwd: Path | None = None) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(runs)], capture_output=True, text=True,
                          cwd=cwd, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_cli_import_and_help_load_no_heavy_library():
    assert _heavy_loaded([]) == []  # import boopexp.cli
    assert _heavy_loaded([["--help"]]) == []
    assert _heavy_loaded("ALL_HELP") == []  # every command's --help, in one interpreter


def test_status_loads_no_engine(tmp_path):
    (tmp_path / "demo.yaml").write_text(DEMO_CONFIG)
    config = load_config(tmp_path / "demo.yaml")
    run_plan(config, config.plan(), tmp_path / "results" / "demo", jobs=1, play=fake_play_game)
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


def import_graph() -> dict[str, set[str]]:
    """module -> the boopexp modules it imports, at top level or inside any function."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
    assert "boopexp.match" in graph["boopexp.calibrate"]  # the graph sees function-level imports too
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_engine_free_modules_import_no_engine_module():
    """The game contract, config, store and report read and write records without the engine."""
    graph = import_graph()
    engine = {"boopexp.match", "boopexp.mcts", "boopexp.rules", "boopexp.heuristic", "boopexp.objective"}

    def reach(m: str, seen: set[str]) -> set[str]:
        for d in graph[m] - seen:
            seen.add(d)
            reach(d, seen)
        return seen

    for m in ("boopexp.contract", "boopexp.config", "boopexp.store", "boopexp.report.tables"):
        assert not reach(m, set()) & engine, m
