"""``boopexp serve``: the JSON API and pages through FastAPI's test client (every refused request is
a 4xx with one line of JSON), the command's own mistakes, and what serving loads and writes."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import LAB_CONFIG, one_line

pytest.importorskip("fastapi", reason="boopexp serve needs the 'web' extra (make install includes it)")

from fastapi.testclient import TestClient  # noqa: E402

from boopexp.experiments.store import GameStore, StoreReader  # noqa: E402, StoreReader
from boopexp.interfaces.cli import main  # noqa: E402
from boopexp.interfaces.commands.serve import is_loopback  # noqa: E402
from boopexp.interfaces.web.app import create_app  # noqa: E402

RESULTS = Path(__file__).resolve().parent.parent / "results"
#: a small committed store (200 device-mode games, sealed): copied, never served in place
SOURCE = RESULTS / "a9-fixed"
PAIRING = "mcts-co vs mcts-co"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root with a copy of a committed store, a nested one, report files, and beside it (outside
    the root) a store and a secret that links inside the root point to."""
    root = tmp_path / "root"
    shutil.copytree(SOURCE, root / "a9-fixed")
    shutil.copytree(SOURCE, root / "study" / "inner")
    (root / "tables").mkdir()
    (root / "tables" / "table1.md").write_text("| a |\n")
    (root / "tables" / "fig.png").write_bytes(b"\x89PNG fake")
    outside = tmp_path / "outside"
    shutil.copytree(SOURCE, outside / "store")
    (outside / "secret.png").write_bytes(b"TOP-SECRET-BYTES")
    os.symlink(outside / "store", root / "link")  # a store through a link out of the root
    (root / "evil").mkdir()
    os.symlink(outside / "store" / "games-0001.jsonl.gz", root / "evil" / "games-0001.jsonl.gz")
    os.symlink(outside / "secret.png", root / "tables" / "leak.png")
    return root


@pytest.fixture
def client(root: Path) -> TestClient:
    return TestClient(create_app(root, warm=False))


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def _stored(pairing: str, index: int) -> dict:
    records = StoreReader(SOURCE).records().records
    return next(r for r in records if r["pairing"] == pairing and r["game_index"] == index)


def test_api_stores_lists_every_store_under_the_root_with_its_progress(client: TestClient):
    body = client.get("/api/stores").json()
    assert body["root"] == "root"
    # the stores reached through links out of the root ('link', 'evil') are not listed
    assert [s["folder"] for s in body["stores"]] == ["a9-fixed", "study/inner"]
    for s in body["stores"]:
        assert s["total"] == {"done": 200, "planned": 200} and s["error"] is None
        assert {p["pairing"]: p["done"] for p in s["pairings"]} == {PAIRING: 100, "mcts+P vs mcts+P": 100}


def test_api_game_is_the_stored_record_as_build_record_returns_it(client: TestClient):
    response = client.get("/api/game", params={"store": "study/inner", "pairing": PAIRING, "index": 7})
    assert response.status_code == 200
    assert response.json() == json.loads(json.dumps(_stored(PAIRING, 7)))


def test_api_store_lists_games_and_report_files(client: TestClient):
    body = client.get("/api/store", params={"store": "a9-fixed"}).json()
    assert len(body["games"]) == body["games_total"] == 200 and body["status"]["folder"] == "a9-fixed"
    assert {"pairing", "game_index", "winner", "termination"} <= set(body["games"][0])
    reports = client.get("/api/reports").json()["reports"]
    assert reports == [{"folder": "tables", "files": ["tables/fig.png", "tables/table1.md"]}]  # not leak.png
    assert client.get("/files", params={"path": "tables/fig.png"}).content == b"\x89PNG fake"


def test_api_store_pages_its_games(client: TestClient):
    """Issue 33: /api/store returned every game (13 MB for 100,000): a page at a time now, by
    pairing, settings hash and index."""
    every = client.get("/api/store", params={"store": "a9-fixed", "limit": 200}).json()["games"]
    assert [(g["pairing"], g["game_index"]) for g in every] == (
        [("mcts+P vs mcts+P", i) for i in range(100)] + [(PAIRING, i) for i in range(100)])
    page = client.get("/api/store", params={"store": "a9-fixed", "offset": 150, "limit": 100}).json()
    assert (page["games"], page["games_total"], page["offset"], page["limit"]) == (every[150:], 200, 150, 100)
    assert client.get("/api/store", params={"store": "a9-fixed", "limit": 0}).json()["games"] == []
    for params, needle in [({"limit": 10_001}, "query parameter 'limit': Input should be less than or equal to 10000"),
                           ({"offset": -1}, "query parameter 'offset': Input should be greater than or equal to 0"),
                           ({"offset": 2**63}, "query parameter 'offset': Input should be less than or equal to")]:
        response = client.get("/api/store", params={"store": "a9-fixed", **params})
        assert response.status_code == 400 and needle in response.json()["error"], response.text


@pytest.mark.parametrize("params, status, needle", [
    ({"store": "../outside/store", "pairing": PAIRING, "index": 0}, 400, "without '..'"),
    ({"store": "a9-fixed/../../outside/store", "pairing": PAIRING, "index": 0}, 400, "without '..'"),
    ({"store": "/etc", "pairing": PAIRING, "index": 0}, 400, "relative path"),
    ({"store": "ABSOLUTE", "pairing": PAIRING, "index": 0}, 400, "relative path"),
    ({"store": "link", "pairing": PAIRING, "index": 0}, 400, "leads out of the root"),
    ({"store": "evil", "pairing": PAIRING, "index": 0}, 400, "leads out of the root"),
    ({"store": "", "pairing": PAIRING, "index": 0}, 400, "not a folder under the root"),
    ({"store": "nothere", "pairing": PAIRING, "index": 0}, 404, "no store 'nothere'"),
    ({"store": "tables", "pairing": PAIRING, "index": 0}, 404, "no store 'tables'"),
    ({"store": "a9-fixed", "pairing": "mcts-co vs nobody", "index": 0}, 404, "its pairings: mcts+P vs mcts+P, "),
    ({"store": "a9-fixed", "pairing": PAIRING, "index": 100}, 404, "its indices: 0..99"),
    ({"store": "a9-fixed", "pairing": PAIRING, "index": -1}, 400,
     "query parameter 'index': Input should be greater than or equal to 0 (got '-1')"),
    # beyond the store's 64-bit columns: a 400 like any bad parameter (was a 500, issue 33)
    ({"store": "a9-fixed", "pairing": PAIRING, "index": 2**63}, 400,
     f"query parameter 'index': Input should be less than or equal to {2**63 - 1} (got '{2**63}')"),
    ({"store": "a9-fixed", "pairing": PAIRING, "index": 10**30}, 400, "less than or equal to"),
    ({"store": "a9-fixed", "pairing": PAIRING, "index": "x"}, 400, "query parameter 'index'"),
    ({"store": "a9-fixed", "pairing": PAIRING}, 400, "query parameter 'index': Field required"),
    ({"pairing": PAIRING, "index": 0}, 400, "query parameter 'store'"),
    ({"store": "a9-fixed", "pairing": PAIRING, "index": 0, "config_hash": "ffff"}, 404, "settings hash starting"),
])
@pytest.mark.parametrize("route", ["/api/game", "/api/game/plies", "/api/game/search"])
def test_a_bad_game_request_is_a_4xx_with_one_line_of_json(root: Path, client: TestClient, route, params, status,
                                                            needle):
    if params.get("store") == "ABSOLUTE":
        params = {**params, "store": str(root / "a9-fixed")}
    if route == "/api/game/search":
        params = {**params, "ply": 1}
    before = _tree(root.parent)
    response = client.get(route, params=params)
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == ["error"] and "\n" not in body["error"] and needle in body["error"], body
    assert "Traceback" not in response.text and str(root.parent / "outside") not in body["error"]  # no path leaked
    assert _tree(root.parent) == before  # nothing written, no lock file


