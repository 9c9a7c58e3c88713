"""``boopexp warmup`` and compiling only what a run needs (issue 22, docs/cluster.md "Compile once")."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from numba.core.registry import CPUDispatcher

from boopexp.agents.specs import AGENT_KINDS, AGENT_NAMES, resolve_agent
from boopexp.interfaces.cli import main
from boopexp.play import warmup

_ENGINE_MODULES = ("rules", "objective", "mcts", "heuristic", "lookahead", "rng", "alphabeta")


def test_the_kernels_named_for_each_kind_are_the_engine_s_compiled_kernels():
    assert set(warmup.KERNELS) == {"game", *AGENT_KINDS}
    for kind, kernels in warmup.KERNELS.items():
        for module, name in kernels:
            kernel = getattr(importlib.import_module(f"boopexp.engine.{module}"), name)
            assert isinstance(kernel, CPUDispatcher), (kind, module, name)


@pytest.fixture(scope="module")
def warm_cache() -> None:
    """Every kind's kernels compiled into numba's on-disk cache once, in a process of its own: a
    process that compiles a kernel also compiles the njit kernels it calls (each then has a form
    in that process), one that loads it from the cache does not, so what :func:`_after` counts is
    only defined on a warm cache (on a fresh machine's cold cache it was not)."""
    subprocess.run([sys.executable, "-c", "import sys\nfrom boopexp.play import match\n"
                    "match.compile_kernels(sys.argv[1:])", *AGENT_KINDS], check=True)


def _after(kinds: list[str]) -> dict:
    """compile_kernels(kinds) in a fresh process (the kernels load from the cache): how many
    compiled forms each kernel of warmup.KERNELS then has in that process, and the signatures of
    every engine kernel called from Python that take a read-only array."""
    code = ("import importlib, json, sys\n"
            "from numba import types\n"
            "from numba.core.registry import CPUDispatcher\n"
            "from boopexp.engine.jit import InnerKernel\n"
            "from boopexp.play import match, warmup\n"
            "match.compile_kernels(sys.argv[2:])\n"
            "mods = [importlib.import_module(f'boopexp.engine.{m}') for m in sys.argv[1].split(',')]\n"
            "print(json.dumps({'overloads': {f'{m}.{n}': len(getattr(importlib.import_module(f'boopexp.engine.{m}'), n)"
            ".overloads) for k in warmup.KERNELS.values() for m, n in k},\n"
            " 'read_only': [f'{d.__name__}{s}' for mod in mods for d in vars(mod).values()"
            " if isinstance(d, CPUDispatcher) for s in d.signatures if any(isinstance(a, types.Array)"
            " and not a.mutable for a in s)],\n"
            " 'twins': sorted(f'{mod.__name__}.{n}' for mod in mods for n, d in vars(mod).items()"
            " if isinstance(d, InnerKernel) and d._twin is not None)}))")
    out = subprocess.run([sys.executable, "-c", code, ",".join(_ENGINE_MODULES), *kinds], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("kind", AGENT_KINDS)
def test_a_kind_compiles_its_kernels_once_each_and_no_other_kind_s(kind, warm_cache):
    """What compile_kernels calls is what warmup.KERNELS names (engine_is_compiled looks for
    those): a run of random agents compiles no search and no solver."""
    overloads = _after([kind])["overloads"]
    own = {f"{m}.{n}" for m, n in warmup.kernels_of([kind])}
    assert {name for name, n in overloads.items() if n} == own, overloads
    assert all(overloads[name] == 1 for name in own), overloads  # one specialisation each


def test_the_position_api_shares_the_players_kernels(warm_cache):
    """A plugin's Position passed its read-only state to the kernels: numba compiled the engine
    a second time for read-only arrays (~10 s of CPU on a cold cache)."""
    after = _after(list(AGENT_KINDS))
    assert after["read_only"] == []
    assert set(after["overloads"].values()) == {1}
    # no game calls an inner kernel from Python (that would compile its twin: boopexp.engine.jit)
    assert after["twins"] == []


def test_an_inner_kernel_is_compiled_without_a_python_wrapper_and_python_calls_its_twin(tmp_path):
    """boopexp.engine.jit: a kernel only other kernels call has no Python wrapper (~40 of them
    were ~1.6 s of a cold first game); called from Python it runs a twin that has one."""
    from boopexp.engine import rng
    from boopexp.engine.jit import InnerKernel

    assert isinstance(rng.rand_below, InnerKernel) and isinstance(rng.shuffle_prefix, InnerKernel)
    code = ("import numpy as np\n"
            "from boopexp.engine import rng\n"
            "from boopexp.engine.rules import random_move\n"
            "from boopexp.engine.buffers import new_work\n"
            "from boopexp.engine.state import initial_state\n"
            "w = new_work()\n"
            "random_move(initial_state(), w.mask, rng.new_rng_state(0), w.squares)\n"  # compiles rand_below
            "compiled = rng.rand_below.overloads.values()\n"
            "wrappers = [r.library.get_pointer_to_function(r.fndesc.llvm_cpython_wrapper_name) for r in compiled]\n"
            "print(len(compiled) > 0 and not any(wrappers), rng.rand_below._twin)\n"
            "a, b = rng.new_rng_state(7), rng.new_rng_state(7)\n"
            "drawn = [rng.rand_below(a, 10) for _ in range(20)]\n"
            "expected = [(int(rng.next_u64(b)) >> 32) * 10 >> 32 for _ in range(20)]\n"
            "print(rng.rand_below._twin.py_func.__qualname__, drawn == expected)\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}  # an empty cache: the kernels are compiled
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "None", "rand_below__python", "True"], out


def _search_signatures(searches: list[str]) -> list[str]:
    """compile_kernels(["mcts"], the MCTS configurations of these agents, each ``name`` or
    ``name:parameter=integer``) in a fresh process: the feature switches (co_lookahead, prior,
    solver, the reports') of each compiled form of run_iterations."""
    code = ("import sys\n"
            "from boopexp.agents.specs import resolve_agent\n"
            "from boopexp.engine import mcts\n"
            "from boopexp.play import match\n"
            "def cfg(arg):\n"
            "    name, _, option = arg.partition(':')\n"
            "    key, _, value = option.partition('=')\n"
            "    return resolve_agent(name, overrides={key: int(value)} if option else None).mcts\n"
            "match.compile_kernels(['mcts'], [cfg(arg) for arg in sys.argv[1:]])\n"
            "for sig in mcts.run_iterations.signatures: print(' '.join(str(t) for t in sig[-4:]))\n")
    out = subprocess.run([sys.executable, "-c", code, *searches], capture_output=True, text=True, check=True).stdout
    return sorted(out.splitlines())


def test_a_search_compiles_only_the_features_its_agents_use():
    """The paper's agents switch off co_lookahead, prior, solver and the reports' options: their
    search is compiled without that code (docs/cluster.md "Compile once"); an agent that uses one
    adds its form."""
    off = "Tuple() Tuple() Tuple() Tuple()"
    on = "UniTuple(int64 x 1)"
    assert _search_signatures([]) == [off]
    assert _search_signatures(["vanilla", "mcts+S", "mcts-co"]) == [off]
    assert _search_signatures(["mcts-co2", "mcts-solver"]) == sorted(
        [off, f"{on} Tuple() Tuple() Tuple()", f"Tuple() Tuple() {on} Tuple()"])
    assert _search_signatures(["vanilla:terminal_check=2"]) == sorted([off, f"Tuple() Tuple() Tuple() {on}"])
    assert warmup.agent_searches(["plugin", "random", "mcts-prior"]) == (resolve_agent("mcts-prior").mcts,)


def test_agent_kinds_takes_agent_names_and_plugin():
    assert warmup.agent_kinds(["random", "mcts-co", "vanilla", "plugin"]) == ("mcts", "random", "plugin")
    assert warmup.agent_kinds([" heuristics"]) == ("heuristics",)


def test_warmup_names_an_unknown_agent_in_one_line():
    result = CliRunner().invoke(main, ["warmup", "--agents", "random,mcst"])
    assert result.exit_code == 2
    assert result.stderr == f"Error: --agents 'mcst' is not an agent: use {', '.join(AGENT_NAMES)} or plugin\n"
    assert "vanilla, mcts+S," in result.stderr


@pytest.mark.slow
def test_warmup_fills_numba_cache_dir_once_and_only_for_the_agents_named(tmp_path, monkeypatch):
    """A cold cache in $NUMBA_CACHE_DIR (the random agent's kernels only: a few seconds of CPU;
    test_user_mistakes.py's first run compiles the search): what a cluster does once."""
    cache = tmp_path / "numba-cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    assert not warmup.engine_is_compiled(["random"])

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "boopexp", "warmup", "--agents", "random"], env=env,
                              capture_output=True, text=True, timeout=600)

    first = run()
    assert first.returncode == 0, first.stderr
    assert first.stderr == warmup.COMPILING + "\n"
    where = first.stdout.rsplit(" ", 1)[-1].strip()
    assert first.stdout.startswith("compiled 2 of the 2 kernels for random in ") and where.startswith(str(cache))
    assert {p.suffix for p in cache.rglob("*")} >= {".nbi", ".nbc"}
    assert warmup.engine_is_compiled(["random"]) and not warmup.engine_is_compiled(["random", "mcts"])
    again = run()
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert again.stdout == f"nothing to compile: the 2 kernels for random are in numba's cache {where}\n"
