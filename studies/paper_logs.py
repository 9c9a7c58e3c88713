"""Our committed games against the paper's logs: game lengths over all 21 timed files, and
where the paper's hand restarts sit compared with our games stopped at the ply cap.

Run: ``python studies/paper_logs.py [--paper-games ../shared/reference/paper_games.csv]``;
prints Markdown (the tables of docs/reproduction.md, "Game lengths" and "Games without a
winner"). Reads ``results/ablation`` and ``results/mirror`` through boopexp's own reader.

Game length in the paper's logs is only known as the time between two consecutive ``Winner``
lines (EXPERIMENTS.md §5): about one second per MCTS ply plus an overrun, and almost nothing
for a heuristics ply. So each file's durations are compared with the number of *MCTS plies*
of our games of the same pairing (all plies, or only mcts-co's plies against heuristics). The
seconds-per-ply factor is unknown: it is estimated once, as the median over files of the
ratio of medians, and each file is then tested (two-sided Mann–Whitney U, Holm over files) for
a different *distribution* after that one common scaling. The heuristics mirror has no MCTS
ply and is left out: 21 files remain.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from boopexp.analysis.records import load_results

#: EXPERIMENTS.md §3.1: games before which the app process restarted (logs stitched by hand);
#: their ``seconds_since_previous`` is not a game duration.
RESTARTS: dict[str, tuple[int, ...]] = {
    "expansion_vs_full.txt": (16, 20, 27),
    "full_vs_heuristics.txt": (44,),
    "heuristics_vs_full.txt": (6, 10, 20, 24, 36, 40, 42, 46),
    "full_vs_selection-expansion.txt": (46,),
    "selection-expansion_vs_full.txt": (5, 47),
    "heuristics_mirror.txt": (87,),
}


def mcts_plies(plies: int, p1: str, p2: str) -> int:
    """Plies played by an MCTS agent (each costs ~1 s on the device); heuristics plies are free."""
    p1_moves, p2_moves = math.ceil(plies / 2), plies // 2
    return (0 if p1 == "heuristics" else p1_moves) + (0 if p2 == "heuristics" else p2_moves)


def load(paper_csv: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    paper = pd.read_csv(paper_csv)
    ours = load_results(["results/ablation", "results/mirror"]).games
    ours = ours[ours["selected"]].copy()
    return paper, ours


def lengths(paper: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for file, games in paper.groupby("file", sort=False):
        pairing = games["pairing"].iloc[0]
        p1, p2 = pairing.split(" vs ")
        if p1 == p2 == "heuristics":
            continue
        restart = set(RESTARTS.get(file, ()))
        secs = games.loc[~games["game_index"].isin(restart), "seconds_since_previous"].dropna().to_numpy()
        mine = ours[(ours["pairing"] == pairing) & (ours["termination"] != "ply_limit")]
        plies = np.array([mcts_plies(int(n), p1, p2) for n in mine["plies"]])
        rows.append({"file": file, "pairing": pairing, "paper_n": len(secs), "paper_median_s": float(np.median(secs)),
                     "ours_n": len(plies), "ours_median_mcts_plies": float(np.median(plies)),
                     "_secs": secs, "_plies": plies})
    table = pd.DataFrame(rows)
    table["ratio"] = table["paper_median_s"] / table["ours_median_mcts_plies"]
    scale = float(table["ratio"].median())
    p_values = [stats.mannwhitneyu(r["_secs"] / scale, r["_plies"], alternative="two-sided").pvalue
                for _, r in table.iterrows()]
    table["mw_p"] = p_values
    table["mw_p_holm"] = multipletests(p_values, method="holm")[1]
    table.attrs["scale"] = scale
    rho = stats.spearmanr(table["paper_median_s"], table["ours_median_mcts_plies"])
    table.attrs["spearman"] = (float(rho.statistic), float(rho.pvalue))
    return table.drop(columns=["_secs", "_plies"])


def caps(paper: pd.DataFrame, ours: pd.DataFrame) -> tuple[pd.DataFrame, tuple[float, float]]:
    files = paper.groupby("file", sort=False)["pairing"].first()
    capped = ours[ours["termination"] == "ply_limit"].groupby("pairing").size()
    table = pd.DataFrame({
        "file": files.index,
        "pairing": files.to_numpy(),
        "paper_restarts": [len(RESTARTS.get(f, ())) for f in files.index],
        "ours_at_cap": [int(capped.get(p, 0)) for p in files.to_numpy()],
    })
    both = np.array([[((table.paper_restarts > 0) & (table.ours_at_cap > 0)).sum(),
                      ((table.paper_restarts > 0) & (table.ours_at_cap == 0)).sum()],
                     [((table.paper_restarts == 0) & (table.ours_at_cap > 0)).sum(),
                      ((table.paper_restarts == 0) & (table.ours_at_cap == 0)).sum()]])
    res = stats.fisher_exact(both, alternative="greater")
    return table, (float(res.pvalue), both)


def markdown(table: pd.DataFrame, formats: dict[str, str]) -> str:
    """A Markdown table of ``table`` with per-column format strings."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in table.iterrows():
        lines.append("| " + " | ".join(formats.get(c, "{}").format(row[c]) for c in cols) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper-games", default="../shared/reference/paper_games.csv", type=Path)
    args = parser.parse_args()
    paper, ours = load(args.paper_games)

    table = lengths(paper, ours)
    print(markdown(table, {"paper_median_s": "{:.1f}", "ours_median_mcts_plies": "{:.1f}", "ratio": "{:.2f}",
                           "mw_p": "{:.2g}", "mw_p_holm": "{:.2g}"}))
    rho, p = table.attrs["spearman"]
    print(f"\ncommon scale: {table.attrs['scale']:.3f} s per MCTS ply; Spearman rho over the "
          f"{len(table)} files {rho:.3f} (p = {p:.2g}); files differing after Holm: "
          f"{int((table['mw_p_holm'] < 0.05).sum())} of {len(table)}")

    capt, (p_cap, both) = caps(paper, ours)
    print()
    print(markdown(capt[(capt.paper_restarts > 0) | (capt.ours_at_cap > 0)], {}))
    print(f"\n2x2 (restart file yes/no x cap game yes/no): {both.tolist()}; one-sided Fisher p = {p_cap:.2g}")


if __name__ == "__main__":
    main()
