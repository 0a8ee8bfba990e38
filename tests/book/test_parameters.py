"""The notebooks' parameter schemas (fdp_book.parameters): one description per parameter, one check per notebook."""

from __future__ import annotations

import ast
import math
import re

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from fdp import targets
from fdp.accounting import accountants
from fdp_book import parameters
from fdp_book.paths import ROOT

NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
PROFILES = sorted((ROOT / "notebooks" / "params").glob("*.yaml"))


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_each_notebook_declares_its_parameters_once_in_the_cells_order(nb):
    specs = parameters.schema(nb)
    assert list(specs) == list(parameters.declared(nb))
    for name, spec in specs.items():
        assert spec.meaning and spec.source, f"{nb}.{name} needs a meaning and a source (or why it is ours)"


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_the_cells_defaults_are_the_books_values(nb):
    book = yaml.safe_load((ROOT / "notebooks" / "params" / f"{nb}.yaml").read_text())
    for name, default in parameters.declared(nb).items():
        assert ast.literal_eval(default) == book[name], name


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_every_profile_passes_its_schema(path, monkeypatch, tmp_path):
    # a notebook runs in notebooks/, and its folders are relative to it; the book's build makes book/executed
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "book" / "executed").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "notebooks")
    values = yaml.safe_load(path.read_text()) or {}
    checked = parameters.check_all(path.name.split(".")[0], values)
    assert set(checked) == set(values)


def test_the_schemas_choices_are_the_librarys():
    assert parameters.schema("rtm_dpsgd")["fig7_accountant"].choices == tuple(accountants.ACCOUNTANTS)
    target = parameters.schema("risk_report")["calibration_targets"].fields[0]
    assert target.choices == tuple(targets.TARGETS)


