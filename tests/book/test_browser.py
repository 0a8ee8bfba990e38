"""Render every page of the built book in headless Chromium, as a reader would see it.

Run by ``make check-book`` after ``make`` (``pytest -m browser tests/book/test_browser.py``).  The book in
``_build/html`` is served on 127.0.0.1 and each page is opened in Chromium driven by Playwright
(``executable_path`` points at the system's Chromium: no browser is downloaded).  A page fails if

* text that should be mathematics is still visible as TeX once MathJax has finished (``\\(``,
  ``\\[``, ``$$``, ``\\frac`` ...), a formula is not typeset, or MathJax reports a TeX error;
* an image is broken (not loaded, or zero natural width);
* it raises a JavaScript error or logs an error on the console;
* it requests anything from a host other than 127.0.0.1/localhost, or a local file is missing.

A full-page screenshot of each page goes to ``_build/screenshots/``.
The browser is ``$CHROMIUM`` if set, else the first of /usr/bin/chromium, chromium-browser,
google-chrome found.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("FDP_HTML", ROOT / "_build" / "html"))
SHOTS = ROOT / "_build" / "screenshots"

#: Folders of the build that hold assets, not pages.
SKIP_DIRS = {"_static", "_sources", "_images", "_downloads", "_sphinx_design_static"}

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHROMIUM_CANDIDATES = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
)
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
LOCAL_SCHEMES = {"data", "blob", "about", "file"}

#: Visible TeX that MathJax should have replaced.
TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(?:frac|begin|end|sqrt|left|right|mathbb|mathcal|mathrm|"
                 r"alpha|beta|gamma|delta|epsilon|varepsilon|kappa|lambda|mu|sigma|Phi|sum|int|log|exp|le|ge|"
                 r"leq|geq|cdot|infty|text|operatorname)(?![A-Za-z])"
                 r"|\$[^$\s][^$\n]{0,80}?[\\^_{}][^$\n]{0,80}?\$")

#: Every page is laid out as a publication (issue 13): its main column must not overflow at 1280 px,
#: and its images must be shown at IMAGE_SCALE of their pixel width (drawn for the column at up to
#: 2x, never upscaled, never shrunk to illegibility).
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
IMAGE_SCALE = (0.45, 1.05)
VIEWPORT = {"width": 1280, "height": 900}
FIRST_FIGURE_MAX = 2000  # px from the top of a chapter to its first figure
REPORT_HEIGHT_MAX = 15_000  # px: the reproduction report stays a page one can scan

REDIRECT = re.compile(r"<meta[^>]+http-equiv=[\"']?refresh", re.IGNORECASE)

# Runs in the page once it has loaded: waits for MathJax and for every image, then reports.
INSPECT_JS = r"""
async () => {
  const problems = [];
  const started = () => !!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise);
  if (document.querySelector('script[src*="mathjax" i]')) {
    const t0 = Date.now();
    while (!started() && Date.now() - t0 < 15000) await new Promise(r => setTimeout(r, 100));
    if (!started()) {
      problems.push('MathJax did not start (is the bundle missing from _static/mathjax?)');
    } else {
      try { await window.MathJax.startup.promise; }
      catch (e) { problems.push('MathJax failed: ' + e); }
    }
  }
  // Images: load lazy ones too, then wait for all to settle.
  const imgs = Array.from(document.images);
  imgs.forEach(img => { if (img.loading === 'lazy') img.loading = 'eager'; });
  await Promise.all(imgs.map(img => img.complete ? null : new Promise(r => {
    img.addEventListener('load', r, {once: true});
    img.addEventListener('error', r, {once: true});
    setTimeout(r, 10000);
  })));
  const images = imgs
    .filter(img => !img.complete || img.naturalWidth === 0)
    .map(img => img.getAttribute('src'));
  // Formulas that Sphinx marked as math but MathJax did not typeset.
  const math = Array.from(document.querySelectorAll('.math'));
  const untypeset = math
    .filter(el => !el.querySelector('mjx-container'))
    .map(el => el.textContent.trim().slice(0, 80));
  const typeset = document.querySelectorAll('mjx-container').length;
  // TeX errors: merror nodes (noerrors/parse errors) and undefined macros (noundefined: red text).
  const errSel = '[data-mjx-error], [data-mml-node="merror"], mjx-merror, ' +
                 'g[data-mml-node="mtext"][fill="red"], mtext[mathcolor="red"]';
  const texErrors = Array.from(document.querySelectorAll('mjx-container'))
    .filter(c => c.querySelector(errSel))
    .map(c => {
      let tex = '';
      try { tex = window.MathJax.startup.document.getMathItemsWithin(c)[0].math; } catch (e) {}
      const err = c.querySelector('[data-mjx-error]');
      const msg = err ? err.getAttribute('data-mjx-error') : 'undefined macro or error node';
      return (tex || c.textContent || '').trim().slice(0, 80) + ' (' + msg + ')';
    });
  // Visible text outside code and typeset math.
  const skip = 'pre, code, kbd, samp, script, style, textarea, noscript, mjx-container, .highlight';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    if (el.checkVisibility && !el.checkVisibility({visibilityProperty: true, opacityProperty: false})) continue;
    if (n.textContent.trim()) texts.push(n.textContent);
  }
  // Layout of the main column (the publication checks): overflow, image scale, tables left as text.
  const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const overflow = [];
  if (article.scrollWidth > article.clientWidth + 1) overflow.push('the main column is ' + article.scrollWidth + ' px wide in ' + article.clientWidth);
  for (const el of article.querySelectorAll('*')) {
    if (el.closest('pre, .highlight, mjx-container')) continue;
    const ox = getComputedStyle(el).overflowX;
    if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1)
      overflow.push(el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ')[0] : '') +
                    ' scrolls sideways: ' + el.scrollWidth + ' px in ' + el.clientWidth);
  }
  const scales = Array.from(article.querySelectorAll('img'))
    .filter(img => img.naturalWidth > 0 && img.clientWidth > 0)
    .map(img => ({src: img.getAttribute('src'), ratio: img.clientWidth / img.naturalWidth,
                  shown: img.clientWidth, natural: img.naturalWidth}));
  const rawTables = Array.from(article.querySelectorAll('p'))
    .map(p => p.textContent.trim())
    .filter(t => t.startsWith('|') && (t.match(/\|/g) || []).length >= 4)
    .map(t => t.slice(0, 80));
  // What a reader checks: the verdict on the first screen, alt text that is not a file name, our figure
  // numbers not run into the papers' ("Figure 14 Figure 8 of ..."), author-year citation labels.
  const verdict = Array.from(article.querySelectorAll('h1, h2, .admonition'))
    .find(el => /^([\d.]+\s*)?(Verdict|Results at a glance)/.test(el.textContent.trim()));  // numbered: "1.1. Verdict"
  const verdictTop = verdict ? Math.round(verdict.getBoundingClientRect().top + window.scrollY) : null;
  const badAlt = Array.from(article.querySelectorAll('img'))
    .filter(img => { const a = (img.getAttribute('alt') || '').trim();
                     return !a || /^[0-9a-f]{16,}\.\w+$/i.test(a) || /\.(png|svg|jpe?g)$/i.test(a); })
    .map(img => img.getAttribute('src'));
  const collisions = Array.from(article.querySelectorAll('figcaption'))
    .map(c => c.textContent.trim().replace(/\s+/g, ' '))
    .filter(t => /^Fig(?:ure|\.)\s*[\d.]+\s+Fig(?:ure|\.)\s*\d/.test(t))
    .map(t => t.slice(0, 60));
  const alphaLabels = Array.from(document.querySelectorAll('.citation .label, dl.citation > dt, .footnote-list .label'))
    .map(e => e.textContent.trim())
    .filter(t => /^\[?[A-Z][A-Za-z+]*\d{2}\]?$/.test(t));
  // Issue 52: the computation on the page. Visible code cells (not folded), the height of their code against the
  // column's, and the cells with no name linked to the library reference.
  const cells = Array.from(article.querySelectorAll('div.cell'))
    .filter(c => !c.classList.contains('tag_hide-input') && c.querySelector('.cell_input'));
  const codeHeight = cells.reduce((s, c) => s + c.querySelector('.cell_input').getBoundingClientRect().height, 0);
  const linked = cells.filter(c => c.querySelector('.cell_input a.fdp-api')).length;
  const code = {cells: cells.length, share: codeHeight / article.getBoundingClientRect().height, linked};
  return {problems, images, untypeset, typeset, math: math.length, texErrors, text: texts.join('\n'), code,
          overflow, scales, rawTables, verdictTop, badAlt, collisions, alphaLabels,
          height: document.documentElement.scrollHeight,
          firstFigure: (() => { const f = article.querySelector('figure, img');
                                return f ? Math.round(f.getBoundingClientRect().top + window.scrollY) : null; })()};
}
"""


def find_chromium() -> str | None:
    env = os.environ.get("CHROMIUM")
    if env:
        return env
    for path in CHROMIUM_CANDIDATES:
        if Path(path).exists():
            return path
    return shutil.which("chromium") or shutil.which("google-chrome")


def pages(html: Path) -> list[Path]:
    return sorted(
        p for p in html.rglob("*.html") if not SKIP_DIRS.intersection(p.relative_to(html).parts[:-1])
    )


def screenshot_name(rel: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "__", rel.removesuffix(".html")) + ".png"


def save_tiles(shot: Path, height: int) -> None:
    """Split a full-page screenshot into viewport-sized tiles ``<name>.tileNN.png`` next to it."""
    from PIL import Image

    with Image.open(shot) as image:
        for i, top in enumerate(range(0, image.height, height)):
            image.crop((0, top, image.width, min(image.height, top + height))).save(
                shot.with_suffix(f".tile{i:02d}.png"))


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - quiet: problems are reported by the test
        pass


@pytest.fixture(scope="module")
def server():
    """``_build/html`` served on 127.0.0.1 (an ephemeral port), for as long as the module runs."""
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML / 'index.html'} does not exist: build the book first (`make`)", pytrace=False)
    handler = functools.partial(_Handler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    """A Chromium with a fresh profile, driven by Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser check needs playwright: pip install -e '.[check]' (make check-book does it)",
                    pytrace=False)
    exe = find_chromium()
    if not exe or not Path(exe).exists():
        pytest.fail("no Chromium found (set CHROMIUM, or run `make check-book`, which installs Debian's chromium)",
                    pytrace=False)
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=exe,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
            service_workers="block",
        )
        try:
            yield context
        finally:
            context.close()


