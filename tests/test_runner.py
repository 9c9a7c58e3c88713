"""The runner: resume, determinism across pools, worker deaths, failures, Ctrl-C, the dask backend."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
from types import SimpleNamespace

import pytest
from conftest import DEMO_CONFIG, fake_play_game, without_timing

from boopexp.errors import ConfigError
from boopexp.experiments import pool
from boopexp.experiments.config import load_yaml, parse_config
from boopexp.experiments.pool import FailedGame, PlayedGame, PoolOptions, check_backend, iter_outcomes
from boopexp.experiments.runner import Progress, run_plan
from boopexp.experiments.store import GameStore, StoreReader, encode_record
from boopexp.experiments.tally import forfeits
from boopexp.game.sides import Side
from boopexp.play import match

TEXT = DEMO_CONFIG.replace("name: demo", "name: t")


def config(text: str = TEXT):
    return parse_config(load_yaml(text, "t.yaml"), "t.yaml")


def stored(folder) -> dict:
    """key -> record, checking that no key appears twice."""
    records = StoreReader(folder).records()
    assert records.duplicates == 0 and records.tail is None
    return {(r["config_hash"], r["pairing"], r["game_index"]): r for r in records.records}


def planned_keys(c, plan=None) -> set:
    return {t.key for t in c.tasks(plan or c.plan())}


class Recorder(Progress):
    def __init__(self):
        self.messages, self.games, self.started = [], [], None

    def message(self, text, warning=True):
        self.messages.append(text)

    def start(self, planned, skipped, scores):
        self.started = (planned, skipped)

    def game(self, outcome, finished, planned, scores):
        self.games.append((outcome, finished, planned, {s.pairing: (s.done, s.p1_wins, s.p2_wins) for s in scores}))


@pytest.fixture
def fake(monkeypatch):
    """match.play_game replaced by the fake; returns the list of games it was asked to play."""
    calls = []

    def play(task):
        calls.append(task.key)
        return fake_play_game(task)

    monkeypatch.setattr(match, "play_game", play)
    return calls


def test_run_stores_every_planned_game_and_resume_plays_only_missing_ones(tmp_path, fake):
    c = config()
    progress = Recorder()
    report = run_plan(c, c.plan(), tmp_path, progress=progress)
    assert set(stored(tmp_path)) == planned_keys(c) and len(fake) == 8
    assert (report.planned, report.skipped, report.played, report.failed, report.interrupted) == (8, 0, 8, (), False)
    assert report.complete and progress.started == (8, 0)
    assert [g[1] for g in progress.games] == list(range(1, 9))
    done = sum(s.done for s in report.scores)
    assert done == 8 and sum(s.p1_wins + s.p2_wins for s in report.scores) == 8
    # the config it was run with is saved next to the games
    assert GameStore(tmp_path).read_config()["plan"][0]["pairing"] == "heuristics vs random"

    fake.clear()
    again = run_plan(c, c.plan(), tmp_path)
    assert fake == [] and (again.skipped, again.played) == (8, 0) and again.complete
    assert again.scores == report.scores


def test_resume_after_a_partial_run_plays_exactly_the_missing_games(tmp_path, fake):
    c = config()
    tasks = c.tasks(c.plan())
    with GameStore(tmp_path).open() as w:
        for t in tasks[::3]:
            w.append(fake_play_game(t))
    fake.clear()
    report = run_plan(c, c.plan(), tmp_path)
    assert set(fake) == {t.key for i, t in enumerate(tasks) if i % 3}
    assert report.skipped == len(tasks[::3]) and set(stored(tmp_path)) == planned_keys(c)


def test_same_records_whatever_the_order_or_the_resume_point(tmp_path, fake):
    c = config()
    run_plan(c, c.plan(), tmp_path / "a")
    tasks = c.tasks(c.plan())
    with GameStore(tmp_path / "b").open() as w:
        for t in reversed(tasks[3:]):
            w.append(fake_play_game(t))
    run_plan(c, c.plan(), tmp_path / "b")
    a, b = stored(tmp_path / "a"), stored(tmp_path / "b")
    assert {k: without_timing(r) for k, r in a.items()} == {k: without_timing(r) for k, r in b.items()}


def test_records_of_other_settings_are_kept_but_not_counted(tmp_path, fake):
    c = config()
    other = config(TEXT.replace("seed: 11", "seed: 12"))
    run_plan(other, other.plan()[:1], tmp_path)
    before = GameStore(tmp_path).games_path.read_bytes()
    report = run_plan(c, c.plan(), tmp_path)
    assert report.skipped == 0 and report.played == 8
    assert sum(s.done for s in report.scores) == 8
    assert GameStore(tmp_path).games_path.read_bytes().startswith(before)
    assert len(stored(tmp_path)) == 8 + 2
    # the other settings' config.yaml was not destroyed
    backups = list(tmp_path.glob("config.*.yaml"))
    assert len(backups) == 1 and "seed: 12" in backups[0].read_text()


def test_duplicates_in_the_store_are_counted_once(tmp_path, fake):
    c = config()
    t = c.tasks(c.plan())[0]
    GameStore(tmp_path).games_path.write_bytes(encode_record(fake_play_game(t)) * 2)
    report = run_plan(c, c.plan(), tmp_path)
    assert report.skipped == 1 and report.played == 7
    assert report.scores[0].done == 2


def test_truncated_tail_is_reported_and_its_game_replayed(tmp_path, fake):
    c = config()
    tasks = c.tasks(c.plan())
    line = encode_record(fake_play_game(tasks[1]))
    games = GameStore(tmp_path).games_path
    games.write_bytes(encode_record(fake_play_game(tasks[0])) + line[: len(line) // 2])
    progress = Recorder()
    run_plan(c, c.plan(), tmp_path, progress=progress)
    assert any(f"{games} line 2" in m and "truncated" in m for m in progress.messages)
    assert any("corrupt-" in m for m in progress.messages)
    assert set(stored(tmp_path)) == planned_keys(c)
    assert tasks[1].key in fake and tasks[0].key not in fake


def test_only_selected_pairings_are_played(tmp_path, fake):
    c = config()
    report = run_plan(c, c.plan(), tmp_path, pairings=["vanilla vs vanilla"])
    assert {k[1] for k in stored(tmp_path)} == {"vanilla vs vanilla"}
    assert [s.pairing for s in report.scores] == ["vanilla vs vanilla"] and report.planned == 4
    assert len(GameStore(tmp_path).read_config()["plan"]) == 3


def test_a_game_that_raises_fails_alone(tmp_path, monkeypatch):
    c = config()
    bad = c.tasks(c.plan())[2]

    def play(task):
        if task.key == bad.key:
            raise ValueError("boom")
        return fake_play_game(task)

    monkeypatch.setattr(match, "play_game", play)
    progress = Recorder()
    report = run_plan(c, c.plan(), tmp_path, progress=progress)
    assert [o.task.key for o in report.failed] == [bad.key]
    assert report.failed[0].error == "ValueError: boom" and "Traceback" in report.failed[0].detail
    assert set(stored(tmp_path)) == planned_keys(c) - {bad.key}
    assert not report.complete
    # a failed game is a type of its own, without a record; a played game always has its record
    assert isinstance(report.failed[0], FailedGame) and not hasattr(report.failed[0], "record")
    played = [o for o, *_ in progress.games if o.task.key != bad.key]
    assert len(played) == 7 and all(isinstance(o, PlayedGame) and o.record["game_index"] == o.task.game_index
                                    for o in played)


def test_a_game_stopped_at_the_ply_limit_is_stored_once(tmp_path, monkeypatch):
    c = config()
    limited = c.tasks(c.plan())[4]

    def play(task):
        record = fake_play_game(task)
        if task.key == limited.key:
            record.update(winner=None, winner_agent=None, winner_colour=None, termination="ply_limit")
        return record

    monkeypatch.setattr(match, "play_game", play)
    report = run_plan(c, c.plan(), tmp_path)
    assert report.complete and not report.failed
    vanilla = next(s for s in report.scores if s.pairing == "vanilla vs vanilla")
    assert vanilla.no_winner == 1 and vanilla.p1_wins + vanilla.p2_wins == 3
    assert run_plan(c, c.plan(), tmp_path).played == 0  # finished: not replayed


def test_a_record_of_the_wrong_game_is_refused(tmp_path, monkeypatch):
    c = config()
    first = c.tasks(c.plan())[0]
    monkeypatch.setattr(match, "play_game", lambda task: fake_play_game(first))
    report = run_plan(c, c.plan(), tmp_path)
    assert report.played == 1 and len(report.failed) == 7
    assert "not of" in report.failed[0].error
    assert all(isinstance(o, FailedGame) and not hasattr(o, "record") for o in report.failed)


def test_a_resumed_run_reports_the_stored_forfeits_and_its_own(tmp_path, monkeypatch):
    """The report's forfeits are the plan's, previous runs included, as tally.forfeits counts the store."""
    c = config()

    def play(task):  # every odd game, p1's agent forfeits it
        record = fake_play_game(task)
        if task.game_index % 2:
            record.update(winner=Side.P2, winner_agent=task.p2.name, termination="agent_error",
                          forfeit={"player": Side.P1, "agent": task.p1.name, "error": "boom"})
        return record

    monkeypatch.setattr(match, "play_game", play)
    first = run_plan(c, c.plan(), tmp_path, pairings=["vanilla vs vanilla"])
    assert first.forfeits == {"vanilla": {"agent_error": 2}}
    report = run_plan(c, c.plan(), tmp_path)
    assert report.skipped == 4 and report.played == 4 and report.complete
    entries = [p.entry() for p in c.plan()]
    assert report.forfeits == forfeits(entries, stored(tmp_path).values()) == {
        "vanilla": {"agent_error": 2}, "heuristics": {"agent_error": 1}, "random": {"agent_error": 1}}


def test_run_plan_reads_in_one_screen():
    """The issue's bar (issue 34, item 4): run_plan, signature and docstring included, in 80 lines."""
    assert len(inspect.getsourcelines(run_plan)[0]) <= 80


