"""The whole book as one PDF: numbered pages and a table of contents that gives each chapter's page.

``python -m fdp_book.pdf whole-book.html out.pdf`` prints the single-page build with Chromium (through Playwright,
``CHROMIUM`` names the browser) once MathJax has typeset it, with the page number in every footer, the PDF's outline
(bookmarks) from the headings, and every chapter on a new page.  The theme prints a table of contents
(``#jb-print-toc``) without page numbers, and Chromium cannot say on which page a heading lands, so the book is
printed twice: first with placeholders of the same width after each entry, then, once ``pdfinfo -dests`` (Debian's
poppler-utils) has read the page of each chapter's first section from the PDF's named destinations, with the numbers
filled in.  The placeholders keep the layout, so both prints paginate alike; the second is checked against the first.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

_PLACEHOLDER = "000"
#: An entry of the theme's printed table of contents (``#jb-print-toc``), which links each page of the book.
_ENTRY = re.compile(r'(<a class="reference internal nav-link" href="#document-([^"]+)">.*?</a>)')
#: A named destination as ``pdfinfo -dests`` lists it: page, the XYZ target's top, name.
_DEST = re.compile(r'^\s*(\d+)\s+\[\s*XYZ\s+\S+\s+(\S+).*\]\s+"(.*)"\s*$', re.M)

_STYLE = """<style>
@media print {
  /* each page of the book on a new sheet: the break goes on the empty anchor before its section (a break on the
     section itself left a blank sheet when that anchor's line fell onto a new page of its own) */
  span[id^="document-"] { display: block; break-before: page; }
  #jb-print-toc li { margin: 0.1em 0; }
  #jb-print-toc .pdf-entry { display: flex; align-items: baseline; gap: 0.4em; }
  #jb-print-toc .pdf-entry > a { flex: 1; }
  #jb-print-toc .pdf-page { font-variant-numeric: tabular-nums; min-width: 2.2em; text-align: right; }
}
</style>"""
_FOOTER = ('<div style="font-size: 8px; width: 100%; text-align: center; color: #555;">'
           '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def _toc(page: str) -> tuple[int, int]:
    start = page.find('<div id="jb-print-toc">')
    if start < 0:
        raise ValueError("the single-page book has no printed table of contents (#jb-print-toc) to number")
    return start, page.index("</nav>", start)


def chapters(page: str) -> list[str]:
    """The id of each chapter's first section, in the order of the printed table of contents."""
    start, end = _toc(page)
    ids = []
    for _, doc in _ENTRY.findall(page[start:end]):
        found = re.findall(rf'<span id="document-{re.escape(doc)}"></span>\s*<section[^>]*\bid="([^"]+)"', page[end:])
        if len(found) != 1:
            raise ValueError(f"the single-page book has {len(found)} starts of {doc}, not one")
        ids.append(found[0])
    return ids


def with_contents(page: str, pages: list[str] | None = None) -> str:
    """``page`` with a page number after each entry of its printed table of contents (``pages`` in order, or
    placeholders of the same width where None) and the print style that starts each chapter on a new page."""
    count = len(chapters(page))
    if not count:
        raise ValueError("the printed table of contents of the single-page book lists no page")
    numbers = iter(pages or [_PLACEHOLDER] * count)
    start, end = _toc(page)
    toc = _ENTRY.sub(lambda m: f'<span class="pdf-entry">{m.group(1)}<span class="pdf-page">{next(numbers)}</span></span>',
                     page[start:end])
    return (page[:start] + toc + page[end:]).replace("</head>", _STYLE + "</head>", 1)


def chapter_pages(destinations: str, ids: list[str]) -> list[str]:
    """The page on which each section of ``ids`` starts, from ``pdfinfo -dests``' listing of the printed book."""
    where = {name: (int(page), float(top)) for page, top, name in _DEST.findall(destinations)}
    missing = [i for i in ids if i not in where]
    if missing:
        raise ValueError(f"the printed book has no destination for the chapters {missing}")
    off = [i for i in ids if where[i][1] < 0.0]  # a target below its page's foot: the heading is on the next one
    if off:
        raise ValueError(f"the chapters {off} start below the foot of a page: their page is not known")
    return [str(where[i][0]) for i in ids]


def _destinations(pdf: Path) -> str:
    return subprocess.run(["pdfinfo", "-dests", str(pdf)], capture_output=True, text=True, check=True).stdout


def _print(browser, source: Path, out: Path) -> None:
    page = browser.new_page()
    try:
        page.goto(source.resolve().as_uri(), wait_until="load", timeout=120_000)
        page.wait_for_function("!window.MathJax || (window.MathJax.startup && window.MathJax.startup.promise)",
                               timeout=60_000)
        page.evaluate("async () => { if (window.MathJax) await window.MathJax.startup.promise; }")
        page.pdf(path=str(out), format="A4", print_background=True, outline=True, tagged=True,
                 display_header_footer=True, header_template="<span></span>", footer_template=_FOOTER,
                 margin=dict(top="15mm", bottom="15mm", left="12mm", right="12mm"))
    finally:
        page.close()


def print_book(source: Path, out: Path) -> list[str]:
    """Print ``source`` (the single-page book) to ``out`` with its table of contents; return the chapters' pages."""
    from playwright.sync_api import sync_playwright

    original = source.read_text()
    ids = chapters(original)
    staged = source.with_name("whole-book-print.html")
    first = out.with_name(out.name + ".first")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            try:
                staged.write_text(with_contents(original))
                _print(browser, staged, first)
                numbers = chapter_pages(_destinations(first), ids)
                staged.write_text(with_contents(original, numbers))
                _print(browser, staged, out)
            finally:
                browser.close()
        if chapter_pages(_destinations(out), ids) != numbers:  # the filled-in numbers moved a chapter
            raise RuntimeError("the second print paginates differently from the first: the contents would be wrong")
    finally:
        staged.unlink(missing_ok=True)
        first.unlink(missing_ok=True)
    return numbers


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m fdp_book.pdf WHOLE_BOOK_HTML OUT_PDF")
    found = print_book(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"pdf: {len(found)} entries in its contents, the last on page {found[-1]}")
