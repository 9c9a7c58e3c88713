"""A before/after A/B of the engine's throughput: two checkouts' ``bench_engine.py``, interleaved.

    python benchmarks/ab.py BEFORE_CHECKOUT AFTER_CHECKOUT [--rounds 5] [--seconds 1] [--repeats 3] [--only NAME ...]

Each checkout runs its own ``benchmarks/bench_engine.py --json`` with its own ``.venv`` (so each
measures its own code), interleaved for ``--rounds`` rounds in ABBA order: an even round (the
first is round 0) runs before then after, an odd round after then before. The machine's drift
(other load, thermal state) so falls on both alike, and so does the slot bias: the second run of a
pair is systematically slower for some metrics (an A/A run, one checkout on both sides, showed
``random_plies_per_s`` at 0.95 with a fixed before-then-after order), so each side takes the first
slot in half of the rounds (use an even ``--rounds`` for an exact half). Prints, per metric, the
median of each side over the rounds and the ratio after / before (> 1: the after is faster);
``--json`` prints the same as one object. A change to shared kernels quotes this table (CONTRIBUTING.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path


def bench(checkout: Path, seconds: float, repeats: int, only: list[str] | None = None) -> dict[str, float]:
    """One ``bench_engine.py --json`` run of ``checkout`` with its own venv: metric -> rate
    (``only``: those metrics, ``bench_engine.py --only``)."""
    python = checkout / ".venv" / "bin" / "python"
    done = subprocess.run([str(python), str(checkout / "benchmarks" / "bench_engine.py"), "--json",
                           "--seconds", str(seconds), "--repeats", str(repeats), *(["--only", *only] if only else [])],
                          capture_output=True, text=True, cwd=checkout, check=True)
    report = json.loads(done.stdout)
    return {key: value for key, value in report.items() if key.endswith("_per_s")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path, help="the checkout before the change (with its .venv)")
    ap.add_argument("after", type=Path, help="the checkout after the change (with its .venv)")
    ap.add_argument("--rounds", type=int, default=5, help="A/B rounds, ABBA order (default 5; an even "
                                                            "number balances the order exactly)")
    ap.add_argument("--seconds", type=float, default=1.0, help="each timed run's duration (default 1.0)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per metric and bench run (default 3)")
    ap.add_argument("--only", nargs="+", help="only these measurements (bench_engine.py --only; e.g. to rerun the "
                                              "metrics a first A/B left in doubt)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for r in range(args.rounds):
        for side in (("before", "after") if r % 2 == 0 else ("after", "before")):  # ABBA: no slot bias
            runs[side].append(bench(getattr(args, side).resolve(), args.seconds, args.repeats, args.only))
            print(f"round {r + 1}/{args.rounds}: {side} done", file=sys.stderr)
    table = {}
    for metric in runs["before"][0]:
        before = statistics.median(run[metric] for run in runs["before"])
        after = statistics.median(run[metric] for run in runs["after"])
        table[metric] = {"before": before, "after": after, "ratio": after / before}
    if args.json:
        print(json.dumps({"rounds": args.rounds, "metrics": table}))
        return 0
    print(f"{'metric':36} {'before':>14} {'after':>14} {'ratio':>7}   (medians of {args.rounds} interleaved rounds)")
    for metric, row in table.items():
        print(f"{metric:36} {row['before']:>14,.0f} {row['after']:>14,.0f} {row['ratio']:>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
