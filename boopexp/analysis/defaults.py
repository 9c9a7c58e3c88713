"""Where ``boopexp tables`` reads and writes by default (light: ``--help`` shows them)."""

from __future__ import annotations

DEFAULT_RESULTS_DIRS: tuple[str, ...] = ("results/ablation", "results/mirror")
DEFAULT_OUT_DIR = "results/tables"
