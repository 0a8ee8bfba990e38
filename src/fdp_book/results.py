"""The results registry: every reproduced number, next to the paper's value.

A notebook calls :func:`start` with its name once its parameters are validated, then
:func:`record` for each number it reproduces.  Records go to
``<results_dir>/<notebook>.json`` (see :func:`fdp_book.paths.results_dir`), rewritten atomically on
every record, with no timestamps, so that the same run gives byte-identical files.

Each record has a ``kind``:

* ``exact`` -- a closed form; ``tol`` is the rounding of the printed value.
* ``mc`` -- a Monte-Carlo quantity; ``tol`` comes from the Monte-Carlo error.
* ``figure`` -- an approximate value the paper's text or a caption states about a figure ("≈ 0.20",
  "about 6"); ``tol`` is the precision the statement implies.  No value is read off a plot.

* ``claim`` -- not a printed number but a statement of the paper ("the attack stays below the
  bound"), tested through a quantity and a threshold.

**Paper values are data.**  Every notebook has a file ``data/paper/<notebook>.yaml`` (see
:func:`load_spec`) and records ``record(key, value)`` only: the paper value, its source, kind and
tolerance come from that file, so a papermill ``-p`` cannot change what counts as the paper's
value.  An explained deviation lives there too and *pins our number*: the expected value with its
own tolerance, the reason in one line, the label of its errata entry and its ``cause``, one of :data:`CAUSES`.  A
value that the chapter chose a parameter to hit (an effect size set so that the panel's epsilon is the paper's) says
so in ``chosen`` and is not counted as a match.  A record's status is

* ``match`` -- ``|value - paper| <= tol`` (and no explanation is pinned);
* ``set-up`` -- as a match, for a value the chapter's set-up was chosen to hit (``chosen``);
* ``explained`` -- a pinned deviation, and ``|value - expected| <= expected_tol``;
* ``drift`` -- a pinned deviation, but the value has moved away from the pinned one;
* ``stale`` -- a pinned deviation, but the value now matches the paper (drop the explanation);
* ``mismatch`` -- outside the tolerance with no explanation;
* ``not compared`` -- the run's parameters cannot reproduce the number (a quick run); the
  record says why.

A record names the parameters it depends on (``setting``); a record about one row of a list parameter (one
workload of several) names that row (:class:`Row`), so that rows a reader adds leave the paper's rows compared.

``make verify`` fails on ``mismatch``, ``drift`` and ``stale``, on an errata label that does not exist, on a key
of ``data/paper`` that no record reproduces and on an explained deviation without a cause (the file does not load).
Tolerances are never widened to make a number pass.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from fdp.formatting import bound

from .paths import ERRATA, SCRATCH_RESULTS, paper_dir, results_dir

__all__ = ["KINDS", "CAUSES", "FAILING", "OUR_ADDITION", "own_check", "split_own", "shown", "start", "record", "recorded", "status",
           "load", "load_all", "load_spec", "status_of", "within", "verify", "errata_labels", "paper_setting", "same", "Row"]

KINDS = ("exact", "mc", "figure", "claim")
#: Why an explained deviation deviates: the paper is wrong; it can be read two ways; its printed digits are rounded
#: (or its numerics coarser) at the edge of the tolerance; our run is scaled down from the paper's (data, trials,
#: steps); or we compute the quantity by another definition or reading than the paper's.
CAUSES = ("paper error", "paper ambiguity", "printed rounding", "our scaled-down set-up", "our definition or reading")
FAILING = ("mismatch", "drift", "stale")  # statuses that fail ``make verify``

_current: dict = {"notebook": None, "records": [], "spec": None, "setting": {}}


def _finite(where: str, name: str, x) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"{where}: {name} must be a finite number, got {x!r}")
    return float(x)


def _load_paper_file(notebook: str, directory: Path | None = None) -> tuple[dict, dict] | None:
    """``(records, setting)`` from ``data/paper/<notebook>.yaml``, or None without such a file.

    The file holds ``setting:`` (optional), the paper's parameters of the reproduced results, and
    ``records:``, a mapping from record key to ``source`` (paper, table/figure/
    equation), ``kind`` (one of :data:`KINDS`), ``paper`` (the printed value; for a claim the
    threshold's reference value), ``tol`` (printed rounding, Monte-Carlo error or read-off
    accuracy), for a claim ``quantity`` (what is tested), and optionally ``printed`` (the paper's value with its
    printed digits, "0.2170 (21.70 %)", where the stored number loses them) and ``chosen`` (see the module).  An explained deviation adds
    ``explained: {expected, tol, reason, errata}``.  ``anchors:`` (optional) maps a key's prefix (before
    its first "/"), or a shell pattern of whole keys, to the label of the figure that shows it, where the report links
    the row (the longest pattern that fits wins).  Malformed
    entries raise ValueError naming the file and key.
    """
    path = Path(directory or paper_dir()) / f"{notebook}.yaml"
    if not path.exists():
        return None
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("records"), dict) or not data["records"]:
        raise ValueError(f"{path}: needs a non-empty mapping 'records: {{key: {{...}}}}'")
    if not isinstance(data.get("setting", {}), dict):
        raise ValueError(f"{path}: 'setting' must map parameter names to the paper's values")
    anchors = data.get("anchors") or {}  # key prefix (before the first "/") -> label of the figure that shows it
    if not isinstance(anchors, dict) or not all(isinstance(v, str) and v for v in anchors.values()):
        raise ValueError(f"{path}: 'anchors' must map key prefixes to figure labels")
    spec = {}
    for key, entry in data["records"].items():
        where = f"{path.name}: {key}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: must be a mapping")
        unknown = set(entry) - {"source", "kind", "paper", "tol", "quantity", "explained", "bound", "chosen", "printed"}
        if unknown:
            raise ValueError(f"{where}: unknown fields {sorted(unknown)}")
        if entry.get("kind") not in KINDS:
            raise ValueError(f"{where}: kind must be one of {KINDS}, got {entry.get('kind')!r}")
        if not isinstance(entry.get("source"), str) or not entry["source"]:
            raise ValueError(f"{where}: needs a source")
        if entry["kind"] == "claim" and not entry.get("quantity"):
            raise ValueError(f"{where}: a claim needs the quantity it tests")
        item = {"source": entry["source"], "kind": entry["kind"], "paper": _finite(where, "paper", entry.get("paper")),
                "tol": _finite(where, "tol", entry.get("tol")), "quantity": entry.get("quantity", "")}
        if item["tol"] <= 0:
            raise ValueError(f"{where}: tol must be > 0")
        if "bound" in entry:  # our value is an upper (lower) end: every table rounds it up (down), as the chapter does
            if entry["bound"] not in ("upper", "lower"):
                raise ValueError(f"{where}: bound must be 'upper' or 'lower', got {entry['bound']!r}")
            item["bound"] = entry["bound"]
        anchor = _anchor(str(key), anchors)
        if anchor:
            item["anchor"] = anchor
        if "printed" in entry:  # the paper's digits as printed ("0.2170 (21.70 %)" for 0.217), for the tables
            if not isinstance(entry["printed"], str) or not entry["printed"]:
                raise ValueError(f"{where}: printed must be the paper's value as text, such as '0.2170 (21.70 %)'")
            item["printed"] = entry["printed"]
        if "chosen" in entry:  # a value the set-up was chosen to hit: not evidence of agreement
            if not isinstance(entry["chosen"], str) or not entry["chosen"] or "explained" in entry:
                raise ValueError(f"{where}: chosen must say which parameter was chosen to hit the value (and an explained "
                                 "deviation is not chosen)")
            item["chosen"] = entry["chosen"]
        explained = entry.get("explained")
        if explained is not None:
            if not isinstance(explained, dict) or set(explained) != {"expected", "tol", "reason", "errata", "cause"}:
                raise ValueError(f"{where}: explained needs exactly expected, tol, reason, errata, cause")
            if explained["cause"] not in CAUSES:
                raise ValueError(f"{where}: explained.cause must be one of {CAUSES}, got {explained['cause']!r}")
            item.update(expected=_finite(where, "explained.expected", explained["expected"]),
                        expected_tol=_finite(where, "explained.tol", explained["tol"]),
                        explanation=str(explained["reason"]), errata=str(explained["errata"]), cause=explained["cause"])
            if item["expected_tol"] <= 0:
                raise ValueError(f"{where}: explained.tol must be > 0")
        spec[str(key)] = item
    return spec, dict(data.get("setting") or {})


def _anchor(key: str, anchors: dict) -> str | None:
    """The label ``anchors`` gives ``key``: a prefix before the key's first "/" or a shell pattern of the whole key
    (``app73/*/rtm_eps_*``); the longest pattern that fits wins."""
    fits = [pattern for pattern in anchors if pattern == key.split("/")[0] or fnmatch.fnmatchcase(key, pattern)]
    return str(anchors[max(fits, key=len)]) if fits else None


def load_spec(notebook: str, directory: Path | None = None) -> dict | None:
    """The paper values of ``notebook`` by record key (see :func:`_load_paper_file`), or None."""
    loaded = _load_paper_file(notebook, directory)
    return None if loaded is None else loaded[0]


def paper_setting(notebook: str, directory: Path | None = None) -> dict:
    """The paper's parameters of ``notebook`` (the ``setting:`` of its data/paper file; {} if none)."""
    loaded = _load_paper_file(notebook, directory)
    return {} if loaded is None else loaded[1]


def reproduces(notebook: str, directory: Path | None = None) -> str:
    """What ``notebook``'s page reproduces, with citations: ``reproduces:`` in its data/paper file (the first line of
    its "Results at a glance" box)."""
    path = Path(directory or paper_dir()) / f"{notebook}.yaml"
    text = (yaml.safe_load(path.read_text()) or {}).get("reproduces") if path.exists() else None
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{path}: needs 'reproduces:', the figures and tables the page reproduces (with citations)")
    return text


def same(a, b) -> bool:
    """Parameter values equal as data: tuples and arrays compare as lists, ints as floats."""
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    sequence = (list, tuple, np.ndarray)
    if isinstance(a, sequence) or isinstance(b, sequence):
        return (isinstance(a, sequence) and isinstance(b, sequence) and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b)))
    return bool(a == b)


@dataclass(frozen=True)
class Row:
    """One row of a list parameter, as the value of a record's setting: the record depends on that row only, and is
    compared when the paper's list holds it (a reader's added workloads leave the paper's rows compared)."""

    value: object


def _differs(value, paper) -> bool:
    if isinstance(value, Row):
        return not any(same(value.value, row) for row in paper)
    return not same(value, paper)


def _difference(name: str, value, paper) -> str:
    if isinstance(value, Row):
        return f"{name} row {value.value!r}, not one of the full run's rows {paper!r}"
    return f"{name} = {value!r} (full run: {paper!r})"


def _differences(notebook: str, setting: dict) -> str | None:
    """Why this run cannot reproduce the paper: the parameters of ``setting`` that differ from it."""
    paper = _current["setting"]
    unknown = sorted(set(setting) - set(paper))
    if unknown:
        raise ValueError(f"setting names {unknown} are not in the 'setting' of data/paper/{notebook}.yaml")
    diff = [_difference(k, v, paper[k]) for k, v in setting.items() if _differs(v, paper[k])]
    return "this run uses " + "; ".join(diff) if diff else None


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
    """Begin recording for ``notebook``: previous records of that notebook are discarded.

    ValueError without ``data/paper/<notebook>.yaml``: the paper values a notebook reproduces are data.
    """
    if not notebook or not notebook.replace("_", "").isalnum():
        raise ValueError(f"notebook must be a name made of letters, digits and '_', got {notebook!r}")
    loaded = _load_paper_file(notebook)
    if loaded is None:
        raise ValueError(f"no {paper_dir() / (notebook + '.yaml')}: write the paper values that notebook "
                         f"{notebook!r} reproduces there (see fdp_book.results.load_spec)")
    _current["notebook"] = notebook
    _current["records"] = []
    _current["spec"], _current["setting"] = loaded
    _write(notebook, [])
    if results_dir() == SCRATCH_RESULTS:  # a run outside the book's build never writes the book's registry
        print(f"This run records its numbers in {_path(notebook)} (the book's registry, data/results, is written "
              "only by make).")


def printed(key: str):
    """The paper's value of a record key of the notebook being recorded (:func:`start`), or None where the paper prints
    none (a setting of the user's own)."""
    if _current["notebook"] is None:
        raise RuntimeError("call fdp_book.results.start(notebook) before asking for the paper's values")
    entry = _current["spec"].get(key)
    return None if entry is None else entry["paper"]


def within(a: float, b: float, tol: float) -> bool:
    """Whether ``a`` lies within ``tol`` of ``b`` (the comparison behind every status)."""
    # the relative slack only absorbs float noise at a rounding edge (|0.3215 - 0.322| = 5.000000000000004e-4)
    return abs(a - b) <= tol * (1.0 + 1e-9)


OUR_ADDITION = "our addition"  # in a record's source: it tests a statement of ours beside the paper's, not the paper's


def own_check(rec: dict) -> bool:
    """Whether ``rec`` tests a statement of ours (its source says "our addition"), not a number or claim of the paper:
    such records are verified like the others but counted apart from the paper's."""
    return OUR_ADDITION in rec.get("source", "")


def split_own(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """``records`` as (the paper's numbers and claims, our own checks), each in the given order."""
    return [r for r in records if not own_check(r)], [r for r in records if own_check(r)]


def shown(rec: dict, digits: int) -> str:
    """A record's value to ``digits`` significant digits for people: rounded outward where data/paper says it is an
    upper or lower end (``bound``), to nearest otherwise; trailing zeros kept (0.2470 beside 0.4654), except for whole
    numbers (a count of 344, not 344.0)."""
    value = float(rec["value"])
    if rec.get("bound"):
        return bound(value, digits, rec["bound"], keep_zeros=not value.is_integer())
    if value.is_integer():
        return f"{value:.{digits}g}"
    return format(value, f"#.{digits}g").replace(".e", "e").rstrip(".")


def status_of(rec: dict) -> str:
    """The status of one record (see the module docstring)."""
    if rec.get("not_compared"):
        return "not compared"
    matches = within(rec["value"], rec["paper"], rec["tol"])
    if "expected" in rec:  # a deviation pinned in data/paper
        if matches:
            return "stale"
        return "explained" if within(rec["value"], rec["expected"], rec["expected_tol"]) else "drift"
    if matches:
        return "set-up" if rec.get("chosen") else "match"
    return "mismatch"


def _record_from_spec(key: str, value, not_compared, setting) -> dict:
    notebook, spec = _current["notebook"], _current["spec"]
    if key not in spec:
        raise ValueError(f"key {key!r} is not in data/paper/{notebook}.yaml")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"value of {key!r} must be finite, got {value!r}")
    rec = {"key": key, "value": value, **{k: v for k, v in spec[key].items() if k != "quantity"}}
    rec.setdefault("explanation", "")
    if spec[key]["quantity"]:
        rec["quantity"] = spec[key]["quantity"]
    not_compared = not_compared or (_differences(notebook, setting) if setting else None)
    if not_compared:
        rec["not_compared"] = str(not_compared)
    return rec


def record(key: str, value, *, not_compared: str | None = None, setting: dict | None = None) -> None:
    """Record a reproduced number ``value`` under ``key`` (with its status; :func:`load` reads it back).

    Returns None, so that a notebook cell ending in a record shows nothing.

    The paper's value, source, kind, tolerance and any pinned deviation of ``key`` come from
    ``data/paper/<notebook>.yaml`` (ValueError for a key that is not there).  ``setting`` maps the
    parameters the number depends on to this run's values; where one differs from the file's
    ``setting:`` (the paper's), the record is not compared and says which.  ``not_compared`` gives
    another reason why this run cannot reproduce the number.
    """
    if _current["notebook"] is None:
        raise ValueError("call fdp_book.results.start(notebook) before record()")
    if not key:
        raise ValueError("key must be a non-empty string")
    if any(r["key"] == key for r in _current["records"]):
        raise ValueError(f"key {key!r} was already recorded")
    rec = _record_from_spec(key, value, not_compared, setting)
    rec["status"] = status_of(rec)
    _current["records"].append(rec)
    _write(_current["notebook"], _current["records"])


def recorded() -> set[str]:
    """The keys recorded so far in this run (a quick run records fewer than the paper file holds)."""
    return {rec["key"] for rec in _current["records"] or []}


def status(key: str) -> str:
    """The status of ``key`` as recorded in this run (for prose that depends on the outcome)."""
    for rec in _current["records"] or []:
        if rec["key"] == key:
            return rec["status"]
    raise ValueError(f"key {key!r} has not been recorded in this run")


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


def errata_labels(path: Path | None = None) -> set[str]:
    """The MyST labels ``(label)=`` of the errata page."""
    text = Path(path or ERRATA).read_text()
    return set(re.findall(r"^\(([A-Za-z0-9_.:-]+)\)=\s*$", text, flags=re.M))


def _against_spec(records: list[dict], spec: dict) -> tuple[list[dict], list[str]]:
    """Records re-judged against the current data/paper values (not those stored with them), and unknown keys."""
    fields = ("paper", "tol", "kind", "source", "explanation", "expected", "expected_tol", "errata", "anchor", "bound", "cause",
              "chosen", "printed")
    judged, unknown = [], []
    for r in records:
        if r["key"] not in spec:
            unknown.append(r["key"])
            continue
        item = spec[r["key"]]
        rec = {k: v for k, v in r.items() if k not in fields}
        rec.update({k: item[k] for k in fields if k in item})
        rec.setdefault("explanation", "")
        judged.append(rec)
    return judged, unknown


def verify(expected: list[str], directory: Path | None = None, paper_directory: Path | None = None,
           errata: Path | None = None) -> tuple[bool, list[str]]:
    """Check the registry of a full build; returns ``(ok, lines)``, naming every failing key with its numbers.

    Records of a notebook with ``data/paper/<notebook>.yaml`` are judged against the current file,
    not the values stored with them.  Fails when a notebook in ``expected`` has no records, a record
    is a ``mismatch`` (no explanation), ``drift`` (away from its pinned value), ``stale`` (an
    explanation for a value that now matches) or ``not compared`` (a full build compares every
    record), a record's key is not in the file, an explanation cites an errata label that does not
    exist, or a key of the file has no record (a reproduction silently dropped).
    """
    found = load_all(directory)
    labels = errata_labels(errata)
    ok, lines = True, []
    for name in expected:
        if not found.get(name):
            ok = False
            lines.append(f"MISSING  {name}: no recorded results (run `make`)")
    for name, records in found.items():
        spec = load_spec(name, paper_directory)
        if spec is None:
            ok = False
            lines.append(f"NOPAPER  {name}: {len(records)} records but no data/paper/{name}.yaml to judge them")
            continue
        records, unknown = _against_spec(records, spec)
        statuses = [status_of(r) for r in records]
        counts = {s: statuses.count(s) for s in ("match", "set-up", "explained", "not compared", *FAILING) if statuses.count(s)}
        lines.append(f"{name}: {len(records)} records, " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        for key in unknown:
            ok = False
            lines.append(f"UNKNOWN  {name}/{key}: recorded but not in data/paper/{name}.yaml")
        for r, status in zip(records, statuses):
            diff = abs(r["value"] - r["paper"])
            if status == "mismatch":
                lines.append(f"MISMATCH {name}/{r['key']}: value {r['value']:.6g}, paper {r['paper']:.6g}, "
                             f"|diff| {diff:.3g} > tol {r['tol']:.3g} ({r['source']})")
            elif status == "drift":
                lines.append(f"DRIFT    {name}/{r['key']}: value {r['value']:.6g}, pinned {r['expected']:.6g} "
                             f"+- {r['expected_tol']:.3g} (paper {r['paper']:.6g}; {r['explanation']})")
            elif status == "stale":
                lines.append(f"STALE    {name}/{r['key']}: value {r['value']:.6g} now matches the paper "
                             f"{r['paper']:.6g} (tol {r['tol']:.3g}): remove its explanation from data/paper")
            elif status == "not compared":
                lines.append(f"UNCOMPARED {name}/{r['key']}: value {r['value']:.6g}, not compared in a full build "
                             f"({r['not_compared']})")
            ok &= status not in FAILING and status != "not compared"
        recorded = {r["key"] for r in records}
        for key in sorted(set(spec) - recorded):
            ok = False
            lines.append(f"DROPPED  {name}/{key}: in data/paper/{name}.yaml (paper {spec[key]['paper']:.6g}) "
                         "but not recorded")
        for key, item in sorted(spec.items()):
            if "errata" in item and item["errata"] not in labels:
                ok = False
                lines.append(f"ERRATA   {name}/{key}: label {item['errata']!r} is not on the errata page")
    return ok, lines
