"""The results registry (fdp_book.results): records, statuses, verification, report table, reproducibility."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from fdp_book import page, results
from fdp_book.paths import ROOT

DEMO = """
records:
  a: {source: Table 1, kind: exact, paper: 0.123, tol: 0.0005}
  b:
    source: Fig. 2
    kind: figure
    paper: 0.7
    tol: 0.05
    explained: {expected: 0.5, tol: 0.01, reason: "paper uses another prior", errata: demo-prior, cause: paper error}
  c: {source: Table 3, kind: mc, paper: 1.0, tol: 0.1}
  pipe: {source: s, kind: exact, paper: 2.0, tol: 0.1, explained: {expected: 1.0, tol: 0.1, reason: "a | b", errata: demo-prior, cause: paper error}}
"""
GOOD = """
records:
  a: {source: s, kind: exact, paper: 1.0004, tol: 0.0005}
  b: {source: s, kind: mc, paper: 1.0, tol: 0.1, explained: {expected: 3.0, tol: 0.1, reason: "the paper divides by ceil(kappa N)",
      errata: demo-prior, cause: paper error}}
"""


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """An empty results folder (FDP_RESULTS_DIR), paper files for 'demo_nb' and 'good_nb' (FDP_PAPER_DIR),
    and no notebook started."""
    folder = tmp_path / "results"
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "demo_nb.yaml").write_text(DEMO)
    (paper / "good_nb.yaml").write_text(GOOD)
    (paper / "empty_nb.yaml").write_text(GOOD)
    monkeypatch.setenv("FDP_RESULTS_DIR", str(folder))
    monkeypatch.setenv("FDP_PAPER_DIR", str(paper))
    monkeypatch.setitem(results._current, "notebook", None)
    monkeypatch.setitem(results._current, "records", [])
    return folder


def _errata(tmp_path):
    path = tmp_path / "errata.md"
    path.write_text("# Errata\n\n(demo-prior)=\n### The prior\n\n(table1-prior)=\n### Table 1: the prior\n")
    return path


def _sample_run():
    results.start("demo_nb")
    results.record("a", 0.1234)
    results.record("b", 0.503)
    results.record("c", 2.0)


def test_round_trip(registry):
    results.start("demo_nb")
    assert results.record("a", 0.1232) is None  # a notebook cell ending in a record prints nothing
    rec = results.load("demo_nb")[0]
    assert rec["status"] == "match"
    path = registry / "demo_nb.json"
    assert path.exists()
    data = json.loads(path.read_text())
    assert data["notebook"] == "demo_nb"
    loaded = results.load("demo_nb")
    assert loaded == [rec]
    assert loaded[0]["value"] == 0.1232 and loaded[0]["paper"] == 0.123 and loaded[0]["tol"] == 5e-4
    assert loaded[0]["source"] == "Table 1" and loaded[0]["kind"] == "exact"
    assert results.load_all() == {"demo_nb": [rec]}
    # explicit directory argument gives the same
    assert results.load("demo_nb", registry) == [rec]


def test_start_discards_previous_records(registry):
    _sample_run()
    assert len(results.load("demo_nb")) == 3
    results.start("demo_nb")
    assert results.load("demo_nb") == []


def test_a_notebook_without_paper_file_cannot_record(registry):
    with pytest.raises(ValueError, match="no_such_nb.yaml"):
        results.start("no_such_nb")


def test_statuses(registry):
    _sample_run()
    status = {r["key"]: r["status"] for r in results.load("demo_nb")}
    assert status == {"a": "match", "b": "explained", "c": "mismatch"}
    assert {key: results.status(key) for key in status} == status  # the current run's view
    assert results.recorded() == set(status)
    with pytest.raises(ValueError, match="not been recorded"):
        results.status("zzz")
    # status_of agrees with |value - paper| <= tol, and with the pinned value of an explained deviation
    assert results.status_of({"value": 1.0, "paper": 1.1, "tol": 0.1 + 1e-12}) == "match"
    assert results.status_of({"value": 1.0, "paper": 1.2, "tol": 0.1}) == "mismatch"
    pinned = {"value": 1.0, "paper": 1.2, "tol": 0.1, "expected": 1.05, "expected_tol": 0.05}
    assert results.status_of(pinned) == "explained"
    assert results.status_of(dict(pinned, value=0.9)) == "drift"
    assert results.status_of(dict(pinned, value=1.15)) == "stale"


def test_record_before_start_is_refused(registry):
    with pytest.raises(ValueError, match="start"):
        results.record("a", 1.0)
    assert not registry.exists() or not any(registry.iterdir())


@pytest.mark.parametrize("key, value, match", [("a", float("nan"), "value"), ("a", float("inf"), "value"),
                                               ("", 1.0, "key"), ("zzz", 1.0, "not in data/paper")])
def test_bad_records_are_refused(registry, key, value, match):
    results.start("demo_nb")
    with pytest.raises(ValueError, match=match):
        results.record(key, value)
    assert results.load("demo_nb") == []


def test_paper_values_cannot_be_passed_by_the_notebook(registry):
    results.start("demo_nb")
    with pytest.raises(TypeError, match="paper"):
        results.record("a", 0.3, paper=0.3)  # pylint: disable=unexpected-keyword-arg


def test_duplicate_key_is_refused(registry):
    results.start("demo_nb")
    results.record("a", 1.0)
    with pytest.raises(ValueError, match="a"):
        results.record("a", 2.0)
    assert len(results.load("demo_nb")) == 1


@pytest.mark.parametrize("name", ["", "bad-name", "../escape", "a b", "x.json"])
def test_bad_notebook_names_are_refused(registry, name):
    with pytest.raises(ValueError, match="notebook"):
        results.start(name)


def test_load_missing_notebook(registry):
    with pytest.raises(ValueError, match="nothing_here"):
        results.load("nothing_here")


def test_verify_reports_missing_and_mismatch(registry, tmp_path):
    _sample_run()  # has one mismatch, and 'pipe' is not recorded
    ok, lines = results.verify(["demo_nb", "other_nb"], registry, errata=_errata(tmp_path))
    assert ok is False
    text = "\n".join(lines)
    assert "MISSING" in text and "other_nb" in text
    assert "MISMATCH demo_nb/c" in text and "DROPPED  demo_nb/pipe" in text
    assert "demo_nb/a" not in text and "demo_nb/b" not in text


def test_verify_started_but_empty_counts_as_missing(registry, tmp_path):
    results.start("empty_nb")
    ok, lines = results.verify(["empty_nb"], registry, errata=_errata(tmp_path))
    assert ok is False
    assert any("MISSING" in line and "empty_nb" in line for line in lines)


def test_verify_fails_on_records_without_paper_file(registry, tmp_path):
    results.start("good_nb")
    results.record("a", 1.0)
    results.record("b", 3.0)
    (registry / "good_nb.json").rename(registry / "orphan_nb.json")
    ok, lines = results.verify([], registry, errata=_errata(tmp_path))
    assert ok is False and any(line.startswith("NOPAPER  orphan_nb") for line in lines)


def test_verify_passes_with_matches_and_explained(registry, tmp_path):
    results.start("good_nb")
    results.record("a", 1.0)
    results.record("b", 3.0)
    ok, lines = results.verify(["good_nb"], registry, errata=_errata(tmp_path))
    assert ok is True, lines
    assert not any(line.startswith(("MISSING", "MISMATCH")) for line in lines)
    assert any("good_nb: 2 records" in line for line in lines)
    # without an explicit directory it reads FDP_RESULTS_DIR and FDP_PAPER_DIR
    assert results.verify(["good_nb"], errata=_errata(tmp_path))[0] is True


def test_records_table_has_one_row_per_record_with_its_source(registry):
    _sample_run()
    results.record("pipe", 1.0)
    recs = results.load("demo_nb")
    text = page.records_table(recs)
    lines = text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("| in the paper: what |")))
    block = [line for line in lines[start:] if line.startswith("|")][: 2 + len(recs)]
    assert len(block) == 2 + len(recs)
    # every row has as many cells as the header (pipes in free text are escaped)
    cells = lambda line: len(line.replace("\\|", "").split("|"))  # noqa: E731
    assert all(cells(line) == cells(block[0]) for line in block)
    escape = lambda text: text.replace("|", chr(92) + "|")  # noqa: E731
    for rec, row in zip(recs, block[2:]):
        place, what = page._place_and_what(rec)
        assert row.startswith(f"| {escape(f'**{place}** {what}' if what else f'**{place}**')} | {results.shown(rec, 5)} |")
        assert f"`{rec['key']}`" not in row  # keys are for make verify; they appear only in the notes
    status = {r["key"]: r["status"] for r in recs}
    assert status["b"] == "explained" and "explained: paper error ({ref}`erratum <" in text  # its cause, its errata entry
    assert status["c"] == "mismatch" and "**mismatch**" in text
    # the explanation of a deviation is shown on the page
    assert "paper uses another prior" in text
    assert page.records_table([]) == "No records."
    linked = page.records_table(recs, chapter="demo_nb")  # each place links to the page that computes it
    assert linked.count("{doc}`") == len(recs) and "<demo_nb>`" in linked


def test_files_are_byte_identical_across_runs(registry, tmp_path, monkeypatch):
    blobs = []
    for run in ("one", "two"):
        monkeypatch.setenv("FDP_RESULTS_DIR", str(tmp_path / run))
        _sample_run()
        blobs.append((tmp_path / run / "demo_nb.json").read_bytes())
    assert blobs[0] == blobs[1]
    # and rerunning into the same folder rewrites the same bytes, leaving no temporary files
    _sample_run()
    assert (tmp_path / "two" / "demo_nb.json").read_bytes() == blobs[1]
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == ["demo_nb.json"]


# --- paper values as data (data/paper/<notebook>.yaml) ---------------------------------------------

SPEC = """
setting:
  steps: 100
  rates: [0.01, 0.99]
