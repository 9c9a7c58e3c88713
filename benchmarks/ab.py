"""A before/after A/B of the engine's throughput: two checkouts' bench metrics, interleaved, paired.

    python benchmarks/ab.py BEFORE_CHECKOUT AFTER_CHECKOUT [--rounds 20] [--seconds 1] [--restart 5]
                            [--only NAME ...] [--cpu N] [--json]

Each checkout measures its own code with its own ``.venv``: a long-lived worker process per side
builds the bench's position sample once (``boopexp.interfaces.bench.BenchContext``), runs every
metric once untimed (compilation), then times one metric at a time on request, exactly as
``boopexp bench`` does (``run_bench(seconds, 1, [name], ctx=ctx)``: calibrated, process CPU time).

The two sides are interleaved **per metric and round in ABBA order**: in an even round (the first
is round 0) the before side is timed first, in an odd round the after side. The machine's drift
falls on both alike, and so does the slot bias (an A/A run with a fixed before-then-after order
read ``random_plies_per_s`` at 0.95). Both workers are restarted every ``--restart`` rounds, so a
lucky or unlucky memory layout of one process does not decide the result.

Each round gives one **paired ratio** per metric (after / before, the two timings made back to
back; ``--cpu N`` pins both workers to one CPU, which they take in turns). The table prints, per
metric, the median of each side, the median of the paired ratios and its 95% interval
(``scipy.stats.bootstrap``, percentile, seeded): an interval above 0.97 says the after side is not
3% slower on this machine; an interval that holds 0.97 says the rounds cannot tell. An A/A run
(one checkout on both sides) shows the machine's own spread. A change to
shared kernels quotes this table (CONTRIBUTING.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

#: The worker each side runs in its own venv: one line in (a metric name), one rate out.
WORKER = r"""
import json, os, sys
cpu, seconds, names = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
if cpu >= 0:
    os.sched_setaffinity(0, {cpu})
from boopexp.interfaces.bench import METRICS, BenchContext, run_bench
names = names or list(METRICS)
ctx = BenchContext()
for name in names:
    run_bench(min(seconds, 0.2), 1, [name], ctx=ctx)
print(json.dumps(names), flush=True)
for line in sys.stdin:
    name = line.strip()
    print(json.dumps(run_bench(seconds, 1, [name], ctx=ctx)[name]), flush=True)
"""

#: Seed of the bootstrap of the paired ratios' median (the interval rebuilds exactly).
SEED = 2026


class Side:
    """One checkout's worker process."""

    def __init__(self, checkout: Path, seconds: float, only: list[str] | None, cpu: int = -1) -> None:
        self.checkout, self.seconds, self.only, self.cpu = checkout, seconds, only, cpu
        self.proc: subprocess.Popen[str] | None = None
        self.names: list[str] = []

    def start(self) -> None:
        self.stop()
        python = self.checkout / ".venv" / "bin" / "python"
        self.proc = subprocess.Popen([str(python), "-c", WORKER, str(self.cpu), str(self.seconds), *(self.only or [])],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=self.checkout)
        self.names = json.loads(self._line())

    def _line(self) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"ab.py: the worker of {self.checkout} exited (code {self.proc.wait()})")
        return line

    def measure(self, name: str) -> float:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        return float(json.loads(self._line()))

    def stop(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


def median_interval(ratios: list[float]) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the median of some paired ratios."""
    from scipy.stats import bootstrap

    if len(ratios) < 3 or len(set(ratios)) == 1:
        return (float("nan"), float("nan"))
    res = bootstrap((np.asarray(ratios),), np.median, method="percentile", n_resamples=9999,
                    random_state=np.random.default_rng(SEED))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path, help="the checkout before the change (with its .venv)")
    ap.add_argument("after", type=Path, help="the checkout after the change (with its .venv)")
    ap.add_argument("--rounds", type=int, default=20, help="rounds, ABBA order (default 20; an even "
                                                             "number balances the order exactly)")
    ap.add_argument("--seconds", type=float, default=1.0, help="each timed run's duration (default 1.0)")
    ap.add_argument("--restart", type=int, default=5, help="restart both workers every N rounds (default 5)")
    ap.add_argument("--only", nargs="+", help="only these metrics (bench_engine.py --only's names)")
    ap.add_argument("--cpu", type=int, default=-1, help="pin both workers to this CPU (they take turns; "
                                                        "default: not pinned)")
    ap.add_argument("--json", action="store_true", help="print one JSON object, every round's values too")
    args = ap.parse_args(argv)
    sides = {"before": Side(args.before.resolve(), args.seconds, args.only, args.cpu),
             "after": Side(args.after.resolve(), args.seconds, args.only, args.cpu)}
    runs: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    try:
        for r in range(args.rounds):
            if r % max(1, args.restart) == 0:
                for side in sides.values():
                    side.start()
                if sides["before"].names != sides["after"].names:
                    raise SystemExit(f"ab.py: the sides measure different metrics: {sides['before'].names} "
                                     f"and {sides['after'].names}")
            order = ("before", "after") if r % 2 == 0 else ("after", "before")  # ABBA: no slot bias
            for name in sides["before"].names:
                for which in order:
                    runs[which].setdefault(name, []).append(sides[which].measure(name))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    finally:
        for side in sides.values():
            side.stop()
    table: dict[str, dict[str, Any]] = {}
    for name in runs["before"]:
        before, after = runs["before"][name], runs["after"][name]
        ratios = [a / b for a, b in zip(after, before)]
        low, high = median_interval(ratios)
        table[name] = {"before": statistics.median(before), "after": statistics.median(after),
                       "ratio": statistics.median(ratios), "ratio_ci": [low, high],
                       "runs": {"before": before, "after": after}}
    if args.json:
        print(json.dumps({"rounds": args.rounds, "seconds": args.seconds, "metrics": table}))
        return 0
    print(f"{'metric':32} {'before':>13} {'after':>13} {'ratio':>7}  {'95% interval':>15}   "
          f"(medians of {args.rounds} paired rounds)")
    for name, row in table.items():
        low, high = row["ratio_ci"]
        print(f"{name:32} {row['before']:>13,.0f} {row['after']:>13,.0f} {row['ratio']:>7.3f}  "
              f"[{low:.3f}, {high:.3f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