@pytest.mark.parametrize("nb, values, message", [
    ("rero_sampling_rate", {"epsilon": -1.0}, "epsilon must be a number > 0, got -1.0"),
    ("rero_sampling_rate", {"epsilon": float("nan")}, "epsilon must be a finite number > 0"),
    ("rero_sampling_rate", {"epsilon": math.inf}, "epsilon must be a finite number > 0"),
    ("rero_sampling_rate", {"epsilon": True}, "epsilon must be a finite number > 0, got True"),
    ("rero_sampling_rate", {"delta": 1.0}, "delta must be a number in (0, 1), got 1.0"),
    ("rero_sampling_rate", {"rates": [0.1, 1.5]}, "rates[1] must be a number in (0, 1], got 1.5"),
    ("rero_sampling_rate", {"rates": "[0.1, oops"}, "rates must be a list"),
    ("rero_sampling_rate", {"rates": []}, "rates must be a non-empty list"),
    ("rero_sampling_rate", {"hayes_steps": 2.5}, "hayes_steps must be an integer ≥ 1, got 2.5"),
    ("rero_sampling_rate", {"hayes_steps": 2**60}, "hayes_steps must be an integer ≥ 1, at most 2^53 in size"),
    ("rero_sampling_rate", {"hayes_steps": 0.0}, "hayes_steps must be an integer ≥ 1, got 0"),
    ("rero_sampling_rate", {"rates": [0.1, 0.1]}, "rates must hold distinct entries (to six significant digits), got 0.1 at 0"),
    ("guo_comparison", {"sigmas": [1.0, 1.0000001]}, "sigmas must hold distinct entries"),
    ("rtm_dpsgd", {"runs": [["a", 1.0, 10, 100, 10, 1e-5], ["a", 2.0, 10, 100, 10, 1e-5]]},
     "runs[].label must hold distinct entries"),
    ("rtm_tradeoffs", {"sgm": "{mu: ["}, "sgm must be a mapping written in YAML"),
    ("rero_sampling_rate", {"sweep_prior_sizes": [1, 10]}, "sweep_prior_sizes[0] must be an integer ≥ 2, got 1"),
    ("rero_sampling_rate", {"n_jobs": 0}, "n_jobs must be an integer ≥ 1 or -1, got 0"),
    ("rero_sampling_rate", {"epsilons": 1.0}, "has no parameter 'epsilons'; its parameters: epsilon, delta, rates"),
    ("guo_comparison", {"grid_sigma_min": 2.0, "grid_sigma_max": 1.0},
     "grid_sigma_max must exceed grid_sigma_min (2.0), got 1.0"),
    ("risk_report", {"runs": [["a", 1.0, 100, 50, 10, 1e-5]]}, "runs[0].batch must be at most runs[0].dataset (50), got 100"),
    ("risk_report", {"runs": [["a", -1.0, 1, 50, 10, 1e-5]]}, "runs[0].noise must be a number > 0, got -1.0"),
    ("risk_report", {"runs": [["a", 1.0, 1, 50, 10]]}, "runs[0] must be [label, noise, batch, dataset, steps, delta]"),
    ("risk_report", {"calibration_targets": [["tpr", 0.1]]}, "calibration_targets[0] must have a level exactly when"),
    ("risk_report", {"calibration_targets": [["mu", 1.0, 0.1]]}, "calibration_targets[0] must have a level exactly when"),
    ("risk_report", {"calibration_targets": [["eps", 1.0]]}, 'calibration_targets[0].target must be one of "epsilon"'),
    ("rtm_tradeoffs", {"sgm": {"mu": 0.2, "p": 0.4}}, "sgm must be a mapping with the keys mu, p, steps, d"),
    ("rtm_tradeoffs", {"sgm": {"mu": 0.2, "p": 1.4, "steps": 3, "d": 1}}, "sgm.p must be a number in (0, 1], got 1.4"),
    ("rtm_tradeoffs", {"dims": [1, 2, 3]}, "dims must be a list of 2 entries"),
    ("rtm_dpsgd", {"sandwich_bounds": [5.0, 1.0]}, "sandwich_bounds must be a list of 2 numbers > 0, increasing"),
    ("rtm_dpsgd", {"fig7_accountant": "prv"}, 'fig7_accountant must be one of "pld", "rdp", "rdp_opacus", got'),
    ("gdp_tables", {"topdown_shares": [50.0, 40.0]}, "topdown_shares must be a list of numbers > 0, adding up to 100"),
    ("gdp_tables", {"rdp_order_min": 1.0}, "rdp_order_min must be a number > 1, got 1.0"),
    ("reconstruction_attacks", {"dataset": "cifar"}, 'dataset must be one of "mnist", "digits", got'),
    ("reconstruction_attacks", {"progress": "yes"}, "progress must be true or false, got 'yes'"),
    ("reconstruction_attacks", {"fig1_epsilon": [1.0, 2e6]}, "fig1_epsilon[1] must be a number in (0, 1e+06], got 2000000.0"),
    ("report", {"results_dir": "/no/such/folder"}, "results_dir must be a folder that exists (or empty)"),
])
def test_a_bad_value_is_refused_naming_the_parameter(nb, values, message):
    with pytest.raises(ValueError) as err:
        parameters.check_all(nb, values)
    assert message in str(err.value)


def test_check_writes_the_checked_values_back():
    book = yaml.safe_load((ROOT / "notebooks" / "params" / "rero_sampling_rate.yaml").read_text())
    namespace = dict(book, epsilon=2, rates="[0.1, 0.5]", n_jobs=-1, unrelated=object())
    checked = parameters.check("rero_sampling_rate", namespace)
    assert namespace["epsilon"] == 2.0 and isinstance(namespace["epsilon"], float)
    assert namespace["rates"] == [0.1, 0.5] and namespace["n_jobs"] == -1 and "unrelated" not in checked
    del namespace["delta"]
    with pytest.raises(ValueError, match="does not define delta"):
        parameters.check("rero_sampling_rate", namespace)


