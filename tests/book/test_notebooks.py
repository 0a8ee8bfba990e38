"""Notebook smoke runs with the quick parameters, determinism, and bad notebook parameters."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
from pathlib import Path

import papermill as pm
import pytest
import yaml

from fdp_book import results
from fdp_book.paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# the report reads what the others recorded, so it runs last
ORDER = [nb for nb in NOTEBOOKS if nb.stem != "report"] + [nb for nb in NOTEBOOKS if nb.stem == "report"]


def _execute(nb: Path, out_dir: Path, results_dir: Path, params_file: str = "quick.yaml") -> Path:
    params = yaml.safe_load((ROOT / "notebooks" / "params" / f"{nb.stem}.{params_file}").read_text()) or {}
    out = out_dir / nb.name
    old = os.environ.get("FDP_RESULTS_DIR")
    os.environ["FDP_RESULTS_DIR"] = str(results_dir)  # inherited by the kernel
    try:
        pm.execute_notebook(
            str(nb), str(out), parameters=params, kernel_name="python3", cwd=str(ROOT / "notebooks"), progress_bar=False
        )
    finally:
        if old is None:
            os.environ.pop("FDP_RESULTS_DIR", None)
        else:
            os.environ["FDP_RESULTS_DIR"] = old
    return out


def _book_files() -> dict:
    """The bytes of every file the book's build writes and a rerun must leave alone (book/, data/results/)."""
    return {p: p.read_bytes() for folder in ("book", "data/results") for p in sorted((ROOT / folder).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """Execute every notebook once with its .quick.yaml; returns (output folder, results folder). The runs write
    only there: the book's pages and records are byte for byte what they were (checked here, once for all)."""
    out = tmp_path_factory.mktemp("executed")
    res = tmp_path_factory.mktemp("results")
    before = _book_files()
    for nb in ORDER:
        _execute(nb, out, res)
    after = _book_files()
    assert after.keys() == before.keys() and all(after[p] == before[p] for p in before), \
        sorted(str(p) for p in before.keys() ^ after.keys() | {p for p in before if after.get(p) != before[p]})
    return out, res


@pytest.mark.notebook
@pytest.mark.parametrize("nb", [nb.stem for nb in ORDER])
def test_quick_run(quick_runs, nb):
    out, res = quick_runs
    assert (out / f"{nb}.ipynb").exists()
    # the estimated run time is printed before the work it estimates (the first output that is not a warning)
    executed = json.loads((out / f"{nb}.ipynb").read_text())
    streams = [o["text"] for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
               if o.get("output_type") == "stream" and o.get("name") == "stdout"]
    said = "".join("".join(text) if isinstance(text, list) else text for text in streams)  # a list of lines on disk
    if nb == "your_run":  # the practitioner's page: one report and a calibration or two, seconds; it records nothing
        assert not (res / "your_run.json").exists()
        return
    assert re.search(r"Estimated run time: about \d+(\.\d)? (s|min|h) on ", said), said[:500]
    # the estimate's input of figures is the number the page glues (each drawn as a timed probe figure)
    drawn = sum("application/papermill.record/image/png" in o.get("data", {}) for c in executed["cells"] for o in c.get("outputs", []))
    assert drawn == importlib.import_module(f"fdp_book.chapters.{nb}").FIGURES
    if nb != "report":
        records = results.load(nb, res)
        assert records, f"{nb} recorded no results"
        assert all(r["kind"] in results.KINDS for r in records)
        # every record the quick parameters can reproduce is compared, and must pass
        failing = [(r["key"], r["value"], r["paper"], results.status_of(r)) for r in records
                   if results.status_of(r) in results.FAILING]
        assert not failing, failing


@pytest.mark.notebook
def test_guo_comparison_records_all_36_cells(quick_runs):
    _, res = quick_runs
    keys = {r["key"] for r in results.load("guo_comparison", res)}
    params = yaml.safe_load((ROOT / "notebooks/params/guo_comparison.quick.yaml").read_text())
    expected = 3 * len(params["sigmas"]) * len(params["prior_sizes"])
    assert len(keys) == expected
    assert {k.split("/")[0] for k in keys} == {"guo_analytic", "guo_mc", "ours"}


@pytest.mark.notebook
def test_a_workload_of_ones_own_leaves_the_papers_rows_compared(quick_runs):
    """rtm_dpsgd's quick run adds a workload the paper does not print: it records nothing, and the paper's row
    (CIFAR-10) is not compared only for the quick run's coarser lattices, never for the added workload."""
    _, res = quick_runs
    quick = yaml.safe_load((ROOT / "notebooks/params/rtm_dpsgd.quick.yaml").read_text())
    paper = results.paper_setting("rtm_dpsgd")["runs"]
    own = [w for w in quick["runs"] if not any(results.same(w, row) for row in paper)]
    assert own and len(own) < len(quick["runs"])
    records = results.load("rtm_dpsgd", res)
    assert records and all("/cifar10/" in r["key"] for r in records)
    assert all("runs" not in r.get("not_compared", "") for r in records), [r["not_compared"] for r in records]


def test_a_run_of_ones_own_leaves_the_risk_reports_records_compared(quick_runs):
    """risk_report's quick run adds a DP-SGD run of its own after De et al.'s: the records read De et al.'s run only
    and stay compared (and must match)."""
    _, res = quick_runs
    quick = yaml.safe_load((ROOT / "notebooks/params/risk_report.quick.yaml").read_text())
    assert len(quick["runs"]) == 2 and quick["runs"][1][0] == "Own run"
    records = results.load("risk_report", res)
    assert records and all(results.status_of(r) in ("match", "explained") for r in records), records


@pytest.mark.notebook
def test_a_sampling_rate_of_ones_own_leaves_the_papers_figure_5a_ends_compared(quick_runs):
    """rero_sampling_rate's quick run adds a practitioner's rate (batch 256 of 60,000) to Figure 5a: the paper's two
    ends (q = 0.01 and 0.99) are still recorded, the added rate records nothing, and a record left uncompared is so
    for the quick run's fewer steps, never for the added rate."""
    _, res = quick_runs
    quick = yaml.safe_load((ROOT / "notebooks/params/rero_sampling_rate.quick.yaml").read_text())
    assert 0.0042667 in quick["hayes_rates"]
    fig5a = {r["key"]: r for r in results.load("rero_sampling_rate", res) if r["key"].startswith("hayes_fig5a/")}
    assert set(fig5a) == {"hayes_fig5a/q0.01", "hayes_fig5a/q0.99"}
    assert all(results.status_of(r) not in results.FAILING for r in fig5a.values()), fig5a
    assert all("hayes_rates" not in r.get("not_compared", "") for r in fig5a.values()), fig5a
    assert all("hayes_steps" in r.get("not_compared", "hayes_steps") for r in fig5a.values()), fig5a  # the reason


def test_same_quick_run_gives_identical_results(quick_runs, tmp_path):
    _, first = quick_runs
    second = tmp_path / "results"
    _execute(ROOT / "notebooks" / "guo_comparison.ipynb", tmp_path, second)
    a = (first / "guo_comparison.json").read_bytes()
    b = (second / "guo_comparison.json").read_bytes()
    assert a == b


@pytest.mark.notebook
def test_failed_run_keeps_the_previous_outputs_and_leaves_nothing_half_written():
    """A run that fails keeps the previous run's notebook and results byte for byte, and no temporaries."""
    runs = ROOT / "_build" / "runs"
    notebook, results = runs / "guo_comparison.ipynb", runs / "results" / "guo_comparison.json"
    saved = {path: path.read_bytes() if path.exists() else None for path in (notebook, results)}
    results.parent.mkdir(parents=True, exist_ok=True)
    notebook.write_bytes(b"previous notebook")
    results.write_bytes(b"previous results")
    try:
        proc = subprocess.run(
            ["make", "--no-print-directory", "run", "NB=guo_comparison", "PARAMS=-p sigmas '[-1.0]'"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode != 0
        assert "sigmas[0] must be a number > 0, got -1.0" in proc.stdout + proc.stderr
        assert notebook.read_bytes() == b"previous notebook"
        assert results.read_bytes() == b"previous results"
        assert not list(runs.glob(".guo_comparison*")), "temporary outputs left behind"
    finally:
        for path, content in saved.items():
            if content is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(content)


@pytest.mark.notebook
def test_the_same_parameters_spelled_two_ways_run_into_one_folder():
    """The run's folder was a hash of the PARAMS string: the same parameters in another order or spacing made a second
    folder.  Two failing runs (a bad value stops them at once) print the same output name; other values another."""
    import re

    def output(params):
        proc = subprocess.run(["make", "--no-print-directory", "run", "NB=guo_comparison", f"PARAMS={params}"], cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode != 0 and "sigmas[0] must be a number > 0, got -1.0" in proc.stdout + proc.stderr
        return re.search(r"run: _build/runs/guo_comparison-(\w+)", proc.stdout + proc.stderr).group(1)

    a = output("-p sigmas '[-1.0]' -p prior_sizes '[10]'")
    assert output("-p prior_sizes '[10]'   -p sigmas '[-1.0]'") == a
    assert output("-p prior_sizes '[11]' -p sigmas '[-1.0]'") != a


def test_help_prints_the_table_and_runs_nothing():
    runs = ROOT / "_build" / "runs"
    before = sorted(runs.iterdir()) if runs.is_dir() else []
    proc = subprocess.run(["make", "--no-print-directory", "run", "NB=guo_comparison", "HELP=1"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "parameters of notebooks/guo_comparison.ipynb" in proc.stdout
    assert "executing" not in proc.stdout + proc.stderr and "papermill" not in proc.stdout + proc.stderr
    assert (sorted(runs.iterdir()) if runs.is_dir() else []) == before


@pytest.mark.parametrize("params, message", [
    ("-p sigma 1.0", "guo_comparison has no parameter 'sigma'; its parameters: sigmas, prior_sizes"),
    ("-y 'sigmas:[1.0]'", "must give 'name: value' pairs"),
    ("-p mi_samples 2.5e3.5", "mi_samples must be an integer ≥ 1"),
    ("-p mi_samples 2.5", "mi_samples must be an integer ≥ 1, got 2.5"),
])
def test_a_bad_option_stops_make_run_in_one_line_before_the_notebook(params, message, tmp_path):
    proc = subprocess.run(["make", "--no-print-directory", "run", "NB=guo_comparison", f"PARAMS={params}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and message in proc.stderr and "Traceback" not in proc.stderr
    assert "executing" not in proc.stdout


def test_an_unknown_name_in_a_parameter_file_is_refused(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("calibration_target: [[epsilon, 8.0]]\n")
    proc = subprocess.run(["make", "--no-print-directory", "run", "NB=risk_report", f"PARAMS=-f {mine}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "risk_report has no parameter 'calibration_target'" in proc.stderr


def test_run_with_an_unknown_profile_names_the_profiles():
    proc = subprocess.run(["make", "--no-print-directory", "run", "NB=reconstruction_attacks", "PROFILE=huge"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert "no notebooks/params/reconstruction_attacks.huge.yaml" in proc.stderr and "paper" in proc.stderr


@pytest.mark.notebook
def test_a_notebook_run_in_jupyter_shows_its_figures_and_leaves_the_books_registry_alone(tmp_path):
    """Run as a Jupyter front end runs it (nbclient, working directory notebooks/, no FDP_* variables), with the
    quick values typed into its parameters cell: the figures are outputs of their cells, the summary boxes render
    as Markdown, and the numbers go to the scratch folder, not to data/results."""
    import nbclient
    import nbformat

    from fdp_book import paths

    nb = nbformat.read(ROOT / "notebooks" / "guo_comparison.ipynb", as_version=4)
    quick = yaml.safe_load((ROOT / "notebooks" / "params" / "guo_comparison.quick.yaml").read_text())
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    cell.source += "\n" + "\n".join(f"{name} = {value!r}" for name, value in quick.items())  # the user's edit
    book_file = paths.BOOK_RESULTS / "guo_comparison.json"
    before = book_file.read_bytes() if book_file.exists() else None
    env = {k: v for k, v in os.environ.items() if not k.startswith("FDP_")}
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the kernel inherits this environment
    try:
        nbclient.NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}},
                                timeout=600).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no figure shown"
    assert any("Results at a glance" in o.get("data", {}).get("text/markdown", "") for o in outputs)
    assert any("records its numbers in" in o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert (book_file.read_bytes() if book_file.exists() else None) == before, "data/results was written"
    assert (paths.SCRATCH_RESULTS / "guo_comparison.json").is_file()
