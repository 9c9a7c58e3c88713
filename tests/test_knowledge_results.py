"""The committed knowledge study: every planned game stored once, its outputs rebuild exactly, and
docs/knowledge.md quotes them.

The plan is read from the configs (configs/knowledge-*.yaml), not from the stores. Each test skips,
saying what is missing, only while the study is not committed yet (it lands store by store) or the
write-up is not written; once results/knowledge/ and docs/knowledge.md are on main, nothing skips.

**What docs/knowledge.md must hold** (:func:`write_up_problems`; every number is compared with the
committed CSVs, so the document cannot drift from the stores):

1. The verdict table: a Markdown table whose header starts ``| claim | family |``, columns
   ``| claim | family | deciding pairing | pairs 1/½/0 | pair score [95% CI] | Holm p | verdict |``,
   one row per claim and family quoted (every row of the ``default`` family at least):
   ``| C1 | default | mcts-co vs mcts-solver (1 s) | 30/15/5 | 0.750 [0.690, 0.810] | <0.001 | supported |``
   — the family is verdicts.csv's ``condition``; the deciding pairing, the pairs and the score
   are claims.csv's ``role=claim`` row (``component``; ``won_both/split/lost_both``; ``estimate
   [ci_low, ci_high]`` with three decimals); the Holm p is ``p_holm`` as the tables print p-values
   (three decimals, ``<0.001`` below); the verdict is verdicts.csv's.
2. The node-charge table: header ``| claim | ×0.5 | ×1 | ×2 | across charges |``, rows C1 and C2:
   the verdict at each charge and the label (verdicts.csv's ``across charges`` rows: ``detail``
   and ``verdict``), e.g. ``| C2 | supported | supported | contradicted | charge-dependent |``;
   ``not tested`` where the claim was not tested at that charge.
3. The ladder table: header ``| agent | 0.25 s | 1 s | 4 s |``, one row for every agent of
   ladder.csv (and ``Blue seat``): ``Elo [low, high]`` rounded to whole Elo and signed
   (``+412 [+380, +447]``; a minus sign may be ``-`` or ``−``), the anchor ``0``, ``—`` where the
   agent has no rating at that budget.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from study_helpers import (
    assert_figures_rebuilt,
    assert_store_complete,
    assert_texts_rebuilt,
    doc_rows,
    rebuilt_study,
)

from boopexp.analysis.tables import DASH, fmt_p
from boopexp.experiments.store import has_games_files
from boopexp.studies.knowledge import analysis as kn
from boopexp.studies.knowledge import report as kr

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "results" / "knowledge"
CONFIGS = ROOT / "configs"
WRITE_UP = ROOT / "docs" / "knowledge.md"


@pytest.mark.parametrize("store", kn.STORES)
def test_committed_store_is_complete_without_duplicates(store):
    folder = STUDY / store
    if not has_games_files(folder):
        pytest.skip(f"results/knowledge/{store} is not committed yet")
    assert_store_complete(folder, CONFIGS / f"knowledge-{store}.yaml", store)


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> Path:
    """The study rebuilt into a temporary folder (once for the tests below)."""
    return rebuilt_study(tmp_path_factory, STUDY, kn.STORES, "verdicts.csv", kr.rebuild)


def test_outputs_rebuild_byte_for_byte(rebuilt):
    assert_texts_rebuilt(STUDY, rebuilt)
    text = (STUDY / "knowledge-tables.md").read_text(encoding="utf-8")
    assert "PARTIAL ANALYSIS" not in text, "the committed outputs were built from missing or incomplete stores"


def test_figures_rebuild_byte_for_byte(rebuilt):
    assert_figures_rebuilt(STUDY, rebuilt, "knowledge-tables.md", set(kr.FIGURES))


# ---------------------------------------------------------------------------------------------
# The write-up


def _elo(value: float) -> str:
    value = round(value)
    return "0" if value == 0 else f"{value:+d}"


def _read(folder: Path, name: str) -> list[dict[str, str]]:
    with open(folder / name, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def write_up_problems(text: str, outputs: Path) -> list[str]:
    """Where ``text`` (docs/knowledge.md) does not say what the CSVs in ``outputs`` say (module docstring)."""
    problems: list[str] = []
    verdicts = {(r["claim"], r["condition"]): r for r in _read(outputs, "verdicts.csv")}
    heads = {(r["claim"], r["condition"]): r for r in _read(outputs, "claims.csv") if r["role"] == "claim"}
    rows = doc_rows(text, "| claim | family |")
    if rows is None:
        problems.append("no verdict table (a header starting '| claim | family |')")
        rows = []
    quoted = set()
    for row in rows:
        if len(row) != 7:
            problems.append(f"verdict table: {row} does not have the 7 columns")
            continue
        claim, family, deciding, pairs, score, holm, verdict = row
        key = (claim, family)
        quoted.add(key)
        if key not in verdicts or key not in heads:
            problems.append(f"verdict table: {claim} in family {family} is not in verdicts.csv/claims.csv")
            continue
        v, h = verdicts[key], heads[key]
        expected = (h["component"], f"{h['won_both']}/{h['split']}/{h['lost_both']}",
                    f"{float(h['estimate']):.3f} [{float(h['ci_low']):.3f}, {float(h['ci_high']):.3f}]"
                    if h["ci_low"] else f"{float(h['estimate']):.3f}",
                    fmt_p(float(v["p_holm"]) if v["p_holm"] else math.nan), v["verdict"])
        if (deciding, pairs, score, holm, verdict) != expected:
            problems.append(f"verdict table: {claim} {family} says {(deciding, pairs, score, holm, verdict)}, "
                            f"the CSVs {expected}")
    for key in verdicts:
        if key[1] == kn.DEFAULT and key not in quoted:
            problems.append(f"verdict table: {key[0]} of the default family is not quoted")
    charges = doc_rows(text, "| claim | ×0.5 | ×1 | ×2 | across charges |")
    if charges is None:
        problems.append("no node-charge table (header '| claim | ×0.5 | ×1 | ×2 | across charges |')")
        charges = []
    across = {claim: r for (claim, condition), r in verdicts.items() if condition == kr.ACROSS_CHARGES}
    if sorted(r[0] for r in charges) != sorted(across):
        problems.append(f"node-charge table: rows {[r[0] for r in charges]}, the CSV has {sorted(across)}")
    for row in charges:
        if row[0] in across:
            r = across[row[0]]
            at = [part.split(" ", 1)[1] for part in r["detail"].split("; ")]
            if row[1:] != [*at, r["verdict"]]:
                problems.append(f"node-charge table: {row[0]} says {row[1:]}, the CSV {[*at, r['verdict']]}")
    ladder = doc_rows(text, "| agent | 0.25 s | 1 s | 4 s |")
    if ladder is None:
        problems.append("no ladder table (header '| agent | 0.25 s | 1 s | 4 s |')")
        ladder = []
    ratings = {(float(r["budget"]), r["agent"]): r for r in _read(outputs, "ladder.csv")}
    agents = {agent for _, agent in ratings}
    if sorted(r[0] for r in ladder) != sorted(agents):
        problems.append(f"ladder table: agents {sorted(r[0] for r in ladder)}, ladder.csv has {sorted(agents)}")
    for agent, *cells in ladder:
        for budget, cell in zip(kn.BUDGETS, cells):
            r = ratings.get((budget, agent))
            if r is None:
                expected = DASH
            elif agent == kn.ANCHOR:
                expected = "0"
            else:
                expected = f"{_elo(float(r['elo']))} [{_elo(float(r['ci_low']))}, {_elo(float(r['ci_high']))}]"
            if cell.replace("\u2212", "-") != expected:
                problems.append(f"ladder table: {agent} at {budget:g} s says {cell!r}, ladder.csv {expected!r}")
    return problems


def test_the_write_up_quotes_the_committed_outputs():
    if not (STUDY / "verdicts.csv").exists():
        pytest.skip("results/knowledge/verdicts.csv is not committed yet (make knowledge)")
    if not WRITE_UP.exists():
        pytest.skip("docs/knowledge.md is not written yet")
    assert write_up_problems(WRITE_UP.read_text(encoding="utf-8"), STUDY) == []


def example_write_up(outputs: Path) -> str:
    """A write-up's three tables quoting ``outputs`` as the checker wants them (the test below
    checks the checker with it; the lead can start docs/knowledge.md from it)."""
    verdicts = _read(outputs, "verdicts.csv")
    heads = {(r["claim"], r["condition"]): r for r in _read(outputs, "claims.csv") if r["role"] == "claim"}
    lines = ["# Knowledge", "", "| claim | family | deciding pairing | pairs 1/½/0 | pair score [95% CI] | Holm p | "
             "verdict |", "|---|---|---|---:|---:|---:|---|"]
    for v in verdicts:
        if v["condition"] == kr.ACROSS_CHARGES:
            continue
        h = heads[(v["claim"], v["condition"])]
        score = f"{float(h['estimate']):.3f} [{float(h['ci_low']):.3f}, {float(h['ci_high']):.3f}]"
        lines.append(f"| {v['claim']} | {v['condition']} | {h['component']} | {h['won_both']}/{h['split']}/"
                     f"{h['lost_both']} | {score} | {fmt_p(float(v['p_holm']))} | {v['verdict']} |")
    lines += ["", "| claim | ×0.5 | ×1 | ×2 | across charges |", "|---|---|---|---|---|"]
    for v in verdicts:
        if v["condition"] == kr.ACROSS_CHARGES:
            at = [part.split(" ", 1)[1] for part in v["detail"].split("; ")]
            lines.append(f"| {v['claim']} | " + " | ".join([*at, v["verdict"]]) + " |")
    lines += ["", "| agent | 0.25 s | 1 s | 4 s |", "|---|---:|---:|---:|"]
    ratings = {(float(r["budget"]), r["agent"]): r for r in _read(outputs, "ladder.csv")}
    for agent in dict.fromkeys(a for _, a in ratings):
        cells = []
        for budget in kn.BUDGETS:
            r = ratings.get((budget, agent))
            cells.append(DASH if r is None else "0" if agent == kn.ANCHOR else
                         f"{_elo(float(r['elo']))} [{_elo(float(r['ci_low']))}, {_elo(float(r['ci_high']))}]"
                         .replace("-", "\u2212"))
        lines.append(f"| {agent} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def test_the_write_up_checker_finds_a_wrong_number(tmp_path):
    """The checker above on a synthetic study: an exact quotation passes, any changed number fails."""
    from test_report_knowledge import synthetic_study

    root = synthetic_study(tmp_path / "knowledge")
    out = tmp_path / "out"
    kr.rebuild(root, out, resamples=50)
    text = example_write_up(out)
    assert write_up_problems(text, out) == []
    c1 = next(line for line in text.splitlines() if line.startswith("| C1 | default |"))
    for wrong in (c1.replace("supported", "inconclusive"), c1.replace("30/15/5", "30/15/6"),
                  c1.replace("| 0.", "| 1.", 1)):
        problems = write_up_problems(text.replace(c1, wrong), out)
        assert len(problems) == 1 and problems[0].startswith("verdict table: C1 default says"), problems
    assert write_up_problems(text.replace(c1 + "\n", ""), out) == [
        "verdict table: C1 of the default family is not quoted"]
    charge = next(line for line in text.splitlines() if line.startswith("| C2 | supported"))
    assert write_up_problems(text.replace(charge, charge.replace("charge-dependent", "robust")), out)
    mcts_co = next(line for line in text.splitlines() if line.startswith("| mcts-co |"))
    problems = write_up_problems(text.replace(mcts_co, mcts_co.replace("+", "+1", 1)), out)
    assert len(problems) == 1 and problems[0].startswith("ladder table: mcts-co at 0.25 s says"), problems
    assert write_up_problems("no tables", out) == [
        "no verdict table (a header starting '| claim | family |')",
        *(f"verdict table: {c} of the default family is not quoted" for c in ("C1", "C2", "C3", "C4")),
        "no node-charge table (header '| claim | ×0.5 | ×1 | ×2 | across charges |')",
        "node-charge table: rows [], the CSV has ['C1', 'C2']",
        "no ladder table (header '| agent | 0.25 s | 1 s | 4 s |')",
        f"ladder table: agents [], ladder.csv has {sorted({r['agent'] for r in _read(out, 'ladder.csv')})}",
    ]
