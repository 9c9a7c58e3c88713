"""A griffe extension (mkdocs.yml, mkdocstrings' ``extensions``): Sphinx roles in docstrings as code.

The docstrings cite code with Sphinx's roles (``:class:`Move```, ``:mod:`boopexp.schema```), which
mkdocstrings does not read; shown raw they would print their colons. Each becomes the inline code
of its target (``Move``), a ``~`` prefix dropped, so the API reference reads as the source does.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:mod|class|func|meth|data|attr|exc|obj|const):`~?([^`]+)`")


class SphinxRolesAsCode(griffe.Extension):
    """Rewrite ``:role:`target``` to ``` `target` ``` in every docstring, once the tree is built."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
