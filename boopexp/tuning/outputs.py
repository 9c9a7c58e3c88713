"""Trials.csv, the figure, confirmed.yaml and the summary line.

What a tuning leaves in its folder: trials.csv, confirmation.csv, the figure, confirmed.yaml, summary.txt.

Everything here is rebuilt from the study's trials and the stores' games (a rerun of a finished
tuning plays nothing and rewrites the same files).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from boopexp.experiments.store import write_atomically
from boopexp.tuning.config import TuneConfig
from boopexp.tuning.confirm import ConfirmReport
from boopexp.tuning.search import SearchReport, TrialResult

TRIALS_CSV = "trials.csv"
CONFIRMATION_CSV = "confirmation.csv"
FIGURE_STEM = "tuning"
CONFIRMED_YAML = "confirmed.yaml"
SUMMARY_TXT = "summary.txt"
TUNE_YAML = "tune.yaml"


def tuned_name(config: TuneConfig, rank: int) -> str:
    """The variant name proposed for the ``rank``-th confirmed candidate: ``<agent>-tuned[-N]``."""
    return f"{config.agent}-tuned" if rank == 0 else f"{config.agent}-tuned-{rank + 1}"


def trials_rows(config: TuneConfig, trials: Sequence[TrialResult]) -> list[dict[str, Any]]:
    """One row per completed trial, with the best objective so far."""
    rows = []
    best = float("-inf")
    for t in trials:
        best = max(best, t.objective)
        g = t.games
        rows.append({
            "trial": t.slot,
            "optuna_number": t.number,
            **{p.name: t.params[p.name] for p in config.space},
            "games": g.done,
            "wins": g.wins,
            "losses": g.losses,
            "no_winner": g.no_winner,
            "objective": round(t.objective, 6),
            "best_so_far": round(best, 6),
        })
    return rows


def confirmation_rows(report: ConfirmReport) -> list[dict[str, Any]]:
    """One row per confirmed-or-not candidate."""
    return [
        {
            "trial": v.trial.slot,
            "agent": v.agent,
            "tuning_objective": round(v.trial.objective, 6),
            "games": v.games.done,
            "wins": v.games.wins,
            "losses": v.games.losses,
            "no_winner": v.games.no_winner,
            "score": round(v.games.score, 6),
            "p_value": v.p_value,
            "p_holm": v.p_holm,
            "confirmed": v.confirmed,
        }
        for v in report.verdicts
    ]


def confirmed_yaml(config: TuneConfig, report: ConfirmReport | None) -> str:
    """A ready-to-use ``agents:`` snippet with the confirmed candidates (comments say how they fared)."""
    c = config.confirm
    lines = [
        f"# boopexp tune {config.name}: candidates for {config.agent} re-played against {c.baseline},",
        f"# {c.games} fresh games each (both seats); one-sided exact binomial test on decided games, "
        f"Holm, alpha {c.alpha}.",
    ]
    agents: dict[str, Any] = {}
    if report is None or not report.verdicts:
        lines.append("# The confirmation stage has not run: nothing is confirmed.")
    else:
        for v in report.verdicts:
            g = v.games
            lines.append(
                f"# trial {v.trial.slot}: {g.wins}-{g.losses} ({g.score:.1%} of {g.decided} decided), "
                f"p = {v.p_value:.3g}, Holm p = {v.p_holm:.3g}: {'CONFIRMED' if v.confirmed else 'not confirmed'}"
            )
        for rank, v in enumerate(report.confirmed):
            agents[tuned_name(config, rank)] = config.variant(v.trial.params)
        if not agents:
            lines.append(f"# No candidate is confirmed: keep {c.baseline}.")
    body = yaml.safe_dump({"agents": agents}, sort_keys=False, default_flow_style=False)
    return "\n".join(lines) + "\n" + body


def summary_line(config: TuneConfig, search: SearchReport, confirm: ConfirmReport | None) -> str:
    """One line: trials, the best trial, and what the confirmation concluded."""
    best = search.best()
    head = f"tune {config.name}: {config.agent}, {len(search.trials)}/{config.trials} trials"
    if best is None:
        return head + "; no trial completed"
    head += (f"; best trial {best.slot} scored {best.objective:.3f} over {best.games.decided} decided games "
             f"({_params_text(best.params)})")
    if confirm is None or not confirm.verdicts:
        return head + "; not confirmed yet"
    winners = confirm.confirmed
    if not winners:
        return head + (f"; confirmation: none of {len(confirm.verdicts)} candidate(s) beats {confirm.baseline} "
                       "(no improvement)")
    v = winners[0]
    return head + (f"; confirmation: {len(winners)} of {len(confirm.verdicts)} candidate(s) beat {confirm.baseline}, "
                   f"best trial {v.trial.slot} {v.games.score:.1%} of {v.games.decided} decided, "
                   f"Holm p = {v.p_holm:.3g}"
                   f" -> {tuned_name(config, 0)} in {CONFIRMED_YAML}")


def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())


def search_figure(config: TuneConfig, search: SearchReport):
    """Objective per trial with the best so far; parameter importances beside it if Optuna gave them."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from boopexp.analysis import figures

    with matplotlib.rc_context(figures.STYLE):
        fig = Figure(figsize=(9.0, 4.0), dpi=figures.DPI, layout="constrained")
        FigureCanvasAgg(fig)
        importances = search.importances or {}  # None when Optuna could not rank the parameters
        with_importance = bool(importances)
        axes = fig.subplots(1, 2, width_ratios=[2, 1]) if with_importance else [fig.add_subplot()]
        ax = axes[0]
        x = [t.slot for t in search.trials]
        y = [t.objective for t in search.trials]
        best, running = [], float("-inf")
        for v in y:
            running = max(running, v)
            best.append(running)
        ax.scatter(x, y, s=14, color=figures.OURS_COLOUR, label="trial objective")
        ax.step(x, best, where="post", color=figures.PAPER_COLOUR, label="best so far")
        ax.axhline(0.5, color="0.7", linewidth=0.8, linestyle="--")
        ax.set_xlabel("trial")
        ax.set_ylabel(f"score of {config.agent} over decided games")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"Tuning {config.agent}: {config.games_per_trial} games per trial")
        ax.legend(loc="lower right")
        if with_importance:
            imp = sorted(importances.items(), key=lambda kv: kv[1])
            axes[1].barh([k for k, _ in imp], [v for _, v in imp], color=figures.OURS_COLOUR)
            axes[1].set_xlabel("importance (Optuna, PED-ANOVA)")
            axes[1].set_title("parameter importance")
    return fig


