"""Hygiene of the source notebooks: clean, one parameters cell, python3 kernel, params files, in the toc."""

from __future__ import annotations

import ast
import json
import re

import pytest
import yaml

from fdp.paths import ROOT

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


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
@pytest.mark.parametrize("suffix", [".yaml", ".quick.yaml"])
def test_params_files_name_only_declared_parameters(nb, suffix):
    # papermill only warns about unknown names; we refuse them here
    path = ROOT / "notebooks" / "params" / f"{nb.stem}{suffix}"
    assert path.exists()
    params = yaml.safe_load(path.read_text()) or {}
    cell = next(c for c in _load(nb)["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    declared = {t.id for node in ast.parse("".join(cell["source"])).body if isinstance(node, ast.Assign) for t in node.targets}
    assert set(params) <= declared, f"unknown parameters {set(params) - declared}"
    if suffix == ".yaml":
        assert set(params) == declared, f"{path.name} must list every parameter, missing {declared - set(params)}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_listed_in_toc(nb):
    assert f"book/executed/{nb.stem}" in (ROOT / "_toc.yml").read_text()


def _normalise(req: str) -> str:
    return re.sub(r"\s+", "", req).lower().replace("_", "-")


def test_environment_yml_mirrors_pyproject():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = set(map(_normalise, project["dependencies"]))
    for extra in project["optional-dependencies"].values():
        wanted |= set(map(_normalise, extra))
    env = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    listed = set()
    for dep in env:
        if isinstance(dep, dict):
            listed |= {_normalise(d) for d in dep["pip"] if d != "-e ."}
        elif not dep.startswith(("python=", "pip")):
            listed.add(_normalise(dep))
    assert listed == wanted, f"only in pyproject: {wanted - listed}; only in environment.yml: {listed - wanted}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_title_has_no_tex(nb):
    """The title is shown in the sidebar of every page, where MathJax does not run: no $...$ in it."""
    cells = json.loads(nb.read_text())["cells"]
    title = next(line for c in cells if c["cell_type"] == "markdown" for line in "".join(c["source"]).splitlines()
                 if line.startswith("# "))
    assert "$" not in title, title
