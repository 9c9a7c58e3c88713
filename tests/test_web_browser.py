"""``boopexp serve`` in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by Selenium against a real server process.

Skipped, with the reason, when no Chromium or driver is found (``.ci/run`` installs them in CI).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DEMO_CONFIG, fake_play_game

pytest.importorskip("fastapi", reason="boopexp serve needs the 'web' extra (make install includes it)")
pytest.importorskip("selenium", reason="the browser tests need selenium (the 'test' extra)")

RESULTS = Path(__file__).resolve().parent.parent / "results"
SOURCE = RESULTS / "a9-fixed"
PAIRING = "mcts-co vs mcts-co"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver",)
#: seconds a page may take to show what a test waits for (generous: the machine is shared)
WAIT = 60


def _found(names: tuple[str, ...], env: str) -> str | None:
    given = os.environ.get(env)
    if given:
        return given
    extra = os.pathsep.join(("/usr/bin", "/usr/lib/chromium"))
    return next((p for n in names if (p := shutil.which(n, path=os.environ.get("PATH", "") + os.pathsep + extra))),
                None)


BROWSER = _found(BROWSERS, "BOOPEXP_CHROMIUM")
DRIVER = _found(DRIVERS, "BOOPEXP_CHROMEDRIVER")
pytestmark = pytest.mark.skipif(
    BROWSER is None or DRIVER is None,
    reason="no Chromium and chromedriver found (apt-get install chromium chromium-driver; .ci/run installs them)",
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(SOURCE, root / "a9-fixed")
    return root


@contextlib.contextmanager
def _serving(root: Path, *options: str) -> Iterator[str]:
    """A ``boopexp serve`` process on a free port; its base URL."""
    proc = subprocess.Popen([sys.executable, "-m", "boopexp", "serve", "--root", str(root), "--port", "0", *options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert " at http://127.0.0.1:" in line, (line, proc.stderr.read() if proc.stderr else "")
        yield line.split(" at ", 1)[1].split()[0].rstrip("/")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def server(root: Path) -> Iterator[str]:
    with _serving(root) as url:
        yield url


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """One headless Chromium for the module (each start took ~6 s of a loaded machine, per test).
    Every test serves on a port of its own, so no page state (cookies, storage) is another test's."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(BROWSER)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(DRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chromium) -> Iterator[object]:
    """The module's Chromium, on a blank page after the test (no page of a stopped server left polling)."""
    yield chromium
    chromium.get("about:blank")


def _wait(driver, predicate, what: str):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, poll_frequency=0.1).until(lambda d: predicate(d), message=what)


def _board(driver) -> dict[str, str]:
    """The pieces the SVG board shows: square -> b/B/r/R."""
    return driver.execute_script(
        "const out = {}; for (const g of document.querySelectorAll('#board [data-piece]'))"
        " out[g.dataset.at] = g.dataset.piece; return out;")


def _row(driver, store: str) -> str:
    """The text of the dashboard's row of ``store`` ("" while there is none); read in one script:
    the rows are redrawn at every poll."""
    return driver.execute_script(
        "const row = document.querySelector(`tr[data-store='${arguments[0]}']`);"
        " return row ? row.innerText : '';", store)


def _expected(record: dict, ply: int) -> dict[str, str]:
    from boopexp.engine.state import N_SQUARES
    from boopexp.game import notation
    from boopexp.play.replay import walk

    states = []
    walk(record, lambda p, text, position: states.append(position.state))
    st = states[ply - 1]
    return {notation.square_name(q): {-1: "b", -2: "B", 1: "r", 2: "R"}[int(st[q])] for q in range(N_SQUARES) if st[q]}


