"""The host's limits (docs/protocol.md, issue 25's goals): what a hung engine costs its game beyond
``move_timeout_s`` (goal <= 1 s), and that games against a crashing engine leave no process.

Run: .venv/bin/python benchmarks/btp_limits.py [HUNG_GAMES] [CRASH_GAMES]   (defaults 5 and 100)

The engines and games are those of tests/test_btp_host.py (its helpers, imported): one engine
answers the handshake and then sleeps through ``go``; the other starts a child that would sleep
for ten minutes, and exits.
"""
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_btp_host import _engine, _game, _marked, _script  # type: ignore[import-not-found]  # noqa: E402  (tests/ is not a package)

from boopexp.agents.specs import resolve_agent  # noqa: E402

MOVE_TIMEOUT_S = 1.0

hung_games = int(sys.argv[1]) if len(sys.argv) > 1 else 5
crash_games = int(sys.argv[2]) if len(sys.argv) > 2 else 100
random = resolve_agent("random")
with tempfile.TemporaryDirectory() as folder:
    _game(_engine(_script(Path(folder), "print('bestmove c3', flush=True)", "warm.py")), random)  # imports
    hung = _engine(_script(Path(folder), "time.sleep(600)", "hung.py"), move_timeout_s=MOVE_TIMEOUT_S)
    extra = []
    for seed in range(hung_games):
        start = time.monotonic()
        record = _game(hung, random, seed=seed)
        extra.append(time.monotonic() - start - MOVE_TIMEOUT_S)
        assert record["termination"] == "agent_error", record
    print(f"hung engine, move_timeout_s {MOVE_TIMEOUT_S:g}: the game took move_timeout_s + "
          f"{statistics.median(extra):.3f} s (median of {hung_games}; max + {max(extra):.3f} s; the engine's start, "
          "handshake, timeout and kill)")
    marker = f"boopexp-stray-{os.getpid()}"
    crash = _engine(_script(Path(folder), f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', "
                                          f"'{marker}'])\nos._exit(1)", "crash.py"))
    start = time.monotonic()
    forfeits = sum(_game(crash, random, seed=seed)["termination"] == "agent_error" for seed in range(crash_games))
    left = _marked(marker) + _marked(str(Path(folder) / "crash.py"))
    print(f"crashing engine: {forfeits} of {crash_games} games forfeited in {time.monotonic() - start:.1f} s; "
          f"processes left behind: {len(left)}")
