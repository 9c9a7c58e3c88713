"""boopexp tune: config validation, seeded and resumable trials, the confirmation stage, the CLI.

The tuner's games are played by synthetic play functions (tests/tune_helpers.py) whose winner is
drawn from the game's seed, except for one CLI test that plays real games at 5 iterations.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import one_line
from tune_helpers import play_coin, play_uct_matters

from boopexp.agents.specs import MCTS_PARAMS, PAPER_PARAMS
from boopexp.errors import ConfigError
from boopexp.experiments.config import PLANNING_KEYS, parse_config
from boopexp.experiments.pool import PoolOptions
from boopexp.interfaces.cli import main
from boopexp.tuning.config import NOT_IN_A_TUNE, TUNABLE, load_tune_config, parse_tune_config
from boopexp.tuning.confirm import binomial_holm, pick_candidates
from boopexp.tuning.pipeline import run_tuning
from boopexp.tuning.search import STUDY_FILE, CandidateScore, open_study, run_search, trial_dir

TESTS = Path(__file__).resolve().parent

BASE = {
    "name": "tiny-tune",
    "seed": 11,
    "budget": {"mode": "iterations", "iterations": 5},
    "tune": {
        "agent": "mcts-co",
        "space": {
            "k": {"low": 5, "high": 40},
            "preselect_m": {"low": 1, "high": 12},
            "discount": {"low": 0.5, "high": 1.0},
            "uct_c": {"low": 0.05, "high": 2.0, "log": True},
        },
        "trials": 6,
        "games_per_trial": 8,
        "startup_trials": 3,
        "confirm": {"top": 2, "games": 20},
    },
}


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch):
    """The store's durability is tested in test_store.py; here only which games are stored matters,
    and an fsync per game makes these many small tunings slow on a busy disk."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def _config(tmp_path: Path, **tune) -> Path:
    doc = json.loads(json.dumps(BASE))
    doc["tune"].update(tune)
    path = tmp_path / "tune.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> tuple[Path, Any]:
    """One uninterrupted tuning of the base config (its folder, its report): the reference that
    the tests of the seeded, resumable search compare with (it was played again by each)."""
    tmp = tmp_path_factory.mktemp("whole")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", lambda fd: None)  # as _no_fsync
        return tmp / "o", run_tuning(load_tune_config(_config(tmp)), tmp / "o", PoolOptions(play=play_coin))


def _trials(out: Path) -> str:
    return (out / "trials.csv").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------
# config


def test_config_parses_space_opponents_and_confirm(tmp_path):
    tc = load_tune_config(_config(tmp_path, opponents=["mcts+SEP", "heuristics"], games_per_trial=8))
    assert tc.agent == "mcts-co"
    assert tc.opponents == ("mcts-co", "heuristics")  # aliases resolved
    assert tc.games_per_side == 2
    k, m, d, c = tc.space
    assert (k.fields, k.kind, k.low, k.high) == (("co_playout_plies", "playout_depth"), "int", 5, 40)
    assert (m.fields, m.kind) == (("preselect_m",), "int")
    assert (d.kind, d.log, c.kind, c.log) == ("float", False, "float", True)
    assert tc.confirm.baseline == "mcts-co" and tc.confirm.alpha == 0.05 and tc.confirm.top == 2
    assert tc.overrides({"k": 12, "preselect_m": 3, "discount": 0.7, "uct_c": 1.5}) == {
        "co_playout_plies": 12, "playout_depth": 12, "preselect_m": 3, "discount": 0.7, "uct_c": 1.5}


