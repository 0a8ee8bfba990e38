"""The package's architecture: each concept defined once, no reaching into private names, the numerics
independent of the book's machinery, and the README's module list in step with the package."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fdp
import fdp_book
from fdp_book.paths import ROOT

PACKAGE = Path(fdp.__file__).resolve().parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py"))
PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)
BOOK = Path(fdp_book.__file__).resolve().parent
BOOK_MODULES = sorted(p for p in BOOK.glob("*.py") if p.name != "__init__.py")
BOOK_PACKAGES = sorted(p.parent for p in BOOK.rglob("__init__.py") if p.parent != BOOK)
BOOK_SUBMODULES = sorted(p for d in BOOK_PACKAGES for p in d.glob("*.py") if p.name != "__init__.py")


def _name(path: Path) -> str:
    return "fdp." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def _source(path: Path) -> str:
    return path.read_text()


# log(1 - p + p e^t), written either way
SUBSAMPLED_LOSS = [
    re.compile(r"log1p\(\s*[\w.]+\s*\*\s*[\w.]*expm1\("),  # log1p(p * expm1(t))
    re.compile(r"logaddexp\(\s*[\w.]*log1p\(\s*-"),  # logaddexp(log1p(-p), ...)
    re.compile(r"logaddexp\([^()]*,\s*[\w.]*log\(\s*[\w.]+\s*\)\s*\+"),  # logaddexp(log_keep, log(q) + t)
]


def test_the_patterns_find_the_forms_the_loss_was_written_in():
    for copy in ("np.log1p(q * np.expm1(z))", "np.logaddexp(np.log1p(-q), np.log(q) + x)",
                 "np.logaddexp(log_keep, np.log(q) + x)", "ctx.log1p(self.p * ctx.expm1(z))"):
        assert any(p.search(copy) for p in SUBSAMPLED_LOSS), copy


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_the_subsampled_privacy_loss_is_written_only_in_privacy_loss(path):
    if path.name == "privacy_loss.py":
        assert any(p.search(_source(path)) for p in SUBSAMPLED_LOSS)  # the patterns do find it
        return
    hits = [p.pattern for p in SUBSAMPLED_LOSS if p.search(_source(path))]
    assert not hits, f"{_name(path)} writes log(1 - p + p e^t) itself: use fdp.accounting.privacy_loss.subsampled"


def test_the_mechanisms_are_listed_once():
    defining = [_name(p) for p in MODULES if re.search(r"^MECHANISMS\s*=", _source(p), flags=re.M)]
    assert defining == ["fdp.accounting.privacy_loss"]
    from fdp.accounting import edgeworth, lattice, mechanism_gdp, montecarlo, pld, privacy_loss, rdp, rtm

    # a module may import the loss's functions, never define its own of the same name
    for module in (edgeworth, lattice, mechanism_gdp, montecarlo, pld, rdp, rtm):
        for name in privacy_loss.__all__:
            if hasattr(module, name):
                assert getattr(module, name) is getattr(privacy_loss, name), f"{module.__name__}.{name}"


def _fdp_module_aliases(tree: ast.Module, path: Path) -> set[str]:
    """Names under which ``path`` binds other fdp modules (``from . import x``, ``import fdp.x as y``)."""
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("fdp")):
            for alias in node.names:
                target = PACKAGE / (node.module or "").replace(".", "/") / f"{alias.name}.py"
                sibling = path.parent / f"{alias.name}.py"
                if node.module in (None, "fdp", "book") or target.exists() or sibling.exists():
                    aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name.startswith("fdp"))
    return aliases


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_module_uses_another_modules_private_names(path):
    tree = ast.parse(_source(path))
    aliases = _fdp_module_aliases(tree, path)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("fdp")):
            bad += [f"from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            bad.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
    assert not bad, f"{_name(path)} reaches into private names: {bad}"


def _imported_top_levels(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(_source(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", MODULES + [PACKAGE / "__init__.py", PACKAGE / "__main__.py"], ids=_name)
def test_the_library_never_imports_the_books_machinery(path):
    """Two packages, two layers: the installed library ``fdp`` (numerics and its command line) below the book's
    machinery ``fdp_book`` (results registry, verify, page helpers, figure style), which needs the book's
    repository. Nothing in fdp may import fdp_book."""
    assert "fdp_book" not in _imported_top_levels(path), f"{_name(path)} imports fdp_book"


#: The library's layers, lowest first: a module imports fdp modules of its own layer or below only, and no
#: numerics module imports an experiment.  The layers curves and accounting, and the experiments, are the
#: subpackages fdp.curves, fdp.accounting and fdp.experiments; the others are modules at the top.  A reading of
#: any curve (mu* and regret, conversions between representations) is a curve; mu* of a mechanism
#: (mechanism_gdp), its Renyi DP (rdp) and its RTM curves (rtm: closed forms of its magnitude statistic and their
#: composition on the loss lattice) need the mechanism, so they are accounting.
LAYERS = (
    ("base", {"validation", "formatting", "roots", "diagnostics", "parallel", "intervals", "result"}),
    ("curves", {"tradeoff", "mia", "rero", "gdp", "conversions"}),
    ("accounting", {"privacy_loss", "onestep", "lattice", "pld", "edgeworth", "montecarlo", "accountants", "rdp",
                    "mechanism_gdp", "chisquare", "ground_truth",
                    # fdp.accounting.rtm, a subpackage of its own, and its modules
                    "rtm", "statistics", "closed_forms", "subsampling", "composition", "release"}),
    ("readings", {"risk", "presentation", "targets"}),
    ("calibration", {"calibrate"}),
    ("interface", {"cli"}),
)
EXPERIMENTS = {"dpsgd", "attacks", "audit", "reconstruction", "inversion", "datasets", "estimators"}  # above accounting, beside the readings


SUBPACKAGES = {"curves", "accounting", "experiments"}


def _fdp_imports(path: Path) -> set[str]:
    """The fdp modules (by name) that ``path`` imports, through relative or absolute imports."""
    names = set()
    for node in ast.walk(ast.parse(_source(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level >= 1:
            parts = node.module.split(".") if node.module else []
        elif (node.module or "").startswith("fdp."):
            parts = node.module.split(".")[1:]
        else:
            continue
        if not parts or parts[-1] in SUBPACKAGES:  # from . import x / from ..curves import x: x is a module
            names |= {a.name for a in node.names}
        else:
            names.add(parts[-1])
    return names


_WITHOUT_EXTRAS = """
import sys
for name in ("matplotlib", "sklearn", "mlxtend"):  # the optional extras plot and experiments: not installed
    sys.modules[name] = None