#: Page height and the offset of its first figure, in px at 1280 x 900, per page (printed by the check).
LAYOUT: dict[str, tuple[int, int | None]] = {}


def needs_verdict(rel: str) -> bool:
    """Paper pages and reproduction chapters open with their verdict (not the report, errata or intro)."""
    return rel.startswith("book/papers/") or is_chapter(rel)


def is_chapter(rel: str) -> bool:
    """A reproduction chapter (an executed notebook other than the reproduction report)."""
    return rel.startswith("book/executed/") and not rel.endswith("/report.html")


#: Issue 52: a chapter shows at least this many computation cells, their code at most this share of the column's
#: height (the page still reads as a paper), and at least that many of them link a library name to its reference
#: entry.  That every library name in a cell links is the build's check: book/_ext/codelinks.py warns of one that does
#: not, and the build turns warnings into errors; a cell of plain arithmetic on results has no name to link.
VISIBLE_CELLS_MIN, CODE_SHARE_MAX = 3, 0.20


def code_problems(code: dict) -> list[str]:
    """What a chapter's visible code cells lack (``code`` as INSPECT_JS measures it)."""
    out = []
    if code["cells"] < VISIBLE_CELLS_MIN:
        out.append(f"{code['cells']} visible code cells, fewer than {VISIBLE_CELLS_MIN}: show the calls that compute")
    if code["share"] > CODE_SHARE_MAX:
        out.append(f"visible code is {100 * code['share']:.0f} % of the page's height, above {100 * CODE_SHARE_MAX:.0f} %")
    if code["linked"] < VISIBLE_CELLS_MIN:
        out.append(f"{code['linked']} visible cells link a name to the library reference, fewer than {VISIBLE_CELLS_MIN}")
    return out