def test_the_tuners_ranges_come_from_the_parameter_table():
    """A parameter named without a range is searched over its row's tuner's range; the tunable
    names are the rows that have one (booleans have none)."""
    assert TUNABLE == tuple(name for name, row in {**PAPER_PARAMS, **MCTS_PARAMS}.items() if row.tune is not None)
    assert "fix_a9" not in TUNABLE and "co_expansion" not in TUNABLE
    names = [name for name in TUNABLE if name not in ("k", "m", "d")]  # the paper's set the same fields
    for space in (names, dict.fromkeys(names)):
        doc = json.loads(json.dumps(BASE))
        doc["tune"]["space"] = space
        tc = parse_tune_config(doc)
        assert [p.name for p in tc.space] == names
        for p in tc.space:
            row = MCTS_PARAMS[p.name]
            assert (p.low, p.high, p.log, p.kind) == (row.tune.low, row.tune.high, row.tune.log, row.kind.__name__)
    doc = json.loads(json.dumps(BASE))
    doc["tune"]["space"] = {"k": None, "m": None, "d": None, "uct_c": {"low": 0.1, "high": 0.5}}
    k, m, d, c = parse_tune_config(doc).space
    assert (k.fields, k.low, k.high) == (PAPER_PARAMS["k"].sets, 5, 40)
    assert (m.fields, m.low, m.high) == (("preselect_m",), 1, 12)
    assert (d.low, d.high, d.kind, c.low, c.high, c.log) == (0.5, 1.0, "float", 0.1, 0.5, False)


def test_the_committed_study_searched_the_tables_ranges():
    """configs/tune-mcts-co.yaml writes out the table's ranges: naming the parameters alone gives
    the same search settings, hence the same study (its hash)."""
    path = Path(__file__).resolve().parent.parent / "configs" / "tune-mcts-co.yaml"
    written = load_tune_config(path)
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["tune"]["space"] = list(doc["tune"]["space"])
    assert doc["tune"]["space"] == ["k", "preselect_m", "discount", "uct_c"]
    named = parse_tune_config(doc, str(path), directory=str(path.parent))
    assert named.space == written.space and named.search_hash() == written.search_hash()


def test_config_tunes_a_declared_variant(tmp_path):
    doc = json.loads(json.dumps(BASE))
    doc["agents"] = {"co-wide": {"base": "mcts-co", "uct_c": 1.0}}
    doc["tune"]["agent"] = "co-wide"
    tc = parse_tune_config(doc)
    exp = tc.with_candidates({"co-wide.t0": {"k": 9, "preselect_m": 2, "discount": 0.8, "uct_c": 0.2}}, ("co-wide",), 1)
    spec = exp.agent("co-wide.t0")
    assert spec.base == "co-wide" and spec.mcts.uct_c == 0.2 and spec.mcts.co_playout_plies == 9


def test_config_tunes_alphabeta_over_its_own_table():
    doc = json.loads(json.dumps(BASE))
    doc["tune"]["agent"] = "alphabeta"
    doc["tune"]["space"] = ["node_cost_scale"]
    tc = parse_tune_config(doc)
    assert [(p.name, p.low, p.high, p.log) for p in tc.space] == [("node_cost_scale", 0.25, 4.0, True)]
    exp = tc.with_candidates({"alphabeta.t0": {"node_cost_scale": 0.5}}, ("mcts-co",), 1)
    spec = exp.agent("alphabeta.t0")
    assert spec.kind == "alphabeta" and spec.base == "alphabeta" and spec.alphabeta.node_cost_scale == 0.5
    doc["tune"]["space"] = ["uct_c"]
    with pytest.raises(ConfigError, match="tune.space\\[0\\] = 'uct_c' is not a parameter the tuner varies; "
                                          "allowed: node_cost_scale$"):
        parse_tune_config(doc)


