"""The environment the suite runs in is the locked one (issue 20).

The committed tables and figures are rebuilt byte for byte by tests/test_results.py and
tests/test_robustness_results.py; those comparisons mean something only under the versions that
built them, pinned in requirements/constraints.txt and installed by ``make install`` (docs/install.md).
A suite run in another environment fails here first, with the packages that differ, instead of
on a last digit in a CSV.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "requirements" / "constraints.txt"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked() -> dict[str, str]:
    """name -> version of every pin in the lock file."""
    pins = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            pins[_normal(match.group(1))] = match.group(2)
    return pins


def test_lock_pins_every_direct_dependency():
    import tomllib

    project = tomllib.loads((LOCK.parent.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"]) + [d for extra in project["optional-dependencies"].values() for d in extra]
    names = {_normal(re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0]) for d in wanted}
    missing = sorted(names - set(locked()))
    assert not missing, f"not pinned in {LOCK.name}: {missing} (run 'make lock')"


def test_installed_versions_are_the_locked_ones():
    differ = []
    for name, version in sorted(locked().items()):
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = "not installed"
        if have != version:
            differ.append(f"{name} {have} (locked {version})")
    assert not differ, "this environment is not the locked one; run 'make install': " + "; ".join(differ)
