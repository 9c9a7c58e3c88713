"""What the committed-study tests share (tests/test_robustness_results.py, tests/test_knowledge_results.py,
tests/test_generality_results.py): a store holds every planned game of its config once, a study's committed
outputs equal a rebuild, and a pre-registered plan was committed before its first game
(tests/test_knowledge_plan.py, tests/test_generality_plan.py)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from report_fixtures import make_record

from boopexp.experiments.store import StoreReader, has_games_files
from boopexp.studies.stores import iter_planned

#: the files a study command writes that are compared byte for byte
TEXT_SUFFIXES = (".csv", ".md")
FIGURE_SUFFIXES = (".svg", ".png")


def assert_store_complete(folder: Path, config: Path, store: str) -> None:
    """Every game ``config`` plans is in ``folder`` exactly once, and nothing else (no truncated line)."""
    planned = {(h, p, i) for _, h, p, i in iter_planned([config])}
    seen: set[tuple[str, str, int]] = set()
    duplicates = []
    reader = StoreReader(folder)
    assert reader.outcomes().scan.tail is None, f"{store}: a truncated last line"
    for path in reader.files():
        for number, raw in (line for block in reader.blocks(path) for line in block):
            record = json.loads(raw)
            key = (record["config_hash"], record["pairing"], record["game_index"])
            if key in seen:
                duplicates.append((path.name, number, key))
            seen.add(key)
    assert not duplicates, f"{store}: {len(duplicates)} duplicate records, e.g. {duplicates[:3]}"
    assert seen == planned, (
        f"{store}: {len(planned - seen)} planned games missing (e.g. {sorted(planned - seen)[:3]}), "
        f"{len(seen - planned)} not in the plan (e.g. {sorted(seen - planned)[:3]})"
    )


def assert_game_replays(folder: Path, config: Path, pairing: str, index: int) -> None:
    """Game ``index`` of ``pairing`` that ``config`` plans, replayed from its identity, is the game
    stored in ``folder`` move for move (timings aside)."""
    from conftest import without_timing

    from boopexp.experiments.config import load_config
    from boopexp.play.match import play_game

    plan = load_config(config)
    task = next(t for t in plan.tasks(plan.plan()) if t.pairing == pairing and t.game_index == index)
    stored = next(
        r for r in StoreReader(folder).records().records
        if (r["config_hash"], r["pairing"], r["game_index"]) == (task.config_hash, pairing, index)
    )
    assert without_timing(play_game(task)) == without_timing(stored)

def rebuilt_study(tmp_path_factory: pytest.TempPathFactory, study: Path, stores: Iterable[str], marker: str,
                  rebuild: Callable[[Path, Path], object]) -> Path:
    """``study`` rebuilt by ``rebuild(study, out)`` into a temporary folder; skips (with the reason)
    while one of its ``stores`` or its ``marker`` output is not committed yet."""
    missing = [s for s in stores if not has_games_files(study / s)]
    if missing:
        pytest.skip(f"results/{study.name}: {', '.join(missing)} not committed yet")
    if not (study / marker).exists():
        pytest.skip(f"results/{study.name}/{marker} is not committed yet (make {study.name})")
    out = tmp_path_factory.mktemp(study.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rebuild(study, out)
    return out


def doc_rows(text: str, header: str) -> list[list[str]] | None:
    """The body rows (cells stripped) of the first Markdown table in ``text`` whose header line
    starts ``header`` (None: no such table): how a study's write-up test reads the tables it checks."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    if start is None:
        return None
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def committed_outputs(study: Path, suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in study.iterdir() if p.is_file() and p.suffix in suffixes)


def assert_texts_rebuilt(study: Path, rebuilt: Path) -> None:
    """The committed CSV and Markdown outputs of ``study`` are the rebuilt ones, byte for byte."""
    committed = committed_outputs(study, TEXT_SUFFIXES)
    names = sorted(p.name for p in rebuilt.iterdir() if p.suffix in TEXT_SUFFIXES)
    assert sorted(p.name for p in committed) == names
    for path in committed:
        assert (rebuilt / path.name).read_bytes() == path.read_bytes(), f"{study.name}/{path.name} differs"


def assert_figures_rebuilt(study: Path, rebuilt: Path, tables: str, stems: set[str]) -> None:
    """The committed figures are the rebuilt ones, when drawn with this matplotlib (``tables``: the
    Markdown file that names the version); skips otherwise."""
    import matplotlib

    text = (study / tables).read_text(encoding="utf-8")
    drawn_with = re.search(r"matplotlib ([^ )]+)\)", text)
    if drawn_with is None or drawn_with.group(1) != matplotlib.__version__:
        pytest.skip(f"the committed figures were drawn with matplotlib "
                    f"{drawn_with.group(1) if drawn_with else '?'}, this is {matplotlib.__version__}")
    committed = committed_outputs(study, FIGURE_SUFFIXES)
    assert {p.stem for p in committed} >= stems
    for path in committed:
        assert (rebuilt / path.name).read_bytes() == path.read_bytes(), f"{study.name}/{path.name} differs"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


