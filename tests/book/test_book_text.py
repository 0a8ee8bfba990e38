"""The prose of the pages that are not notebooks: no typed measurement, a complete errata index, and the
{result} role that quotes the run (book/_ext/result_role.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from fdp_book import results

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("book/*.md"), *ROOT.glob("book/papers/*.md")])
NUMBER = re.compile(r"(?<![\w.\-])(\d+\.\d+|\d+(?=\s?%))")
# "Section 4.3", "Fig. 13a", "App. K.1", "Proposition 6.2", "eqs. 43-46": references, not measurements
REFERENCE = re.compile(r"(?:Sec\.|Sections?|Prop\.|Propositions?|Theorems?|Thm\.|Lemmas?|Appendix|App\.|Figures?|Figs?\.|"
                       r"Tables?|[Ee]qs?\.|Definitions?|Corollary|Algorithm|Alg\.|Example|Remark|version)\s*[\w.]*$")


def _paper_numbers() -> list[float]:
    """Every number of data/paper: the papers' printed values (and the numbers quoted in their sources)."""
    out = []
    for path in (ROOT / "data" / "paper").glob("*.yaml"):
        text = path.read_text()
        out += [float(x) for x in re.findall(r"\d+\.\d+|\d+", text)]

        def walk(node):
            if isinstance(node, dict):
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)
            elif isinstance(node, float):
                out.append(abs(node))

        walk(yaml.safe_load(text))
    return out


def _prose(text: str) -> str:
    """The page without code, roles ({cite}, {ref}, {result}, ...), link targets and labels."""
    text = re.sub(r"^(`{3,}|:{3,}).*?^\1", "", text, flags=re.S | re.M)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "", text)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return re.sub(r"^\([^)]*\)=\s*$", "", text, flags=re.M)


def typed_numbers(text: str, paper: list[float]) -> list[str]:
    """Decimal numbers and percentages of ``text`` that quote neither the run nor a paper value."""
    found = []
    for line in _prose(text).splitlines():
        for m in NUMBER.finditer(line):
            if REFERENCE.search(line[:m.start()]):
                continue
            x = float(m.group(1))
            percent = line[m.end():].lstrip().startswith("%")
            candidates = (x, x / 100) if percent else (x,)
            if "." not in m.group(1) and not percent:
                continue
            if any(abs(c - p) <= 1e-9 * max(1.0, p) for c in candidates for p in paper):
                continue
            found.append(f"{m.group(1)}{' %' if percent else ''} in: {line.strip()[:100]}")
    return found


def test_scan_finds_a_typed_measurement():
    paper = [0.0483, 0.21]
    assert typed_numbers("we get 0.1589 and 17 % here", paper) == ["0.1589 in: we get 0.1589 and 17 % here",
                                                                  "17 % in: we get 0.1589 and 17 % here"]
    assert typed_numbers("printed 4.83 % and 0.21; Sec. 4.3; {result}`nb:x|.3f`; `--rate 0.0128`", paper) == []