def test_ctrl_c_keeps_finished_games(tmp_path, monkeypatch):
    c = config()
    tasks = c.tasks(c.plan())

    def play(task):
        if task.key == tasks[3].key:
            raise KeyboardInterrupt
        return fake_play_game(task)

    monkeypatch.setattr(match, "play_game", play)
    report = run_plan(c, c.plan(), tmp_path)
    assert report.interrupted and report.played == 3
    assert set(stored(tmp_path)) == {t.key for t in tasks[:3]}
    monkeypatch.setattr(match, "play_game", fake_play_game)
    assert run_plan(c, c.plan(), tmp_path).complete


def test_jobs_1_and_jobs_2_give_identical_records(tmp_path, monkeypatch):
    monkeypatch.setattr(match, "play_game", fake_play_game)  # pickled by reference to the workers
    c = config()
    run_plan(c, c.plan(), tmp_path / "one", PoolOptions(jobs=1))
    run_plan(c, c.plan(), tmp_path / "two", PoolOptions(jobs=2))
    one, two = stored(tmp_path / "one"), stored(tmp_path / "two")
    assert set(one) == planned_keys(c)
    assert {k: without_timing(r) for k, r in one.items()} == {k: without_timing(r) for k, r in two.items()}


# Two tests, not one: with a once-dying game and a poison game in one run, whether the once-dying
# game has started before the poison game breaks the pool is a matter of timing (if not, its lone
# retry is its first real attempt, so it rightly dies "twice"); each behaviour alone is exact.
def test_a_worker_killed_once_is_retried(tmp_path):
    c = config()
    tasks = c.tasks(c.plan())
    transient = tasks[1]
    key = f"{transient.pairing}#{transient.game_index}"
    (tmp_path / "marks").mkdir()
    play = functools.partial(fake_play_game, die=(key,), die_once_dir=str(tmp_path / "marks"))
    progress = Recorder()
    report = run_plan(c, c.plan(), tmp_path / "res", PoolOptions(jobs=2, play=play), progress=progress)
    assert report.failed == ()
    assert set(stored(tmp_path / "res")) == planned_keys(c)
    assert any("a worker died" in m for m in progress.messages)


