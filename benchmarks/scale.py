"""Store scale: wall, CPU and peak memory of the commands that read a store, on synthetic stores
of 10k and 100k games (1M with ``--million``) built from the committed study's real records.

    python benchmarks/scale.py [--sizes 10000 100000] [--million] [--only CMD...] [--work DIR] [--keep] [--json FILE]

The records are those of ``results/robustness/d1`` (72 pairings x 100 games of the round robin,
device-mode MCTS games, real moves and telemetry); copy c of a game gets ``game_index`` + 100 c,
so every game of the synthetic store has its own identity under d1's settings and plan
(``configs/robustness-d1.yaml`` with ``--games-per-side G``: 72 G games). Only ``game_index``
changes (the seed is not recomputed: these games are for reading, not for replaying).

Each size is built as a live log (``games.jsonl``), then measured, one command after the other,
each in a child process whose own resource usage is read with ``os.wait4``:

* ``live-status``, ``live-resume``: ``status`` and a resumed ``run`` on the live log, before it is
  sealed (measured only when asked for: the log is first opened once by a writer, as a run
  appending to it would have, so that the log's outcome rows beside it are those a run writes);
* ``seal``: moves the log into a sealed segment (the form stores are kept in);
* ``status``: the counts per pairing;
* ``resume``: ``run`` with nothing left to play (the store scan of a resumed run);
* ``dry-run``: ``run --dry-run`` (the plan against the store);
* ``tables``, ``ratings``: the analyses, into folders under the work folder;
* ``load-games`` (and ``live-load-games``, before the store is sealed, measured only when asked
  for): the Python API's ``boopexp.load_games`` on the store (docs/python.md, "Speed");
* ``merge``: the same games built as two halves (every other game), each sealed, merged into a
  new folder (``merge A B --out C``: the merge of two shards);
* ``merge-twice``: the sealed store merged into a new folder with a sealed copy of itself whose
  records differ only in ``host_seconds`` (the same games played twice, e.g. a shard run twice
  into two folders): every game stored twice with other bytes, decoded and compared as games;
* ``seal-add``: 10 % more games (the next indices of every pairing) written to the sealed
  store's log and sealed (a store that grows by runs and seals).

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
HOST_SECONDS = re.compile(rb'"host_seconds":([0-9.]+)')
#: The rows of the table, in order (``merge``: the store as two sealed halves merged into a new
#: folder; ``merge-twice``: the store and a copy played again (other host timings) merged into a
#: new folder; ``seal-add``: 10 % more games sealed into the sealed store).
COMMANDS = ("live-status", "live-resume", "live-load-games", "seal", "status", "resume", "dry-run", "tables",
            "ratings", "load-games", "merge", "merge-twice", "seal-add")
#: ``load-games``, ``live-load-games``: the Python API's ``boopexp.load_games`` on the store (sealed,
#: or before it is sealed), in a child as the commands (docs/python.md, "Speed").
LOAD_GAMES = ["-c", "import sys, boopexp; print(len(boopexp.load_games(sys.argv[1])))"]


def build_store(folder: Path, games: int, part: tuple[int, int] = (0, 1), extra: int = 0,
                retimed: bool = False) -> int:
    """Write a store of at least ``games`` games (72 pairings x G) as a live log; returns G.

    ``part`` (k, n) keeps the k-th of every n games in writing order (n shards of one store);
    ``extra`` writes instead the indices G .. G + extra - 1 of every pairing (games a sealed store
    of G per pairing lacks); ``retimed`` adds one second to every game's ``host_seconds`` (the
    same games played again on a host of other timings: other bytes, the same games)."""
    lines = gzip.decompress((SOURCE / "games-0001.jsonl.gz").read_bytes()).splitlines(keepends=True)
    if retimed:
        lines = [HOST_SECONDS.sub(lambda m: b'"host_seconds":%.4f' % (float(m.group(1)) + 1), line, count=1)
                 for line in lines]
    pairings = len(lines) // SOURCE_GAMES
    per_pairing = math.ceil(games / pairings)
    first, last = (per_pairing, per_pairing + extra) if extra else (0, per_pairing)
    folder.mkdir(parents=True, exist_ok=bool(extra))
    config = (SOURCE / "config.yaml").read_text()
    config = config.replace(f"games_per_side: {SOURCE_GAMES}\n", f"games_per_side: {per_pairing}\n")
    config = config.replace(f"  games: {SOURCE_GAMES}\n", f"  games: {per_pairing}\n")
    if not extra:
        (folder / "config.yaml").write_text(config)
    written = 0
    with open(folder / "games.jsonl", "wb") as out:
        for copy in range(math.ceil(last / SOURCE_GAMES)):
            shift = copy * SOURCE_GAMES
            chunk = []
            for line in lines:
                m = INDEX.search(line)
                assert m is not None
                index = int(m.group(1)) + shift
                if first <= index < last:
                    if written % part[1] == part[0]:
                        chunk.append(line[: m.start(1)] + str(index).encode() + line[m.end(1):])
                    written += 1
            out.write(b"".join(chunk))
    return per_pairing


def measure(argv: list[str], cwd: Path) -> dict[str, float]:
    """Run ``python -m boopexp ARGV`` (``python -c CODE ...``: ARGV ``["-c", CODE, ...]``) in a
    child; its wall time, CPU time and peak RSS."""
    start = time.perf_counter()
    python = argv if argv[0] == "-c" else ["-m", "boopexp", *argv]
    proc = subprocess.Popen([sys.executable, *python], cwd=cwd,
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


def bench_size(work: Path, games: int, only: tuple[str, ...] = COMMANDS) -> dict[str, dict[str, float]]:
    folder = work / f"store-{games}"
    if folder.exists():
        shutil.rmtree(folder)
    t0 = time.perf_counter()
    per_pairing = build_store(folder, games)
    print(f"{games}: built {folder} ({72 * per_pairing} games) in {time.perf_counter() - t0:.0f} s",
          file=sys.stderr)
    run = ["run", str(CONFIG), "--out", str(folder), "--games-per-side", str(per_pairing), "--jobs", "1", "--quiet"]
    if {"live-status", "live-resume", "live-load-games"} & set(only):
        # What a run appending to the log leaves beside it (a writer opened and closed once).
        subprocess.run([sys.executable, "-c", "import sys; from boopexp.experiments.store import GameStore; "
                        "GameStore(sys.argv[1]).open().close()", str(folder)], cwd=ROOT, check=True)
    commands = {
        "live-status": ["status", str(folder)],
        "live-resume": run,
        "live-load-games": [*LOAD_GAMES, str(folder)],
        "seal": ["seal", str(folder)],
        "status": ["status", str(folder)],
        "resume": run,
        "dry-run": [*run, "--dry-run"],
        "tables": ["tables", str(folder), "--out", str(work / f"tables-{games}"), "--brief"],
        "ratings": ["ratings", str(folder), "--out", str(work / f"ratings-{games}")],
        "load-games": [*LOAD_GAMES, str(folder)],
    }
    out = {}
    for name, argv in commands.items():
        if name != "seal" and name not in only:  # the store is sealed in any case (after the live-*)
            continue
        out[name] = measure(argv, ROOT)
        print(f"{games}: {name}: {out[name]}", file=sys.stderr)
    store_bytes = sum(p.stat().st_size for p in folder.iterdir() if p.name.startswith(("games", "summary-")))
    out["store"] = {"games": 72 * per_pairing, "bytes": store_bytes,
                    "bytes_per_game": round(store_bytes / (72 * per_pairing))}
    # The same games as two sealed shards merged into a new folder, then (the store changes from
    # here on) 10 % more games added to the sealed store and sealed.
    halves = [work / f"half-{games}-{k}" for k in range(2)]
    for k, half in enumerate(halves if "merge" in only else []):
        shutil.rmtree(half, ignore_errors=True)
        build_store(half, games, part=(k, 2))
        subprocess.run([sys.executable, "-m", "boopexp", "seal", str(half)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    if "merge" in only:
        merged = work / f"merged-{games}"
        shutil.rmtree(merged, ignore_errors=True)
        out["merge"] = measure(["merge", *map(str, halves), "--out", str(merged)], ROOT)
        print(f"{games}: merge: {out['merge']}", file=sys.stderr)
        for path in [*halves, merged]:
            shutil.rmtree(path, ignore_errors=True)
    if "merge-twice" in only:
        again, merged = work / f"again-{games}", work / f"merged-twice-{games}"
        for path in (again, merged):
            shutil.rmtree(path, ignore_errors=True)
        build_store(again, games, retimed=True)
        subprocess.run([sys.executable, "-m", "boopexp", "seal", str(again)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        out["merge-twice"] = measure(["merge", str(folder), str(again), "--out", str(merged)], ROOT)
        print(f"{games}: merge-twice: {out['merge-twice']}", file=sys.stderr)
        for path in (again, merged):
            shutil.rmtree(path, ignore_errors=True)
    if "seal-add" in only:
        build_store(folder, games, extra=math.ceil(per_pairing / 10))
        out["seal-add"] = measure(["seal", str(folder)], ROOT)
        print(f"{games}: seal-add: {out['seal-add']}", file=sys.stderr)
    return out


def table(results: dict[int, dict[str, dict[str, float]]]) -> str:
    sizes = sorted(results)
    head = "| command | " + " | ".join(f"{results[n]['store']['games']:,} games" for n in sizes) + " |"
    rows = [head, "|---" * (len(sizes) + 1) + "|"]
    for name in [c for c in COMMANDS if all(c in results[n] for n in sizes)]:
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
    ap.add_argument("--only", nargs="+", choices=COMMANDS, default=[c for c in COMMANDS if not c.startswith("live-")],
                    help="measure only these commands (the store is sealed in any case)")
    args = ap.parse_args(argv)
    sizes = [*args.sizes, *([1_000_000] if args.million else [])]
    work = args.work or Path(tempfile.mkdtemp(prefix="boopexp-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results = {}
    try:
        for n in sizes:
            results[n] = bench_size(work, n, tuple(args.only))
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
