"""The documentation site (mkdocs.yml, ``make docs``): every page is in its nav.

``make docs`` (run by .ci/run) builds the site with --strict, which fails on a page left out of the
nav as on a broken link; this checks the same of the nav in a fraction of a second, so a new page
of docs/ or a new notebook is not forgotten, and tests the link rewriting of docs/hooks/repo_files.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = ROOT / "mkdocs.yml"


class _Loader(yaml.SafeLoader):
    """mkdocs.yml's own tags (``!!python/object/apply:...``, ``!ENV``) read as None."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)


def _nav_pages(nav: object) -> list[str]:
    """The page paths of a nav (nested lists of paths, ``{title: path}`` and ``{section: [...]}``)."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    return []


@pytest.fixture(scope="module")
def config() -> dict:
    return yaml.load(MKDOCS.read_text(encoding="utf-8"), Loader=_Loader)


@pytest.fixture(scope="module")
def hooks():
    """docs/hooks/repo_files.py, the mkdocs hooks (skipped where mkdocs, the docs extra, is missing)."""
    pytest.importorskip("mkdocs")
    spec = importlib.util.spec_from_file_location("repo_files", ROOT / "docs" / "hooks" / "repo_files.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_nav_lists_every_page_of_docs_and_every_notebook(config):
    nav = _nav_pages(config["nav"])
    docs = ROOT / config["docs_dir"]
    pages = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")}
    notebooks = {p.relative_to(ROOT).as_posix() for p in (ROOT / "examples" / "notebooks").glob("*.ipynb")}
    missing = sorted((pages | notebooks) - set(nav))
    assert not missing, f"add these to mkdocs.yml's nav: {missing}"
    assert len(nav) == len(set(nav)), "a page is listed twice in mkdocs.yml's nav"


def test_every_page_of_the_nav_exists(config):
    docs = ROOT / config["docs_dir"]
    absent = [p for p in _nav_pages(config["nav"]) if not (docs / p).is_file() and not (ROOT / p).is_file()]
    assert not absent, f"mkdocs.yml's nav lists pages that do not exist: {absent}"


def test_the_site_fetches_nothing_and_builds_strict(config):
    assert config["theme"]["font"] is False  # material would load Google's fonts
    assert config["strict"] is True
    plugins = {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}
    assert not plugins & {"social", "privacy", "offline"}  # they download, or make the pages load a CDN
    assert config["plugins"][-1]["mkdocs-jupyter"]["execute"] is False  # make test executes the notebooks


def test_links_are_rewritten_to_where_the_site_serves_their_targets(hooks, tmp_path):
    from types import SimpleNamespace

    from mkdocs.structure.files import File, Files

    docs, site = ROOT / "docs", str(tmp_path)
    config = SimpleNamespace(config_file_path=str(MKDOCS), docs_dir=str(docs), site_dir=site)

    def page(path: str, src_dir: Path) -> SimpleNamespace:
        return SimpleNamespace(file=File(path, str(src_dir), site, False))

    files = Files([File("games.md", str(docs), site, False), File("README.md", str(ROOT), site, False),
                   File("results/tables/table1.png", str(ROOT), site, False),
                   File("boopexp/spec/RULES.md", str(ROOT), site, False)])
    text = ("[a](games.md#speed) ![t](../results/tables/table1.png \"T\") [s](../boopexp/spec/RULES.md)\n"
            "```\n![code](../results/tables/table1.png)\n```\n[gone](../results/nosuch.png) [web](https://x.org/a.md)\n")
    assert hooks.on_page_markdown(text, page("runner.md", docs), config, files) == (
        "[a](games.md#speed) ![t](results/tables/table1.png \"T\") [s](boopexp/spec/RULES.md)\n"
        "```\n![code](../results/tables/table1.png)\n```\n[gone](../results/nosuch.png) [web](https://x.org/a.md)\n")
    # README.md (the home page) links docs/; a page of the spec links back to docs/ and README.md
    assert hooks.on_page_markdown("[g](docs/games.md#speed)", page("README.md", ROOT), config, files) \
        == "[g](games.md#speed)"
    assert hooks.on_page_markdown("[g](../../docs/games.md) [r](../../README.md)",
                                  page("boopexp/spec/RULES.md", ROOT), config, files) \
        == "[g](../../games.md) [r](../../README.md)"
    assert hooks._links(text) == ["games.md", "../results/tables/table1.png", "../boopexp/spec/RULES.md",
                                  "../results/nosuch.png"]