records:
  table/a:
    source: Paper, Table 1
    kind: exact
    paper: 0.322
    tol: 0.0005
  table/b:
    source: Paper, Table 1
    kind: exact
    paper: 0.5
    tol: 0.0005
    explained:
      expected: 0.4
      tol: 0.01
      reason: the paper's value uses another prior
      errata: table1-prior
      cause: paper error
  claim/below:
    source: Paper, Sec. 4
    kind: claim
    quantity: largest amount by which the attack exceeds the bound
    paper: 0.0
    tol: 0.001
"""


@pytest.fixture
def spec_registry(registry, tmp_path, monkeypatch):
    """A spec for notebook 'spec_nb', an errata page with its label, and a good run recorded."""
    paper = tmp_path / "paper"  # made by the registry fixture
    (paper / "spec_nb.yaml").write_text(SPEC)
    errata = tmp_path / "errata.md"
    errata.write_text("# Errata\n\n(table1-prior)=\n### Table 1: the prior\n\ntext\n")
    results.start("spec_nb")
    results.record("table/a", 0.3221)
    results.record("table/b", 0.403)
    results.record("claim/below", 0.0)
    return registry, paper, errata


def _verify(spec_registry, records=None):
    folder, paper, errata = spec_registry
    if records is not None:  # a broken copy of the results file
        path = folder / "spec_nb.json"
        path.write_text(json.dumps({"notebook": "spec_nb", "records": records}))
    return results.verify(["spec_nb"], folder, paper, errata)


def _records(folder):
    return json.loads((folder / "spec_nb.json").read_text())["records"]


def test_spec_supplies_paper_values_and_pins_deviations(spec_registry):
    folder = spec_registry[0]
    recs = {r["key"]: r for r in _records(folder)}
    assert recs["table/a"]["paper"] == 0.322 and recs["table/a"]["status"] == "match"
    assert recs["table/b"]["status"] == "explained" and recs["table/b"]["errata"] == "table1-prior"
    assert recs["claim/below"]["quantity"].startswith("largest amount")
    ok, lines = _verify(spec_registry)
    assert ok, lines


def _broken(spec_registry, key, value):
    recs = _records(spec_registry[0])
    for r in recs:
        if r["key"] == key:
            r["value"] = value
    return recs


def test_verify_fails_on_a_mismatch(spec_registry):  # (a)
    ok, lines = _verify(spec_registry, _broken(spec_registry, "table/a", 0.33))
    assert not ok and any(line.startswith("MISMATCH spec_nb/table/a") and "0.33" in line and "0.322" in line
                          for line in lines)


def test_verify_fails_when_an_explained_value_drifts(spec_registry):  # (b)
    ok, lines = _verify(spec_registry, _broken(spec_registry, "table/b", 0.45))
    assert not ok and any(line.startswith("DRIFT    spec_nb/table/b") and "value 0.45," in line
                          and "pinned 0.4 +- 0.01" in line for line in lines)


def test_verify_fails_on_a_stale_explanation(spec_registry):  # (c)
    ok, lines = _verify(spec_registry, _broken(spec_registry, "table/b", 0.5))
    assert not ok and any(line.startswith("STALE    spec_nb/table/b") for line in lines)


def test_verify_fails_on_a_missing_errata_label(spec_registry):  # (d)
    spec_registry[2].write_text("# Errata\n\n(another-label)=\n### Something else\n")
    ok, lines = _verify(spec_registry)
    assert not ok and any(line.startswith("ERRATA   spec_nb/table/b") and "table1-prior" in line for line in lines)


def test_verify_fails_on_a_dropped_record(spec_registry):  # (e)
    recs = [r for r in _records(spec_registry[0]) if r["key"] != "claim/below"]
    ok, lines = _verify(spec_registry, recs)
    assert not ok and any(line.startswith("DROPPED  spec_nb/claim/below") for line in lines)


def test_not_compared_records_say_why_and_fail_a_full_build(spec_registry):
    results.start("spec_nb")
    results.record("table/a", 0.9, not_compared="quick run: 100 samples instead of 10^5")
    results.record("table/b", 0.403)
    results.record("claim/below", 0.0)
    ok, lines = _verify(spec_registry)
    assert not ok and any("1 not compared" in line for line in lines)
    assert any(line.startswith("UNCOMPARED spec_nb/table/a") and "100 samples" in line for line in lines)
    table = page.records_table(_records(spec_registry[0]))
    assert "quick run: 100 samples" in table and "Claims of the paper" in table and "table1-prior" in table


@pytest.mark.parametrize(
    "entry, message",
    [
        ("{source: S, kind: exact, paper: .nan, tol: 0.1}", "paper must be a finite number"),
        ("{source: S, kind: guess, paper: 1, tol: 0.1}", "kind must be one of"),
        ("{kind: exact, paper: 1, tol: 0.1}", "needs a source"),
        ("{source: S, kind: exact, paper: 1, tol: 0}", "tol must be > 0"),
        ("{source: S, kind: claim, paper: 0, tol: 0.1}", "needs the quantity"),
        ("{source: S, kind: exact, paper: 1, tol: 0.1, explained: {expected: 1, tol: 0.1}}", "explained needs"),
        # issue 52: every explained deviation has a cause from the fixed list (make verify loads the files)
        ("{source: S, kind: exact, paper: 1, tol: 0.1, explained: {expected: 2, tol: 0.1, reason: r, errata: e}}",
         "explained needs exactly expected, tol, reason, errata, cause"),
        ("{source: S, kind: exact, paper: 1, tol: 0.1, explained: {expected: 2, tol: 0.1, reason: r, errata: e, cause: typo}}",
         "explained.cause must be one of"),
        ("{source: S, kind: exact, paper: 1, tol: 0.1, chosen: ''}", "chosen must say which parameter"),
        ("{source: S, kind: exact, paper: 1, tol: 0.1, typo: 2}", "unknown fields"),
    ],
)
def test_malformed_spec_is_an_error(tmp_path, entry, message):
    (tmp_path / "bad.yaml").write_text(f"records:\n  k: {entry}\n")
    with pytest.raises(ValueError, match=message):
        results.load_spec("bad", tmp_path)


def test_a_setting_that_differs_from_the_paper_is_not_compared(spec_registry):
    results.start("spec_nb")
    results.record("table/a", 0.3221, setting={"steps": 100, "rates": [0.01, 0.99]})
    results.record("table/b", 0.9, setting={"steps": 20})
    same, other = results.load("spec_nb")
    assert same["status"] == "match" and other["status"] == "not compared"
    assert other["not_compared"] == "this run uses steps = 20 (full run: 100)"
    assert results.paper_setting("spec_nb") == {"steps": 100, "rates": [0.01, 0.99]}
    with pytest.raises(ValueError, match="not in the 'setting'"):
        results.record("claim/below", 0.0, setting={"samples": 5})


def test_verify_judges_against_the_current_paper_file(spec_registry):
    folder, paper, _ = spec_registry
    (paper / "spec_nb.yaml").write_text(SPEC.replace("paper: 0.322", "paper: 0.5"))  # the transcription changed
    ok, lines = _verify(spec_registry)
    assert not ok and any(line.startswith("MISMATCH spec_nb/table/a") and "paper 0.5" in line for line in lines)


def test_verify_fails_on_a_key_that_is_not_in_the_paper_file(spec_registry):
    recs = _records(spec_registry[0]) + [dict(_records(spec_registry[0])[0], key="table/renamed")]
    ok, lines = _verify(spec_registry, recs)
    assert not ok and any(line.startswith("UNKNOWN  spec_nb/table/renamed") for line in lines)


def test_settings_compare_as_data(spec_registry):
    results.start("spec_nb")
    results.record("table/a", 0.3221, setting={"steps": 100.0, "rates": (0.01, 0.99)})
    results.record("table/b", 0.403, setting={"rates": np.array([0.01, 0.5])})
    assert [r["status"] for r in results.load("spec_nb")] == ["match", "not compared"]


def test_a_record_about_one_row_is_compared_when_the_papers_list_holds_that_row(spec_registry):
    """A reader's added rows (workloads of their own) leave the records of the paper's rows compared."""
    results.start("spec_nb")
    results.record("table/a", 0.3221, setting={"steps": 100, "rates": results.Row(0.99)})
    results.record("table/b", 0.403, setting={"rates": results.Row(0.5)})
    a, b = results.load("spec_nb")
    assert a["status"] == "match" and b["status"] == "not compared"
    assert b["not_compared"] == "this run uses rates row 0.5, not one of the full run's rows [0.01, 0.99]"


# --- the project's own paper files ----------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((ROOT / "data" / "paper").glob("*.yaml")), ids=lambda p: p.stem)
def test_paper_file_is_valid_and_matches_its_notebook(path):
    """Loads, cites existing errata labels, and its setting is the notebook's full-run parameters."""
    spec = results.load_spec(path.stem, path.parent)
    assert spec and (ROOT / "notebooks" / f"{path.stem}.ipynb").exists()
    labels = results.errata_labels()
    assert all(item["errata"] in labels for item in spec.values() if "errata" in item)
    params = yaml.safe_load((ROOT / "notebooks" / "params" / f"{path.stem}.yaml").read_text())
    setting = results.paper_setting(path.stem, path.parent)
    shared = set(setting) & set(params)
    assert shared, "the setting names none of the notebook's parameters"
    assert all(results.same(params[k], setting[k]) for k in shared), {k: (params[k], setting[k]) for k in shared}


