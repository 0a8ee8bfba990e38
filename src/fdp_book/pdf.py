"""The whole book as one PDF: numbered pages and a table of contents that gives each chapter's page.

``python -m fdp_book.pdf whole-book.html out.pdf`` prints the single-page build with Chromium (through Playwright,
``CHROMIUM`` names the browser) once MathJax has typeset it, with the page number in every footer and the PDF's
outline (bookmarks) from the headings.  The theme prints a table of contents (``#jb-print-toc``) without page
numbers, and Chromium cannot say on which page a heading lands, so the book is printed twice: first with
placeholders of the same width after each entry, then, once ``pdftotext`` (Debian's poppler-utils) has found each
chapter's marker in the first print, with the numbers filled in.  The placeholders keep the layout, so both prints
paginate alike; the second is checked against the first.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

#: A chapter's marker: invisible (white, 1 px, out of the flow), but ``pdftotext`` reads it on the chapter's page.
MARK = "fdpchapter{:03d}"
_MARK_SPAN = '<span class="pdf-mark" aria-hidden="true">{}</span>'
_PLACEHOLDER = "000"
#: An entry of the theme's printed table of contents (``#jb-print-toc``), which links each page of the book.
_ENTRY = re.compile(r'(<a class="reference internal nav-link" href="#document-([^"]+)">.*?</a>)')

_STYLE = """<style>
@media print {
  .pdf-mark { position: absolute; font-size: 1px; color: #fff; }
  #jb-print-toc li { margin: 0.1em 0; }
  #jb-print-toc .pdf-entry { display: flex; align-items: baseline; gap: 0.4em; }
  #jb-print-toc .pdf-entry > a { flex: 1; }
  #jb-print-toc .pdf-page { font-variant-numeric: tabular-nums; min-width: 2.2em; text-align: right; }
  #jb-print-docs-body { break-after: page; }
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
    """The pages of the book in the order of its printed table of contents (their document names)."""
    start, end = _toc(page)
    return [doc for _, doc in _ENTRY.findall(page[start:end])]


def with_contents(page: str, pages: list[str] | None = None) -> str:
    """``page`` with a marker where each chapter begins and a page number after each entry of its printed table of
    contents: ``pages`` in order, or placeholders of the same width where None."""
    docs = chapters(page)
    if not docs:
        raise ValueError("the printed table of contents of the single-page book lists no page")
    numbers = iter(pages or [_PLACEHOLDER] * len(docs))
    start, end = _toc(page)
    toc = _ENTRY.sub(lambda m: f'<span class="pdf-entry">{m.group(1)}<span class="pdf-page">{next(numbers)}</span></span>',
                     page[start:end])
    body = page[end:]
    for i, doc in enumerate(docs):
        anchor = f'<span id="document-{doc}"></span>'
        if body.count(anchor) != 1:
            raise ValueError(f"the single-page book has {body.count(anchor)} starts of {doc}, not one")
        body = body.replace(anchor, anchor + _MARK_SPAN.format(MARK.format(i)))
    return (page[:start] + toc + body).replace("</head>", _STYLE + "</head>", 1)


def chapter_pages(text_by_page: list[str], count: int) -> list[str]:
    """The page (1-based) on which each of ``count`` chapter markers stands in the printed text."""
    numbers = []
    for i in range(count):
        hits = [n for n, text in enumerate(text_by_page, 1) if MARK.format(i) in text]
        if len(hits) != 1:
            raise ValueError(f"chapter {i + 1}'s marker is on {len(hits)} pages of the printed book, not on one")
        numbers.append(str(hits[0]))
    return numbers


def _page_texts(pdf: Path) -> list[str]:
    out = subprocess.run(["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return out.split("\f")


def _print(browser, source: Path, out: Path) -> None:
    page = browser.new_page()
    try:
        page.goto(source.resolve().as_uri(), wait_until="load")
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
    staged = source.with_name("whole-book-print.html")
    first = out.with_name(out.name + ".first")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            staged.write_text(with_contents(original))
            _print(browser, staged, first)
            numbers = chapter_pages(_page_texts(first), len(chapters(original)))
            staged.write_text(with_contents(original, numbers))
            _print(browser, staged, out)
        finally:
            browser.close()
            staged.unlink(missing_ok=True)
    if chapter_pages(_page_texts(out), len(numbers)) != numbers:  # the filled-in numbers moved a chapter
        first.unlink(missing_ok=True)
        raise RuntimeError("the second print paginates differently from the first: the contents would be wrong")
    first.unlink(missing_ok=True)
    return numbers


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m fdp_book.pdf WHOLE_BOOK_HTML OUT_PDF")
    found = print_book(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"pdf: {len(found)} entries in its contents, the last on page {found[-1]}")