@pytest.mark.parametrize("page", [*PAGES, *ROOT.glob("book/reference/*.md"), *ROOT.glob("notebooks/*.ipynb")],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_control_character(page):
    """A control character in a page's source (``\\v`` of ``\\varepsilon`` read as an escape by a script that wrote
    it) breaks the formula it sits in without any warning of the build."""
    text = page.read_text()
    if page.suffix == ".ipynb":  # the JSON escapes them: read the cells
        text = "".join("".join(c["source"]) for c in json.loads(text)["cells"])
    bad = sorted({f"U+{ord(c):04X}" for c in text if ord(c) < 32 and c not in "\n\t"})
    assert not bad, f"{page.name}: {bad}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_typed_measurement(page):
    """Every measured number on a page that is not a notebook comes from the run ({result} role)."""
    assert typed_numbers(page.read_text(), _paper_numbers()) == []


def test_errata_index_lists_every_entry_once():
    text = (ROOT / "book" / "errata.md").read_text()
    labels = re.findall(r"^\(([\w.:-]+)\)=\s*$", text, flags=re.M)
    index = text[text.index("| Entry"):].split("\n\n")[0]
    listed = re.findall(r"\{ref\}`[^`<]*<([\w.:-]+)>`", index)
    assert sorted(listed) == sorted(labels)


def test_errata_index_gives_each_entry_the_causes_of_its_deviations_sorted_by_cause():
    """Issue 52: the index sorts by cause, and an entry's cause is that of the recorded deviations citing it."""
    text = (ROOT / "book" / "errata.md").read_text()
    rows = [line for line in text[text.index("| Entry"):].split("\n\n")[0].splitlines() if line.startswith("| {ref}")]
    cited = {}
    for path in sorted((ROOT / "data" / "paper").glob("*.yaml")):
        for item in results.load_spec(path.stem).values():
            if "cause" in item:
                cited.setdefault(item["errata"], set()).add(item["cause"])
    first = []
    for row in rows:
        label = re.search(r"<([\w.:-]+)>`", row).group(1)
        causes = row.split(" | ")[2].split(", ")
        assert causes and set(causes) <= set(results.CAUSES), row
        assert label not in cited or set(causes) == cited[label], (label, causes, cited.get(label))
        first.append(results.CAUSES.index(causes[0]))
    assert first == sorted(first) and len(set(first)) >= 3  # sorted by cause; a cause no deviation has may be absent


# --- the role itself -------------------------------------------------------------------------------------

sys.path.insert(0, str(ROOT / "book" / "_ext"))
result_role = pytest.importorskip("result_role")


def test_render_formats():
    assert result_role.render(0.00102341, ".3x") == "1.02 × 10⁻³"
    assert result_role.render(0.247018, ".3f") == "0.247"
    # a value data/paper marks as an upper end is rounded up, as the chapters print it (1.0734 was 1.073 on one page
    # and 1.074 on another)
    assert result_role.render(1.07341, ".3f", "upper") == "1.074" and result_role.render(1.07341, ".4g", "upper") == "1.074"
    assert result_role.render(1.07349, ".3f", "lower") == "1.073" and result_role.render(0.5, ".1f", "upper") == "0.5"
    with pytest.raises(ValueError):
        result_role.render(0.5, ".3q")


def test_glued_strings_are_read_from_an_executed_notebook(tmp_path):
    output = {"output_type": "display_data", "metadata": {"scrapbook": {"name": "gap", "mime_prefix": "x/"}},
              "data": {"x/text/plain": "'0.1589'"}}
    figure = {"output_type": "display_data", "metadata": {"scrapbook": {"name": "fig", "mime_prefix": "x/"}},
              "data": {"x/text/plain": "<Figure size 10x10 with 1 Axes>"}}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": [output, figure]}]}))
    assert result_role._glued(path, path.stat().st_mtime) == {"gap": "0.1589"}


def test_bibliography_labels_are_unique_and_every_entry_links():
    """No two works share an author-year label (a/b in the year disambiguates), and each has a doi or url."""
    from pybtex.database import parse_file

    bibstyle = pytest.importorskip("bibstyle")
    entries = parse_file(str(ROOT / "book" / "references.bib")).entries
    labels = [bibstyle.author_year_label(e) for e in entries.values()]
    assert len(labels) == len(set(labels)), sorted(label for label in labels if labels.count(label) > 1)
    assert [key for key, e in entries.items() if not ({"doi", "url"} & {f.lower() for f in e.fields})] == []
    assert bibstyle.author_year_label(entries["kaissis2023rero"]) == "Kaissis et al., 2023a"
    assert bibstyle.author_year_label(entries["dkw1956"]) == "Dvoretzky et al., 1956"


def test_bibliography_follows_its_labels_a_before_b():
    """The list was sorted by the full author list: "Guo et al., 2022b" came before 2022a, and Kaissis 2024 sat
    between 2023a and 2023b."""
    from pybtex.database import parse_file

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    bibstyle = pytest.importorskip("bibstyle")
    entries = parse_file(str(ROOT / "book" / "references.bib")).entries.values()
    style = bibstyle.AuthorYearSorting()
    labels = [bibstyle.author_year_label(e) for e in sorted(entries, key=style.sorting_key)]
    assert labels.index("Guo et al., 2022a") + 1 == labels.index("Guo et al., 2022b")
    kaissis = [label for label in labels if label.startswith("Kaissis et al.")]
    assert kaissis == sorted(kaissis) and kaissis[:2] == ["Kaissis et al., 2023a", "Kaissis et al., 2023b"]


def test_the_methods_chapter_names_tests_that_exist():
    """Every test the methods chapter cites (in `tests/<file>.py`, `test_name`, ...) is defined in that file."""
    text = (ROOT / "book" / "methods.md").read_text()
    cited = []
    for group in re.finditer(r"in `(tests/[\w/]+\.py)`, ((?:`test_\w+`(?:, | and )?)+)", text):
        source = (ROOT / group.group(1)).read_text()
        for name in re.findall(r"`(test_\w+)`", group.group(2)):
            cited.append(name)
            assert re.search(rf"^def {name}\(", source, flags=re.M), f"{name} is not in {group.group(1)}"
    assert len(cited) >= 25, cited


def test_the_cited_software_is_at_the_locked_versions():
    """Each package the references cite as software names the version requirements.lock pins."""
    bib = (ROOT / "book" / "references.bib").read_text()
    lock = (ROOT / "requirements.lock").read_text()
    cited = re.findall(r"url\s*=\s*\{https://pypi\.org/project/([\w-]+)/\}", bib)
    assert {"dp-accounting", "gdpnum", "riskcal", "mlxtend", "scikit-learn"} <= set(cited)
    for package in cited:
        entry = bib[:bib.index(f"https://pypi.org/project/{package}/")].rsplit("\n@", 1)[1]
        version = re.search(r"version ([\w.]+)\}", entry).group(1)
        assert re.search(rf"^{re.escape(package)}=={re.escape(version)} ", lock, flags=re.M | re.I), (package, version)


# --- code cells link to the library reference (book/_ext/codelinks.py) -------------------------------------

codelinks = pytest.importorskip("codelinks")


def _cell(code: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    return ('<div class="cell_input docutils container">\n<div class="highlight-ipython3 notranslate">'
            + highlight(code, get_lexer_by_name("ipython3"), HtmlFormatter()) + "</div></div>")


def test_a_library_name_in_a_code_cell_links_to_its_reference_entry():
    names = codelinks.imported_names(["from fdp import dpsgd, calibrate\nfrom fdp.accounting import pld as P",
                                      "%matplotlib inline", "import numpy as np\nfrom fdp.accounting import rdp\n"
                                      "from fdp_book.chapters import rtm_dpsgd as chapter"])
    assert names["P"] == "fdp.accounting.pld" and names["np"] == "numpy" and names["dpsgd"] == "fdp.dpsgd"
    assert names["rdp"] == "fdp.accounting.rdp"  # a cell that is not Python (a magic) does not lose the others
    documented = {"fdp.accounting.pld.mechanism_pld", "fdp.calibrate.solve", "fdp.accounting.privacy_loss.dpsgd",
                  "fdp.accounting.rdp.renyi_dp"}
    code = ("def play(eps):\n    return eps\n\n\nrun = dpsgd(1.0, 0.1, 10)\nlat = P.mechanism_pld(run).x\n"
            "s = calibrate.solve(aim)\nnp.exp(1)\nchapter.figure7(run)\nr = f(rdp=rdp.renyi_dp(run, [2]))\n"
            "g = brackets[0].solve\nplay(1.0)\ncalibrate.gone(1)\n")
    body, undocumented = codelinks.link_chains(_cell(code), names, lambda path: f"ref.html#{path}" if path in documented
                                               else None, frozenset({"play"}))
    links = re.findall(r'<a class="fdp-api" href="([^"]+)"[^>]*>(.*?)</a>', body)
    assert [href for href, _ in links] == ["ref.html#fdp.accounting.privacy_loss.dpsgd",  # re-exported: its home
                                           "ref.html#fdp.accounting.pld.mechanism_pld", "ref.html#fdp.calibrate.solve",
                                           "ref.html#fdp.accounting.rdp.renyi_dp"]  # not the keyword rdp=
    assert re.sub(r"<[^>]+>", "", links[1][1]) == "P.mechanism_pld"  # the whole chain, not ".x" after the call
    assert "exp" not in "".join(t for _, t in links) and "figure7" not in "".join(t for _, t in links)
    assert '<span id="code-play">' in body and body.count('href="#code-play"') == 1  # the call links the definition
    assert undocumented == ["fdp.calibrate.gone"]  # a library name the reference lacks: the build warns
    # prose code blocks (not notebook cells) are left alone
    prose = _cell("calibrate.solve(aim)").replace("highlight-ipython3", "highlight-python")
    assert codelinks.link_chains(prose, names, lambda path: "x") == (prose, [])