def test_our_own_checks_are_not_listed_as_claims_of_the_paper(spec_registry):
    """A record whose source says "our addition" tests a statement of ours: it gets its own table, not a row among
    the paper's claims."""
    recs = _records(spec_registry[0])
    ours = [dict(r, source=r["source"] + " (magnitude test; our addition)") if r["kind"] == "claim" else r
            for r in recs]
    table = page.records_table(ours)
    assert "Claims of the paper" not in table and "Our own checks beside the paper's" in table
    assert "Claims of the paper" in page.records_table(recs)


def test_report_rows_link_to_the_figure_that_shows_them(spec_registry):
    """A key prefix with an anchor links its row to that figure ({ref}); the others link to the chapter ({doc})."""
    recs = _records(spec_registry[0])
    anchored = [dict(r, anchor="fig-demo") if r["key"].startswith("table/") else r for r in recs]
    text = page.records_table(anchored, chapter="spec_nb")
    assert text.count("<fig-demo>`") == 2 and text.count("<spec_nb>`") == 1


def test_every_anchor_of_the_paper_files_is_a_figure_or_section_of_its_notebook():
    """The report's links must land: each anchor in data/paper/<nb>.yaml is a glued figure or a labelled section of
    notebooks/<nb>.ipynb."""
    root = ROOT
    for path in sorted((root / "data" / "paper").glob("*.yaml")):
        anchors = yaml.safe_load(path.read_text()).get("anchors") or {}
        notebook = (root / "notebooks" / f"{path.stem}.ipynb").read_text()
        for prefix, label in anchors.items():
            assert f"{{glue:figure}} {label}" in notebook or f'"({label})=\\n"' in notebook, (path.name, prefix, label)