def check_page(context, base: str, rel: str) -> list[str]:
    """Open one page and return its problems (empty if it renders cleanly)."""
    problems: list[str] = []

    def on_route(route):
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in LOCAL_SCHEMES or parts.hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            problems.append(f"request to another host: {url}")
            route.abort()

    def on_response(response):
        if response.status >= 400:
            problems.append(f"HTTP {response.status} for {unquote(response.url.removeprefix(base))}")

    def on_console(msg):
        if msg.type == "error":
            problems.append(f"console error: {msg.text}")

    page = context.new_page()
    page.route("**/*", on_route)
    page.on("response", on_response)
    page.on("console", on_console)
    page.on("pageerror", lambda exc: problems.append(f"JavaScript error: {exc}"))
    page.on("websocket", lambda ws: problems.append(f"websocket: {ws.url}"))
    try:
        url = f"{base}/{rel}"
        if REDIRECT.search((HTML / rel).read_text(encoding="utf-8", errors="replace")):
            # e.g. index.html -> book/intro.html: check the page it leads to
            page.goto(url, wait_until="load")
            page.wait_for_url(lambda u: u != url, wait_until="load", timeout=10_000)
            page.wait_for_load_state("load")
        else:
            page.goto(url, wait_until="load")
        report = page.evaluate(INSPECT_JS)
        try:
            page.wait_for_load_state("networkidle", timeout=10_000)
        except Exception:  # noqa: BLE001 - a page that keeps loading is reported, not fatal
            problems.append("network did not become idle within 10 s")
        problems.extend(report["problems"])
        problems.extend(f"broken image: {src}" for src in report["images"])
        problems.extend(f"formula not typeset: {tex!r}" for tex in report["untypeset"])
        problems.extend(f"TeX error in formula: {err!r}" for err in report["texErrors"])
        for line in report["text"].splitlines():
            m = TEX.search(line)
            if m:
                start = max(0, m.start() - 30)
                problems.append(f"visible TeX {m.group(0)!r}: {line[start:m.end() + 40].strip()!r}")
        if report["math"] and not report["typeset"]:
            problems.append(f"page has {report['math']} formulas but no rendered mjx-container")
        problems.extend(f"markdown table left as text: {t!r}" for t in report["rawTables"])
        LAYOUT[rel] = (report["height"], report["firstFigure"])
        problems.extend(f"image without alt text (a file name is not one): {src}" for src in report["badAlt"])
        problems.extend(f"figure numbers run together: {t!r}" for t in report["collisions"])
        problems.extend(f"bibliography label not author-year: {t!r}" for t in report["alphaLabels"])
        if needs_verdict(rel) and (report["verdictTop"] is None or report["verdictTop"] > VIEWPORT["height"]):
            problems.append(f"no verdict on the first screen (Verdict or Results at a glance at "
                            f"{report['verdictTop']} px; the screen is {VIEWPORT['height']} px high)")
        if is_chapter(rel) and (report["firstFigure"] is None or report["firstFigure"] > FIRST_FIGURE_MAX):
            problems.append(f"first figure at {report['firstFigure']} px, beyond {FIRST_FIGURE_MAX} px (move the "
                            "chapter's headline figure up)")
        if is_chapter(rel):
            problems.extend(code_problems(report["code"]))
        if rel.endswith("executed/report.html") and report["height"] > REPORT_HEIGHT_MAX:
            problems.append(f"the reproduction report is {report['height']} px high, beyond {REPORT_HEIGHT_MAX} px")
        problems.extend(f"overflow: {o}" for o in report["overflow"])
        problems.extend(f"image {s['src']} shown at {s['ratio']:.2f} of its width ({s['shown']} of {s['natural']} px; "
                        f"draw it for the column at up to 2x: between {IMAGE_SCALE[0]} and {IMAGE_SCALE[1]})"
                        for s in report["scales"] if not IMAGE_SCALE[0] <= s["ratio"] <= IMAGE_SCALE[1])
        SHOTS.mkdir(parents=True, exist_ok=True)
        shot = SHOTS / screenshot_name(rel)
        page.screenshot(path=str(shot), full_page=True)
        save_tiles(shot, VIEWPORT["height"])
    except Exception as exc:  # noqa: BLE001 - one broken page must not hide the others
        problems.append(f"could not render: {type(exc).__name__}: {exc}")
    finally:
        page.close()
    return problems


