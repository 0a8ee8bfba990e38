"""The PDF's table of contents (src/fdp_book/pdf.py): placeholders, and the pages read off the printed book."""

from __future__ import annotations

import pytest

from fdp_book import pdf

PAGE = ('<html><head></head><body><div id="jb-print-toc"><nav><ul>'
        '<li><a class="reference internal nav-link" href="#document-book/a">1. A</a></li>'
        '<li><a class="reference internal nav-link" href="#document-book/b">2. B</a></li></ul></nav></div>'
        '<div class="toctree-wrapper"><span id="document-book/a"></span><section class="x" id="sec-a"><h2>A</h2></section>'
        '<span id="document-book/b"></span>\n<section id="sec-b"><h2>B</h2></section></div></body></html>')

DESTS = '''Page  Destination                 Name
   1 [ XYZ    0  843 null      ] "main-content"
   3 [ XYZ   36  843 null      ] "sec-a"
   2 [ XYZ   36  -28 null      ] "document-book/a"
   7 [ XYZ   36  843 null      ] "sec-b"
'''


def test_each_entry_gets_a_page_number_and_the_chapters_start_pages():
    assert pdf.chapters(PAGE) == ["sec-a", "sec-b"]
    first = pdf.with_contents(PAGE)
    assert first.count('<span class="pdf-page">000</span>') == 2
    assert 'span[id^="document-"] { display: block; break-before: page; }' in first.split("</head>")[0]
    second = pdf.with_contents(PAGE, ["3", "17"])
    assert '1. A</a><span class="pdf-page">3</span>' in second and '2. B</a><span class="pdf-page">17</span>' in second
    # the placeholders and the numbers leave everything else alike, so both prints paginate alike
    assert second.replace(">3<", ">000<").replace(">17<", ">000<") == first


def test_the_pages_are_read_off_the_named_destinations_of_the_print():
    assert pdf.chapter_pages(DESTS, ["sec-a", "sec-b"]) == ["3", "7"]
    with pytest.raises(ValueError, match="no destination for the chapters"):
        pdf.chapter_pages(DESTS, ["sec-a", "sec-c"])
    with pytest.raises(ValueError, match="below the foot of a page"):  # Chromium's target for a heading pushed on
        pdf.chapter_pages(DESTS, ["document-book/a"])
    with pytest.raises(ValueError, match="no printed table of contents"):
        pdf.with_contents("<html><head></head><body></body></html>")
    with pytest.raises(ValueError, match="0 starts of book/b"):
        pdf.chapters(PAGE.replace('<span id="document-book/b"></span>', ""))
