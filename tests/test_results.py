"""The results registry (fdp.results): records, statuses, verification, report table, reproducibility."""

from __future__ import annotations

import json

import pytest

from fdp import results


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """An empty results folder (FDP_RESULTS_DIR) and no notebook started."""
    folder = tmp_path / "results"
    monkeypatch.setenv("FDP_RESULTS_DIR", str(folder))
    monkeypatch.setitem(results._current, "notebook", None)
    monkeypatch.setitem(results._current, "records", [])
    return folder


def _sample_run():
    results.start("demo_nb")
    results.record("a", 0.1234, paper=0.123, source="Table 1", tol=5e-4, kind="exact")
    results.record("b", 0.5, paper=0.7, source="Fig. 2", tol=0.05, kind="figure", explanation="paper uses another prior")
    results.record("c", 2.0, paper=1.0, source="Table 3", tol=0.1, kind="mc")


def test_round_trip(registry):
    results.start("demo_nb")
    rec = results.record("gamma_sigma1", 0.3217, paper=0.322, source="Hayes et al. Table 2", tol=5e-4, kind="exact")
    assert rec["status"] == "match"
    path = registry / "demo_nb.json"
    assert path.exists()
    data = json.loads(path.read_text())
    assert data["notebook"] == "demo_nb"
    loaded = results.load("demo_nb")
    assert loaded == [rec]
    assert loaded[0]["value"] == 0.3217 and loaded[0]["paper"] == 0.322 and loaded[0]["tol"] == 5e-4
    assert loaded[0]["source"] == "Hayes et al. Table 2" and loaded[0]["kind"] == "exact"
    assert results.load_all() == {"demo_nb": [rec]}
    # explicit directory argument gives the same
    assert results.load("demo_nb", registry) == [rec]


def test_start_discards_previous_records(registry):
    _sample_run()
    assert len(results.load("demo_nb")) == 3
    results.start("demo_nb")
    assert results.load("demo_nb") == []


def test_statuses(registry):
    _sample_run()
    status = {r["key"]: r["status"] for r in results.load("demo_nb")}
    assert status == {"a": "match", "b": "explained", "c": "mismatch"}
    # status_of agrees with |value - paper| <= tol
    assert results.status_of({"value": 1.0, "paper": 1.1, "tol": 0.1 + 1e-12}) == "match"
    assert results.status_of({"value": 1.0, "paper": 1.2, "tol": 0.1}) == "mismatch"
    assert results.status_of({"value": 1.0, "paper": 1.2, "tol": 0.1, "explanation": "why"}) == "explained"


def test_record_before_start_is_refused(registry):
    with pytest.raises(ValueError, match="start"):
        results.record("a", 1.0, paper=1.0, source="s", tol=0.1, kind="exact")
    assert not registry.exists() or not any(registry.iterdir())


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(tol=0.0), "tol"),
        (dict(tol=-1.0), "tol"),
        (dict(value=float("nan")), "value"),
        (dict(paper=float("nan")), "paper"),
        (dict(tol=float("nan")), "tol"),
        (dict(value=float("inf")), "value"),
        (dict(kind="guess"), "kind"),
        (dict(key=""), "key"),
    ],
)
def test_bad_records_are_refused(registry, kwargs, match):
    results.start("demo_nb")
    args = dict(key="k", value=1.0, paper=1.0, source="s", tol=0.1, kind="exact")
    args.update(kwargs)
    key = args.pop("key")
    value = args.pop("value")
    with pytest.raises(ValueError, match=match):
        results.record(key, value, **args)
    assert results.load("demo_nb") == []


def test_duplicate_key_is_refused(registry):
    results.start("demo_nb")
    results.record("k", 1.0, paper=1.0, source="s", tol=0.1, kind="exact")
    with pytest.raises(ValueError, match="k"):
        results.record("k", 2.0, paper=2.0, source="s", tol=0.1, kind="exact")
    assert len(results.load("demo_nb")) == 1


@pytest.mark.parametrize("name", ["", "bad-name", "../escape", "a b", "x.json"])
def test_bad_notebook_names_are_refused(registry, name):
    with pytest.raises(ValueError, match="notebook"):
        results.start(name)


def test_load_missing_notebook(registry):
    with pytest.raises(ValueError, match="nothing_here"):
        results.load("nothing_here")


def test_verify_reports_missing_and_mismatch(registry):
    _sample_run()  # has one mismatch
    ok, lines = results.verify(["demo_nb", "other_nb"], registry)
    assert ok is False
    text = "\n".join(lines)
    assert "MISSING" in text and "other_nb" in text
    assert "MISMATCH" in text and "demo_nb/c" in text
    assert "demo_nb/a" not in text and "demo_nb/b" not in text


def test_verify_started_but_empty_counts_as_missing(registry):
    results.start("empty_nb")
    ok, lines = results.verify(["empty_nb"], registry)
    assert ok is False
    assert any("MISSING" in line and "empty_nb" in line for line in lines)


def test_verify_mismatch_alone_fails(registry):
    _sample_run()
    ok, _ = results.verify(["demo_nb"], registry)
    assert ok is False


def test_verify_passes_with_matches_and_explained(registry):
    results.start("good_nb")
    results.record("a", 1.0, paper=1.0004, source="s", tol=5e-4, kind="exact")
    results.record("b", 3.0, paper=1.0, source="s", tol=0.1, kind="mc", explanation="the paper divides by ceil(kappa N)")
    ok, lines = results.verify(["good_nb"], registry)
    assert ok is True
    assert not any(line.startswith(("MISSING", "MISMATCH")) for line in lines)
    assert any("good_nb: 2 records" in line for line in lines)
    # without an explicit directory it reads FDP_RESULTS_DIR
    assert results.verify(["good_nb"])[0] is True


def test_markdown_table_has_one_row_per_record(registry):
    _sample_run()
    results.record("pipe", 1.0, paper=2.0, source="s", tol=0.1, kind="exact", explanation="a | b\nnext line")
    recs = results.load("demo_nb")
    table = results.markdown_table(recs)
    lines = table.splitlines()
    n_table = next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))
    block = lines[:n_table]  # the table: header, separator, one row per record
    assert len(block) == 2 + len(recs)
    assert all(set(c.strip()) <= set("-:") for c in block[1].strip("|").split("|"))
    # every row has as many cells as the header (pipes in free text are escaped)
    cells = lambda line: len(line.replace("\\|", "").split("|"))  # noqa: E731
    assert all(cells(line) == cells(block[0]) for line in block)
    for rec, row in zip(recs, block[2:]):
        first = row.strip("|").split("|")[0].strip().strip("`")
        assert first == rec["key"]
        assert f"| {rec['status']} |" in row
    # the explanation of a deviation is shown on the page
    assert "paper uses another prior" in table
    assert results.markdown_table([]).count("\n") >= 2


def test_files_are_byte_identical_across_runs(tmp_path, monkeypatch):
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
