"""fdp.calibrate: eps of the subsampled Gaussian and its inversion."""

import numpy as np
import pytest
from scipy.stats import norm

from fdp import calibrate


def gaussian_delta(eps, mu):
    """Privacy profile of mu-GDP (Dong, Roth, Su Cor. 2.13), an independent closed form."""
    return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def test_full_batch_matches_gdp_closed_form():
    noise, steps, delta = 2.0, 4, 1e-5
    eps = calibrate.epsilon(noise, 1.0, steps, delta)
    mu = np.sqrt(steps) / noise
    assert gaussian_delta(eps, mu) == pytest.approx(delta, rel=1e-2)
    assert gaussian_delta(eps, mu) <= delta * (1 + 1e-9) + 1e-12  # pessimistic: eps is an upper bound


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_inverse(accountant):
    noise = calibrate.noise_multiplier_for(4.0, 1e-5, 0.3, 100, accountant=accountant, discretization=1e-3, rtol=1e-3)
    assert calibrate.epsilon(noise, 0.3, 100, 1e-5, accountant, 1e-3) <= 4.0
    assert calibrate.epsilon(noise / 1.002, 0.3, 100, 1e-5, accountant, 1e-3) > 4.0


def test_rdp_is_looser_than_pld():
    args = (1.0, 0.01, 1000, 1e-5)
    assert calibrate.epsilon(*args, accountant="rdp") > calibrate.epsilon(*args, accountant="pld")


@pytest.mark.parametrize(
    "kwargs, name",
    [(dict(eps=-1.0), "eps"), (dict(delta=0.0), "delta"), (dict(q=0.0), "q"), (dict(steps=1.5), "steps"),
     (dict(accountant="moments"), "accountant")],
)
def test_bad_input(kwargs, name):
    args = dict(eps=1.0, delta=1e-5, q=0.5, steps=10)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        calibrate.noise_multiplier_for(**args)
