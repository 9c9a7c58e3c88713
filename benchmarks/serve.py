"""Page times of ``boopexp serve`` in headless Chromium (issue 24's goals), and the README's screenshots.

    .venv/bin/python benchmarks/serve.py [--root results] [--shots docs/images]

Starts ``boopexp serve --port 0`` and measures, each as wall seconds on this machine:
  * start: from launching the process to the dashboard page answered; first listing: the first
    ``/api/stores`` (every store read, with the warm-up the server starts with);
  * dashboard: from navigation to every store's row drawn (cold: the server's first listing;
    warm: again, from its cache), and the number of stores;
  * viewer: from navigation to the board drawn, for a 1,000-ply game (cold: the first game the
    server opens, which loads the compiled engine; then twice again, at other plies).
Needs chromium and chromedriver (Debian's packages). Nothing under the root is written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

#: a 1,000-ply game (the ply cap) of the committed robustness study
#: a move of a committed device-mode game whose search the viewer re-runs ("The search")
SEARCHED_GAME = {"store": "ablation", "pairing": "mcts-co vs vanilla", "index": 3, "ply": 41}
LONG_GAME = {"store": "robustness/d4-bias", "pairing": "mcts-co-a9 vs mcts-co-a9", "index": 398,
             "config_hash": "7fc83a1b71c63dce"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default="results")
    parser.add_argument("--shots", default=None, help="Save the dashboard's and the viewer's screenshots here.")
    args = parser.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "boopexp", "serve", "--root", args.root, "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    base = proc.stdout.readline().split(" at ", 1)[1].split()[0].rstrip("/")
    with urllib.request.urlopen(base + "/", timeout=60) as response:
        response.read()
    times: dict[str, object] = {"start_s": round(time.perf_counter() - t0, 3)}
    t1 = time.perf_counter()
    with urllib.request.urlopen(base + "/api/stores", timeout=60) as response:
        stores = json.load(response)["stores"]
    times["first_listing_s"] = round(time.perf_counter() - t1, 3)  # while the warm-up reads the stores
    times["stores"] = len(stores)

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver")))
    try:
        def page(url: str, ready: str) -> float:
            start = time.perf_counter()
            driver.get(url)
            WebDriverWait(driver, 120, poll_frequency=0.02).until(lambda d: d.execute_script(ready))
            return round(time.perf_counter() - start, 3)

        rows = f"return document.querySelectorAll('#stores tbody tr').length === {len(stores)}"
        times["dashboard_s"] = page(base + "/", rows)
        times["dashboard_again_s"] = page(base + "/", rows)
        if args.shots:
            Path(args.shots).mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(Path(args.shots) / "serve-dashboard.png"))
        drawn = "return document.body.dataset.ply !== undefined"
        url = base + "/game?" + urllib.parse.urlencode(LONG_GAME)
        times["viewer_1000_plies_s"] = page(url, drawn)
        times["viewer_1000_plies_again_s"] = page(url + "&ply=1000", drawn)
        times["viewer_1000_plies_third_s"] = page(url + "&ply=500", drawn)
        if args.shots:
            driver.save_screenshot(str(Path(args.shots) / "serve-viewer.png"))
        # "The search" of a move: the server re-plays the game up to that search (its wait)
        driver.get(base + "/game?" + urllib.parse.urlencode(SEARCHED_GAME))
        WebDriverWait(driver, 120, poll_frequency=0.02).until(
            lambda d: d.execute_script("return !document.getElementById('search-show').hidden"))
        start = time.perf_counter()
        driver.execute_script("document.getElementById('search-show').click()")
        WebDriverWait(driver, 120, poll_frequency=0.02).until(
            lambda d: d.execute_script("return !document.getElementById('search').hidden"))
        times[f"search_at_ply_{SEARCHED_GAME['ply']}_s"] = round(time.perf_counter() - start, 3)
        if args.shots:
            driver.save_screenshot(str(Path(args.shots) / "serve-search.png"))
    finally:
        driver.quit()
        proc.terminate()
        proc.wait()
    print(json.dumps(times, indent=1))


if __name__ == "__main__":
    main()
