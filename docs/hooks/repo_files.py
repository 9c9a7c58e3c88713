"""mkdocs hooks (mkdocs.yml ``hooks:``): the site serves the repository's files the docs link to.

The docs are written to be read in the repository as well: README.md links ``docs/games.md``, a
page of docs/ links ``../results/tables/table1.png``. mkdocs knows only docs/, so these hooks add
to the site (``make docs``)

- README.md, its home page (mkdocs makes a README.md an ``index.html``);
- the repository's files of :data:`SERVED` (CONTRIBUTING.md, the spec, the notebooks) and every
  other file of the repository a page links to (an image of results/), each at its path in the
  repository (a Markdown file or a notebook is a page, anything else is copied as it is);

and rewrite each link to where its target is in the site (a notebook's too, which mkdocs does not
read). A link to a file that does not exist is left as written, so ``mkdocs build --strict`` fails
on it as on any broken link (this hook says so for a notebook's).
"""

from __future__ import annotations

import glob
import logging
import posixpath
import re
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

#: the repository's files (globs from its root) served whether or not a page links them: each page
#: among them must be in mkdocs.yml's nav (``validation: omitted_files: warn`` fails the build)
SERVED = ("README.md", "CONTRIBUTING.md", "boopexp/spec/*.md", "examples/notebooks/*.ipynb")
#: an inline link or image, ``[text](target "title")`` / ``![alt](target)``: group 2 is the target
LINK = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
FENCE = re.compile(r"^\s*(```|~~~)")
#: a link or image of the HTML a notebook is rendered to: group 2 is the target
HTML_LINK = re.compile(r"""(\b(?:href|src)=")([^"]+)(")""")
LOG = logging.getLogger("mkdocs.hooks.repo_files")  # a warning fails mkdocs build --strict


class _Layout:
    """Where the repository's files are in the site: a file of docs/ at its path in docs/, any
    other at its path in the repository."""

    def __init__(self, config: MkDocsConfig):
        self.root = Path(config.config_file_path).resolve().parent
        self.docs = Path(config.docs_dir).resolve().relative_to(self.root).as_posix()

    def site_uri(self, repo_path: str) -> str:
        """The site's ``src_uri`` of the repository's file ``repo_path``."""
        return repo_path[len(self.docs) + 1:] if repo_path.startswith(self.docs + "/") else repo_path

    def repo_path(self, file: File) -> str:
        """The repository's path of a file of the site (the inverse of :meth:`site_uri`)."""
        return file.src_uri if file.src_dir and Path(file.src_dir) == self.root else f"{self.docs}/{file.src_uri}"


def _link_path(target: str) -> str | None:
    """The path of a relative link's target (no anchor, no query); None for any other link."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or target.startswith(("/", "#")) or not parts.path:
        return None
    return parts.path


def _links(text: str) -> list[str]:
    """The relative link targets of a Markdown text outside its fenced code blocks."""
    found, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            found += [p for m in LINK.finditer(line) if (p := _link_path(m.group(2)))]
    return found


def _resolve(page_repo_path: str, target: str) -> str:
    """A link's target as a path from the repository's root (starting with ``..`` when outside it)."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), target))


# before mkdocs-jupyter's on_files, which makes the notebooks pages; these are real files (not
# File.generated), whose source path mkdocs-jupyter's wrapper of a file still sees
@event_priority(100)
def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the :data:`SERVED` files and every repository file a page links to.

    Raises:
        PluginError: a repository file would be served where a page of docs/ is.
    """
    layout = _Layout(config)
    served = sorted(Path(p).relative_to(layout.root).as_posix()
                    for pattern in SERVED for p in glob.glob(str(layout.root / pattern)))
    queue = [f"{layout.docs}/{f.src_uri}" for f in files if f.src_uri.endswith(".md")] + served
    seen: set[str] = set()
    while queue:
        path = queue.pop()
        if path in seen or path.startswith("..") or not (layout.root / path).is_file():
            continue  # outside the repository or no such file: mkdocs --strict reports the link
        seen.add(path)
        if not path.startswith(layout.docs + "/"):
            taken = files.get_file_from_path(layout.site_uri(path))
            if taken is not None and taken.abs_src_path != str(layout.root / path):
                raise PluginError(f"{path} would be served where {layout.docs}/{taken.src_uri} is: rename one")
            if taken is None:
                files.append(File(path, str(layout.root), config.site_dir, config.use_directory_urls))
        if path.endswith(".md"):
            text = (layout.root / path).read_text(encoding="utf-8")
            queue += [_resolve(path, target) for target in _links(text)]
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Each link of a page to a file of the repository, pointed at where the site serves it."""
    layout = _Layout(config)
    page_path, page_dir = layout.repo_path(page.file), posixpath.dirname(page.file.src_uri) or "."

    def link(match: re.Match[str]) -> str:
        path = _link_path(match.group(2))
        uri = path and layout.site_uri(_resolve(page_path, path))
        if not uri or files.get_file_from_path(uri) is None:
            return match.group(0)  # as written: mkdocs reports it when it is broken
        fragment = urlsplit(match.group(2)).fragment
        new = posixpath.relpath(uri, page_dir) + (f"#{fragment}" if fragment else "")
        return f"{match.group(1)}{new}{match.group(3)}"

    out, fenced = [], False
    for line in markdown.splitlines(keepends=True):
        if FENCE.match(line):
            fenced = not fenced
        out.append(line if fenced else LINK.sub(link, line))
    return "".join(out)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """A notebook's links (rendered by mkdocs-jupyter, unseen by mkdocs) to the files of the site;
    a warning for one to no file of the repository."""
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    layout = _Layout(config)
    page_path = layout.repo_path(page.file)

    def link(match: re.Match[str]) -> str:
        path = _link_path(match.group(2))
        if path is None or path.startswith("data:"):
            return match.group(0)
        target = files.get_file_from_path(layout.site_uri(_resolve(page_path, path)))
        if target is None:
            LOG.warning(f"notebook {page_path} links {match.group(2)!r}, which is no file of the repository")
            return match.group(0)
        fragment = urlsplit(match.group(2)).fragment
        new = target.url_relative_to(page.file) + (f"#{fragment}" if fragment else "")
        return f"{match.group(1)}{new}{match.group(3)}"

    return HTML_LINK.sub(link, html)