def test_the_viewer_steps_a_committed_game_to_its_last_ply_and_shows_the_recorded_board(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from boopexp.experiments.store import StoreReader

    record = next(r for r in StoreReader(SOURCE).records().records if r["pairing"] == PAIRING and r["game_index"] == 0)
    last = len(record["moves"])
    browser.get(f"{server}/game?store=a9-fixed&pairing=mcts-co%20vs%20mcts-co&index=0")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board rect[data-square='a1']"), "the board")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#board [data-square]")) == 36
    assert _board(browser) == {}  # ply 0: the empty board

    browser.find_element(By.ID, "next").click()
    assert _board(browser) == _expected(record, 1) and browser.current_url.endswith("ply=1")
    browser.find_element(By.ID, "last").click()
    assert browser.find_element(By.ID, "ply").get_attribute("value") == str(last)
    assert _board(browser) == _expected(record, last)
    assert browser.current_url.endswith(f"ply={last}")  # the URL keeps the ply
    assert record["winner_agent"] in browser.find_element(By.ID, "result").text
    # issue 33: the board after the winning move said whose turn it would be
    assert browser.find_element(By.ID, "pools").text.endswith(f"{record['winner_colour']} has won")

    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_LEFT)
    _wait(browser, lambda d: d.current_url.endswith(f"ply={last - 1}"), "← steps back")
    assert _board(browser) == _expected(record, last - 1)
    assert browser.find_element(By.ID, "pools").text.endswith(" to move")
    placed = browser.find_elements(By.CSS_SELECTOR, "#board rect.last")
    assert [e.get_attribute("data-square") for e in placed] == [record["moves"][last - 2][:2].lower()]

    browser.get(f"{server}/game?store=a9-fixed&pairing=mcts-co%20vs%20mcts-co&index=0&ply=5")  # a shared link
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board rect[data-square='a1']"), "the board")
    assert _board(browser) == _expected(record, 5)


def test_the_viewer_re_runs_the_search_of_a_move_and_ranks_the_move_played_first(server, browser):
    """The viewer's "The search": for a move an MCTS agent chose in a device-mode game, the root
    of that search re-run by the server (/api/game/search), the move played marked and first."""
    from selenium.webdriver.common.by import By

    from boopexp.experiments.store import StoreReader
    from boopexp.play.replay import root_search

    record = next(r for r in StoreReader(SOURCE).records().records if r["pairing"] == PAIRING and r["game_index"] == 2)
    browser.get(f"{server}/game?store=a9-fixed&pairing=mcts-co%20vs%20mcts-co&index=2&ply=4")
    button = _wait(browser, lambda d: [b for b in d.find_elements(By.ID, "search-show") if b.is_displayed()],
                   "the search button")[0]
    button.click()
    _wait(browser, lambda d: d.find_element(By.ID, "search").is_displayed(), "the search's table")
    rows = [r.get_attribute("data-move") for r in browser.find_elements(By.CSS_SELECTOR, "#search tbody tr")]
    expected = root_search(record, 4)
    assert rows == [c.move for c in expected.children if c.selectable or c.visits]
    played = browser.find_elements(By.CSS_SELECTOR, "#search tr.played")
    assert [p.get_attribute("data-move") for p in played] == [record["moves"][3].split(":")[0]] == rows[:1]
    assert f"{expected.visits} visits" in browser.find_element(By.ID, "search-note").text
    browser.find_element(By.ID, "next").click()  # another move: the table goes, the button comes back
    _wait(browser, lambda d: not d.find_element(By.ID, "search").is_displayed(), "the table hidden")
    assert browser.find_element(By.ID, "search-show").is_displayed()


def test_the_store_page_shows_its_games_a_page_at_a_time(server, browser):
    """/api/store sends a page of games (issue 33); the page turns them (``?limit=`` sets the size)."""
    from selenium.webdriver.common.by import By

    def shown(d) -> str:  # read in one script: the pager is drawn again when the page turns
        return d.execute_script("const r = document.getElementById('games-range'); return r ? r.textContent : ''")

    browser.get(server + "/store?store=a9-fixed&limit=50")
    _wait(browser, lambda d: shown(d) == "games 1–50 of 200", "the first page")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#games a.game")) == 50
    assert not browser.find_element(By.ID, "games-prev").is_enabled()
    browser.find_element(By.ID, "games-next").click()
    _wait(browser, lambda d: shown(d) == "games 51–100 of 200", "the second page")
    links = browser.find_elements(By.CSS_SELECTOR, "#games a.game")
    assert [a.text for a in links] == [str(i) for i in range(50, 100)]  # mcts+P vs mcts+P, its last 50
    for first in (101, 151):
        browser.find_element(By.ID, "games-next").click()
        _wait(browser, lambda d, first=first: shown(d) == f"games {first}–{first + 49} of 200",
              f"the page from {first}")
    assert not browser.find_element(By.ID, "games-next").is_enabled()
    browser.find_elements(By.CSS_SELECTOR, "#games a.game")[-1].click()
    _wait(browser, lambda d: "index=99" in d.current_url and d.find_elements(By.ID, "last"), "the viewer of game 99")
    assert "pairing=mcts-co+vs+mcts-co" in browser.current_url or "mcts-co%20vs%20mcts-co" in browser.current_url