@pytest.mark.browser
def test_book_was_built():
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML / 'index.html'} does not exist: build the book first (`make`)", pytrace=False)


@pytest.mark.browser
def test_every_page_renders(server, browser_context):
    """Every page: math typeset, images loaded, no JS errors, nothing from other hosts."""
    found = pages(HTML)
    assert found, f"no HTML pages under {HTML}"
    shutil.rmtree(SHOTS, ignore_errors=True)  # no screenshots of pages that no longer exist
    failures = {}
    for path in found:
        rel = path.relative_to(HTML).as_posix()
        problems = check_page(browser_context, server, rel)
        if problems:
            failures[rel] = list(dict.fromkeys(problems))  # de-duplicated, in order
    print(f"\nrendered {len(found)} pages; screenshots in {SHOTS.relative_to(ROOT)}/")
    layout = ["page heights and first figures (px at 1280 x 900), tallest first:"] + [
        f"  {height:7d}  first figure at {first if first is not None else '-':>6}  {rel}"
        for rel, (height, first) in sorted(LAYOUT.items(), key=lambda item: -item[1][0])]
    (SHOTS / "layout.txt").write_text("\n".join(layout) + "\n")
    print("\n".join(layout))
    if failures:
        lines = [f"{len(failures)} of {len(found)} pages have problems:"]
        for rel, problems in failures.items():
            lines.append(f"  {rel}:")
            lines.extend(f"    - {p}" for p in problems)
        pytest.fail("\n".join(lines), pytrace=False)


