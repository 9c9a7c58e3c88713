"""The package carries the spec that its code, configs, docs and outputs cite (boopexp/spec/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "boopexp" / "spec"
SHARED = REPO.parent / "shared" / "spec"
CITED = re.compile(r"\b(RULES|HEURISTIC|AGENTS|EXPERIMENTS)\.md\b")


def _cited_names() -> set[str]:
    names = set()
    for folder, pattern in ((REPO / "boopexp", "*.py"), (REPO / "configs", "*.yaml"), (REPO / "docs", "*.md")):
        for path in folder.rglob(pattern):
            names.update(m.group(0) for m in CITED.finditer(path.read_text(encoding="utf-8")))
    return names


def test_every_cited_spec_file_is_shipped_in_the_package():
    cited = _cited_names()
    assert cited, "no citation found: the pattern is wrong"
    assert cited <= {p.name for p in SPEC.glob("*.md")}


def test_the_spec_is_package_data():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"spec/*.md"' in text


def test_the_readme_says_where_the_spec_lives():
    assert "boopexp/spec/" in (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is not present (the shipped copy is then the spec)")
@pytest.mark.parametrize("name", ["RULES.md", "HEURISTIC.md", "AGENTS.md", "EXPERIMENTS.md"])
def test_the_shipped_spec_is_the_shared_one(name):
    assert (SPEC / name).read_bytes() == (SHARED / name).read_bytes()