def test_a_sorted_list_reaches_the_notebook_in_ascending_order():
    """A grid whose order does not matter (the ε of a figure) is given in any order and used sorted: the tables and
    figures read left to right, and a record's setting does not depend on the order typed."""
    assert parameters.schema("rtm_dpsgd")["fig7_epsilon"].sorted
    assert parameters.check_all("rtm_dpsgd", {"fig7_epsilon": "[8, 1, 2.5]"})["fig7_epsilon"] == [1.0, 2.5, 8.0]
    assert "(any order)" in parameters.describe(parameters.schema("rtm_dpsgd")["fig7_epsilon"])
    with pytest.raises(ValueError, match="distinct"):
        parameters.check_all("rtm_dpsgd", {"fig7_epsilon": [8.0, 1.0, 8.0]})


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_number_is_accepted_exactly_inside_its_range(x):
    inside = 0.0 < x < 1.0
    try:
        parameters.check_all("rero_sampling_rate", {"delta": x})
    except ValueError:
        assert not inside
    else:
        assert inside


@pytest.mark.parametrize("entry, message", [
    ({"type": "float", "range": "0, 1"}, "range must be an interval"),
    ({"type": "float", "range": "(1, 0)"}, "is empty"),
    ({"type": "real"}, "type must be one of"),
    ({"type": "float", "colour": "red"}, "unknown keys ['colour']"),
    ({"type": "records"}, "'fields' go with type records"),
    ({"type": "mapping", "keys": {"a": {"type": "float", "optional": True}}}, "only the last field of a record"),
    ({"type": "float", "range": "(a, b)"}, "range must be an interval of numbers"),
    ({"type": "int", "also": -1}, "x.also must be a list"),
    ({"type": "list[float]", "total": "100"}, "x.total must be a number"),
    ({"type": "list[float]", "length": "2"}, "x.length must be an integer >= 1"),
    ({"type": "str", "range": "(0, 1)"}, "are for numbers, not str"),
    ({"type": "str", "choices": "abc"}, "x.choices must be a list"),
    ({"type": "float", "above": "y"}, "x.above names 'y', which is not another parameter"),
    ({"type": "float", "sorted": True}, "sorted is for a list"),
    ({"type": "list[float]", "sorted": True, "increasing": True}, "not with increasing"),
    ({"type": "list[float]", "sorted": "no"}, "x.sorted must be true or false"),
    ({"type": "list[float]", "sorted": True, "also": ["auto"]}, "not with increasing or also"),
])
def test_a_bad_schema_is_refused(tmp_path, monkeypatch, entry, message):
    (tmp_path / "notebooks" / "schema").mkdir(parents=True)
    (tmp_path / "notebooks" / "schema" / "demo.yaml").write_text(yaml.safe_dump({"x": entry}))
    monkeypatch.setattr(parameters, "ROOT", tmp_path)
    with pytest.raises(ValueError) as err:
        parameters.schema("demo")
    assert message in str(err.value)


@pytest.mark.parametrize("value", [1e-5, 1e20, 2.0, 0.12549019607843137, 0.007455935, 5e-324, 3, True, False, "laplace",
                                   "De et al. (ε ≈ 8)", [1e-6, 2.5], {"mu": 0.2, "p": 1e-1}, [["a b", 1.0, 1e-5]]])
def test_a_shown_value_reads_back_as_itself(value):
    """What the table prints pastes back into make run: YAML (or papermill's -p) reads it as the same value."""
    from papermill.cli import _resolve_type

    text = parameters.shown(value)
    back = _resolve_type(text) if isinstance(value, bool) else yaml.safe_load(text)
    assert back == value and type(back) is type(value)


def test_a_yaml_error_in_a_schema_names_the_file(tmp_path, monkeypatch):
    (tmp_path / "notebooks" / "schema").mkdir(parents=True)
    (tmp_path / "notebooks" / "schema" / "demo.yaml").write_text("x: {type: float\n")
    monkeypatch.setattr(parameters, "ROOT", tmp_path)
    with pytest.raises(ValueError, match="demo.yaml is not valid YAML"):
        parameters.schema("demo")


