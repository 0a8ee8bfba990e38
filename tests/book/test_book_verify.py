"""``python -m fdp_book verify``, the book's command (``make verify``), apart from the library's ``python -m fdp``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fdp_book import results
from fdp_book.__main__ import main
from fdp_book.paths import ROOT


def _expected_notebooks():
    # the chapters that record numbers: those with the paper's values in data/paper (not the report, not your_run)
    return sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb") if (ROOT / "data" / "paper" / f"{p.stem}.yaml").is_file())


def _fill_registry(folder, value):
    """One record "x" (paper value 1.0, tol 0.01, from a fake data/paper) for every notebook that `verify` expects."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FDP_RESULTS_DIR", str(folder))
        mp.setitem(results._current, "notebook", None)
        mp.setitem(results._current, "records", [])
        for name in _expected_notebooks():
            results.start(name)
            results.record("x", value)


@pytest.fixture
def fake_paper_data(tmp_path, monkeypatch):
    """A fake data/paper: one record "x" (paper 1.0, tol 0.01) for every notebook."""
    folder = tmp_path / "paper"
    folder.mkdir()
    for name in _expected_notebooks():
        (folder / f"{name}.yaml").write_text("records:\n  x: {source: test, kind: exact, paper: 1.0, tol: 0.01}\n")
    monkeypatch.setenv("FDP_PAPER_DIR", str(folder))


def _main(capsys, argv):  # (code, stdout, stderr) of the command in this process
    return (main(argv), *capsys.readouterr())


def test_verify_empty_results_dir_fails(tmp_path):
    # another working directory and no FDP_RESULTS_DIR: the command must not depend on either
    env = {k: v for k, v in os.environ.items() if k != "FDP_RESULTS_DIR"}
    empty = tmp_path / "empty"
    empty.mkdir()
    run = subprocess.run([sys.executable, "-m", "fdp_book", "verify", "--results-dir", str(empty)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 1
    assert "verify: FAILED" in run.stdout
    names = _expected_notebooks()
    assert names, "no notebooks to verify"
    for name in names:
        assert f"MISSING  {name}" in run.stdout


def test_verify_complete_results_pass(capsys, tmp_path, fake_paper_data):
    _fill_registry(tmp_path, 1.0)
    code, out, _ = _main(capsys, ["verify", "--results-dir", str(tmp_path)])
    assert code == 0, out
    assert "verify: OK" in out
    assert "MISSING" not in out and "MISMATCH" not in out


def test_verify_mismatch_fails(capsys, tmp_path, fake_paper_data):
    _fill_registry(tmp_path, 2.0)
    code, out, _ = _main(capsys, ["verify", "--results-dir", str(tmp_path)])
    assert code == 1
    assert "MISMATCH" in out and "verify: FAILED" in out


def test_verify_of_a_missing_folder_names_the_flag(capsys, tmp_path):
    code, _, err = _main(capsys, ["verify", "--results-dir", str(tmp_path / "nowhere")])
    assert code == 2 and "--results-dir" in err and "Traceback" not in err


def test_verify_outside_the_books_repository_is_a_one_line_error(tmp_path):
    env = {**os.environ, "FDP_ROOT": str(tmp_path)}
    run = subprocess.run([sys.executable, "-m", "fdp_book", "verify"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert run.returncode == 2
    assert "FDP_ROOT" in run.stderr and "Traceback" not in run.stderr


def test_the_librarys_command_has_no_verify(capsys):
    """verify belongs to the book, not to the installed library's command line."""
    from fdp.cli import main as fdp_main

    assert fdp_main(["verify"]) == 2
    assert "python -m fdp_book verify" in capsys.readouterr().err  # says where it went


def test_params_lists_a_chapters_parameters_with_the_books_values(capsys):
    """``make run NB=<name> HELP=1`` (``python -m fdp_book params <name>``) prints every parameter of the chapter's
    schema, its value in the book, the values it takes, its meaning and the paper's value; an unknown chapter is refused
    with exit 2."""
    from fdp_book import parameters
    from fdp_book.__main__ import main

    assert main(["params", "guo_comparison"]) == 0
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= 80  # a terminal of 80 columns (pytest's capture has no tty)
    out = " ".join(printed.split())
    for name, value, values, meaning, paper in parameters.table_rows("guo_comparison"):
        assert f" {name} = {value} {meaning} values: {values} paper: {paper}" in out
    assert main(["params", "no_such_chapter"]) == 2 and "no parameter schema" in capsys.readouterr().err