def assert_plan_precedes_games(root: Path, plan: str, games: str) -> None:
    """The plan's first commit is an ancestor of every commit that added a file matching ``games``
    (a git pathspec, e.g. ``results/knowledge/*/games*``), and no such file was added in the plan's
    own commit; skips (saying why) without a full git history or while no such file is committed."""
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout: the history cannot be read")
    if _git(root, "rev-parse", "--is-shallow-repository") == "true":
        pytest.skip("a shallow clone: the plan's first commit may be missing")
    plans = _git(root, "log", "--diff-filter=A", "--format=%H", "--", plan).splitlines()
    results = _git(root, "log", "--diff-filter=A", "--format=%H", "--", games).splitlines()
    if not results:
        pytest.skip(f"no file of {games} is committed yet")
    assert plans, f"{plan} has no commit"
    first_plan = plans[-1]
    for commit in results:
        assert commit != first_plan, "the plan and games were added in one commit"
        ancestor = subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", first_plan, commit])
        assert ancestor.returncode == 0, f"{commit[:10]} adds study games before the plan's {first_plan[:10]}"


#: A synthetic pairing of a paired study: (A, B, budget, charge, (won both, split, lost both, left out)).
Cell = tuple[str, str, float, float, tuple[int, int, int, int]]


def write_paired_store(root: Path, name: str, store: str, cells: list[Cell], *,
                       item: Callable[[str, float, float], dict] = lambda agent, budget, charge: {},
                       planned_extra: int = 0, tail: str = "", swept: bool = True,
                       mirrors: list[tuple[str, int, int, int]] = ()) -> Path:
    """A store of ``cells`` as boopexp run writes it: config.yaml named ``name`` with each
    setting's plan item (``item(agent, budget, charge)`` gives an agent's spec and the item's
    extra keys: ``{"spec": ..., "extra": ...}``), and game i of "A vs B" and of "B vs A" for every
    pair. A split is won by the Blue seat; a pair left out has its second game without a winner.
    ``planned_extra``: games planned, not stored. ``swept=False``: a config without a sweep, whose
    plan items carry no budget (the document's own). ``mirrors``: (agent, p1 wins, p2 wins, no
    winner) of mirror pairings at the cells' budget."""
    folder = root / store
    folder.mkdir(parents=True)
    lines, plan = [], []

    def key(*parts: object) -> str:
        return hashlib.sha256(repr((store, *parts)).encode()).hexdigest()[:16]

    def add_item(p1: str, p2: str, budget: float, charge: float, games: int) -> str:
        h = key(p1, p2, budget, charge)
        one, two = item(p1, budget, charge), item(p2, budget, charge)
        plan.append({"pairing": f"{p1} vs {p2}", "p1": p1, "p2": p2, "config_hash": h, "games": games,
                     "p1_spec": one.get("spec", {"name": p1, "kind": "mcts", "params": {}}),
                     "p2_spec": two.get("spec", {"name": p2, "kind": "mcts", "params": {}}),
                     **one.get("extra", {})})
        if swept:
            plan[-1]["budget"] = {"mode": "device", "seconds": budget, "profile": "android-2023"}
        return h

    for a, b, budget, charge, (one, half, zero, left_out) in cells:
        outcomes = ["AA"] * one + ["AB"] * half + ["BB"] * zero + ["A-"] * left_out
        for p1, p2, seat in ((a, b, 0), (b, a, 1)):
            h = add_item(p1, p2, budget, charge, len(outcomes) + planned_extra)
            for i, o in enumerate(outcomes):
                # o[seat]: who won the game in which A has seat ``seat`` (0: Blue); 'AB': Blue won both
                who = o[seat] if o != "AB" else ("A" if seat == 0 else "B")
                if who == "-":
                    winner = None
                else:
                    winner = "p1" if (who == "A") == (p1 == a) else "p2"
                lines.append(json.dumps(make_record(f"{p1} vs {p2}", i, winner, config_hash=h, plies=3),
                                        sort_keys=True))
    budgets = {cell[2] for cell in cells} or {1.0}
    for agent, first, second, none in mirrors:
        (budget,) = budgets
        h = add_item(agent, agent, budget, 1.0, first + second + none)
        for i, winner in enumerate(["p1"] * first + ["p2"] * second + [None] * none):
            lines.append(json.dumps(make_record(f"{agent} vs {agent}", i, winner, config_hash=h, plies=3),
                                    sort_keys=True))
    (folder / "games.jsonl").write_text("\n".join(lines) + "\n" + tail, encoding="utf-8")
    doc: dict = {"name": name, "plan": plan}
    if not swept:
        (budget,) = budgets
        doc["budget"] = {"mode": "device", "seconds": budget, "profile": "android-2023"}
    (folder / "config.yaml").write_text(json.dumps(doc), encoding="utf-8")  # YAML reads JSON
    return folder
