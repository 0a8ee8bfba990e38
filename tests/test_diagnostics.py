"""Caveats of a result reach a caller who does not read the result's field: fdp.FDPWarning, once per call."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import fdp
from fdp import Mechanism, calibrate, risk, targets
from fdp.accounting import montecarlo
from fdp.diagnostics import warns

EDGE = fdp.Mechanism("gaussian", 1.0, 3e-7, 1)  # mu* about 2e-5: its certified interval is several % wide


def _caught(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, fdp.FDPWarning)]


def test_a_wide_mu_interval_is_a_python_warning_with_the_fields_text():
    result, messages = _caught(risk.gdp, EDGE)
    assert result.warnings and messages == list(result.warnings)
    assert "mu* lies in" in messages[0]


def test_a_report_warns_once_per_caveat_although_it_computes_mu_inside():
    result, messages = _caught(risk.report, EDGE, kappa=[0.1], fpr=[0.1], prior=[0.5], rero_discretization=1e-3)
    assert result.warnings, "the edge case must carry a caveat for this test to mean anything"
    assert messages == list(result.warnings)  # not twice: the inner risk.gdp does not warn on its own


def test_a_clean_result_issues_no_warning():
    result, messages = _caught(risk.gdp, fdp.Mechanism("gaussian", 2.0, 0.05, 200), discretization=1e-3)
    assert result.warnings == () and messages == []


def test_a_collapsed_monte_carlo_estimate_warns():
    # sigma 0.5, 50 steps at rate 0.5: the likelihood ratios are far too heavy-tailed for 200,000 samples
    result, messages = _caught(montecarlo.gamma_mc, Mechanism("gaussian", 0.5, 0.5, 50), [0.1], samples=200_000, seed=1)
    assert len(result.warnings) == 1 and "collapsed" in result.warnings[0]
    assert messages == list(result.warnings)


def test_calibration_caveats_are_warnings():
    res, messages = _caught(calibrate.solve, targets.Mu(3e-7), 3e-7, steps=1, discretization=1e-9)
    assert res.warnings and messages == list(res.warnings)


def test_the_decorator_warns_from_the_outermost_call_only():
    class Result:
        warnings = ("inner caveat",)

    @warns
    def inner():
        return Result()

    @warns
    def outer():
        inner()
        return Result()

    _, messages = _caught(outer)
    assert messages == ["inner caveat"]


def test_the_command_line_prints_each_caveat_once_in_its_own_words():
    run = subprocess.run([sys.executable, "-W", "always", "-m", "fdp", "gdp", "--noise-multiplier", "1",
                          "--sampling-rate", "3e-7", "--steps", "1", "--json"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("python -m fdp gdp: warning:") for line in lines), run.stderr
    assert "FDPWarning" not in run.stderr


def test_users_silence_it_as_any_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", fdp.FDPWarning)
        risk.gdp(EDGE)
    assert not [w for w in caught if issubclass(w.category, fdp.FDPWarning)]


@pytest.mark.parametrize("name", ["Mechanism", "RandomizedResponse", "risk", "calibrate", "FDPWarning"])
def test_the_package_exports_where_a_user_starts(name):
    assert getattr(fdp, name) is not None and name in fdp.__all__