def test_labels_are_unique_across_the_book():
    """A section label of a notebook that repeats one of the errata page (rero-clt-exponent did) sends the links of
    both to one place: every (label)= and figure :name: is defined once across book/ and notebooks/."""
    import collections
    import re

    seen = collections.Counter()
    texts = [p.read_text() for p in (ROOT / "book").rglob("*.md")]
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        texts += ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "markdown"]
    for text in texts:
        seen.update(re.findall(r"^\(([A-Za-z0-9_.:-]+)\)=\s*$", text, flags=re.M))
        seen.update(re.findall(r"^:name: (\S+)", text, flags=re.M))
    assert not [label for label, n in seen.items() if n > 1]


def test_a_bound_is_shown_rounded_outward_and_checked(registry, tmp_path):
    """The SNLI RDP epsilon, an upper bound, read 1.074 in its chapter and 1.073 on the paper page: data/paper marks
    it ``bound: upper`` and every record table rounds it up."""
    paper = tmp_path / "paper"
    (paper / "bound_nb.yaml").write_text("records:\n  eps:\n    source: Paper, App. 7.3\n    kind: exact\n"
                                         "    bound: upper\n    paper: 1.0\n    tol: 0.1\n")
    results.start("bound_nb")
    results.record("eps", 1.07341)
    (rec,) = results.load("bound_nb", registry)
    assert rec["bound"] == "upper" and results.shown(rec, 4) == "1.074"
    assert results.shown({"value": 1.07341}, 4) == "1.073"  # no side: to nearest
    assert results.shown({"value": 0.24700001}, 4) == "0.2470" and results.shown({"value": 344.0}, 4) == "344"
    (paper / "bound_nb.yaml").write_text("records:\n  eps:\n    source: Paper\n    kind: exact\n"
                                         "    bound: up\n    paper: 1.0\n    tol: 0.1\n")
    with pytest.raises(ValueError, match="bound must be 'upper' or 'lower'"):
        results.load_spec("bound_nb", paper)