@pytest.mark.browser
def test_errata_links_resolve():
    """Every link to the errata page lands on an existing entry (or the page's top)."""
    errata = HTML / "book" / "errata.html"
    if not errata.is_file():
        pytest.fail(f"{errata} does not exist: build the book first (`make`)", pytrace=False)
    anchors = set(re.findall(r'id="([^"]+)"', errata.read_text(encoding="utf-8")))
    broken = []
    for path in pages(HTML):
        for href in re.findall(r'href="([^"]*errata\.html(?:#[^"]*)?)"', path.read_text(encoding="utf-8")):
            target = href.split("#", 1)[1] if "#" in href else ""
            if target and target not in anchors:
                broken.append(f"{path.relative_to(HTML)}: {href}")
    assert not broken, "errata links to missing anchors:\n" + "\n".join(broken)


@pytest.mark.browser
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_executed_notebook_prints_no_stderr_or_warning(name):
    """An executed notebook has no stderr stream, warning or raw repr of a record in its outputs."""
    import json

    nb = ROOT / "book" / "executed" / f"{name}.ipynb"
    if not nb.is_file():
        pytest.fail(f"{nb} does not exist: build the book first (`make`)", pytrace=False)
    bad = []
    for i, cell in enumerate(json.loads(nb.read_text())["cells"]):
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
            if out.get("name") == "stderr" or "Warning" in text or "{'key':" in text:
                bad.append(f"cell {i}: {text[:120]!r}")
    assert not bad, "\n".join(bad)


