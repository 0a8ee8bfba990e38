"""The PDF's table of contents (src/fdp_book/pdf.py): markers, placeholders and the pages found for them."""

from __future__ import annotations

import pytest

from fdp_book import pdf

PAGE = ('<html><head></head><body><div id="jb-print-toc"><nav><ul>'
        '<li><a class="reference internal nav-link" href="#document-book/a">1. A</a></li>'
        '<li><a class="reference internal nav-link" href="#document-book/b">2. B</a></li></ul></nav></div>'
        '<span id="document-book/a"></span><section><h2>A</h2></section>'
        '<span id="document-book/b"></span><section><h2>B</h2></section></body></html>')


def test_each_entry_gets_a_page_number_and_each_chapter_a_marker():
    assert pdf.chapters(PAGE) == ["book/a", "book/b"]
    first = pdf.with_contents(PAGE)
    assert first.count('<span class="pdf-page">000</span>') == 2 and "<style>" in first.split("</head>")[0]
    assert first.index(pdf.MARK.format(0)) < first.index("<h2>A</h2>") < first.index(pdf.MARK.format(1))
    second = pdf.with_contents(PAGE, ["3", "17"])
    assert '1. A</a><span class="pdf-page">3</span>' in second and '2. B</a><span class="pdf-page">17</span>' in second
    # the placeholders and the numbers leave everything else alike, so both prints paginate alike
    assert second.replace(">3<", ">000<").replace(">17<", ">000<") == first


def test_the_pages_of_the_markers_are_read_off_the_printed_text():
    pages = ["Contents 000", f"x {pdf.MARK.format(0)} A", "more", f"{pdf.MARK.format(1)} B"]
    assert pdf.chapter_pages(pages, 2) == ["2", "4"]
    with pytest.raises(ValueError, match="chapter 2's marker is on 0 pages"):
        pdf.chapter_pages(pages[:3], 2)
    with pytest.raises(ValueError, match="no printed table of contents"):
        pdf.with_contents("<html><head></head><body></body></html>")
    twice = PAGE.replace('<section><h2>B', '<span id="document-book/a"></span><section><h2>B')
    with pytest.raises(ValueError, match="2 starts of book/a"):
        pdf.with_contents(twice)