BAD = [
    ({"tune": None}, "missing required key tune (the agent, search space, opponents and trials)"),
    ({"pairings": [["mcts-co", "vanilla"]]}, "pairings = [['mcts-co', 'vanilla']] has no place in a tune config"),
    ({"tune": {"agent": "mcts-co"}}, "missing required key tune.space"),
    ({"tune.agent": "heuristics"}, "tune.agent = 'heuristics' is a heuristics agent with no parameters to tune"),
    ({"tune.agent": "nobody"}, "tune.agent: unknown agent 'nobody'"),
    ({"tune.space": {"speed": {"low": 1, "high": 2}}}, "unknown key tune.space.speed"),
    ({"tune.space": {"k": {"low": 5, "high": 40}, "co_playout_plies": {"low": 5, "high": 9}}},
     "tune.space.co_playout_plies: co_playout_plies is already set by tune.space.k"),
    ({"tune.space": {"uct_c": {"low": 2.0, "high": 0.5}}}, "tune.space.uct_c: low = 2.0 must be below high = 0.5"),
    ({"tune.space": {"uct_c": {"low": 0.0, "high": 1.0, "log": True}}}, "must be positive on a log scale"),
    ({"tune.space": {"preselect_m": {"low": 1.5, "high": 4}}}, "tune.space.preselect_m.low = 1.5 must be an integer"),
    ({"tune.space": {"discount": {"low": 0.5, "high": 1.5}}},
     "tune.space.discount.high = 1.5 must be a number in [0.0, 1.0]"),
    ({"tune.space": {"uct_c": {"low": 0.1}}}, "missing required key tune.space.uct_c.high"),
    ({"tune.space": {"uct_c": {"low": 0.1, "high": 1, "step": 2}}}, "unknown key tune.space.uct_c.step"),
    ({"tune.space": ["uct_c", "fix_a9"]},
     "tune.space[1] = 'fix_a9' is not a parameter the tuner varies; allowed: k, m, d,"),
    ({"tune.space": ["uct_c", "uct_c"]}, "tune.space[1] = 'uct_c' is listed twice"),
    ({"tune.space": []}, "tune.space = [] must be a non-empty mapping"),
    ({"tune.space": {"uct_c": 0.3}}, "tune.space.uct_c = 0.3 must be a mapping like {low: 1, high: 12}"),
    ({"tune.trials": 0}, "tune.trials = 0 must be a positive integer"),
    ({"tune.games_per_trial": 7}, "tune.games_per_trial = 7 must be a multiple of 2"),
    ({"tune.opponents": ["vanilla", "vanilla"]}, "tune.opponents[1] = 'vanilla' is listed twice"),
    ({"tune.confirm": {"games": 41}}, "tune.confirm.games = 41 must be even"),
    ({"tune.confirm": {"top": 0}}, "tune.confirm.top = 0 must be a positive integer"),
    ({"tune.confirm": {"alpha": 1.0}}, "tune.confirm.alpha = 1.0 must be a number strictly between 0 and 1"),
    ({"tune.confirm": {"baseline": "nobody"}}, "tune.confirm.baseline: unknown agent 'nobody'"),
    ({"tune.colour": "blue"}, "unknown key tune.colour"),
]

# Keys of an experiment config that plan games another way than the tuner does. Each once played
# silently wrong games: a sweep's points kept the parser's placeholder pairing (random vs random),
# an sprt stopped trials and confirmations early, a tournament was blamed on an absent pairings key.
PLANNING = [
    ({"sweep": {"budget.iterations": [5, 10]}},
     "sweep = {'budget.iterations': [5, 10]} has no place in a tune config (tune searches parameters"
     " itself; use sweep with boopexp run)"),
    ({"sprt": {"elo0": 0, "elo1": 30}}, "sprt = {'elo0': 0, 'elo1': 30} has no place in a tune config"),
    ({"tournament": {"format": "gauntlet", "agent": "mcts-co", "opponents": ["vanilla"]}},
     "has no place in a tune config (the tuner plans its own games; set tune.opponents"),
]


def _bad_doc(change: dict) -> dict:
    doc = json.loads(json.dumps(BASE))
    for key, value in change.items():
        if key.startswith("tune."):
            doc["tune"][key.removeprefix("tune.")] = value
        elif value is None:
            doc.pop(key)
        else:
            doc[key] = value
    return doc


@pytest.mark.parametrize("change, message", BAD, ids=[m for _, m in BAD])
def test_bad_tune_config_is_one_line(change, message):
    with pytest.raises(ConfigError) as info:
        parse_tune_config(_bad_doc(change), "t.yaml")
    text = str(info.value)
    assert message in text
    assert "\n" not in text and text.startswith("t.yaml: ")