def test_a_poison_game_fails_alone(tmp_path):
    c = config()
    tasks = c.tasks(c.plan())
    poison = tasks[5]
    key = f"{poison.pairing}#{poison.game_index}"
    progress = Recorder()
    options = PoolOptions(jobs=2, play=functools.partial(fake_play_game, die=(key,)))
    report = run_plan(c, c.plan(), tmp_path / "res", options, progress=progress)
    # the games in flight beside it die with the pool, are retried alone and stored
    assert [o.task.key for o in report.failed] == [poison.key]
    assert "died twice" in report.failed[0].error
    assert set(stored(tmp_path / "res")) == planned_keys(c) - {poison.key}
    assert any("a worker died" in m for m in progress.messages)


def test_iter_outcomes_in_process_yields_in_order(fake):
    c = config()
    tasks = c.tasks(c.plan())
    outcomes = list(iter_outcomes(tasks, PoolOptions(jobs=1)))
    assert [o.task for o in outcomes] == tasks and all(o.ok and o.seconds >= 0 for o in outcomes)


def test_backend_checks(monkeypatch):
    with pytest.raises(ConfigError, match="'ray'.*loky, dask"):
        check_backend("ray")
    with pytest.raises(ConfigError, match="--scheduler 'tcp://h:8786' needs --backend dask"):
        check_backend("loky", "tcp://h:8786")
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask were not installed
    with pytest.raises(ConfigError, match=r"pip install 'boopexp\[dask\]'"):
        check_backend("dask")


