"""A rerun is a page (fdp_book.rerun): the notebook make run executed, rendered in the book's theme."""

from __future__ import annotations

import csv
import json
import os
import re

import papermill as pm
import pytest
import yaml

from fdp_book import rerun, results
from fdp_book.paths import ROOT


@pytest.fixture(scope="module")
def rerun_page(tmp_path_factory):
    """guo_comparison with its quick values and one prior size, executed as make run does (not under the book's
    build, results in the run's folder), then rendered."""
    run = tmp_path_factory.mktemp("run")
    params = yaml.safe_load((ROOT / "notebooks" / "params" / "guo_comparison.quick.yaml").read_text())
    params["prior_sizes"] = [10]
    saved = dict(os.environ)
    os.environ.pop("FDP_BOOK_BUILD", None)
    os.environ["FDP_RESULTS_DIR"] = str(run / "results")
    try:
        pm.execute_notebook(str(ROOT / "notebooks" / "guo_comparison.ipynb"), str(run / "guo_comparison.ipynb"),
                            parameters=params, kernel_name="python3", cwd=str(ROOT / "notebooks"), progress_bar=False)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    html = rerun.build_page(run / "guo_comparison.ipynb", run / "results", run / "page")
    return run, html


@pytest.mark.notebook
def test_the_page_opens_with_what_differs_from_the_books_run(rerun_page):
    _, html = rerun_page
    text = html.read_text()
    first = text[: text.index("Setting.")]  # before the chapter's own prose
    assert "A rerun of this chapter with other parameters" in first
    assert "prior_sizes" in first and "[10, 100]" in first  # the book's value beside this run's
    assert "not compared" in first and "this run uses" in first  # why a record is not compared
    # record keys as code, which the book's style wraps anywhere in a table cell (long keys widened the table)
    assert re.search(r"<td><p><code[^>]*><span class=\"pre\">guo_analytic/", first)


@pytest.mark.notebook
def test_the_page_shows_each_figure_once_and_no_raw_glue_markup(rerun_page):
    _, html = rerun_page
    text = html.read_text()
    assert "{glue" not in text and "glue:md" not in text
    images = re.findall(r"<img[^>]+src=\"([^\"]+\.png)\"", text)
    figures = text.count('class="figure') + text.count("<figure")
    assert images and len(images) == len(set(images)) and figures >= 1
    assert len(images) <= figures, "a glued figure is drawn twice (in its cell and in its caption)"


@pytest.mark.notebook
def test_the_records_are_also_csv(rerun_page):
    run, _ = rerun_page
    path = rerun.write_csv("guo_comparison", run / "results")
    rows = list(csv.DictReader(path.open()))
    recs = results.load("guo_comparison", run / "results")
    assert [r["key"] for r in rows] == [r["key"] for r in recs]
    assert [float(r["value"]) for r in rows] == [r["value"] for r in recs]  # repr: every digit survives


def test_changed_parameters_compare_with_the_books_parameter_file():
    book = yaml.safe_load((ROOT / "notebooks" / "params" / "guo_comparison.yaml").read_text())
    nb = {"metadata": {"papermill": {"parameters": {**book, "sigmas": [1.0]}}}}
    changed = rerun.changed_parameters("guo_comparison", json.loads(json.dumps(nb), object_hook=_Node))
    assert changed == {"sigmas": (book["sigmas"], [1.0])}


class _Node(dict):
    __getattr__ = dict.__getitem__


def test_references_to_the_books_other_pages_become_links_or_words(tmp_path):
    """A one-page build cannot resolve {ref} to an erratum or {doc} to a chapter: they showed as bare labels."""
    labels = {"rtm-lemma8": "Lemma 8: lost parentheses"}
    (tmp_path / "book" / "executed").mkdir(parents=True)
    (tmp_path / "book" / "errata.html").write_text("")
    (tmp_path / "book" / "executed" / "rtm_dpsgd.html").write_text("")
    text = "See {ref}`rtm-lemma8`, {ref}`the check <ra-soundness>` and the {doc}`RTM chapter <rtm_dpsgd>`."
    linked = rerun._links_to_the_book(text, labels, tmp_path)
    # as HTML anchors: MyST does not follow a Markdown link to a file: URI (the page showed the raw brackets)
    assert f'<a href="{(tmp_path / "book" / "errata.html").as_uri()}#rtm-lemma8">Lemma 8: lost parentheses</a>' in linked
    assert "{ref}`the check <ra-soundness>`" in linked  # this page's own label: left to the build
    assert f'<a href="{(tmp_path / "book" / "executed" / "rtm_dpsgd.html").as_uri()}">RTM chapter</a>' in linked
    unbuilt = rerun._links_to_the_book(text, labels, tmp_path / "nowhere")
    assert unbuilt == ("See Lemma 8: lost parentheses (book/errata.md), {ref}`the check <ra-soundness>` and the RTM chapter "
                       "(notebooks/rtm_dpsgd.ipynb).")  # the book unbuilt: the source file that holds the page
    assert rerun._links_to_the_book("the {doc}`glossary <../glossary>`", labels, tmp_path / "nowhere") == \
        "the glossary (book/glossary.md)"


def test_the_page_refuses_an_output_folder_it_did_not_write(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    run = ROOT / "notebooks" / "guo_comparison.ipynb"
    with pytest.raises(ValueError, match="out: .* did not write"):
        rerun.build_page(run, tmp_path, tmp_path)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_the_page_refuses_an_unexecuted_notebook_or_a_copy_that_is_no_chapter(tmp_path):
    with pytest.raises(ValueError, match="no outputs"):
        rerun.build_page(ROOT / "notebooks" / "guo_comparison.ipynb", tmp_path, tmp_path / "page")
    copy = tmp_path / "guo_copy.ipynb"
    copy.write_text((ROOT / "notebooks" / "guo_comparison.ipynb").read_text())
    with pytest.raises(ValueError, match="not a run of a chapter"):
        rerun.build_page(copy, tmp_path, tmp_path / "page")


def test_changed_parameters_are_shown_as_the_notebook_read_them():
    """Issue 53's new user saw `['my run', ..., '2e-5']`: papermill passes YAML 1.1's text; the table shows numbers."""
    nb = {"metadata": {"papermill": {"parameters": {"runs": [["mine", 0.8, 512, 45000, 1758, "2e-5"]], "prior": ["1e-2"]}}}}
    changed = rerun.changed_parameters("risk_report", json.loads(json.dumps(nb), object_hook=_Node))
    assert changed["runs"][1] == [["mine", 0.8, 512, 45000, 1758, 2e-5]] and changed["prior"][1] == [0.01]
