"""Results from the stored game records: tables, exact statistics, ratings and figures.

``boopexp tables`` (docs/tables.md): ``records`` (the stores → frames: dedup, planned settings,
selection; ``moves``, the per-move telemetry streamed) → the tables, each a ``Table`` of
``tables`` (with the cell formats and shared counts):
``paper_tables`` (Tables I, II and game length, against the paper's numbers in ``paper``),
``run_tables`` (pairwise, telemetry), ``sprt_table`` and ``sweep`` → ``render`` (Markdown, CSV,
LaTeX) and ``figures`` (PNG, SVG), driven by ``builder`` (``build_report``); ``defaults`` holds
where it reads and writes. Statistics: ``stats`` (Wilson, Fisher, Boschloo).

Ratings (``boopexp ratings``): ``ratings`` (the Bradley–Terry fit), ``ratings_bootstrap`` (its
bootstrap) and ``ratings_report`` (its files). The studies (``boopexp robustness``,
``boopexp knowledge``, docs/beyond.md) are a layer of their own above this one
(:mod:`boopexp.studies`).

The names below are loaded on first use (PEP 562), so that importing a light submodule such as
:mod:`boopexp.analysis.defaults` (the CLI's option defaults) does not load pandas or matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

from boopexp.analysis.defaults import DEFAULT_OUT_DIR, DEFAULT_RESULTS_DIRS

#: public name -> the submodule that defines it
_LAZY = {
    "Report": "builder",
    "build_report": "builder",
    "build_tables": "builder",
    "GameData": "records",
    "ReportWarning": "records",
    "load_results": "records",
    "read_games": "records",
    "boschloo_exact": "stats",
    "fisher_exact": "stats",
    "verdict": "stats",
    "wilson_interval": "stats",
}

__all__ = ["DEFAULT_OUT_DIR", "DEFAULT_RESULTS_DIRS", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"boopexp.analysis.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'boopexp.analysis' has no attribute {name!r}")