@pytest.mark.parametrize("change, message", BAD[:3] + BAD[14:15], ids=[m for _, m in BAD[:3] + BAD[14:15]])
def test_cli_bad_tune_config_exit_2_nothing_written(tmp_path, change, message):
    assert message in _cli_tune_error(tmp_path, change)


def _cli_tune_error(tmp_path, change) -> str:
    """The one error line of ``tune`` on the base config with ``change``; nothing written."""
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(_bad_doc(change)), encoding="utf-8")
    out = tmp_path / "out"
    line = one_line(CliRunner().invoke(main, ["tune", str(path), "--out", str(out)]), 2)
    assert not out.exists()
    return line


@pytest.mark.parametrize("change, message", PLANNING, ids=[next(iter(c)) for c, _ in PLANNING])
def test_cli_tune_config_with_a_planning_key_exit_2_nothing_written(tmp_path, change, message):
    line = _cli_tune_error(tmp_path, change)
    assert line.startswith(f"Error: {tmp_path / 'bad.yaml'}: ") and message in line


def test_the_tuners_experiment_plans_no_games_of_its_own():
    """The shared settings are parsed without pairings: nothing can play a placeholder."""
    assert set(NOT_IN_A_TUNE) == set(PLANNING_KEYS)  # every key that plans games is refused with a reason
    tc = parse_tune_config(_bad_doc({}), "t.yaml")
    assert tc.experiment.pairings == ()
    with pytest.raises(ConfigError, match="t.yaml: no pairings to plan"):
        tc.experiment.plan()
    exp = tc.with_candidates({"mcts-co.t0": {"k": 9, "preselect_m": 2, "discount": 0.8, "uct_c": 0.2}},
                             ("vanilla",), 2)
    assert [(p.pairing, p.games) for p in exp.plan()] == [("mcts-co.t0 vs vanilla", 2), ("vanilla vs mcts-co.t0", 2)]


# --------------------------------------------------------------------------------------------
# the search: seeded, resumable


@pytest.mark.slow  # three tunings, ~30 s loaded (tests/conftest.py starts this file early)
def test_same_trials_twice_and_another_seed_differs(tmp_path, whole):
    tc = load_tune_config(_config(tmp_path))
    a_dir, a = whole
    b = run_tuning(tc, tmp_path / "b", PoolOptions(play=play_coin))
    assert a.complete and len(a.search.trials) == 6
    assert _trials(a_dir) == _trials(tmp_path / "b")
    assert (a_dir / "confirmed.yaml").read_text() == (tmp_path / "b" / "confirmed.yaml").read_text()
    assert a.summary == b.summary
    # TPE proposed the later trials (startup_trials = 3): not a pure random search.
    other = parse_tune_config({**_bad_doc({}), "seed": 12}, "t.yaml")
    c = run_search(other, tmp_path / "c", PoolOptions(play=play_coin))
    assert [t.params for t in c.trials] != [t.params for t in a.search.trials]


def test_rerun_of_a_finished_tuning_plays_nothing(tmp_path):
    tc = load_tune_config(_config(tmp_path))
    first = run_tuning(tc, tmp_path / "o", PoolOptions(play=play_coin))
    again = run_tuning(tc, tmp_path / "o", PoolOptions(play=play_coin))
    assert first.search.played == 6 * 8 and again.search.played == 0
    assert again.confirm.played == 0 and again.summary == first.summary


