"""The built wheel installs and runs with no checkout on the path (``make dist``; issue 38).

The wheel is built from the files git tracks (a copy of them, so nothing is written into the
checkout), installed into a fresh virtual environment, and run from a temporary folder with
``python -I`` (no current folder, no ``PYTHONPATH``): it plays a game, runs a two-game config,
answers ``serve --help`` and renders the web pages from its own templates and static files, and
an ``engine`` answers the btp handshake and a search. A file the package needs at run time but
package-data leaves out fails here, and so does any file of ``boopexp/`` left out of the wheel.

Cheap by design: the new environment has no pip and no dependencies of its own. The wheel is
installed by this environment's pip (``--python``, ``--no-deps``), and the new environment reads
the locked dependencies from this one's site-packages through a ``.pth`` line, appended after its
own site-packages, so its ``boopexp`` is the wheel's (checked: ``boopexp.__file__``). The first game
compiles the few kernels of the random agent into the new environment (numba, ~20 s of CPU).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
#: what the wheel's build reads besides the package
BUILD_FILES = ("pyproject.toml", "README.md")
#: files of boopexp/ that are not the package's (the build and numba write them)
NOT_SHIPPED = ("__pycache__", ".nbi", ".nbc", ".pyc")
#: generous bounds for a busy 2-core machine: the build, the first game (it compiles), a command
BUILD_TIMEOUT, COMPILE_TIMEOUT, COMMAND_TIMEOUT = 300, 900, 300


def _tracked_package_files() -> list[str]:
    """The files of boopexp/ git tracks (every file there but caches, without git)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "boopexp"], cwd=ROOT, capture_output=True, check=True)
        files = [f for f in out.stdout.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = [p.relative_to(ROOT).as_posix() for p in (ROOT / "boopexp").rglob("*") if p.is_file()]
    return sorted(f for f in files if not any(part in f for part in NOT_SHIPPED) and (ROOT / f).is_file())


def _build_wheel(source: Path, out: Path) -> Path:
    """``make dist``'s build (``python -m build --no-isolation``) of the wheel alone, from ``source``."""
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out), str(source)],
                   check=True, capture_output=True, timeout=BUILD_TIMEOUT)
    (wheel,) = out.glob("boopexp-*.whl")
    return wheel


class Installed:
    """A fresh virtual environment holding the wheel; commands run in ``cwd`` with ``python -I``."""

    def __init__(self, venv: Path, cwd: Path):
        self.venv, self.cwd = venv, cwd
        self.python = venv / "bin" / "python"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}

    def run(self, *args: str, timeout: float = COMMAND_TIMEOUT, stdin: str | None = None,
            command: str | None = None) -> subprocess.CompletedProcess:
        """``python -I -m boopexp ARGS`` (or ``python -I -c COMMAND``); fails with its output."""
        argv = [str(self.python), "-I", *(["-c", command] if command else ["-m", "boopexp", *args])]
        return self._checked(argv, subprocess.run(argv, cwd=self.cwd, env=self.env, input=stdin, capture_output=True,
                                                  text=True, timeout=timeout))

    def script(self, *args: str) -> subprocess.CompletedProcess:
        """The wheel's ``boopexp`` console script (its entry point) with ``ARGS``."""
        argv = [str(self.venv / "bin" / "boopexp"), *args]
        return self._checked(argv, subprocess.run(argv, cwd=self.cwd, env=self.env, capture_output=True, text=True,
                                                  timeout=COMMAND_TIMEOUT))

    @staticmethod
    def _checked(argv: list[str], done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
        assert done.returncode == 0, (argv, done.returncode, done.stdout[-2000:], done.stderr[-2000:])
        return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in [*BUILD_FILES, *_tracked_package_files()]:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    return _build_wheel(source, tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory) -> Installed:
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=COMMAND_TIMEOUT)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "--quiet", str(wheel)], check=True, timeout=COMMAND_TIMEOUT)
    purelib = subprocess.run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # this environment's packages (the locked dependencies) after the new one's own: the wheel's
    # boopexp comes first; this environment's editable boopexp is a .pth of its own, not read here
    (Path(purelib) / "zz_locked_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return Installed(venv, tmp_path_factory.mktemp("cwd"))


def test_the_wheel_holds_every_file_of_the_package(wheel: Path):
    shipped = set(zipfile.ZipFile(wheel).namelist())
    missing = [f for f in _tracked_package_files() if f not in shipped]
    assert not missing, f"not in the wheel (pyproject.toml's package-data): {missing}"
    assert "boopexp/py.typed" in shipped  # a user's mypy reads boopexp's types


def test_the_installed_package_is_the_wheel_s_and_imports_no_numba(installed: Installed):
    """Issue 38's bar: the wheel's ``boopexp.load_games`` reads the committed Table I store (800
    games) and loads no numba."""
    out = installed.run(command=textwrap.dedent(f"""
        import json, sys
        import boopexp
        from boopexp.analysis.paper import table1_reference
        games = boopexp.load_games({str(ROOT / "results" / "ablation")!r})
        print(json.dumps({{"file": boopexp.__file__, "numba": "numba" in sys.modules, "games": len(games),
                          "table1": len(table1_reference()), "path": sys.path}}))
    """)).stdout
    found = json.loads(out)
    assert Path(found["file"]).is_relative_to(installed.venv), found["file"]
    assert not found["numba"] and found["table1"] > 0 and found["games"] == 800
    assert not any(Path(p).resolve() == ROOT for p in found["path"] if p)


def test_the_installed_wheel_plays_a_game(installed: Installed):
    out = installed.run("game", "--p1", "random", "--p2", "random", "--seed", "3", "--json", timeout=COMPILE_TIMEOUT)
    record = json.loads(out.stdout)
    assert record["plies"] == len(record["moves"]) > 0 and record["termination"] == "victory"


def test_the_installed_wheel_runs_a_two_game_config_and_serves_its_pages(installed: Installed):
    (installed.cwd / "two.yaml").write_text(
        "name: two\nseed: 5\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 2}\n"
        "pairings:\n  - [random, random]\n")
    installed.run("run", "two.yaml", "--out", "results/two", "--jobs", "1", timeout=COMPILE_TIMEOUT)
    (store,) = json.loads(installed.run("status", "results/two", "--json").stdout)
    assert [(p["pairing"], p["planned"], p["done"]) for p in store["pairings"]] == [("random vs random", 2, 2)]
    assert "--port" in installed.script("serve", "--help").stdout
    # the web app from the wheel's templates and static files, over the store just played
    pages = installed.run(command=textwrap.dedent("""
        from fastapi.testclient import TestClient
        from boopexp.interfaces.web.app import create_app
        client = TestClient(create_app("results", warm=False))
        for url in ("/", "/store?store=two", "/play", "/static/style.css", "/static/board.js"):
            response = client.get(url)
            print(url, response.status_code, len(response.text))
    """)).stdout.splitlines()
    assert len(pages) == 5 and all(line.split()[1] == "200" and int(line.split()[2]) > 100 for line in pages), pages


def test_the_installed_wheel_is_a_btp_engine(installed: Installed):
    out = installed.run("engine", "--agent", "random",
                        stdin="btp\nisready\nnewgame seed 1 side p1\nposition startpos\ngo iterations 1\nquit\n",
                        timeout=COMPILE_TIMEOUT).stdout.splitlines()
    assert out[0].startswith("id name boopexp") and "btpok" in out and "readyok" in out, out
    assert out[-1].startswith("bestmove "), out