import importlib, pkgutil
import fdp, fdp.accounting, fdp.curves
for package in (fdp.curves, fdp.accounting):
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
from fdp import Mechanism, calibrate, cli, presentation, risk
from fdp.experiments import datasets
report = risk.report(Mechanism("gaussian", 2.0, 1.0, 4))
assert report.gdp.mu == 1.0 and "Gaussian DP" in presentation.markdown(report)
for call, extra in ((lambda: presentation.figure(report), "plot"), (lambda: datasets.digits(10), "experiments")):
    try:
        call()
    except ImportError as exc:
        assert f"pip install 'fdp[{extra}]'" in str(exc), exc
    else:
        raise AssertionError(f"no ImportError without the {extra} extra")
print("ok")
"""


def test_the_numerics_run_without_the_optional_extras():
    """curves, accounting, risk, calibrate, presentation's Markdown and the CLI need no matplotlib, scikit-learn or
    mlxtend (the extras plot and experiments); a figure or a data set without them names the extra to install."""
    done = subprocess.run([sys.executable, "-c", _WITHOUT_EXTRAS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_every_module_has_a_layer():
    placed = set().union(*(mods for _, mods in LAYERS)) | EXPERIMENTS
    nested = {p.name for p in PACKAGES if p.parent != PACKAGE}  # fdp.accounting.rtm
    assert {p.stem for p in MODULES} | nested == placed


def test_the_subpackages_are_the_layers():
    """A reader sees the layers in the package's shape: fdp.curves holds the curves layer, fdp.accounting the
    accounting layer, fdp.experiments the experiments; the base, readings, calibration and interface modules sit at
    the top."""
    layers = dict(LAYERS)
    packages = {"curves": layers["curves"], "accounting": layers["accounting"], "experiments": EXPERIMENTS}
    for path in MODULES:
        parts = path.relative_to(PACKAGE).parts
        home = parts[0] if len(parts) > 1 else None
        expected = next((pkg for pkg, mods in packages.items() if path.stem in mods), None)
        assert home == expected, f"{_name(path)} belongs in {'fdp.' + expected if expected else 'the top of fdp'}"
    assert {p.name for p in PACKAGES if p.parent == PACKAGE} == set(packages)


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_imports_follow_the_layers(path):
    rank = {m: i for i, (_, mods) in enumerate(LAYERS) for m in mods}
    accounting = [name for name, _ in LAYERS].index("accounting")  # experiments use base, curves and accounting
    for other in _fdp_imports(path) - {path.stem}:
        if path.stem in EXPERIMENTS:
            assert other in EXPERIMENTS or rank[other] <= accounting, f"{_name(path)} imports fdp.{other}"
        else:
            assert other not in EXPERIMENTS, f"the numerics module {_name(path)} imports the experiment fdp.{other}"
            assert rank[other] <= rank[path.stem], (f"{_name(path)} ({LAYERS[rank[path.stem]][0]}) imports fdp.{other} "
                                                    f"of the higher layer {LAYERS[rank[other]][0]}")


def test_the_books_machinery_is_its_own_package_with_its_own_command():
    assert not (PACKAGE / "book").exists(), "fdp.book moved to fdp_book"
    assert (BOOK / "__main__.py").is_file() and BOOK_MODULES


@pytest.mark.parametrize("path", [p for p in MODULES if p.name != "cli.py"], ids=_name)
def test_fdp_modules_import_each_other_at_the_top(path):
    """An import inside a function hides a dependency (and a cycle): every fdp import is at module level.
    (The command line imports each subcommand's modules when it runs, to start fast.)"""
    tree = ast.parse(_source(path))
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                if isinstance(node, ast.ImportFrom) and node.level > 0:
                    pytest.fail(f"{_name(path)} imports .{node.module or ''} inside {func.name}() (line {node.lineno})")


def test_readme_lists_every_module():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Modules"):]
    section = section[: section.index("\n## ")]
    listed = set(re.findall(r"`(fdp(?:_book)?(?:\.\w+)+)`", section))
    book = {"fdp_book." + p.stem for p in BOOK_MODULES}
    book |= {"fdp_book." + ".".join(p.relative_to(BOOK).parts) for p in BOOK_PACKAGES}
    book |= {"fdp_book." + ".".join(p.relative_to(BOOK).with_suffix("").parts) for p in BOOK_SUBMODULES}
    assert listed == {_name(p) for p in MODULES} | {_name(p / "x.py").removesuffix(".x") for p in PACKAGES} | book


# --- docstrings ----------------------------------------------------------------------------------
# The library's public API (numerics and experiments; not the CLI nor the book's machinery) documents
# every public function and class in numpydoc form.
LIBRARY = [p for p in MODULES if p.stem != "cli"]


def _public_objects():
    for path in LIBRARY:
        module = importlib.import_module(_name(path))
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", obj


def _section(doc: str, title: str) -> bool:
    return re.search(rf"^\s*{title}\n\s*-{{{len(title)}}}\s*$", doc, re.M) is not None


def _takes_arguments(obj) -> bool:
    try:
        params = inspect.signature(obj).parameters
    except ValueError:  # an exception class: no signature of its own
        return False
    return any(name not in ("self", "cls") for name in params)


def test_every_public_object_has_numpydoc_sections():
    missing = []
    for name, obj in _public_objects():
        doc = inspect.getdoc(obj) or ""
        if not doc:
            missing.append((name, "docstring"))
        elif inspect.isclass(obj):
            if _takes_arguments(obj) and not (_section(doc, "Parameters") or _section(doc, "Attributes")):
                missing.append((name, "Parameters or Attributes"))
        else:
            if _takes_arguments(obj) and not _section(doc, "Parameters"):
                missing.append((name, "Parameters"))
            if inspect.signature(obj).return_annotation not in (None, "None") and not _section(doc, "Returns"):
                missing.append((name, "Returns"))
    assert not missing, missing


def test_the_docstring_check_sees_a_missing_section():
    assert _section("Summary.\n\nParameters\n----------\nx : int", "Parameters")
    assert not _section("Summary.\n\nParameters: x", "Parameters")
    assert not _section("Summary.\n\nReturns\n---", "Returns")


def test_public_results_are_frozen_dataclasses_not_named_tuples():
    """One result shape: no public class of the library is a tuple; every result (a class whose name the modules list
    and that is a dataclass) is frozen and says itself as JSON through to_dict()."""
    import dataclasses
    import json

    from fdp.result import Result

    for path in LIBRARY:
        module = importlib.import_module(_name(path))
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not inspect.isclass(obj) or obj.__module__ != module.__name__:
                continue
            assert not issubclass(obj, tuple), f"{module.__name__}.{name} is a named tuple"
            if issubclass(obj, Result) and module.__name__ != "fdp.result":  # the bases themselves are mixins
                assert dataclasses.is_dataclass(obj) and obj.__dataclass_params__.frozen, f"{module.__name__}.{name}"
    from fdp import dpsgd, risk

    report = risk.report(dpsgd(2.0, 1.0, 4))
    for result in (report, report.gdp, report.rero, report.rtm):
        json.dumps(result.to_dict(), allow_nan=False)


#: The longest a function's body may be (its docstring left out), and the most parameters a public function takes:
#: longer functions are split into named steps, longer signatures take a settings object (inversion.Search).
MAX_FUNCTION_LINES = 80
MAX_PUBLIC_PARAMETERS = 10


def _function_sizes(path: Path):
    """``(name, body lines without the docstring, parameters)`` of every function in ``path``."""
    for node in ast.walk(ast.parse(_source(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines -= first.end_lineno - first.lineno + 1
            a = node.args
            yield node.name, lines, len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_functions_are_short_and_public_signatures_small(path):
    long = [(name, n) for name, n, _ in _function_sizes(path) if n > MAX_FUNCTION_LINES]
    wide = [(name, k) for name, _, k in _function_sizes(path) if k > MAX_PUBLIC_PARAMETERS and not name.startswith("_")]
    assert not long, f"{_name(path)}: functions over {MAX_FUNCTION_LINES} lines: {long}"
    assert not wide, f"{_name(path)}: public functions over {MAX_PUBLIC_PARAMETERS} parameters: {wide}"


def test_the_size_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES + 1))
    (tmp_path / "m.py").write_text(f'def f(a):\n    """Doc.\n\n    More.\n    """\n{body}\n')
    assert [n for _, n, _ in _function_sizes(tmp_path / "m.py")] == [MAX_FUNCTION_LINES + 2]  # the def line counts


#: Public callables that take a noise (or an effect size) and a sampling rate apart, and why.  Everything else about a
#: mechanism takes a Mechanism.  A new entry here is a decision, not a default.
LOOSE_NUMBERS = {
    "fdp.accounting.privacy_loss.Mechanism": "the description itself",
    "fdp.accounting.privacy_loss.dpsgd": "DP-SGD's Mechanism",
    "fdp.calibrate.solve": "one of the noise multiplier and the steps is the unknown",
    "fdp.calibrate.Calibration": "a result: the noise found and the run it was found for",
    "fdp.accounting.mechanism_gdp.mu_and_regret_dpsgd_grid": "a grid over many noises and rates",
    "fdp.validation.check_subsampled_range": "the Mechanism's own range check",
}


def test_a_mechanism_is_one_object_not_loose_numbers():
    """No public callable takes a noise multiplier (or an effect size) and a sampling rate as separate parameters,
    except those of LOOSE_NUMBERS, each with its reason."""
    import pkgutil

    noise = {"noise_multiplier", "noise_multipliers", "sigma", "sigmas", "mu"}
    rate = {"sampling_rate", "sampling_rates", "q", "p", "rate"}
    found, seen = set(), set()
    for info in pkgutil.walk_packages(fdp.__path__, "fdp."):
        module = importlib.import_module(info.name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            try:
                parameters = set(inspect.signature(obj).parameters)
            except (TypeError, ValueError):
                continue
            if parameters & noise and parameters & rate:
                found.add(f"{obj.__module__}.{obj.__qualname__}")
    assert found == set(LOOSE_NUMBERS), (sorted(found - set(LOOSE_NUMBERS)), sorted(set(LOOSE_NUMBERS) - found))
