"""Where ``boopexp tables`` reads and writes by default (light: ``--help`` shows them).

Where ``boopexp tables`` reads and writes by default (light: the CLI shows these in --help)."""

from __future__ import annotations

DEFAULT_RESULTS_DIRS: tuple[str, ...] = ("results/ablation", "results/mirror")
DEFAULT_OUT_DIR = "results/tables"