_KILLER = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    from tune_helpers import play_coin
    from boopexp.tuning.config import load_tune_config
    from boopexp.experiments.pool import PoolOptions
    from boopexp.tuning.pipeline import run_tuning

    def play(task):
        # Killed (no clean-up at all) while trial 2 is half played: 2 of its games are stored.
        if task.pairing.startswith("mcts-co.t2 ") and task.game_index == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return play_coin(task)

    run_tuning(load_tune_config({config!r}), {out!r}, PoolOptions(play=play))
    """
)


def test_resume_after_kill_equals_an_uninterrupted_run(tmp_path, whole):
    config = _config(tmp_path)
    tc = load_tune_config(config)
    killed = tmp_path / "killed"
    script = _KILLER.format(tests=str(TESTS), config=str(config), out=str(killed))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # The study holds trials 0 and 1 complete and trial 2 RUNNING, with 2 games in its store.
    study = open_study(tc, killed)
    states = [t.state.name for t in study.get_trials()]
    assert states == ["COMPLETE", "COMPLETE", "RUNNING"]
    stored = (trial_dir(killed, 2) / "games.jsonl").read_text().splitlines()
    assert len(stored) == 2

    resumed = run_tuning(tc, killed, PoolOptions(play=play_coin))
    whole_dir, uninterrupted = whole
    assert resumed.complete
    assert _trials(killed) == _trials(whole_dir)
    assert resumed.summary == uninterrupted.summary
    # The stale trial was finished with its own parameters; its 2 stored games were not replayed.
    assert resumed.search.played == 6 * 8 - (2 * 8 + 2)
    lines = (trial_dir(killed, 2) / "games.jsonl").read_text().splitlines()
    assert lines[:2] == stored and len(lines) == 8


def test_trial_killed_inside_ask_is_asked_again(tmp_path):
    """A RUNNING trial without all its parameters (killed inside ask) fails; its slot is asked anew."""
    tc = load_tune_config(_config(tmp_path, trials=4))
    out = tmp_path / "o"
    run_search(tc.__class__(**{**tc.__dict__, "trials": 2}), out, PoolOptions(play=play_coin))
    study = open_study(tc, out)
    study.ask()  # a trial with no parameters, as if killed right after its creation
    report = run_search(tc, out, PoolOptions(play=play_coin))
    whole = run_search(tc, tmp_path / "whole", PoolOptions(play=play_coin))
    assert [(t.slot, t.params, t.games) for t in report.trials] == [(t.slot, t.params, t.games) for t in whole.trials]
    assert [t.state.name for t in open_study(tc, out).get_trials()] == ["COMPLETE"] * 2 + ["FAIL"] + ["COMPLETE"] * 2


def test_resume_under_other_search_settings_is_refused(tmp_path):
    tc = load_tune_config(_config(tmp_path, trials=1))
    run_search(tc, tmp_path / "o", PoolOptions(play=play_coin))
    before = (tmp_path / "o" / STUDY_FILE).read_bytes()
    changed = parse_tune_config({**_bad_doc({"tune.trials": 1}), "seed": 99}, "t.yaml")
    with pytest.raises(ConfigError, match="other search settings"):
        run_search(changed, tmp_path / "o", PoolOptions(play=play_coin))
    assert (tmp_path / "o" / STUDY_FILE).read_bytes() == before
    # More trials or another confirmation is a resume, not a conflict.
    more = parse_tune_config(_bad_doc({"tune.trials": 2, "tune.confirm": {"top": 1, "games": 20}}), "t.yaml")
    assert len(run_search(more, tmp_path / "o", PoolOptions(play=play_coin)).trials) == 2


# --------------------------------------------------------------------------------------------
# confirmation


def test_binomial_holm_numbers():
    from scipy.stats import binomtest

    scores = [CandidateScore(100, 100, 60, 40, 0), CandidateScore(100, 100, 50, 50, 0), CandidateScore(10, 0, 0, 0, 10)]
    (p1, h1, c1), (p2, h2, c2), (p3, h3, c3) = binomial_holm(scores, 0.05)
    assert p1 == pytest.approx(binomtest(60, 100, 0.5, alternative="greater").pvalue)
    assert p1 == pytest.approx(0.028444, abs=1e-6)
    assert p3 == 1.0  # no decided game
    assert h1 == pytest.approx(3 * p1) and c1 is False  # Holm: the smallest p times 3 > 0.05
    assert (c2, c3) == (False, False)
    (_, h, c), = binomial_holm([CandidateScore(100, 100, 60, 40, 0)], 0.05)
    assert c is True and h == pytest.approx(p1)


def test_confirmation_rejects_a_candidate_that_only_won_by_luck(tmp_path):
    """Every candidate is a coin (true strength 1/2): the best trial looks good, confirmation says no."""
    tc = load_tune_config(_config(tmp_path, trials=8, games_per_trial=10, confirm={"top": 3, "games": 200}))
    report = run_tuning(tc, tmp_path / "o", PoolOptions(play=play_coin))
    best = report.search.best()
    assert best.objective >= 0.7  # a lucky trial: 7 of 10 or better
    assert len(report.confirm.verdicts) == 3
    assert report.confirm.confirmed == ()
    assert all(v.games.done == 200 for v in report.confirm.verdicts)
    assert yaml.safe_load((tmp_path / "o" / "confirmed.yaml").read_text()) == {"agents": {}}
    assert "no improvement" in report.summary
    # Fresh identities: the confirmation games of the best trial are not its tuning games.
    tuning = {json.loads(line)["seed"] for line in (trial_dir(tmp_path / "o", best.slot) / "games.jsonl").open()}
    confirm = {json.loads(line)["seed"] for line in (tmp_path / "o" / "confirm" / "games.jsonl").open()}
    assert not tuning & confirm


def test_confirmation_confirms_a_real_improvement_and_the_snippet_is_usable(tmp_path):
    """Candidates with uct_c > 1 truly win 75%: those are confirmed; the snippet is a valid agents: block."""
    space = {"uct_c": {"low": 0.05, "high": 2.0, "log": True}}
    tc = load_tune_config(_config(tmp_path, space=space, trials=8, games_per_trial=10,
                                  confirm={"top": 3, "games": 100}))
    report = run_tuning(tc, tmp_path / "o", PoolOptions(play=play_uct_matters))
    assert report.confirm.confirmed, report.summary
    assert all((v.trial.params["uct_c"] > 1.0) == v.confirmed for v in report.confirm.verdicts)
    snippet = yaml.safe_load((tmp_path / "o" / "confirmed.yaml").read_text())
    best = report.confirm.confirmed[0]
    assert snippet["agents"]["mcts-co-tuned"] == {"base": "mcts-co", "uct_c": best.trial.params["uct_c"]}
    exp = parse_config({"name": "use", "seed": 1, "games_per_side": 1, **snippet,
                        "pairings": [["mcts-co-tuned", "mcts-co"]]})
    assert exp.agent("mcts-co-tuned").mcts.uct_c == best.trial.params["uct_c"]
    rows = (tmp_path / "o" / "confirmation.csv").read_text().splitlines()
    assert rows[0].startswith("trial,agent,tuning_objective") and len(rows) == 4


def test_pick_candidates_skips_repeated_settings(tmp_path):
    from boopexp.tuning.search import TrialResult

    tc = load_tune_config(_config(tmp_path, space={"preselect_m": {"low": 1, "high": 3}}))
    trials = [TrialResult(i, i, {"preselect_m": m}, CandidateScore(10, 10, w, 10 - w, 0))
              for i, (m, w) in enumerate([(2, 8), (2, 9), (3, 5), (1, 5)])]
    assert [t.slot for t in pick_candidates(tc, trials, 3)] == [1, 2, 3]


# --------------------------------------------------------------------------------------------
# the command, with real games


def test_cli_tune_real_games(tmp_path):
    path = _config(tmp_path, space={"uct_c": {"low": 0.1, "high": 1.0}}, trials=2, games_per_trial=2,
                   startup_trials=1, confirm={"top": 1, "games": 2})
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["tune", str(path), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert "Trial 0 (1 of 2): uct_c=" in result.output
    assert "Confirmation: 1 candidate(s) x 2 games against mcts-co" in result.output
    assert result.output.strip().splitlines()[-2].startswith("tune tiny-tune: mcts-co, 2/2 trials; best trial")
    for name in ("trials.csv", "tuning.png", "confirmed.yaml", "summary.txt", "tune.yaml", STUDY_FILE):
        assert (out / name).exists(), name
    records = [json.loads(line) for line in (trial_dir(out, 0) / "games.jsonl").open()]
    assert {r["pairing"] for r in records} == {"mcts-co.t0 vs mcts-co", "mcts-co vs mcts-co.t0"}
    assert records[0]["p1_spec"]["base"] == "mcts-co"


@pytest.mark.parametrize("where", ["below-a-file", "sysfs"])
def test_cli_tune_out_that_cannot_be_written_is_one_line_as_for_run(tmp_path, monkeypatch, where):
    """Issue 20: a NotADirectoryError traceback (exit 1) from the study's folder. Root ignores
    file modes, so the unwritable folders are one below a regular file, and one in sysfs (EPERM)."""
    if where == "sysfs" and not Path("/sys/kernel").is_dir():
        pytest.skip("no sysfs (not Linux)")
    path = _config(tmp_path)
    (tmp_path / "afile").write_text("not a folder\n")
    monkeypatch.chdir(tmp_path)
    out = "afile/out" if where == "below-a-file" else "/sys/boopexp-test-tune"
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = CliRunner().invoke(main, ["tune", str(path), "--out", out, "--jobs", "1"])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot write the results folder {out!r}: "), lines
    assert lines[0].endswith("; choose another --out")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]], ids=["tune", "dry-run"])
def test_cli_tune_out_into_a_run_store_is_refused_and_nothing_written(tmp_path, dry_run):
    """Issue 20: ``tune --out`` a run's store wrote the study, trials and outputs beside games.jsonl."""
    from conftest import DEMO_CONFIG

    (tmp_path / "demo.yaml").write_text(DEMO_CONFIG)
    store = tmp_path / "store"
    ran = CliRunner().invoke(main, ["run", str(tmp_path / "demo.yaml"), "--out", str(store), "--jobs", "1", "-q",
                                    "--games-per-side", "1"])
    assert ran.exit_code == 0, ran.output
    path = _config(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = CliRunner().invoke(main, ["tune", str(path), "--out", str(store), "--jobs", "1", *dry_run])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"Error: --out {str(store)!r} is a run's store (it holds games.jsonl or sealed segments), not a tuning's "
        "folder; choose another --out"]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_shipped_tune_config_parses():
    tc = load_tune_config(TESTS.parent / "configs" / "tune-mcts-co.yaml")
    assert [p.name for p in tc.space] == ["k", "preselect_m", "discount", "uct_c"]
    assert tc.experiment.settings.budget.mode == "device" and tc.confirm.games == 400


def test_cli_dry_run_writes_nothing(tmp_path):
    path = _config(tmp_path, trials=2)
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["tune", str(path), "--out", str(out), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "does not exist yet: 2 trial(s) to play" in result.output and not out.exists()
    run_search(load_tune_config(path), out, PoolOptions(play=play_coin))
    before = sorted(p.name for p in out.iterdir())
    result = CliRunner().invoke(main, ["tune", str(path), "--out", str(out), "--dry-run"])
    assert "2 trial(s) complete, 0 to finish, 0 to ask" in result.output
    assert sorted(p.name for p in out.iterdir()) == before


def test_max_plies_is_a_search_setting():
    plain = parse_tune_config(_bad_doc({}), "t.yaml")
    capped = parse_tune_config({**_bad_doc({}), "max_plies": 200}, "t.yaml")
    assert capped.experiment.settings.max_plies == 200
    assert plain.search_hash() != capped.search_hash()
    exp = capped.with_candidates({"mcts-co.t0": {"k": 9, "preselect_m": 2, "discount": 0.8, "uct_c": 0.2}},
                                 ("mcts-co",), 1)
    assert all(t.max_plies == 200 for t in exp.tasks(exp.plan()))
