"""Engine throughput: the measurements of ``boopexp bench`` as a plain script.

    python benchmarks/bench_engine.py [--json] [--seconds S] [--repeats N] [--only NAME ...]

Goals (issue): >= 1,000,000 objective evaluations/s and >= 30,000 solver calls/s on one core.
"""

from __future__ import annotations

import argparse
import json
import sys

from boopexp.interfaces.bench import METRICS, format_report, run_bench

GOALS = {"objective_per_s": 1_000_000, "solver_calls_per_s": 30_000}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--seconds", type=float, default=1.0, help="duration of each timed run (default 1.0)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per measurement (default 5)")
    ap.add_argument("--only", nargs="+", choices=sorted(METRICS), help="run only these measurements")
    args = ap.parse_args(argv)
    report = run_bench(args.seconds, args.repeats, names=args.only,
                       progress=None if args.json else (lambda n: print(f"measuring {n} ...", file=sys.stderr)))
    if args.json:
        print(json.dumps(report))
        return 0
    print(format_report(report))
    for name, goal in GOALS.items():
        if name in report:
            verdict = "meets" if report[name] >= goal else "BELOW"
            print(f"{name}: {report[name]:,.0f} {verdict} the goal of {goal:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