# Holds every /api/store request until the test releases it (window.__release(offset)): the test
# then chooses the order in which the page's poll and the page turn are answered.
_HOLD_STORE_ANSWERS = """
window.__held = [];
const real = window.fetch;
window.fetch = (url, options) => String(url).includes("/api/store?")
  ? new Promise(done => window.__held.push({offset: new URL(String(url), location.href).searchParams.get("offset"),
                                            go: () => done(real(url, options))}))
  : real(url, options);
window.__release = offset => {
  const go = window.__held.filter(h => h.offset === offset);
  window.__held = window.__held.filter(h => h.offset !== offset);
  document.body.dataset.loaded = "";
  go.forEach(h => h.go());
  return go.length;
};
"""


def test_a_poll_answered_after_the_page_turned_does_not_keep_the_old_page(server, browser):
    """The store page polls every 2 s: a poll sent before "next" was clicked, answered before the
    next page's own answer, holds the old page; it is not drawn, and the next page is (it was drawn
    under the new page's key, and the new page's answer was then never drawn: stuck on page 1)."""
    from selenium.webdriver.common.by import By

    def shown(d) -> str:
        return d.execute_script("const r = document.getElementById('games-range'); return r ? r.textContent : ''")

    def held(offset: str):
        return lambda d: d.execute_script("return window.__held.some(h => h.offset === arguments[0])", offset)

    browser.get(server + "/store?store=a9-fixed&limit=50")
    _wait(browser, lambda d: shown(d) == "games 1–50 of 200", "the first page")
    browser.execute_script(_HOLD_STORE_ANSWERS)
    _wait(browser, held("0"), "a poll of the first page")  # sent every 2 s
    browser.find_element(By.ID, "games-next").click()
    _wait(browser, held("50"), "the request of the second page")
    for offset in ("0", "50"):  # the old poll answered first, then the turned page
        assert browser.execute_script("return window.__release(arguments[0])", offset) >= 1
        _wait(browser, lambda d: d.execute_script("return document.body.dataset.loaded") == "1",
              f"the answer for offset {offset} handled")
    assert shown(browser) == "games 51–100 of 200"
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#games a.game")][:1] == ["50"]


def test_the_dashboard_shows_a_run_as_it_plays(server, browser, root: Path):
    from boopexp.experiments.config import load_config
    from boopexp.experiments.pool import PoolOptions
    from boopexp.experiments.runner import run_plan

    browser.get(server + "/")
    _wait(browser, lambda d: "200 / 200" in _row(d, "a9-fixed"), "the committed store")
    assert browser.execute_script("return document.body.dataset.live") == "events"  # sent by the server, not polled

    (root / "demo.yaml").write_text(DEMO_CONFIG)
    config = load_config(root / "demo.yaml")
    plan = config.plan()
    planned = sum(p.games for p in plan)
    slow = functools.partial(fake_play_game, sleep=1.0)  # a run of ~planned seconds
    run = threading.Thread(target=run_plan, args=(config, plan, root / "demo", PoolOptions(jobs=1, play=slow)))
    run.start()
    try:
        def partly(d) -> bool:
            found = re.search(r"(\d+) / (\d+)", _row(d, "demo"))
            return found is not None and 0 < int(found.group(1)) < int(found.group(2)) == planned

        _wait(browser, partly, "the run's progress while it plays")
        _wait(browser, lambda d: f"{planned} / {planned}" in _row(d, "demo"), "the finished run's progress")
    finally:
        run.join()


