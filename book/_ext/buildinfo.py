"""Sphinx extension: at the foot of every page, the commit the book was built from and its date;
on a notebook page also when its notebook was executed and how long it ran (papermill's metadata).
When the repository has a public address, the repository and issue buttons link to it, and the
BibTeX entry of the ``cite-this-book`` directive (written from CITATION.cff) carries it.

Dates are those of the commit and of the execution, not of the Sphinx run, so that rebuilding the
same executed notebooks gives the same pages.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
from pathlib import Path

import yaml
from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _git(root: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (e.g. an unpacked archive)
        return ""


def repository_url(root: Path, environ=os.environ) -> str:
    """The public web address of the book's repository, or "" when it has none.

    ``FDP_REPOSITORY_URL`` when set (a release build names its home), else the ``origin`` remote
    when it is a web address (``https://...`` or GitHub's ``git@github.com:owner/name.git``).  A clone
    of a local path has no public address: no button is shown rather than a link that leads nowhere.
    """
    url = environ.get("FDP_REPOSITORY_URL", "").strip() or _git(root, "remote", "get-url", "origin")
    url = re.sub(r"^git@([^:/]+):", r"https://\1/", url)
    if not re.match(r"^https://[^/\s]+/\S+$", url):
        return ""
    return url.removesuffix(".git").rstrip("/")


def citation_bibtex(root: Path, environ=os.environ) -> str:
    """The book's BibTeX entry, from CITATION.cff (title, version, year of release, licence), with the
    repository's address when it has one (:func:`repository_url`)."""
    cff = yaml.safe_load((root / "CITATION.cff").read_text())
    year = str(cff["date-released"])[:4]
    authors = " and ".join("{" + a["name"] + "}" if "name" in a else f"{a['family-names']}, {a['given-names']}"
                           for a in cff["authors"])
    fields = [("author", "{" + authors + "}"), ("title", "{" + cff["title"] + "}"), ("version", "{" + str(cff["version"]) + "}"),
              ("year", "{" + year + "}")]
    url = repository_url(root, environ)
    if url:
        fields.append(("url", "{" + url + "}"))
    fields.append(("note", "{Jupyter Book and Python package fdp}"))  # the licences are in the prose below it
    width = max(len(name) for name, _ in fields)
    return f"@software{{fdp_reproduction_{year},\n" + "".join(f"  {name:<{width}} = {value},\n" for name, value in fields) + "}"


class CiteThisBook(SphinxDirective):
    """``cite-this-book``: the book's BibTeX entry (:func:`citation_bibtex`)."""

    def run(self):
        root = Path(self.env.srcdir)
        self.env.note_dependency(str(root / "CITATION.cff"))
        text = citation_bibtex(root)
        block = nodes.literal_block(text, text)
        block["language"] = "bibtex"
        return [block]


def _buttons(app, config) -> None:
    url = repository_url(Path(app.srcdir))
    if url:
        options = dict(config.html_theme_options or {})
        options.update(repository_url=url, use_repository_button=True, use_issues_button=True,
                       use_download_button=True)
        config.html_theme_options = options


def _footer(app, pagename, templatename, context, doctree) -> None:
    if doctree is None or "body" not in context:
        return
    info = app.env.fdp_buildinfo
    parts = [f"Built from commit {info['commit']}" + (f" of {info['date']}" if info["date"] else "")
             + (" with uncommitted changes" if info["dirty"] else "")]
    notebook = Path(app.srcdir) / f"{pagename}.ipynb"
    if notebook.is_file():
        run = json.loads(notebook.read_text()).get("metadata", {}).get("papermill", {})
        if run.get("duration") is not None:
            parts.append(f"this page's notebook was executed on {str(run.get('start_time', ''))[:10]} "
                         f"in {run['duration']:.0f} s")
    context["body"] += f'\n<p class="buildinfo">{html.escape("; ".join(parts))}.</p>\n'


def _collect(app) -> None:
    root = Path(app.srcdir)
    app.env.fdp_buildinfo = {
        "commit": _git(root, "rev-parse", "--short=10", "HEAD") or "(unknown)",
        "date": _git(root, "log", "-1", "--format=%cs"),
        "dirty": bool(_git(root, "status", "--porcelain", "--untracked-files=no")),
    }


def setup(app):
    app.connect("config-inited", _buttons)
    app.connect("builder-inited", _collect)
    app.connect("html-page-context", _footer)
    app.add_directive("cite-this-book", CiteThisBook)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