def write_outputs(config: TuneConfig, search: SearchReport, confirm: ConfirmReport | None,
                  out_dir: str | Path) -> list[Path]:
    """Write every output file of a tuning into ``out_dir``; returns their paths."""
    from boopexp.analysis import figures

    out = Path(out_dir)
    paths = [
        _write_text(out / TRIALS_CSV, _csv(trials_rows(config, search.trials))),
        _write_text(out / CONFIRMED_YAML, confirmed_yaml(config, confirm)),
        _write_text(out / SUMMARY_TXT, summary_line(config, search, confirm) + "\n"),
    ]
    if confirm is not None and confirm.verdicts:
        paths.append(_write_text(out / CONFIRMATION_CSV, _csv(confirmation_rows(confirm))))
    if search.trials:
        paths += figures.save(search_figure(config, search), out, FIGURE_STEM)
    return paths


def write_settings(config: TuneConfig, out_dir: str | Path) -> Path:
    """The resolved tune config, beside the study (what made these trials)."""
    text = "# written by boopexp tune; the study's trials were made with these settings\n"
    text += yaml.safe_dump(config.resolved(), sort_keys=False, default_flow_style=None, width=100)
    return _write_text(Path(out_dir) / TUNE_YAML, text)


def _csv(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text.encode("utf-8"))
    return path