def _click_to_the_end(browser, legal: str = "#board rect.legal") -> int:
    """Play the game on the page by clicking a legal square (``legal``: another game's board, the
    first part of it that names a legal move) at each turn (the first group when several can be
    promoted) until it is over; the number of moves clicked."""
    from selenium.webdriver.common.by import By

    state = "return document.body.dataset.state || ''"
    clicks = 0
    while True:
        now = _wait(browser, lambda d: d.execute_script(state) in ("your-move", "over") and d.execute_script(state),
                    "my turn or the end")
        if now == "over":
            break
        plies = browser.execute_script("return document.body.dataset.plies")
        browser.find_element(By.CSS_SELECTOR, legal).click()
        clicks += 1
        # the move is played, or the groups to promote are offered: take the first
        _wait(browser, lambda d, before=plies: d.execute_script("return document.body.dataset.plies") != before
              or d.find_elements(By.CSS_SELECTOR, "button.choice"), "the move or its choices")
        choices = browser.find_elements(By.CSS_SELECTOR, "button.choice")
        if choices:
            choices[0].click()
            _wait(browser, lambda d, before=plies: d.execute_script("return document.body.dataset.plies") != before,
                  "the move")
    return clicks


@pytest.mark.slow  # 20-27 s loaded; the module ~100-200 s (tests/conftest.py starts it early)
def test_a_game_against_random_played_by_clicking_is_saved_and_opens_in_the_viewer(server, browser, root: Path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from boopexp.experiments.store import StoreReader

    browser.get(server + "/play")
    Select(browser.find_element(By.ID, "agent")).select_by_value("random")
    Select(browser.find_element(By.ID, "budget")).select_by_value("iterations")
    browser.find_element(By.ID, "start").click()
    clicks = _click_to_the_end(browser)
    _wait(browser, lambda d: d.find_elements(By.ID, "open-viewer"), "the saved game's link")
    (record,) = StoreReader(root / "play").records().records
    assert record["p1"] == "human" and record["p2"] == "random" and clicks == (len(record["moves"]) + 1) // 2
    browser.find_element(By.ID, "open-viewer").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board rect[data-square='a1']"), "the viewer")
    browser.find_element(By.ID, "last").click()
    assert _board(browser) == _expected(record, len(record["moves"]))


def test_a_configs_plugin_variant_is_offered_with_its_settings_and_played_with_them(browser, root: Path,
                                                                                    lab_config: Path):
    from selenium.webdriver.common.by import By

    from boopexp.experiments.config import load_config
    from boopexp.experiments.store import StoreReader

    config = load_config(lab_config)
    with _serving(root, "--config", str(lab_config)) as server:
        browser.get(server + "/play")
        browser.find_element(By.CSS_SELECTOR, "#agent option[data-config='lab'][value='greedy-noisy']").click()
        settings = browser.find_element(By.ID, "opponent-settings").text
        assert '"noise":0.3' in settings and '"iterations":3' in settings and "ply cap 10" in settings, settings
        assert not browser.find_element(By.ID, "own-budget").is_displayed()  # the config's budget, not the form's
        browser.find_element(By.ID, "start").click()
        clicks = _click_to_the_end(browser)
        _wait(browser, lambda d: d.find_elements(By.ID, "open-viewer"), "the saved game's link")
    (record,) = StoreReader(root / "play").records().records
    assert (record["p1"], record["p2"], record["plies"], clicks) == ("human", "greedy-noisy", 10, 5)
    assert record["p2_spec"] == config.agent("greedy-noisy").to_dict()
    assert (record["budget"], record["preset"]) == (config.settings.budget.to_dict(), config.settings.preset)


def test_a_game_whose_agent_thinks_is_abandoned_from_the_page(server, browser):
    """The form sends the device budget's seconds as a number; Abandon forgets the game and stops
    its agent's search (issue 33), back to the form."""
    import json
    import urllib.error
    import urllib.request

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server + "/play")
    Select(browser.find_element(By.ID, "agent")).select_by_value("mcts-co")
    browser.find_element(By.CSS_SELECTOR, "input[name=colour][value=red]").click()  # the agent moves first
    seconds = browser.find_element(By.CSS_SELECTOR, "input[name=seconds]")
    seconds.clear()
    seconds.send_keys("600")
    browser.find_element(By.ID, "start").click()
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.state") == "thinking", "the agent thinking")
    game = browser.current_url.split("game=")[1]
    with urllib.request.urlopen(f"{server}/api/play/{game}", timeout=WAIT) as response:
        assert json.load(response)["thinking"]
    browser.find_element(By.ID, "abandon").click()
    _wait(browser, lambda d: d.find_elements(By.ID, "new-game"), "the form again")
    with pytest.raises(urllib.error.HTTPError) as gone:
        urllib.request.urlopen(f"{server}/api/play/{game}", timeout=WAIT)
    assert gone.value.code == 404


