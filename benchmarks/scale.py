"""Store scale: wall, CPU and peak memory of the commands that read a store, on synthetic stores
of 10k and 100k games (1M with ``--million``) built from the committed study's real records.

    python benchmarks/scale.py [--sizes 10000 100000] [--million] [--work DIR] [--keep] [--json FILE]

The records are those of ``results/robustness/d1`` (72 pairings x 100 games of the round robin,
device-mode MCTS games, real moves and telemetry); copy c of a game gets ``game_index`` + 100 c,
so every game of the synthetic store has its own identity under d1's settings and plan
(``configs/robustness-d1.yaml`` with ``--games-per-side G``: 72 G games). Only ``game_index``
changes (the seed is not recomputed: these games are for reading, not for replaying).

Each size is built as a live log (``games.jsonl``), then measured, one command after the other,
each in a child process whose own resource usage is read with ``os.wait4``:

* ``seal``: moves the log into a sealed segment (the form stores are kept in);
* ``status``: the counts per pairing;
* ``resume``: ``run`` with nothing left to play (the store scan of a resumed run);
* ``dry-run``: ``run --dry-run`` (the plan against the store);
* ``tables``, ``ratings``: the analyses, into folders under the work folder.

Results go to stdout as a Markdown table (docs/cluster.md, "Scale"). The 1M store takes about
3.5 GB of disk as a live log and several minutes per command: hence ``--million``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "results" / "robustness" / "d1"
CONFIG = ROOT / "configs" / "robustness-d1.yaml"
#: Games per pairing side in the source store (indices 0..99 of each of its 72 pairings).
SOURCE_GAMES = 100
INDEX = re.compile(rb'"game_index":(\d+),')


def build_store(folder: Path, games: int) -> int:
    """Write a store of at least ``games`` games (72 pairings x G) as a live log; returns G."""
    lines = gzip.decompress((SOURCE / "games-0001.jsonl.gz").read_bytes()).splitlines(keepends=True)
    pairings = len(lines) // SOURCE_GAMES
    per_pairing = math.ceil(games / pairings)
    folder.mkdir(parents=True)
    config = (SOURCE / "config.yaml").read_text()
    config = config.replace(f"games_per_side: {SOURCE_GAMES}\n", f"games_per_side: {per_pairing}\n")
    config = config.replace(f"  games: {SOURCE_GAMES}\n", f"  games: {per_pairing}\n")
    (folder / "config.yaml").write_text(config)
    with open(folder / "games.jsonl", "wb") as out:
        for copy in range(math.ceil(per_pairing / SOURCE_GAMES)):
            shift = copy * SOURCE_GAMES
            chunk = []
            for line in lines:
                m = INDEX.search(line)
                assert m is not None
                index = int(m.group(1)) + shift
                if index < per_pairing:
                    chunk.append(line[: m.start(1)] + str(index).encode() + line[m.end(1):])
            out.write(b"".join(chunk))
    return per_pairing


def measure(argv: list[str], cwd: Path) -> dict[str, float]:
    """Run ``python -m boopexp ARGV`` in a child; its wall time, CPU time and peak RSS."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "boopexp", *argv], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        print(f"  {' '.join(argv[:1])}: exit {proc.returncode}: {tail[0]}", file=sys.stderr)
    return {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_gb": round(usage.ru_maxrss / 2**20, 3), "exit": proc.returncode}


def bench_size(work: Path, games: int) -> dict[str, dict[str, float]]:
    folder = work / f"store-{games}"
    if folder.exists():
        shutil.rmtree(folder)
    t0 = time.perf_counter()
    per_pairing = build_store(folder, games)
    print(f"{games}: built {folder} ({72 * per_pairing} games) in {time.perf_counter() - t0:.0f} s",
          file=sys.stderr)
    run = ["run", str(CONFIG), "--out", str(folder), "--games-per-side", str(per_pairing), "--jobs", "1", "--quiet"]
    commands = {
        "seal": ["seal", str(folder)],
        "status": ["status", str(folder)],
        "resume": run,
        "dry-run": [*run, "--dry-run"],
        "tables": ["tables", str(folder), "--out", str(work / f"tables-{games}"), "--brief"],
        "ratings": ["ratings", str(folder), "--out", str(work / f"ratings-{games}")],
    }
    out = {}
    for name, argv in commands.items():
        out[name] = measure(argv, ROOT)
        print(f"{games}: {name}: {out[name]}", file=sys.stderr)
    store_bytes = sum(p.stat().st_size for p in folder.iterdir() if p.name.startswith(("games", "summary-")))
    out["store"] = {"games": 72 * per_pairing, "bytes": store_bytes,
                    "bytes_per_game": round(store_bytes / (72 * per_pairing))}
    return out


def table(results: dict[int, dict[str, dict[str, float]]]) -> str:
    sizes = sorted(results)
    head = "| command | " + " | ".join(f"{results[n]['store']['games']:,} games" for n in sizes) + " |"
    rows = [head, "|---" * (len(sizes) + 1) + "|"]
    for name in ("seal", "status", "resume", "dry-run", "tables", "ratings"):
        cells = []
        for n in sizes:
            m = results[n][name]
            bad = "" if m["exit"] == 0 else f" (exit {m['exit']})"
            cells.append(f"{m['wall_s']:.1f} s, {m['cpu_s']:.1f} s CPU, {m['peak_rss_gb']:.2f} GB{bad}")
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    rows.append("| bytes per stored game | " + " | ".join(str(results[n]["store"]["bytes_per_game"]) for n in sizes)
                + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="store sizes (games)")
    ap.add_argument("--million", action="store_true", help="also 1,000,000 games (long; ~3.5 GB of disk)")
    ap.add_argument("--work", type=Path, help="folder for the stores (default: a temporary one, removed)")
    ap.add_argument("--keep", action="store_true", help="keep the stores")
    ap.add_argument("--json", type=Path, help="also write the measurements to this file")
    args = ap.parse_args(argv)
    sizes = [*args.sizes, *([1_000_000] if args.million else [])]
    work = args.work or Path(tempfile.mkdtemp(prefix="boopexp-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results = {}
    try:
        for n in sizes:
            results[n] = bench_size(work, n)
            if not args.keep:
                shutil.rmtree(work / f"store-{n}")
    finally:
        if args.json:
            args.json.write_text(json.dumps({str(k): v for k, v in results.items()}, indent=1) + "\n")
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
