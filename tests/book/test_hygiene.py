"""Hygiene of the source notebooks: clean, one parameters cell, python3 kernel, params files, in the toc."""

from __future__ import annotations

import ast
import json
import re

import pytest
import yaml

from fdp_book.paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _load(nb):
    return json.loads(nb.read_text())


def test_there_are_notebooks():
    assert any(nb.stem == "guo_comparison" for nb in NOTEBOOKS)
    assert any(nb.stem == "report" for nb in NOTEBOOKS)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_exactly_one_parameters_cell_and_it_is_the_first_code_cell(nb):
    cells = _load(nb)["cells"]
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    first_code = next(i for i, c in enumerate(cells) if c["cell_type"] == "code")
    assert tagged[0] == first_code


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_outputs_in_git(nb):
    for cell in _load(nb)["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs", []) == []
            assert cell.get("execution_count") is None


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_kernelspec_is_python3(nb):
    assert _load(nb)["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_matplotlib_use(nb):
    src = "".join("".join(c["source"]) for c in _load(nb)["cells"])
    assert not re.search(r"matplotlib\.use\(", src)


def _parameters(nb):
    """The source of a notebook's parameters cell and the names it assigns."""
    cell = next(c for c in _load(nb)["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    source = "".join(cell["source"])
    return source, {t.id for node in ast.parse(source).body if isinstance(node, ast.Assign) for t in node.targets}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
@pytest.mark.parametrize("suffix", [".yaml", ".quick.yaml"])
def test_params_files_name_only_declared_parameters(nb, suffix):
    # papermill only warns about unknown names; we refuse them here
    path = ROOT / "notebooks" / "params" / f"{nb.stem}{suffix}"
    assert path.exists()
    params = yaml.safe_load(path.read_text()) or {}
    _, declared = _parameters(nb)
    assert set(params) <= declared, f"unknown parameters {set(params) - declared}"
    if suffix == ".yaml":
        assert set(params) == declared, f"{path.name} must list every parameter, missing {declared - set(params)}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_papermill_parses_every_parameter(nb):
    # papermill reads the parameters cell line by line: a value holding "=" (a label "eps = 8", say) is skipped with
    # a warning, and `make run -p` would then call that parameter unknown
    from papermill.translators import PythonTranslator

    source, declared = _parameters(nb)
    assert {p.name for p in PythonTranslator.inspect({"source": source})} == declared


PROFILES = sorted(p for p in (ROOT / "notebooks" / "params").glob("*.*.yaml") if not p.name.endswith(".quick.yaml"))


def test_paper_profiles_exist():
    assert {p.name for p in PROFILES} >= {"reconstruction_attacks.paper.yaml", "rtm_auditing.paper.yaml"}


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_profiles_name_only_declared_parameters(path):
    # make run NB=<name> PROFILE=<profile> passes notebooks/params/<name>.<profile>.yaml instead of <name>.yaml
    nb = ROOT / "notebooks" / f"{path.name.split('.')[0]}.ipynb"
    assert nb.exists(), f"{path.name} names no notebook"
    params = yaml.safe_load(path.read_text()) or {}
    _, declared = _parameters(nb)
    assert params and set(params) <= declared, f"unknown parameters {set(params) - declared}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_listed_in_toc(nb):
    assert f"book/executed/{nb.stem}" in (ROOT / "_toc.yml").read_text()


def _lock() -> dict[str, tuple[str, list[str]]]:
    """requirements.lock as {name: (version, hashes)}; names normalised as in PEP 503."""
    text = (ROOT / "requirements.lock").read_text()
    pins = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"([A-Za-z0-9_.-]+)==([^\s\\;]+)", block)
        if m:
            pins[re.sub(r"[-_.]+", "-", m[1]).lower()] = (m[2], re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return pins


def test_lock_pins_every_requirement_with_hashes():
    """Every dependency of pyproject.toml (core and extras) is locked, within its declared bounds, with hashes."""
    import tomllib

    from packaging.requirements import Requirement

    lock = _lock()
    assert len(lock) > 50 and all(hashes for _, hashes in lock.values()), [k for k, (_, h) in lock.items() if not h]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [Requirement(r) for r in project["dependencies"]]
    declared += [Requirement(r) for extra in project["optional-dependencies"].values() for r in extra]
    for req in declared:
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in lock, f"{req.name} is not in requirements.lock (run `make lock`)"
        assert req.specifier.contains(lock[name][0], prereleases=True), f"{req} but the lock has {lock[name][0]}"


def test_environment_yml_mirrors_the_lock():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    pip = next(d["pip"] for d in env if isinstance(d, dict))
    pins = {re.sub(r"[-_.]+", "-", p.split("==")[0]).lower(): p.split("==")[1] for p in pip if "==" in p}
    assert pins == {k: v for k, (v, _) in _lock().items()}, "environment.yml differs from requirements.lock (run `make lock`)"
    assert "python=3.11" in env and "-e ." in pip


def test_installed_versions_are_the_locked_ones():
    """The test environment is the locked one (a stale .venv would test other versions)."""
    from importlib.metadata import PackageNotFoundError, version

    wrong = {}
    for name, (pinned, _) in _lock().items():
        try:
            got = version(name)
        except PackageNotFoundError:
            got = None
        if got != pinned:
            wrong[name] = (got, pinned)
    assert not wrong, f"installed vs locked: {wrong}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_title_has_no_tex(nb):
    """The title is shown in the sidebar of every page, where MathJax does not run: no $...$ in it."""
    cells = json.loads(nb.read_text())["cells"]
    title = next(line for c in cells if c["cell_type"] == "markdown" for line in "".join(c["source"]).splitlines()
                 if line.startswith("# "))
    assert "$" not in title, title


def test_report_has_a_section_for_every_reproduction():
    """The report's right-hand contents lists every page with a paper file, each section linking to it."""
    cells = _load(ROOT / "notebooks" / "report.ipynb")["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for paper in sorted((ROOT / "data" / "paper").glob("*.yaml")):
        assert f"{{doc}}`{paper.stem}`" in text and f"records_{paper.stem}\n" in text, paper.stem


def test_citation_matches_the_package_and_the_intro():
    """CITATION.cff, the BibTeX entry of the introduction and pyproject.toml give one version; LICENSE names both licences."""
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["authors"] and cff["title"] and cff["license"] == "MIT"
    assert str(cff["version"]) == version
    assert "```{cite-this-book}" in (ROOT / "book" / "intro.md").read_text()
    info = _buildinfo()
    bibtex = info.citation_bibtex(ROOT, {})
    assert re.search(rf"version\s*= \{{{re.escape(version)}\}}", bibtex) and cff["title"] in bibtex
    assert "url" not in bibtex  # no public address: no url line
    with_url = info.citation_bibtex(ROOT, {"FDP_REPOSITORY_URL": "https://github.com/o/fdp"})
    assert re.search(r"url\s*= \{https://github.com/o/fdp\}", with_url)
    licence = (ROOT / "LICENSE").read_text()
    assert "MIT License" in licence and "CC BY 4.0" in licence


def test_every_mention_of_the_errata_links_to_an_entry():
    """A chapter or notebook that mentions the errata links there ({ref} to an entry's label, or the page)."""
    texts = {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted((ROOT / "book").rglob("*.md"))
             if p.name != "errata.md" and "executed" not in p.parts}
    for nb in NOTEBOOKS:
        texts[nb.relative_to(ROOT).as_posix()] = "\n".join(
            "".join(c["source"]) for c in _load(nb)["cells"] if c["cell_type"] == "markdown")
    unlinked = []
    for name, text in texts.items():
        for line in text.splitlines():
            if re.search(r"\berrat(a|um)\b", line, flags=re.I) and not line.startswith("#") \
                    and not re.search(r"\{ref\}`|\{doc\}`[^`]*errata|\]\(errata\.md\)", line):
                unlinked.append(f"{name}: {line.strip()[:100]}")
    assert not unlinked, "mentions of the errata without a link:\n" + "\n".join(unlinked)


def test_every_paper_chapter_has_the_same_structure_and_a_comparison_table():
    """The verdict first (the recorded comparison, then the findings), then setting, main result, what we
    reproduce and open points."""
    for chapter in sorted((ROOT / "book" / "papers").glob("*.md")):
        text = chapter.read_text()
        headings = re.findall(r"^## (.+)$", text, flags=re.M)
        assert headings == ["Verdict", "Setting", "Main result", "What we reproduce", "Open points"], chapter.name
        verdict = text.split("## Verdict", 1)[1].split("## Setting", 1)[0]
        assert f"```{{include}} ../executed/chapter_{chapter.stem}.inc" in verdict, chapter.name


def _buildinfo():
    import importlib.util

    spec = importlib.util.spec_from_file_location("buildinfo", ROOT / "book" / "_ext" / "buildinfo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"FDP_REPOSITORY_URL": "https://github.com/owner/fdp.git"}, "https://github.com/owner/fdp"),
        ({"FDP_REPOSITORY_URL": "git@github.com:owner/fdp.git"}, "https://github.com/owner/fdp"),
        ({"FDP_REPOSITORY_URL": "https://gitlab.example.org/group/fdp/"}, "https://gitlab.example.org/group/fdp"),
        ({"FDP_REPOSITORY_URL": "/work/main"}, ""),
        ({"FDP_REPOSITORY_URL": "file:///srv/fdp.git"}, ""),
    ],
)
def test_repository_buttons_link_only_to_a_public_address(environ, expected):
    assert _buildinfo().repository_url(ROOT, environ) == expected


def test_repository_address_falls_back_to_the_origin_remote(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    info = _buildinfo()
    assert info.repository_url(tmp_path, {}) == ""  # no remote: no buttons
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", "https://github.com/o/r.git"], check=True)
    assert info.repository_url(tmp_path, {}) == "https://github.com/o/r"


def _functions(nb):
    """``{name: lines}`` of the functions and classes a notebook defines at the top level of its cells."""
    out = {}
    for cell in _load(nb)["cells"]:
        if cell["cell_type"] == "code":
            for node in ast.parse("".join(cell["source"])).body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    out[node.name] = node.end_lineno - node.lineno + 1
    return out


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_checks_its_parameters_with_one_call_and_no_hand_written_checks(nb):
    source = "".join("".join(c["source"]) for c in _load(nb)["cells"] if c["cell_type"] == "code")
    assert source.count(f'parameters.check("{nb.stem}", globals())') == 1
    assert not re.search(r"\bfrom fdp\.validation import|\bcheck_(positive|open_unit|sampling_rate|nonnegative|n_jobs|array_in)\(|"
                         r"\bas_list\(", source)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebooks_functions_are_short_and_shadow_no_library_name(nb):
    import importlib
    import pkgutil

    import fdp

    library = {name for info in pkgutil.walk_packages(fdp.__path__, "fdp.")
               for name in getattr(importlib.import_module(info.name), "__all__", [])}
    functions = _functions(nb)
    assert not {name: n for name, n in functions.items() if n > 30}, "move long helpers into the library"
    assert not set(functions) & library, "a notebook helper named like a library function reads as that function"


def test_no_helper_is_defined_in_two_notebooks():
    seen = {}
    for nb in NOTEBOOKS:
        for name in _functions(nb):
            seen.setdefault(name, []).append(nb.stem)
    assert not {name: nbs for name, nbs in seen.items() if len(nbs) > 1}


#: The notebooks' code lines together may not grow: issue 34 sets the goal at 1,700 (a notebook calls, plots through
#: fdp_book.chapters, glues and records); lower this ceiling as chapters move their figures and prose out. A new page
#: raises it by its own lines only: your_run, the practitioner's page (issue 53), 50 lines on 1,695.  Issue 52's
#: visible computation cells, split from the hidden cells that show and record, wrap their lines to fit the column:
#: 10 lines for rtm_dpsgd's three; risk_report's search for De et al.'s run among the runs, 3 more.  The other ten
#: chapters' visible cells (issue 52, 115 lines): wrapped to the column, split at 12 lines, and the small computations
#: a chapter module did out of sight (the claims' violation and gap, Figure 7-8's ratios, TF Privacy's half-noise
#: epsilon) now on the page; 11 more for the records a referee asked for (Gomez et al.'s Fig. 1c in the paper's own
#: quantity, the Monte-Carlo failures of ReRo Fig. 1b and 1c).
#: Then 20 for Figure 2c at more steps (a referee asked whether its artefact holds at the paper's unprinted N).
NOTEBOOK_CODE_LINES_CEILING = 1695 + 50 + 10 + 3 + 115 + 11 + 3 + 20  # 3: the random streams made visible


def test_the_notebooks_code_does_not_grow():
    lines = {nb.stem: sum(len("".join(c["source"]).splitlines()) for c in _load(nb)["cells"] if c["cell_type"] == "code")
             for nb in NOTEBOOKS}
    assert sum(lines.values()) <= NOTEBOOK_CODE_LINES_CEILING, f"{sum(lines.values())} code lines: {lines}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_that_has_a_chapter_module_draws_no_figure_itself(nb):
    """Once a chapter has its module in fdp_book.chapters, its figures are drawn there (one place to fix a figure)."""
    if not (ROOT / "src" / "fdp_book" / "chapters" / f"{nb.stem}.py").exists():
        pytest.skip("no chapter module yet")
    source = "".join("".join(c["source"]) for c in _load(nb)["cells"] if c["cell_type"] == "code")
    assert "column_figure(" not in source and "plt." not in source


def test_the_library_reference_has_a_section_for_every_module():
    """book/reference/ documents (automodule) every module of fdp that declares its public names."""
    import importlib
    import pkgutil

    import fdp

    pages = "".join(p.read_text() for p in (ROOT / "book" / "reference").glob("*.md"))
    documented = set(re.findall(r"^\.\. automodule:: (fdp[\w.]*)$", pages, flags=re.M))
    public = {info.name for info in pkgutil.walk_packages(fdp.__path__, "fdp.")
              if hasattr(importlib.import_module(info.name), "__all__")}
    assert public <= documented, f"modules missing from book/reference: {sorted(public - documented)}"
    for page in ("risk", "curves", "accounting", "experiments", "support"):
        assert f"book/reference/{page}" in (ROOT / "_toc.yml").read_text()


#: Issue 52: a visible computation cell is short (at most 12 lines) and fits the column at 1280 px without scrolling
#: (book.css prints it at 0.68 rem: about 94 characters).
VISIBLE_CELL_LINES, VISIBLE_CELL_WIDTH = 12, 94
_FOLDED = ("remove-cell", "remove-input", "hide-input", "hide-cell", "parameters")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_visible_cell_is_short_and_fits_the_column(nb):
    for cell in _load(nb)["cells"]:
        if cell["cell_type"] != "code" or set(cell.get("metadata", {}).get("tags", [])) & set(_FOLDED):
            continue
        lines = "".join(cell["source"]).splitlines()
        assert len(lines) <= VISIBLE_CELL_LINES, f"{nb.stem}: a visible cell of {len(lines)} lines: {lines[0]}"
        assert max(map(len, lines)) <= VISIBLE_CELL_WIDTH, f"{nb.stem}: {max(lines, key=len)}"


@pytest.mark.parametrize("nb", [p for p in NOTEBOOKS if p.stem != "report"], ids=lambda p: p.stem)
def test_a_chapter_shows_its_computation_and_folds_nothing(nb):
    """Issue 52: every chapter shows at least three computation cells; a cell is shown or removed, never folded (a
    reader clicked "Show code cell source" on every cell of the book)."""
    cells = [c for c in _load(nb)["cells"] if c["cell_type"] == "code"]
    tags = [set(c.get("metadata", {}).get("tags", [])) for c in cells]
    assert not [t for t in tags if t & {"hide-input", "hide-cell", "hide-output"}], f"{nb.stem}: a folded cell"
    assert sum(not t & set(_FOLDED) for t in tags) >= 3, f"{nb.stem}: fewer than 3 visible cells"