@pytest.mark.parametrize("path, status", [
    ("../outside/secret.png", 400), ("tables/leak.png", 400), ("/etc/passwd", 400),
    ("a9-fixed/config.yaml", 404), ("tables/none.png", 404),
])
def test_a_bad_file_request_is_refused(client: TestClient, path, status):
    response = client.get("/files", params={"path": path})
    assert response.status_code == status and list(response.json()) == ["error"]
    assert b"TOP-SECRET-BYTES" not in response.content


def test_the_search_that_chose_a_move_is_re_run_from_the_record(client: TestClient):
    """/api/game/search: the root of the search of a stored device-mode game's move, as
    ``boopexp replay --root-at`` gives it (replay.root_search), the move played ranked first."""
    from boopexp.play.replay import root_search

    record = _stored(PAIRING, 3)
    for ply in (1, 2, len(record["moves"])):
        response = client.get("/api/game/search", params={"store": "a9-fixed", "pairing": PAIRING, "index": 3,
                                                          "ply": ply})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body == json.loads(json.dumps(root_search(record, ply).to_dict()))
        assert body["move"] == record["moves"][ply - 1] and body["children"][0]["move"] == body["chosen"]
        assert body["side"] == ("p1" if ply % 2 else "p2") and body["agent"] == "mcts-co"
    for ply, needle in ((0, "query parameter 'ply': Input should be greater than or equal to 1"),
                        (len(record["moves"]) + 1, "is not a move of the game"), ("x", "query parameter 'ply'"),
                        (2**63, f"query parameter 'ply': Input should be less than or equal to {2**63 - 1}")):
        bad = client.get("/api/game/search", params={"store": "a9-fixed", "pairing": PAIRING, "index": 3, "ply": ply})
        assert bad.status_code == 400 and list(bad.json()) == ["error"] and needle in bad.json()["error"], bad.text


def test_the_searches_of_a_game_are_re_played_once(client: TestClient, monkeypatch):
    """Issue 33: every /api/game/search re-played the game to its ply (15 s at ply 999). One
    re-play keeps the searches it passes: asking again, or for an earlier ply, plays nothing."""
    from boopexp.play import replay

    record = _stored(PAIRING, 3)
    plays = []
    real = replay.play_game
    monkeypatch.setattr(replay, "play_game", lambda *a, **k: plays.append(1) or real(*a, **k))
    params = {"store": "a9-fixed", "pairing": PAIRING, "index": 3}
    last = len(record["moves"])
    for ply in (last - 1, last - 1, 1, 2, last - 5):
        response = client.get("/api/game/search", params={**params, "ply": ply})
        assert response.status_code == 200 and response.json()["ply"] == ply, response.text
    assert len(plays) == 1
    monkeypatch.setattr(replay, "play_game", real)
    assert response.json() == json.loads(json.dumps(replay.root_search(record, last - 5).to_dict()))


def test_a_game_under_several_settings_asks_for_its_hash(root: Path, client: TestClient):
    line = gzip.decompress((root / "a9-fixed" / "games-0001.jsonl.gz").read_bytes()).splitlines()[0]
    record = json.loads(line)
    record["config_hash"] = "0123456789abcdef"
    (root / "a9-fixed" / "games.jsonl").write_text(json.dumps(record) + "\n")
    params = {"store": "a9-fixed", "pairing": record["pairing"], "index": record["game_index"]}
    response = client.get("/api/game", params=params)
    assert response.status_code == 409 and "choose config_hash from: " in response.json()["error"]
    chosen = client.get("/api/game", params={**params, "config_hash": "0123"})
    assert chosen.status_code == 200 and chosen.json()["config_hash"] == "0123456789abcdef"


def test_plies_walk_the_game_with_its_pushes_and_promotions(client: TestClient):
    from boopexp.engine.state import N_SQUARES
    from boopexp.game import notation
    from boopexp.play.replay import walk

    for index in range(3):
        record = _stored(PAIRING, index)
        body = client.get("/api/game/plies", params={"store": "a9-fixed", "pairing": PAIRING, "index": index}).json()
        assert len(body["positions"]) == len(record["moves"]) + 1 == len(body["plies"]) + 1
        final = walk(record).state
        board = {notation.square_name(q): {-1: "b", -2: "B", 1: "r", 2: "R"}[int(final[q])]
                 for q in range(N_SQUARES) if final[q]}
        assert body["positions"][-1]["board"] == board
        for ply in body["plies"]:
            if ":" in ply["move"]:  # a chosen promotion: its group is the one the record names
                group = ply["move"].split(":")[1]
                assert sorted(ply["promoted"]) == sorted(group[i:i + 2] for i in range(0, len(group), 2))
        assert any(p["pushes"] for p in body["plies"]) and any(p["promoted"] for p in body["plies"])