def test_bad_backend_is_refused_before_anything_is_written(tmp_path, fake):
    c = config()
    with pytest.raises(ConfigError):
        run_plan(c, c.plan(), tmp_path / "res", PoolOptions(backend="ray"))
    assert not (tmp_path / "res").exists()


# --------------------------------------------------------------------------------------------
# real games (random/heuristics are milliseconds per game; MCTS with 2 iterations per move)

REAL = """\
name: real
seed: 3
games_per_side: 2
budget: {mode: iterations, iterations: 2}
pairings:
  - [heuristics, random]
  - [vanilla, heuristics]
"""


@pytest.mark.e2e_real
def test_real_games_jobs_1_and_jobs_2_identical(tmp_path, real_play_game):
    c = config(REAL)
    r1 = run_plan(c, c.plan(), tmp_path / "one", PoolOptions(jobs=1))
    r2 = run_plan(c, c.plan(), tmp_path / "two", PoolOptions(jobs=2))
    assert r1.complete and r2.complete and not r1.failed and not r2.failed
    one, two = stored(tmp_path / "one"), stored(tmp_path / "two")
    assert set(one) == planned_keys(c)
    assert {k: without_timing(r) for k, r in one.items()} == {k: without_timing(r) for k, r in two.items()}
    for (_config_hash, pairing, _index), r in one.items():
        assert (r["p1"] + " vs " + r["p2"], r["experiment"]) == (pairing, "real")


@pytest.mark.e2e_real
def test_dask_local_cluster_matches_loky(tmp_path, real_play_game):
    pytest.importorskip("distributed")
    c = config(REAL)
    progress = Recorder()
    run_plan(c, c.plan(), tmp_path / "loky", PoolOptions(jobs=2))
    report = run_plan(c, c.plan(), tmp_path / "dask", PoolOptions(jobs=2, backend="dask"), progress=progress)
    assert report.complete and not report.failed
    banner = next(m for m in progress.messages if m.startswith("dask: 2 worker"))
    # the local cluster asks for a dashboard, which only bokeh serves
    assert ("dashboard http" in banner) == (importlib.util.find_spec("bokeh") is not None), banner
    loky, dask = stored(tmp_path / "loky"), stored(tmp_path / "dask")
    assert {k: without_timing(r) for k, r in loky.items()} == {k: without_timing(r) for k, r in dask.items()}


class _FakeDaskClient:
    """What :func:`boopexp.experiments.pool.dask_banner` asks a dask Client; its scheduler's HTTP server
    holds ``applications`` (distributed attaches its bokeh dashboard there). Its scheduler is gone
    for ``nthreads``, which the run must not call: under load, the chaos test's scheduler died
    during that call and the run ended in a CommClosedError traceback instead of its one line."""

    def __init__(self, applications):
        self.applications = applications
        self.scheduler = SimpleNamespace(address="tcp://h:8786")
        self.dashboard_link = "http://h:8787/status"

    def scheduler_info(self):  # distributed keeps its last copy when the scheduler cannot be reached
        return {"workers": {"tcp://w1": {"nthreads": 1}, "tcp://w2": {"nthreads": 1}}}

    def nthreads(self):  # a call to the scheduler: raises when the scheduler has just died
        from distributed.comm import CommClosedError

        raise CommClosedError("in <TCP (closed) ConnectionPool.ncores>: ConnectionResetError")

    def run_on_scheduler(self, function):
        http = SimpleNamespace(applications=self.applications)
        return function(dask_scheduler=SimpleNamespace(http_application=http))


def test_dask_banner_names_the_dashboard_only_when_the_scheduler_serves_one():
    bokeh = "<distributed.dashboard.core.BokehApplication object at 0x7f>"
    assert pool.dask_banner(_FakeDaskClient([bokeh])) == (
        "dask: 2 worker thread(s) at tcp://h:8786, dashboard http://h:8787/status")
    # `dask scheduler --no-dashboard` (or no bokeh): an HTTP server for metrics, no dashboard
    assert pool.dask_banner(_FakeDaskClient([])) == "dask: 2 worker thread(s) at tcp://h:8786"
