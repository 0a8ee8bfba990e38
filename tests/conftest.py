"""Test configuration: in CI hypothesis draws the same examples on every run (reproducible results);
on a developer's machine it draws new ones each run, so that more of the input space gets tried.

The shared references (closed forms, mpmath oracles, the command line run in process) are ``tests/references.py``,
importable from every test directory; the fixtures below are shared too."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings
from mpmath import mp

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `from references import ...` in every test directory

settings.register_profile("ci", derandomize=True)
settings.register_profile("dev", derandomize=False)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    """Some mpmath oracles raise the global precision; every test starts from the one it had."""
    dps = mp.dps
    yield
    mp.dps = dps


@pytest.fixture
def mpmath_50():
    """mpmath at 50 digits for the test (the oracles of the third break review need them)."""
    dps = mp.dps
    mp.dps = 50
    yield
    mp.dps = dps


@pytest.fixture
def no_computation(monkeypatch):
    """Every expensive entry point raises: a test using this proves that refusal comes first."""
    from fdp.accounting import edgeworth, montecarlo, onestep, pld, rtm

    def refuse(*_args, **_kwargs):
        raise RuntimeError("a computation started before the input was refused")

    monkeypatch.setattr(pld._pld, "from_gaussian_mechanism", refuse)
    monkeypatch.setattr(pld._pld, "from_laplace_mechanism", refuse)
    monkeypatch.setattr(onestep, "pessimistic", refuse)
    monkeypatch.setattr(montecarlo, "_log_ratio_chunk", refuse)
    for module in (rtm, rtm.composition, rtm.release):  # where tensor_composition is looked up
        monkeypatch.setattr(module, "tensor_composition", refuse)
    monkeypatch.setattr(edgeworth, "edgeworth_curve", refuse)