def test_pages_render_and_a_bad_page_request_is_an_html_error(client: TestClient):
    assert "Experiments" in client.get("/").text
    assert client.get("/store", params={"store": "a9-fixed"}).status_code == 200
    page = client.get("/game", params={"store": "a9-fixed", "pairing": PAIRING, "index": 0})
    assert page.status_code == 200 and 'id="game-data"' in page.text
    bad = client.get("/game", params={"store": "../outside/store", "pairing": PAIRING, "index": 0})
    assert bad.status_code == 400 and "without &#39;..&#39;" in bad.text and "Traceback" not in bad.text
    assert client.get("/nowhere").status_code == 404


def test_a_game_index_beyond_64_bits_is_a_400_on_the_page_too(client: TestClient):
    page = client.get("/game", params={"store": "a9-fixed", "pairing": PAIRING, "index": 2**63})
    assert page.status_code == 400 and "less than or equal to" in page.text and "Traceback" not in page.text


def test_every_integer_parameter_of_every_route_is_bounded(client: TestClient):
    """One mechanism for every route's integers: declared with their range, checked by FastAPI
    (a new route's index or ply without one fails here)."""
    from annotated_types import Ge, Le

    integers = 0
    for route in client.app.routes:
        dependant = getattr(route, "dependant", None)
        for param in [] if dependant is None else dependant.query_params + dependant.path_params:
            if param.field_info.annotation is int:
                integers += 1
                kinds = {type(m) for m in param.field_info.metadata}
                assert {Ge, Le} <= kinds, (route.path, param.name)
    assert integers == 7  # index on four routes, ply, a store's page (offset, limit)


def test_a_damaged_store_is_a_422_that_shows_paths_relative_to_the_root(root: Path, client: TestClient):
    (root / "a9-fixed" / "games.jsonl").write_text('{"broken": \n')
    for url, params in [("/api/store", {"store": "a9-fixed"}),
                        ("/api/game", {"store": "a9-fixed", "pairing": PAIRING, "index": 1})]:
        response = client.get(url, params=params)
        assert response.status_code == 422, response.text
        assert response.json()["error"].startswith("cannot read the store: a9-fixed/games.jsonl line 1: not valid JSON")
        assert str(root) not in response.text
    (listed,) = [s for s in client.get("/api/stores").json()["stores"] if s["folder"] == "a9-fixed"]
    assert listed["error"].startswith("a9-fixed/games.jsonl line 1: not valid JSON"), listed["error"]


def test_the_api_is_described_by_openapi(client: TestClient):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/stores", "/api/game", "/api/game/plies", "/api/store"} <= set(paths)


PROBE = """
import json, sys
from fastapi.testclient import TestClient
from boopexp.experiments.config import load_config
from boopexp.interfaces.web.app import create_app
client = TestClient(create_app(sys.argv[1], warm=False, configs=[load_config(p) for p in sys.argv[2:]]))
for url in ["/", "/api/stores", "/api/store?store=a9-fixed", "/store?store=a9-fixed",
            "/api/game?store=a9-fixed&pairing=mcts-co%20vs%20mcts-co&index=0", "/play", "/api/opponents"]:
    assert client.get(url).status_code == 200, url
print(json.dumps(sorted(m for m in ("numba", "matplotlib") if m in sys.modules)))
"""


def test_serving_the_dashboard_and_a_record_loads_no_engine(root: Path):
    """Nor does offering a config's agents (a plugin among them) on /play: only a game played does."""
    proc = subprocess.run([sys.executable, "-c", PROBE, str(root), str(EXAMPLES / "greedy.yaml")], capture_output=True,
                          text=True, check=True)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_serve_refuses_a_missing_root_and_a_port_in_use(tmp_path: Path):
    assert "--root" in one_line(CliRunner().invoke(main, ["serve", "--root", str(tmp_path / "no")]), 2)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        line = one_line(CliRunner().invoke(main, ["serve", "--root", str(tmp_path), "--port", str(port)]), 2)
    assert line.startswith(f"Error: cannot listen on 127.0.0.1:{port}: ") and "choose another --port" in line


def test_serve_refuses_a_play_out_it_cannot_write_at_start(tmp_path: Path):
    (tmp_path / "file").write_text("x")
    for folder in ("/proc/x", str(tmp_path / "file" / "play")):
        line = one_line(CliRunner().invoke(main, ["serve", "--root", str(tmp_path), "--play-out", folder,
                                                  "--port", "0"]), 2)
        assert line.startswith(f"Error: --play-out: cannot write the results folder {folder!r}: "), line
        assert line.endswith("; choose another --play-out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_only_loopback_hosts_are_quiet():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.1.2.3")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.org")