C4_RUN = """name: c4
seed: 1
games_per_side: 1
game: connect-four
budget: {mode: iterations, iterations: 10}
pairings: [[vanilla, random]]
"""


def _discs(driver) -> dict[str, str]:
    """The Connect Four board the page shows: cell -> its disc's fill (white: empty)."""
    return driver.execute_script(
        "const out = {}; for (const c of document.querySelectorAll('#board circle[data-cell]'))"
        " out[c.dataset.cell] = c.getAttribute('fill'); return out;")


def test_a_connect_four_game_of_a_run_is_stepped_through_on_its_own_board(server, browser, root: Path):
    from click.testing import CliRunner
    from selenium.webdriver.common.by import By

    from boopexp.experiments.store import StoreReader
    from boopexp.games import registry
    from boopexp.interfaces.cli import main
    from boopexp.play.replay import walk

    (root / "c4.yaml").write_text(C4_RUN)
    result = CliRunner().invoke(main, ["run", str(root / "c4.yaml"), "--out", str(root / "c4"), "-q", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    record = StoreReader(root / "c4").records().records[0]
    game = registry.get("connect-four")
    states = [game.initial_state()]
    walk(record, lambda ply, text, position: states.append(position.state))
    last = len(record["moves"])
    browser.get(f"{server}/game?store=c4&pairing={record['pairing'].replace(' ', '%20')}&index={record['game_index']}")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board circle[data-cell='a1']"), "the board")
    assert len(_discs(browser)) == 42 and set(_discs(browser).values()) == {"#ffffff"}  # ply 0: empty
    browser.find_element(By.ID, "last").click()
    assert browser.current_url.endswith(f"ply={last}")
    want = {c.get("data-cell"): c.get("fill") for c in _circles(game.svg(states[-1]))}
    assert _discs(browser) == want
    assert browser.find_element(By.ID, "position").text == game.position_string(states[-1])
    assert browser.find_element(By.ID, "move-title").text.endswith(f"plays {record['moves'][-1]}")
    moves = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#moves a")]
    assert moves == record["moves"]
    assert browser.find_element(By.ID, "pools").text in ("x (p1) has won", "o (p2) has won", "a draw")
    mover = "o (p2)" if last % 2 == 0 else "x (p1)"  # the game's name of the last mover
    assert browser.find_element(By.ID, "move-title").text.startswith(f"Ply {last}: {mover} plays")


def _circles(svg: str | None) -> list:
    import xml.etree.ElementTree as ET

    assert svg is not None
    return [e for e in ET.fromstring(svg).iter() if e.tag.endswith("circle")]


def test_a_connect_four_game_against_random_is_played_by_clicking_columns(server, browser, root: Path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from boopexp.experiments.store import StoreReader
    from boopexp.play.replay import walk

    browser.get(server + "/play/connect-four")
    assert Select(browser.find_element(By.ID, "game")).first_selected_option.get_attribute("value") == "connect-four"
    assert browser.find_element(By.CSS_SELECTOR, ".colour-name").text == "p1"
    Select(browser.find_element(By.ID, "agent")).select_by_value("random")
    Select(browser.find_element(By.ID, "budget")).select_by_value("iterations")
    browser.find_element(By.ID, "start").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board [data-move].legal"), "the legal columns")
    assert not browser.find_element(By.ID, "sizes").is_displayed()  # boop.'s piece sizes: not this game's
    assert browser.find_element(By.ID, "move-list").is_displayed()
    clicks = _click_to_the_end(browser, "#board [data-move].legal")
    _wait(browser, lambda d: d.find_elements(By.ID, "open-viewer"), "the saved game's link")
    (record,) = StoreReader(root / "play").records().records
    assert record["game"] == "connect-four" and record["p1"] == "human" and record["p2"] == "random"
    assert clicks == (len(record["moves"]) + 1) // 2
    walk(record)
    browser.find_element(By.ID, "open-viewer").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board circle[data-cell='a1']"), "the viewer")
