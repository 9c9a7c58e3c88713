"""The paper's tables from raw game records: pandas aggregation, exact statistics, figures.

Data flow: ``records`` (games.jsonl → frames, dedup, selection) → ``tables`` (Table I, Table II,
telemetry, game length, pairwise) → ``render`` (Markdown, CSV, LaTeX) and ``figures`` (PNG, SVG),
driven by ``builder.build_report``. Reference numbers: ``paper``; statistics: ``stats``.
See docs/tables.md.

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
