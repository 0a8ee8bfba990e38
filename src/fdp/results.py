"""The results registry: every reproduced number, next to the paper's value.

A notebook calls :func:`start` with its name once its parameters are validated, then
:func:`record` for each number it reproduces.  Records go to
``<results_dir>/<notebook>.json`` (see :func:`fdp.paths.results_dir`), rewritten atomically on
every record, with no timestamps, so that the same run gives byte-identical files.

Each record has a ``kind``:

* ``exact`` -- a closed form; ``tol`` is the rounding of the printed value.
* ``mc`` -- a Monte-Carlo quantity; ``tol`` comes from the Monte-Carlo error.
* ``figure`` -- read off a plot; ``tol`` is the reading accuracy, stated by the notebook.

A record's status is ``match`` if ``|value - paper| <= tol``, ``explained`` if it is outside the
tolerance but carries an ``explanation`` (a deviation we can account for, e.g. an error in the
paper, discussed on the errata page), and ``mismatch`` otherwise.  ``make verify`` fails on any
mismatch.  Tolerances are never widened to make a number pass.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

from .paths import results_dir

__all__ = ["KINDS", "start", "record", "load", "load_all", "status_of", "verify", "markdown_table"]

KINDS = ("exact", "mc", "figure")

_current: dict = {"notebook": None, "records": []}


def _path(notebook: str, directory: Path | None = None) -> Path:
    return Path(directory or results_dir()) / f"{notebook}.json"


def _write(notebook: str, records: list) -> None:
    path = _path(notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{notebook}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump({"notebook": notebook, "records": records}, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.chmod(tmp, 0o644)  # mkstemp creates 0600
    os.replace(tmp, path)


def start(notebook: str) -> None:
    """Begin recording for ``notebook``: previous records of that notebook are discarded."""
    if not notebook or not notebook.replace("_", "").isalnum():
        raise ValueError(f"notebook must be a name made of letters, digits and '_', got {notebook!r}")
    _current["notebook"] = notebook
    _current["records"] = []
    _write(notebook, [])


def status_of(rec: dict) -> str:
    """``match``, ``explained`` or ``mismatch`` for one record (see the module docstring)."""
    # the relative slack only absorbs float noise at a rounding edge (|0.3215 - 0.322| = 5.000000000000004e-4)
    if abs(rec["value"] - rec["paper"]) <= rec["tol"] * (1.0 + 1e-9):
        return "match"
    return "explained" if rec.get("explanation") else "mismatch"


def record(key: str, value, *, paper, source: str, tol, kind: str, explanation: str | None = None) -> dict:
    """Record a reproduced number ``value`` against the paper's ``paper`` value.

    ``source`` names where the paper prints it (e.g. "Hayes et al. Table 2"); ``tol`` is the
    accepted absolute difference for ``kind`` (see the module docstring); ``explanation``
    documents a deviation we account for.  Returns the stored record, including its status.
    """
    if _current["notebook"] is None:
        raise ValueError("call fdp.results.start(notebook) before record()")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not key:
        raise ValueError("key must be a non-empty string")
    if any(r["key"] == key for r in _current["records"]):
        raise ValueError(f"key {key!r} was already recorded")
    value, paper, tol = float(value), float(paper), float(tol)
    for name, x in (("value", value), ("paper", paper), ("tol", tol)):
        if not math.isfinite(x):
            raise ValueError(f"{name} must be finite, got {x!r}")
    if tol <= 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    rec = {
        "key": key,
        "value": value,
        "paper": paper,
        "tol": tol,
        "kind": kind,
        "source": source,
        "explanation": explanation or "",
    }
    rec["status"] = status_of(rec)
    _current["records"].append(rec)
    _write(_current["notebook"], _current["records"])
    return rec


def load(notebook: str, directory: Path | None = None) -> list[dict]:
    """The records of one notebook."""
    path = _path(notebook, directory)
    if not path.exists():
        raise ValueError(f"no results for notebook {notebook!r} at {path}")
    return json.loads(path.read_text())["records"]


def load_all(directory: Path | None = None) -> dict[str, list[dict]]:
    """All records, by notebook name, from every ``*.json`` in the results folder."""
    folder = Path(directory or results_dir())
    out = {}
    for path in sorted(folder.glob("*.json")):
        out[path.stem] = json.loads(path.read_text())["records"]
    return out


def verify(expected: list[str], directory: Path | None = None) -> tuple[bool, list[str]]:
    """Check the registry: every notebook in ``expected`` has records, and none is a mismatch.

    Returns ``(ok, lines)`` where ``lines`` is a human-readable report.
    """
    found = load_all(directory)
    ok, lines = True, []
    for name in expected:
        if not found.get(name):
            ok = False
            lines.append(f"MISSING  {name}: no recorded results (run `make`)")
    for name, records in found.items():
        counts = {s: sum(status_of(r) == s for r in records) for s in ("match", "explained", "mismatch")}
        lines.append(f"{name}: {len(records)} records, " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        for r in records:
            if status_of(r) == "mismatch":
                ok = False
                lines.append(
                    f"MISMATCH {name}/{r['key']}: value {r['value']:.6g}, paper {r['paper']:.6g}, "
                    f"|diff| {abs(r['value'] - r['paper']):.3g} > tol {r['tol']:.3g} ({r['source']})"
                )
    return ok, lines


def markdown_table(records: list[dict]) -> str:
    """Markdown for the report page: a table of records, their sources, and the explanations of deviations."""
    head = "| key | ours | paper | abs. diff. | tol. | kind | status |\n"
    head += "|---|---:|---:|---:|---:|---|---|\n"
    rows, notes = [], []
    for r in records:
        diff = abs(r["value"] - r["paper"])
        status = status_of(r)
        rows.append(
            f"| `{r['key']}` | {r['value']:.4g} | {r['paper']:.4g} | {diff:.2g} | {r['tol']:.2g} | {r['kind']} | {status} |"
        )
        if status != "match" and r["explanation"]:
            notes.append(f"* `{r['key']}`: {r['explanation']}")
    sources = sorted({r["source"] for r in records})
    text = head + "\n".join(rows) + "\n\nSource: " + "; ".join(sources).replace("|", "\\|") + ".\n"
    if notes:
        text += "\nExplained deviations:\n\n" + "\n".join(notes) + "\n"
    return text