def test_a_value_the_set_up_was_chosen_to_hit_is_not_a_match(tmp_path):
    """Issue 52: values a chapter chose a parameter to hit (ReRo Fig. 1a-c's epsilon) have their own status."""
    (tmp_path / "nb.yaml").write_text("records:\n  k: {source: S, kind: figure, paper: 20, tol: 2, chosen: mu_max is set to hit it}\n")
    item = results.load_spec("nb", tmp_path)["k"]
    assert results.status_of({**item, "value": 20.5}) == "set-up"
    assert results.status_of({**item, "value": 30.0}) == "mismatch"  # missing it is still a failure


def test_verify_refuses_an_explained_deviation_without_a_cause(spec_registry):
    """Issue 52: `make verify` (python -m fdp_book verify) stops on a deviation whose cause is not given."""
    folder, paper, errata = spec_registry
    path = paper / "spec_nb.yaml"
    path.write_text(path.read_text().replace("      cause: paper error\n", ""))
    with pytest.raises(ValueError, match="table/b: explained needs exactly expected, tol, reason, errata, cause"):
        results.verify(["spec_nb"], folder, paper, errata)


def test_a_value_keeps_the_digits_the_paper_prints(tmp_path):
    """Issue 52: "0.2171 vs 0.217" where the paper prints 21.70 %: the tables show the printed digits."""
    from fdp_book import page

    (tmp_path / "nb.yaml").write_text('records:\n  k: {source: "P, Fig. 1c", kind: exact, paper: 0.217, printed: "0.2170 (21.70 %)", '
                                      'tol: 5.0e-5}\n')
    item = results.load_spec("nb", tmp_path)["k"]
    text = page.records_table([{**item, "key": "k", "value": 0.21705, "explanation": ""}])
    assert "| 0.2170 (21.70 %) |" in text and "| 0.217 |" not in text
    (tmp_path / "nb.yaml").write_text("records:\n  k: {source: S, kind: exact, paper: 0.217, printed: '', tol: 5.0e-5}\n")
    with pytest.raises(ValueError, match="printed must be"):
        results.load_spec("nb", tmp_path)