@pytest.mark.browser
def test_every_page_names_its_build():
    """The foot of every page names the commit it was built from; a notebook page also when and how long it ran."""
    missing = []
    for path in pages(HTML):
        text = path.read_text()
        info = re.search(r'<p class="buildinfo">([^<]*)</p>', text)
        rel = path.relative_to(HTML).as_posix()
        if path.name in ("genindex.html", "search.html") or REDIRECT.search(text):
            continue
        if not info or not re.search(r"Built from commit [0-9a-f]{10}", info.group(1)):
            missing.append(f"{rel}: no build commit")
        elif rel.startswith("book/executed/") and not re.search(r"executed on \d{4}-\d\d-\d\d in \d+ s", info.group(1)):
            missing.append(f"{rel}: no execution date and time")
    assert not missing, "\n".join(missing)


@pytest.mark.browser
def test_the_whole_book_pdf_is_complete_and_linked_from_the_introduction():
    """`make` prints the single-page book to _build/html/fdp-book.pdf; the introduction links to it."""
    pdf = HTML / "fdp-book.pdf"
    if not pdf.is_file():
        pytest.fail("no _build/html/fdp-book.pdf: run make (or make pdf)", pytrace=False)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    pages = len(re.findall(rb"/Type\s*/Page[^s]", data))
    assert pages >= 100, f"the PDF has {pages} pages; the book prints to about 170"
    assert b"/Outlines" in data, "the PDF has no outline (bookmarks): src/fdp_book/pdf.py prints with outline=True"
    # issue 52: numbered pages, and a table of contents that gives each chapter's first page (src/fdp_book/pdf.py)
    if shutil.which("pdftotext") and shutil.which("pdfinfo"):
        text = subprocess.run(["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
        by_page = text.split("\f")
        assert f"1 / {len(by_page) - 1}" in by_page[0] and f"{pages} / {pages}" in by_page[pages - 1]
        dests = subprocess.run(["pdfinfo", "-dests", str(pdf)], capture_output=True, text=True, check=True).stdout
        errata = re.search(r'^\s*(\d+)\s.*"errata-and-ambiguities"\s*$', dests, flags=re.M).group(1)
        assert f"Errata and ambiguities {errata}\n" in by_page[0] + by_page[1], "the contents give the errata's page"
        assert "Errata and ambiguities" in by_page[int(errata) - 1]
    intro = (HTML / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'href="../fdp-book.pdf"' in intro


@pytest.mark.browser
def test_the_library_reference_documents_every_public_name():
    """Each name in a module's ``__all__`` has its entry (an anchor ``fdp.module.name``) on a reference page, in the
    module that defines it (``fdp.accounting.rtm`` re-exports the names of its modules)."""
    import importlib
    import pkgutil

    import fdp

    html = "".join(p.read_text() for p in sorted((HTML / "book" / "reference").glob("*.html")))
    anchors = set(re.findall(r'id="(?:module-)?(fdp\.[\w.]+)"', html))  # a module's entry: module-fdp.risk
    modules = [fdp] + [importlib.import_module(info.name) for info in pkgutil.walk_packages(fdp.__path__, "fdp.")]
    exported = [(module, name) for module in modules for name in getattr(module, "__all__", ())]
    entries = {}  # one object under one name may be exported by several modules (a package and its module)
    for module, name in exported:
        entries.setdefault((id(getattr(module, name)), name), set()).add(f"{module.__name__}.{name}")
    missing = [f"{module.__name__}.{name}" for module, name in exported
               if not entries[id(getattr(module, name)), name] & anchors]
    assert len(anchors) > 300 and not missing, f"{len(missing)} public names without an entry: {missing[:20]}"


def test_code_problems_names_what_a_chapters_visible_code_lacks():
    assert code_problems({"cells": 4, "share": 0.12, "linked": 3}) == []
    found = code_problems({"cells": 2, "share": 0.31, "linked": 1})
    assert len(found) == 3 and "fewer than 3" in found[0] and "31 %" in found[1] and "1 visible cells link" in found[2]
