"""The host's limits (docs/protocol.md, issue 25's goals): what a hung engine costs its game beyond
``move_timeout_s`` (goal <= 1 s), and that games against a crashing engine leave no process.

Run: .venv/bin/python benchmarks/btp_limits.py [HUNG_GAMES] [CRASH_GAMES]   (defaults 5 and 100)

The engines are the misbehaving scripts of tests/test_btp_host.py: one answers the handshake and
then sleeps through ``go``; the other starts a child that would sleep for ten minutes and exits.
"""
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.play.contract import GameTask
from boopexp.play.match import play_game

MOVE_TIMEOUT_S = 1.0

def script(folder, body, name):
    path = Path(folder) / name
    path.write_text("import sys, time, os, subprocess\nfor line in sys.stdin:\n    w = line.split()\n"
                    "    if w[:1] == ['btp']: print('btpok', flush=True)\n    elif w[:1] == ['quit']: break\n"
                    "    elif w[:1] == ['go']:\n" + textwrap.indent(body, " " * 8) + "\n")
    return AgentSpec(name="bot", kind="engine", engine=(sys.executable, str(path)), options={},
                     move_timeout_s=MOVE_TIMEOUT_S)

def game(engine, seed):
    task = GameTask("t", "ab" * 8, "bot vs random", 0, engine, resolve_agent("random"),
                    Budget(mode="iterations", iterations=1), "code-0.6.2", seed)
    return dict(play_game(task))

def marked(marker):
    out = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                out.append(int(pid))
        except OSError:
            pass
    return out

hung_games = int(sys.argv[1]) if len(sys.argv) > 1 else 5
crash_games = int(sys.argv[2]) if len(sys.argv) > 2 else 100
with tempfile.TemporaryDirectory() as folder:
    game(script(folder, "print('bestmove c3', flush=True)", "warm.py"), 0)  # the imports, before timing
    hung = script(folder, "time.sleep(600)", "hung.py")
    extra = []
    for seed in range(hung_games):
        start = time.monotonic()
        record = game(hung, seed)
        extra.append(time.monotonic() - start - MOVE_TIMEOUT_S)
        assert record["termination"] == "agent_error", record
    print(f"hung engine, move_timeout_s {MOVE_TIMEOUT_S:g}: the game took move_timeout_s + "
          f"{statistics.median(extra):.3f} s (median of {hung_games}; max + {max(extra):.3f} s; the engine's start, "
          "handshake, timeout and kill)")
    marker = f"boopexp-stray-{os.getpid()}"
    crash = script(folder, f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'])\n"
                           "os._exit(1)", "crash.py")
    start = time.monotonic()
    forfeits = sum(game(crash, seed)["termination"] == "agent_error" for seed in range(crash_games))
    left = marked(marker) + marked(str(Path(folder) / "crash.py"))
    print(f"crashing engine: {forfeits} of {crash_games} games forfeited in {time.monotonic() - start:.1f} s; "
          f"processes left behind: {len(left)}")
