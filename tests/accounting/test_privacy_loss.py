"""fdp.accounting.privacy_loss: the Mechanism, checked once at the public entry and trusted below."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import fdp
from fdp import FDPWarning, risk
from fdp.accounting import pld, privacy_loss
from fdp.accounting.privacy_loss import Mechanism, RandomizedResponse, takes_mechanism


@pytest.fixture
def check_calls(monkeypatch):
    """The number of check_mechanism calls made so far (the decorator looks the function up at each call)."""
    calls = []
    original = privacy_loss.check_mechanism

    def counting(mechanism, name="mechanism"):
        calls.append(mechanism)
        return original(mechanism, name)

    monkeypatch.setattr(privacy_loss, "check_mechanism", counting)
    return calls


def test_a_report_checks_its_mechanism_at_most_three_times(check_calls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FDPWarning)  # the RTM bracket's width
        fdp.risk.report(fdp.dpsgd(1.1, 0.01, 1000))
    assert 1 <= len(check_calls) <= 3, len(check_calls)


def test_each_public_entry_checks_once_and_the_calls_inside_trust_it(check_calls):
    m = Mechanism("gaussian", 1.0, 0.5, 10)
    pld.certified_lower_curve(m, discretization=1e-2)  # reaches _mechanism_args, the lattice and lattice_points
    assert check_calls == [m]
    risk.gdp(m, discretization=1e-2)
    assert check_calls == [m, m]


@pytest.mark.parametrize("bad", ["gaussian", 1.0, None, ("gaussian", 1.0, 0.5, 10)])
def test_a_non_mechanism_is_refused_by_name_at_the_entry(bad):
    with pytest.raises(ValueError, match=r"^mechanism must be a fdp.Mechanism"):
        pld.certified_lower_curve(bad, discretization=1e-2)
    with pytest.raises(ValueError, match=r"^mechanism must be a fdp.Mechanism"):
        risk.rero(mechanism=bad, kappa=0.1)


def test_a_missing_mechanism_is_python_s_type_error():
    with pytest.raises(TypeError):
        pld.default_discretization()


def test_randomized_response_is_accepted_where_declared_only():
    rr = RandomizedResponse(1.0)
    assert risk.report(rr).gdp.mu > 0
    with pytest.raises(ValueError, match="mechanism must be a fdp.Mechanism"):
        risk.gdp(rr)


def test_the_check_is_scoped_to_the_call():
    """After a checked call returns (or raises), the next call is checked again."""
    seen = []

    @takes_mechanism
    def probe(mechanism):
        seen.append(privacy_loss._CHECKED.get())
        raise RuntimeError("inside")

    with pytest.raises(RuntimeError):
        probe(Mechanism("gaussian", 1.0))
    assert seen == [True] and privacy_loss._CHECKED.get() is False
    with pytest.raises(ValueError, match="mechanism must be a fdp.Mechanism"):
        probe("gaussian")


def test_mechanism_level_results_are_cached_on_the_frozen_object():
    m = Mechanism("gaussian", 3 ** 0.5, 0.01, 3)
    assert m.one_step is m.one_step and m.one_step == Mechanism("gaussian", 3 ** 0.5, 0.01)
    assert m.full_batch_mu == m.full_batch_mu and m.full_batch_mu >= 1.0  # exactly sqrt(3)/sqrt(3) or one ulp above
    assert hash(m) == hash(Mechanism("gaussian", 3 ** 0.5, 0.01, 3)) and m == Mechanism("gaussian", 3 ** 0.5, 0.01, 3)
    with pytest.raises(AttributeError):
        m.steps = 4


# --- from test_edges_round3, round 3 (subnormal levels, RTM curves near alpha = 1, calibration caps) ---------


@pytest.mark.usefixtures("mpmath_50")
def test_the_subsampled_loss_of_a_nan_is_nan_without_a_warning():
    """`calibrate ... --rtm-dimension 1000000` printed numpy's 'invalid value encountered in logaddexp' from a NaN loss
    (a statistic out of range), before its refusal; the caller's finiteness check refuses it, silently below."""
    from fdp.accounting.privacy_loss import subsampled

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = subsampled(np.array([np.nan, 40.0, 1.0]), 0.5)
    assert np.isnan(out[0]) and np.all(np.isfinite(out[1:]))


def test_dpsgd_from_a_training_scripts_numbers():
    """Issue 53: batch 256 of MNIST's 60,000 for 30 epochs is rate 256/60000 and ceil(30 * 60000 / 256) = 7032 steps,
    counted exactly (no float quotient rounded the wrong way)."""
    run = privacy_loss.dpsgd(1.0, batch_size=256, dataset_size=60_000, epochs=30)
    assert run == privacy_loss.dpsgd(1.0, 256 / 60_000, 7032)
    assert privacy_loss.dpsgd(1.0, batch_size=3, dataset_size=10, epochs=3).steps == 10  # 3 * 10 / 3, not 10.000...1
    assert privacy_loss.dpsgd(1.0, batch_size=7, dataset_size=10, epochs=0.5).steps == 1
    for kwargs, words in [
        ({"sampling_rate": 0.1, "batch_size": 10, "dataset_size": 100, "steps": 1}, "give sampling_rate or batch_size"),
        ({"batch_size": 10, "steps": 1}, "dataset_size must be an integer >= 1"),
        ({"batch_size": 11, "dataset_size": 10, "steps": 1}, "batch_size must be at most dataset_size (10)"),
        ({"sampling_rate": 0.1}, "give steps or epochs"),
        ({"sampling_rate": 0.3, "epochs": 3}, "epochs counts passes of dataset_size records"),
        ({"batch_size": 1, "dataset_size": 10, "epochs": 0}, "epochs must be > 0"),
    ]:
        with pytest.raises(ValueError, match=re.escape(words)):
            privacy_loss.dpsgd(1.0, **kwargs)