def test_serve_starts_warns_for_a_public_host_and_serves(root: Path):
    """A real server process (port 0: a free one): the line with its address, the warning for a
    host reachable by others, and the stores served; stopped by SIGTERM."""
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "boopexp", "serve", "--root", str(root), "--host", "0.0.0.0",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        warning = proc.stderr.readline()
        assert warning.startswith("Warning: --host 0.0.0.0 is reachable from other machines")
        line = proc.stdout.readline()
        assert line.startswith(f"Serving the stores under {root}/ at http://0.0.0.0:"), line
        port = int(line.split(":")[2].split("/")[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stores", timeout=10) as response:
            assert len(json.load(response)["stores"]) == 2
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# ---------------------------------------------------------------------------------------------
# playing in the browser (the API the /play page calls)


def _play_out(client: TestClient, game: dict) -> dict:
    """Play the first legal move (and the first group when asked) until the game is over."""
    import time

    while not game["over"]:
        if game["thinking"]:
            time.sleep(0.02)
            game = client.get(f"/api/play/{game['id']}").json()
            continue
        move = game["legal"][0]
        response = client.post(f"/api/play/{game['id']}/move", json={"move": move})
        if response.status_code == 409 and "choices" in response.json():
            response = client.post(f"/api/play/{game['id']}/move", json={"move": move, "choice": 0})
        assert response.status_code == 200, response.json()
        game = response.json()
    return game


def test_a_game_played_against_random_is_saved_as_a_normal_record(root: Path, client: TestClient):
    from boopexp.play.replay import walk

    before = _tree(root / "a9-fixed")
    game = client.post("/api/play", json={"agent": "random", "colour": "red", "budget": "iterations",
                                          "iterations": 5, "seed": 7}).json()
    game = _play_out(client, game)
    saved = game["saved"]
    assert saved["store"] == "play" and saved["pairing"] == "random vs human" and saved["problem"] is None
    (record,) = StoreReader(root / "play").records().records
    assert record["p2"] == "human" and record["moves"] == game["moves"] and record["experiment"] == "play"
    walk(record)  # the saved game replays, its outcome as recorded
    shown = client.get("/api/game", params={"store": "play", "pairing": saved["pairing"], "index": saved["index"]})
    assert shown.json() == json.loads(json.dumps(record))
    assert _tree(root / "a9-fixed") == before  # only the play folder is written
    again = client.post(f"/api/play/{game['id']}/move", json={"move": "a1"})
    assert again.status_code == 409 and again.json() == {"error": "the game is over (it is saved)"}


def _new_folders(folder: Path, prefix: str, before: set[str]) -> set[str]:
    return {p.name for p in folder.iterdir() if p.name.startswith(prefix)} - before


def test_a_game_ending_while_the_play_folder_is_locked_is_kept_never_saved_elsewhere(
        root: Path, client: TestClient, tmp_path: Path, monkeypatch):
    """Issue 33: a game the play folder could not take was "rescued" into the directory the
    server was started from. The server writes nowhere but its play folder: the game is kept and
    its state says why it is not saved (its record with it)."""
    import tempfile

    from boopexp.interfaces.play_store import RESCUE_PREFIX

    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    temp = Path(tempfile.gettempdir())
    before = _new_folders(temp, RESCUE_PREFIX, set())
    client.app.state.games.save_wait = 0  # do not wait for the lock held below
    game = client.post("/api/play", json={"agent": "random", "budget": "iterations", "iterations": 5}).json()
    with GameStore(root / "play").open():  # another process appending to the play folder
        game = _play_out(client, game)
    saved = game["saved"]
    assert saved["folder"] is None and saved["problem"].startswith("play is being written by another boopexp process")
    assert saved["record"]["moves"] == game["moves"] and "store" not in saved
    assert list((tmp_path / "cwd").iterdir()) == [] and _new_folders(temp, RESCUE_PREFIX, before) == set()
    assert not StoreReader(root / "play").records().records


def test_games_started_together_probe_the_play_folder_one_at_a_time(root: Path, client: TestClient, monkeypatch):
    """Hostile trial of issue 33: 20 first games at once got 422s ("cannot write the results folder
    'play': File exists", "No such file or directory (play/.play-probe-…)"): each new game's probe
    made ROOT/play and removed it again while another's probe was in it. Here the first probe goes
    on only once the second game's request has begun its probe (before the fix) or waits for the
    server's write lock (the fix); the second writes its probe file only after the first ended."""
    import tempfile
    import threading

    from boopexp.interfaces import play_store

    assert not (root / "play").exists()
    second, ended = threading.Event(), threading.Event()
    real_check, real_mkstemp = play_store.check_out, tempfile.mkstemp
    games = client.app.state.games  # type: ignore[attr-defined]
    real_lock, calls = games._writing, []

    class Lock:  # the server's write lock, telling when a second request waits for it
        def __enter__(self):
            if not real_lock.acquire(blocking=False):
                second.set()
                real_lock.acquire()

        def __exit__(self, *exc):
            real_lock.release()

    def check_out(out):
        calls.append(1)
        nth = len(calls)
        if nth == 2:
            second.set()
        try:
            return real_check(out)
        finally:
            if nth == 1:
                ended.set()

    def mkstemp(*args, **kwargs):
        if len(calls) == 1:
            assert second.wait(60)  # the first probe: the second request has come
        else:
            assert ended.wait(60)  # the second: (before the fix) the first has removed the folder
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(games, "_writing", Lock())
    monkeypatch.setattr(play_store, "check_out", check_out)
    monkeypatch.setattr(play_store.tempfile, "mkstemp", mkstemp)
    answers: list[int] = []
    threads = [threading.Thread(target=lambda s=s: answers.append(client.post(
        "/api/play", json={"agent": "random", "budget": "iterations", "iterations": 2, "seed": s}).status_code))
        for s in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert answers == [200, 200] and len(calls) == 2


def test_two_games_ending_together_are_both_saved_in_the_play_folder(root: Path, client: TestClient,
                                                                    tmp_path: Path, monkeypatch):
    """The second save used to find the play folder locked by the server's own first save. Here
    the first save holds the folder's lock until the second game has ended too."""
    import threading

    from boopexp.experiments.store import StoreWriter
    from boopexp.interfaces.web.play import Games

    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    ended, tried = threading.Semaphore(0), threading.Event()
    real_save, real_open, real_append = Games._save, GameStore.open, StoreWriter.append
    appends = []

    def save(self, game):
        ended.release()
        return real_save(self, game)

    def open_(self):
        if appends:
            tried.set()  # a second save tries the folder while the first holds it
        return real_open(self)

    def append(self, record):
        appends.append(record)
        if len(appends) == 1:
            assert ended.acquire(timeout=60)  # both games have ended
            tried.wait(1.0)  # (the fixed server's second save waits for the first, so never comes)
        return real_append(self, record)

    monkeypatch.setattr(Games, "_save", save)
    monkeypatch.setattr(GameStore, "open", open_)
    monkeypatch.setattr(StoreWriter, "append", append)
    games = [client.post("/api/play", json={"agent": "random", "budget": "iterations", "iterations": 5,
                                            "seed": seed}).json() for seed in (1, 2)]
    done: list[dict] = []
    threads = [threading.Thread(target=lambda g=g: done.append(_play_out(client, g))) for g in games]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(done) == 2
    assert [g["saved"]["folder"] for g in done] == [str(root / "play")] * 2, [g["saved"] for g in done]
    assert len(StoreReader(root / "play").records().records) == 2
    assert list((tmp_path / "cwd").iterdir()) == []


@pytest.mark.parametrize("options, needle", [
    ({"agent": "nobody"}, "nobody"),
    ({"colour": "green"}, "colour = 'green' is not allowed; allowed: blue, red"),
    ({"budget": "wall"}, "budget = 'wall' is not allowed; allowed: device, iterations"),
    ({"budget": "iterations", "iterations": 0}, "iterations = 0 must be a positive integer, at most 1,000,000"),
    # the settings are checked as the CLI's options and a config's keys are (issue 33): the same
    # bounds, the same messages, booleans and text are not numbers
    ({"budget": "device", "seconds": 1e308}, "seconds = 1e+308 must be a positive number of seconds, at most 600"),
    ({"budget": "iterations", "iterations": 1e30}, "iterations = 1e+30 must be a positive integer, at most 1,000,000"),
    ({"budget": "iterations", "iterations": 10**7}, "iterations = 10000000 must be a positive integer, at most"),
    ({"seconds": True}, "seconds = True must be a positive number of seconds"),
    ({"seconds": "1"}, "seconds = '1' must be a positive number of seconds"),
    ({"budget": "device", "iterations": 80}, "unknown key iterations (value 80) for mode 'device'; allowed: budget, "
                                             "seconds"),
    ({"seed": -1}, "seed = -1 must be an integer from 0 to 2^64-1 (18446744073709551615)"),
    ({"seed": 2**64}, f"seed = {2**64} must be an integer from 0 to 2^64-1"),
    ({"seed": "abc"}, "seed = 'abc' must be an integer from 0 to 2^64-1"),
    ({"seed": True}, "seed = True must be an integer from 0 to 2^64-1"),
    ({"seed": 1.5}, "seed = 1.5 must be an integer"),
    ('{"seed": 1e400}', "seed = inf must be an integer from 0 to 2^64-1"),
    ({"speed": 3}, "unknown key speed (value 3); allowed: agent, colour, config, budget, seconds, iterations, seed, "
                   "game"),
    # a request names a built-in game only: never a module to import (a config's own game is its config's)
    ({"game": "chess"}, "game = 'chess' is not allowed; allowed: boop, connect-four"),
    ({"game": "tictactoe.game"}, "game = 'tictactoe.game' is not allowed; allowed: boop, connect-four"),
    ({"game": {"module": "os"}}, "game = {'module': 'os'} is not allowed; allowed: boop, connect-four"),
    ({"game": "connect-four", "agent": "nobody"}, "nobody"),
])
def test_a_bad_new_game_is_a_400_with_one_line(client: TestClient, root: Path, options, needle):
    if isinstance(options, str):  # a JSON text Python's json cannot write (1e400 reads as infinity)
        response = client.post("/api/play", content=options, headers={"content-type": "application/json"})
    else:
        response = client.post("/api/play", json=options)
    assert response.status_code == 400 and list(response.json()) == ["error"], response.json()
    assert needle in response.json()["error"] and "\n" not in response.json()["error"], response.json()
    assert not (root / "play").exists()


def test_long_bodies_long_inputs_and_unknown_move_keys_are_one_short_line(client: TestClient, root: Path):
    """Hostile trial of issue 33: a 100 MB JSON body was read and parsed whole; a 100 KB settings
    hash came back whole in its 404; /api/play/ID/move ignored a misspelt key; a body's error said
    "query parameter 'body'"."""
    big = client.post("/api/play", content=b"[" + b"1," * 40_000 + b"1]", headers={"content-type": "application/json"})
    assert big.status_code == 413 and "at most 65,536" in big.json()["error"], big.json()
    long = client.get("/api/game", params={"store": "a9-fixed", "pairing": "x" * 20_000, "index": 0})
    assert long.status_code >= 400 and len(long.json()["error"]) < 600, len(long.json()["error"])
    assert long.json()["error"].endswith("more characters]")
    game = client.post("/api/play", json={"agent": "random", "colour": "blue"}).json()
    wrong = client.post(f"/api/play/{game['id']}/move", json={"mvoe": "c3"})
    assert wrong.status_code == 400 and "unknown key mvoe" in wrong.json()["error"], wrong.json()
    body = client.post("/api/play", content=b"[1]", headers={"content-type": "application/json"})
    assert body.status_code == 400 and body.json()["error"].startswith("the request's body: "), body.json()


def test_the_web_and_the_cli_refuse_a_budget_in_the_same_words(client: TestClient):
    """One check (Budget, check_seed) for every door: /api/play says what `boopexp game` says."""
    for body, options in [({"budget": "device", "seconds": 1e308}, ["--seconds", "1e308"]),
                          ({"seed": 2**64}, ["--seed", str(2**64)])]:
        cli = one_line(CliRunner().invoke(main, ["game", "--p1", "random", "--p2", "random", *options]), 2)
        web = client.post("/api/play", json={"agent": "random", **body}).json()["error"]
        assert cli.endswith(web.split(" = ", 1)[1]), (cli, web)


def test_a_bad_move_is_refused_with_one_line(client: TestClient):
    game = client.post("/api/play", json={"agent": "random", "budget": "iterations", "iterations": 5}).json()
    assert game["human_to_move"] and "c3" in game["legal"] and "C3" not in game["legal"]  # no large piece yet
    for body, status, needle in [
        ({"move": "z9"}, 400, "z9"), ({"move": "C3"}, 400, "no large piece"), ({}, 400, "give the move"),
        ({"move": "c3", "choice": True}, 400, "choice True"),
    ]:
        response = client.post(f"/api/play/{game['id']}/move", json=body)
        assert response.status_code == status and needle in response.json()["error"], (body, response.json())
    assert client.get("/api/play/nope").status_code == 404
    assert client.post("/api/play/nope/undo").json()["error"].startswith("no game 'nope' on this server")


def test_a_game_being_played_is_never_forgotten_for_newer_ones(client: TestClient):
    """Issue 33: 64 new games forgot every game in progress. Games are forgotten by idleness (a
    fake clock here), over ones first; while every game is played a new one is refused (503)."""
    from boopexp.interfaces.web.play import IDLE_S, MAX_GAMES

    games, now = client.app.state.games, [0.0]
    games.clock = lambda: now[0]
    new = {"agent": "random", "budget": "iterations", "iterations": 5}
    played = client.post("/api/play", json=new).json()["id"]
    client.post(f"/api/play/{played}/move", json={"move": "c3"})
    others = [client.post("/api/play", json=new).json()["id"] for _ in range(MAX_GAMES - 1)]
    refused = client.post("/api/play", json=new)
    assert refused.status_code == 503 and refused.json()["error"].startswith(
        f"this server holds {MAX_GAMES} games, each played in the last 30 minutes"), refused.json()
    assert client.get(f"/api/play/{played}").status_code == 200
    now[0] += IDLE_S - 1
    assert client.post(f"/api/play/{played}/move", json={"move": "d4"}).status_code == 200
    assert client.post("/api/play", json=new).status_code == 503  # nobody idle 30 minutes yet
    now[0] += 1  # the others are idle 30 minutes; the game played a second ago is not
    for _ in range(3):
        assert client.post("/api/play", json=new).status_code == 200
    assert client.get(f"/api/play/{played}").status_code == 200
    forgotten = [g for g in others if client.get(f"/api/play/{g}").status_code == 404]
    assert forgotten == others[:3], forgotten  # the ones left longest


def _wait_until(predicate, what: str, seconds: float = 120.0) -> None:
    import time

    end = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < end, what
        time.sleep(0.01)


def test_a_thinking_agent_is_abandoned_and_the_server_bounds_its_searches(root: Path):
    """Issue 33: a search of 'seconds: 1e308' held a core for ever and the game answered 409 to
    everything. A game is abandoned (DELETE), its search stopped; and the searches run at once
    are bounded: one more is refused at once (503), never queued."""
    client = TestClient(create_app(root, warm=False, max_searches=1))
    games = client.app.state.games
    long = {"agent": "mcts-co", "colour": "red", "budget": "device", "seconds": 600}  # the agent moves first
    first = client.post("/api/play", json=long).json()
    assert first["thinking"]
    game = games.get(first["id"])
    _wait_until(lambda: game.search is not None, "the search started")
    busy = client.post("/api/play", json={**long, "seconds": 1})
    assert busy.status_code == 503 and busy.json()["error"] == (
        "this server runs 1 searches at once (serve --max-searches), all busy; try again in a moment")
    mine = client.post("/api/play", json={"agent": "random", "budget": "iterations", "iterations": 5}).json()
    assert mine["human_to_move"]  # no search needed: taken
    for url, body in [(f"/api/play/{mine['id']}/move", {"move": "c3"}), (f"/api/play/{mine['id']}/hint", None)]:
        response = client.post(url, json=body)
        assert response.status_code == 503 and "searches at once" in response.json()["error"], url
    assert client.get(f"/api/play/{mine['id']}").json()["moves"] == []  # the refused move was not played
    thinking = client.post(f"/api/play/{first['id']}/undo")
    assert thinking.status_code == 409 and "or abandon the game" in thinking.json()["error"]

    stopped = client.delete(f"/api/play/{first['id']}")
    assert stopped.status_code == 200 and stopped.json() == {"id": first["id"], "abandoned": True,
                                                             "search_stopped": True}
    assert game.search is None and not game.thinking and game.saved is None  # stopped, nothing saved
    assert client.get(f"/api/play/{first['id']}").status_code == 404
    assert client.post(f"/api/play/{mine['id']}/move", json={"move": "c3"}).status_code == 200  # the core is free
    assert not (root / "play").exists() or not StoreReader(root / "play").records().records


def test_the_searches_kernels_let_the_server_answer_meanwhile():
    """The search kernels release the GIL: with two agents thinking, a request took 1.1 s (median;
    the kernels held it by the chunk), 0.03 s without (README, "boopexp serve")."""
    from boopexp.engine import alphabeta, mcts

    assert mcts.run_iterations.targetoptions.get("nogil") and alphabeta.search_depth.targetoptions.get("nogil")


# ---------------------------------------------------------------------------------------------
# playing a config's agents (serve --config): variants, plugins, the config's settings

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
@pytest.fixture
def lab(lab_config: Path) -> Path:
    return lab_config


@pytest.fixture
def lab_client(root: Path, lab: Path) -> TestClient:
    from boopexp.experiments.config import load_config

    return TestClient(create_app(root, warm=False, configs=[load_config(lab), load_config(EXAMPLES / "greedy.yaml")]))


def test_the_configs_agents_are_offered_with_their_settings(lab_client: TestClient, lab: Path):
    body = lab_client.get("/api/opponents").json()
    assert [a["name"] for a in body["builtin"]][:2] == ["vanilla", "mcts+S"] and len(body["builtin"]) > 10
    lab_doc, greedy_doc = body["configs"]
    assert (lab_doc["name"], lab_doc["source"], greedy_doc["name"]) == ("lab", str(lab), "greedy-example")
    assert lab_doc["budget"] == {"mode": "iterations", "iterations": 3} and lab_doc["max_plies"] == 10
    assert lab_doc["seed"] == 5 and lab_doc["preset"] == "code-0.6.2"
    agents = {a["name"]: a["settings"] for a in lab_doc["agents"]}
    assert list(agents) == ["co-c", "greedy-noisy", "greedy"]  # the pairings' first
    assert agents["co-c"]["base"] == "mcts-co" and agents["co-c"]["params"]["uct_c"] == 0.5
    assert agents["greedy-noisy"]["kwargs"] == {"noise": 0.3} and agents["greedy-noisy"]["kind"] == "plugin"
    page = lab_client.get("/play").text
    assert '<option value="greedy-noisy" data-config="lab">' in page and 'label="greedy-example (' in page


@pytest.mark.parametrize("agent", ["co-c", "greedy-noisy"])
def test_a_game_against_a_configs_agent_is_the_game_boopexp_play_config_saves(root: Path, lab: Path,
                                                                               lab_client: TestClient, agent):
    """A variant and a plugin's variant, played in the browser and then again by ``boopexp play
    --config`` with the same moves typed: the same record (settings, hash, seed, agents' moves)."""
    from boopexp.experiments.config import load_config
    from boopexp.play.contract import same_game

    config = load_config(lab)
    game = lab_client.post("/api/play", json={"config": "lab", "agent": agent, "colour": "red"}).json()
    assert game["config"] == "lab" and game["agent"] == agent
    game = _play_out(lab_client, game)
    (record,) = StoreReader(root / "play").records().records
    assert record["plies"] == 10 and record["winner"] is None  # the config's ply cap
    assert record["p1_spec"] == config.agent(agent).to_dict() and record["p2"] == "human"
    assert (record["budget"], record["preset"]) == (config.settings.budget.to_dict(), config.settings.preset)

    cli_out = root.parent / "cli"
    typed = "\n".join(m for i, m in enumerate(record["moves"]) if i % 2 == 1) + "\n"
    result = CliRunner().invoke(main, ["play", "--config", str(lab), "--agent", agent, "--second", "--out",
                                       str(cli_out)], input=typed)
    assert result.exit_code == 0, result.output
    (played,) = StoreReader(cli_out).records().records
    assert same_game(played, record), (played, record)


@pytest.mark.parametrize("options, needle", [
    ({"config": "nope", "agent": "greedy"}, "config 'nope' is not one of this server's configs; its configs: lab, "
                                            "greedy-example"),
    ({"config": "lab", "agent": "nobody"}, "unknown agent 'nobody'"),
    ({"config": "lab", "agent": "greedy", "seed": 3}, "seed: an agent of config 'lab' plays with the config's budget"),
    ({"config": "lab", "agent": "co-c", "budget": "device", "seconds": 1}, "budget, seconds: an agent of config"),
    ({"config": "lab", "agent": "co-c", "game": "connect-four"}, "game: an agent of config 'lab' plays with the "
                                                                  "config's budget, seed and game; leave them out"),
    ({"config": 3, "agent": "greedy"}, "config 3 is not one"),
    ({"config": "lab", "agent": ["greedy"]}, "give the agent's name"),
])
def test_a_bad_config_game_is_a_400_with_one_line(lab_client: TestClient, root: Path, options, needle):
    response = lab_client.post("/api/play", json=options)
    assert response.status_code == 400 and list(response.json()) == ["error"], response.json()
    assert needle in response.json()["error"] and "\n" not in response.json()["error"], response.json()
    assert not (root / "play").exists()


def test_serve_refuses_a_bad_config_and_two_configs_of_one_name_in_one_line(tmp_path: Path, lab: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nseed: 1\ngames_per_side: 1\npairings: [[nobody, random]]\n")
    line = one_line(CliRunner().invoke(main, ["serve", "--root", str(tmp_path), "--config", str(bad)]), 2)
    assert str(bad) in line and "nobody" in line
    line = one_line(CliRunner().invoke(main, ["serve", "--root", str(tmp_path), "--config", str(tmp_path / "no.yaml")]),
                    2)
    assert "no.yaml" in line
    broken = lab.parent / "broken.yaml"  # a plugin whose factory refuses its arguments: refused at start
    broken.write_text(LAB_CONFIG.replace("noise: 0.3", "noise: 5"))
    line = one_line(CliRunner().invoke(main, ["serve", "--root", str(tmp_path), "--config", str(broken)]), 2)
    assert "greedy_agent:make_greedy(**{'noise': 5}) raised ValueError" in line
    twin = tmp_path / "twin.yaml"
    twin.write_text(LAB_CONFIG)
    line = one_line(CliRunner().invoke(main, ["serve", "--root", str(tmp_path), "--config", str(lab), "--config",
                                              str(twin)]), 2)
    assert line == (f"Error: --config {str(twin)!r}: its name 'lab' is the name of --config {str(lab)!r} too; /play "
                    "names a config by its name: give configs of different names")


def test_the_cache_keeps_the_outcome_columns_of_the_stores_read_last_only(root: Path):
    """A root of many stores is not held in memory: the columns of the stores read longest ago are
    dropped, and such a store is read afresh when asked again (its status stays cached)."""
    from boopexp.interfaces.web.stores import Root, StatusCache, find_record, list_stores

    base, cache = Root.of(root), StatusCache(max_columns=1)
    assert [s["total"]["done"] for s in list_stores(base, cache)] == [200, 200]
    assert cache.columns_held == (root / "study" / "inner",)  # a9-fixed's were dropped
    record = find_record(base, cache, "a9-fixed", PAIRING, 7)
    assert record == json.loads(json.dumps(_stored(PAIRING, 7)))
    assert cache.columns_held == (root / "a9-fixed",)
    assert [s["total"]["done"] for s in list_stores(base, cache)] == [200, 200]  # from the cached statuses
    assert cache.columns_held == (root / "a9-fixed",)


def _events(lines) -> Iterator[dict]:
    """The data of each event of a ``text/event-stream`` (its comment lines skipped), at most
    about 10,000 lines read."""
    for _, line in zip(range(10_000), lines):
        if line.startswith("data: "):
            yield json.loads(line[len("data: "):])


def test_the_dashboards_events_send_the_listing_and_again_when_a_store_changes(root: Path):
    client = TestClient(create_app(root, warm=False, events_interval=0.01))
    listing = client.get("/api/stores").json()
    with client.stream("GET", "/api/stores/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _events(response.iter_lines())
        assert next(events) == listing
        shutil.copytree(SOURCE, root / "b-new")  # a store appears under the root
        changed = next(events)
    assert [s["folder"] for s in changed["stores"]] == ["a9-fixed", "b-new", "study/inner"]
    ended = TestClient(create_app(root, warm=False, events_seconds=0)).get("/api/stores/events")
    assert ended.text == "retry: 1000\n\n"  # a stream ends (the browser connects again): a server can stop


def test_a_dashboard_listening_to_events_does_not_hold_the_server_when_it_stops(root: Path):
    import signal
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "boopexp", "serve", "--root", str(root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ", 1)[1].split()[0]
        with urllib.request.urlopen(url + "api/stores/events", timeout=60) as stream:
            assert stream.readline() == b"retry: 1000\n"
            proc.send_signal(signal.SIGTERM)  # while the stream is open (it would last minutes)
            proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------------------------
# games other than boop.: the viewer draws each game's own board, /play plays every built-in game

C4_RUN = """name: c4
seed: 1
games_per_side: 1
game: connect-four
budget: {mode: iterations, iterations: 10}
pairings: [[vanilla, random]]
"""
#: a Connect Four position one move from a draw: ``b`` fills the board with no four in a row
C4_BEFORE_DRAW = "o.xoxxo/xxoxooo/oxooxxx/ooxxxox/oxoooxo/xxoxoxx o"


def test_a_connect_four_game_stored_by_a_run_is_viewed_with_the_games_own_board(root: Path, client: TestClient):
    from boopexp.games import registry
    from boopexp.play.replay import walk

    (root / "c4.yaml").write_text(C4_RUN)
    result = CliRunner().invoke(main, ["run", str(root / "c4.yaml"), "--out", str(root / "c4"), "-q", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    record = next(r for r in StoreReader(root / "c4").records().records if r["termination"] == "victory")
    params = {"store": "c4", "pairing": record["pairing"], "index": record["game_index"]}
    body = client.get("/api/game/plies", params=params).json()
    game = registry.get("connect-four")
    states = [game.initial_state()]
    walk(record, lambda ply, text, position: states.append(position.state))
    assert body["game"] == "connect-four" and len(body["positions"]) == len(states) == len(record["moves"]) + 1
    assert body["sides"] == ["x", "o"]  # the page names the sides by the game's names
    for shown, st in zip(body["positions"], states):
        assert shown["position"] == game.position_string(st) and shown["svg"] == game.svg(st)
    assert [(p["ply"], p["move"], p["side"]) for p in body["plies"]] == [
        (i, m, "p1" if i % 2 else "p2") for i, m in enumerate(record["moves"], start=1)]
    winner = {"p1": "x", "p2": "o"}[record["winner"]]
    assert body["positions"][-1]["text"].endswith(f"{winner} has won")  # the last board says who won
    assert body["positions"][0]["to_move"] == "p1" and 'data-move="d"' in body["positions"][0]["svg"]
    page = client.get("/game", params=params)
    assert page.status_code == 200 and '"game": "connect-four"' in page.text
    search = client.get("/api/game/search", params={**params, "ply": 1})
    assert search.status_code == 400 and "re-run for boop.'s games only" in search.json()["error"], search.json()
    boop = client.get("/api/game/plies", params={"store": "a9-fixed", "pairing": PAIRING, "index": 0}).json()
    boop_game = registry.get("boop")
    assert boop["game"] == "boop" and boop["positions"][0]["position"] == boop_game.position_string(
        boop_game.initial_state())  # boop.'s own view, with its position string


def test_a_game_that_draws_no_svg_is_shown_as_its_text_board():
    """The contract's ``svg`` is optional: a game without it is drawn as its ``board_text``."""
    import importlib
    import sys
    import types

    from boopexp.games.registry import Game
    from boopexp.interfaces.web.game import game_view

    sys.path.insert(0, str(EXAMPLES))
    try:
        values = importlib.import_module("tictactoe.game")
    finally:
        sys.path.remove(str(EXAMPLES))
    plain = types.SimpleNamespace(**{k: v for k, v in vars(values).items() if k != "svg"})
    st = values.parse_position("x../.o./... x")
    assert Game("plain", plain).svg(st) is None  # type: ignore[arg-type]
    view = game_view(Game("plain", plain), st)  # type: ignore[arg-type]
    assert view == {"svg": None, "text": values.board_text(st), "position": "x../.o./... x", "to_move": "p1"}
    drawn = Game("tictactoe", values).svg(st)  # the example's svg: a cell per move, the marks drawn
    assert drawn is not None and drawn.count("data-move=") == 9 and 'data-move="a3"' in drawn
    assert drawn.count('data-mark="x"') == 1 and drawn.count('data-mark="o"') == 1


def test_a_connect_four_game_is_played_to_the_end_in_the_browser_api_and_saved(root: Path, client: TestClient):
    from boopexp.play.replay import walk

    options = {"game": "connect-four", "agent": "vanilla", "colour": "red", "budget": "iterations", "iterations": 5,
               "seed": 3}
    game = client.post("/api/play", json=options).json()
    assert game["game"] == "connect-four" and game["human"] == "red"
    game = _play_out(client, game)  # the first legal column each time: a..g, as the kernels list them
    assert game["result"] in ("you win", "vanilla wins") and game["position"]["svg"].startswith("<svg")
    (record,) = StoreReader(root / "play").records().records
    assert record["game"] == "connect-four" and record["p2"] == "human" and record["moves"] == game["moves"]
    walk(record)  # the saved game replays with the game's own rules, its outcome as recorded
    saved = game["saved"]
    shown = client.get("/api/game/plies", params={"store": "play", "pairing": saved["pairing"], "index": 0}).json()
    assert shown["game"] == "connect-four" and [p["move"] for p in shown["plies"]] == record["moves"]

    again = client.post("/api/play", json={**options, "colour": "blue", "agent": "random"}).json()
    assert again["human_to_move"] and again["legal"] == list("abcdefg") and again["position"]["to_move"] == "p1"
    for body, needle in [({"move": "h"}, "'h' is not a Connect Four move: a move is a column letter a..g"),
                         ({"move": "c3"}, "'c3' is not a Connect Four move")]:
        response = client.post(f"/api/play/{again['id']}/move", json=body)
        assert response.status_code == 400 and response.json()["error"].startswith(needle), response.json()
    hint = client.post(f"/api/play/{again['id']}/hint").json()
    _wait_until(lambda: client.get(f"/api/play/{again['id']}").json()["hint"] is not None, "the hint")
    assert client.get(f"/api/play/{again['id']}").json()["hint"]["move"] in "abcdefg" and hint["thinking"]


def test_a_drawn_connect_four_game_is_said_drawn_saved_and_viewed_as_a_draw(root: Path, client: TestClient):
    from boopexp.agents.specs import resolve_agent
    from boopexp.game.sides import Colour
    from boopexp.interfaces import play_store
    from boopexp.interfaces.web.play import WebGame
    from boopexp.play.replay import walk
    from boopexp.play.settings import GameSettings

    settings = GameSettings("play", game="connect-four")
    session = play_store.new_session(settings, resolve_agent("random"), Colour.RED, root / "play", start=C4_BEFORE_DRAW)
    assert session.game.name == "connect-four" and session.human_to_move and session.legal_moves() == ["b"]
    games = client.app.state.games
    web = WebGame("drawn", session, games.out)
    games._keep(web)
    state = client.post("/api/play/drawn/move", json={"move": "B"}).json()  # either case
    assert state["over"] and state["result"] == "a draw" and state["position"]["text"].endswith("a draw")
    (record,) = StoreReader(root / "play").records().records
    assert (record["termination"], record["winner"], record["start"]) == ("draw", None, C4_BEFORE_DRAW)
    walk(record)
    body = client.get("/api/game/plies", params={"store": "play", "pairing": record["pairing"], "index": 0}).json()
    assert body["positions"][0]["position"] == C4_BEFORE_DRAW and body["positions"][-1]["text"].endswith("a draw")


def test_the_play_page_offers_every_built_in_game_and_refuses_an_unknown_one(client: TestClient):
    from boopexp.games.registry import GAMES

    body = client.get("/api/opponents").json()
    assert [g["name"] for g in body["games"]] == list(GAMES)
    c4 = {a["name"]: a["settings"] for a in next(g for g in body["games"] if g["name"] == "connect-four")["agents"]}
    assert c4["mcts-co"]["params"]["preselect_m"] == 3 and c4["mcts-co"]["params"]["co_playout_plies"] == 10
    page = client.get("/play/connect-four")
    assert page.status_code == 200 and '<option value="connect-four" selected>' in page.text
    assert '<option value="boop" selected>' in client.get("/play").text
    bad = client.get("/play/chess")
    assert bad.status_code == 404 and "no page /play/chess: game = &#39;chess&#39; is not allowed; allowed: boop, " \
                                       "connect-four" in bad.text and "Traceback" not in bad.text