def test_the_command_line_is_read_as_papermill_reads_it(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("sigmas: [0.5]\nn_jobs: 1\n")
    got = parameters.from_papermill(["-f", str(mine), "-y", "prior_sizes: [10]", "-p", "sensitivity", "2", "-p", "n_jobs", "3",
                                     "-r", "alg1_seed", "7", "--log-output"])
    assert got == {"sigmas": [0.5], "n_jobs": 3, "prior_sizes": [10], "sensitivity": 2, "alg1_seed": "7"}
    assert parameters.check_command_line("guo_comparison", ["-p", "sensitivity", "2"]) == {"sensitivity": 2.0}
    for args, message in ((["-p", "sigmas"], "-p needs a name and a value"), (["-f", str(tmp_path / "none.yaml")], "no such file"),
                          (["-y", "sigmas:[1.0]"], "must give 'name: value' pairs"), (["-y", "a: ["], "is not YAML"),
                          (["-f", str(mine), "-p", "sigma", "1"], "guo_comparison has no parameter 'sigma'")):
        with pytest.raises(ValueError, match=re.escape(message)):
            parameters.check_command_line("guo_comparison", args)


def test_the_table_gives_values_meaning_and_the_papers_value():
    rows = {row[0]: row for row in parameters.table_rows("rero_sampling_rate")}
    assert rows["epsilon"] == ("epsilon", "4.0", "number > 0", "target ε of every calibration",
                               "4.0; ReRo Fig. 1f; Hayes et al. Sec. 4.3")
    assert rows["n_jobs"][2] == "integer ≥ 1 or -1" and rows["rtol"][4].startswith("ours: ")
    assert parameters.shown(1e-5) == "1.0e-05" and parameters.shown(2.0) == "2.0" and parameters.shown(True) == "True"
    runs = {row[0]: row for row in parameters.table_rows("risk_report")}["runs"]
    assert runs[4].startswith("as the book's (")  # a long list equal to the book's is not written out twice


@pytest.mark.parametrize("values, message", [
    ({"fig10_known_sizes": [4, 2000], "known_size": 999}, "fig10_known_sizes[1] must be at most known_size (999), got 2000"),
    ({"fig8_prior_sizes": [2, 3], "fig3_prior_sizes": [2, 4]}, "fig8_prior_sizes must be among the values of fig3_prior_sizes"),
    ({"fig1_epsilon": [1.0], "fig3_epsilon": [10.0]}, "fig1_epsilon must share a value with fig3_epsilon ([10.0]), got [1.0]"),
])
def test_relations_between_lists(values, message):
    with pytest.raises(ValueError) as err:
        parameters.check_all("reconstruction_attacks", values)
    assert message in str(err.value)


def test_a_number_with_an_exponent_and_no_point_is_a_number(tmp_path):
    # issue 53's new user: YAML 1.1 (PyYAML, papermill) reads 1e-5 as the text '1e-5', and the run refused it
    # ("got '1e-5'"); a float parameter takes it as the number, from -p, -y and -f alike
    row = "[[MNIST, 1.0, 256, 60000, 7032, 1e-5]]"
    mine = tmp_path / "mine.yaml"
    mine.write_text(f"runs: {row}\n")
    for args in (["-p", "runs", row], ["-y", f"runs: {row}"], ["-f", str(mine)]):
        got = parameters.check_command_line("rtm_dpsgd", args)["runs"]
        assert got[0][5] == 1e-5 and isinstance(got[0][5], float)
    with pytest.raises(ValueError, match=re.escape("runs[0].delta")):  # text that is not a number stays refused
        parameters.check_command_line("rtm_dpsgd", ["-p", "runs", "[[MNIST, 1.0, 256, 60000, 7032, 1e-5x]]"])


def test_a_whole_number_written_with_a_point_or_an_exponent_is_a_count():
    """Issue 53: `-p dataset_size 4.5e4` was refused ("write 45000, not 45000.0") while the command line took it."""
    checked = parameters.check_all("rero_sampling_rate", {"hayes_steps": 3.0, "n_jobs": -1.0, "sweep_prior_sizes": ["1e1", 1.0e2]})
    assert checked["hayes_steps"] == 3 and type(checked["hayes_steps"]) is int and checked["n_jobs"] == -1
    assert checked["sweep_prior_sizes"] == [10, 100] and all(type(x) is int for x in checked["sweep_prior_sizes"])
