"""True at the edges, round 3: subnormal levels, RTM curves near alpha = 1, calibration caps, refusals.

Every case of the issue "True at the edges, round 3" is a test here, against mpmath closed forms at 50 digits
(the Gaussian power Phi(Phi^-1(alpha) + mu) with Phi^-1 found by mpmath's root finder, so that subnormal levels are
the numbers they represent; the Laplace RTM curve e^-mu (1 - a)(1 + a) / (2 a); the Bayes success of G_mu).  The RTM
curves in high dimension are checked in test_chisquare.py.  Last, every command of the issue's list runs in a
subprocess under a time limit and prints no line from Python's warnings module.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from mpmath import mp, mpf, ncdf
from scipy.stats import norm

from fdp import calibrate, risk, targets
from fdp.accounting import pld, rtm
from fdp.accounting.privacy_loss import Mechanism
from fdp.cli import main
from fdp.curves import mia, tradeoff
from fdp.intervals import Interval
from fdp.targets import TPR, Epsilon, Mu


@pytest.fixture(autouse=True)
def _precision():
    dps = mp.dps
    mp.dps = 50
    yield
    mp.dps = dps


def _z(alpha):
    """Phi^-1(alpha) in mpmath, for the float alpha as it is (subnormals included)."""
    a = mpf(alpha)
    return mp.findroot(lambda x: mp.log(ncdf(x)) - mp.log(a), mpf(float(norm.ppf(alpha))))


def _power(mu, alpha):
    return mpf(0) if alpha == 0.0 else mpf(1) if alpha == 1.0 else ncdf(_z(alpha) + mu)


def _run(capsys, argv):
    try:
        code = main([*argv, "--json"])
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


# --- 1. bounds in the subnormal range ------------------------------------------------------------------


def test_power_bounds_hold_and_are_never_0_in_the_subnormal_range():
    """The upper bound was 0 wherever the exact power lies below about 1e-311 (mu 0.01, alpha 1e-311: 0 against
    1.46e-311): ndtr underflows early; now log_ndtr there, rounded outward by a float."""
    alphas = [0.0, 5e-324, 1e-323, 3e-322, 1e-320, 1e-315, 1e-311, 1e-309, 2.2e-308, 1e-300, 1e-150, 1e-10, 0.3, 1.0]
    for mu in (0.0, 1e-8, 0.01, 0.3, 1.0, 7.0, 36.0, 38.0, 100.0, 1e308):
        low, up = tradeoff.gaussian_power_bounds(mu, alphas)
        for a, lo, hi in zip(alphas, low, up):
            exact = _power(mu, a)
            assert mpf(lo) <= exact <= mpf(hi), (mu, a, lo, hi)
            assert exact == 0 or hi > 0.0, (mu, a)


def test_tiny_fpr_and_prior_through_the_cli(capsys):
    code, out, _ = _run(capsys, ["report", "--noise-multiplier", "3.3333333", "--steps", "1", "--fpr", "1e-320", "5e-324"])
    mu = math.sqrt(1) / 3.3333333
    assert code == 0
    for fpr, tpr in zip(out["mia"]["fpr"], out["mia"]["tpr_upper"]):
        assert mpf(tpr) >= _power(mu, fpr) and tpr >= fpr
    code, out, _ = _run(capsys, ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "3.3333333",
                                 "--kappa", "1e-320"])
    exact = _power(mu, 1e-320)
    assert code == 0 and mpf(out["gamma_lower"][0]) <= exact <= mpf(out["gamma_upper"][0]) and out["rero_advantage"][0] >= 0


@pytest.mark.parametrize("argv, target", [(["--steps", "1", "--tpr-at-fpr", "1e-319", "1e-320"], (1e-319, 1e-320, 1)),
                                          (["--steps", "5", "--rero", "1e-312", "--kappa", "1e-320"], (1e-312, 1e-320, 5))])
def test_calibration_at_subnormal_levels_meets_its_target(capsys, argv, target):
    """It returned noise 1.6896 where 16.62 is needed (and 3.777 where the exact gamma is 5.88e-311)."""
    value, level, steps = target
    code, out, _ = _run(capsys, ["calibrate", *argv])
    noise = out["noise_multiplier"]
    assert code == 0 and _power(math.sqrt(steps) / noise, level) <= value
    assert _power(math.sqrt(steps) / (noise / (1 + 2 * out["rtol"])), level) > value  # not needlessly large


# --- 2. RTM curves as alpha tends to 1 -----------------------------------------------------------------


@pytest.mark.parametrize("mu", [1.0, 20.0, 100.0])
def test_laplace_rtm_curve_near_alpha_1_is_never_above_the_exact_one(mu):
    """-e^-mu sinh(log a) cancelled as a -> 1: 3.72008244e-53 against 3.72007587e-53 at mu 100, a = 1 - 1e-9."""
    curve = rtm.laplace(mu)
    for a in (0.5, 0.99, 1 - 1e-9, 1 - 1e-12, 1 - 1e-15):
        exact = mp.exp(-mu) * (1 - mpf(a)) * (1 + mpf(a)) / (2 * mpf(a))
        got = float(curve(a))
        assert abs(got / float(exact) - 1) < 1e-13


def test_rtm_curves_lie_on_or_above_the_dp_curve(capsys):
    """`rtm --mechanism subsampled-gaussian --mu 1e-10 --steps 2 --alpha 0.1` printed j = J = 0 while f_dp = 0.9."""
    code, out, _ = _run(capsys, ["rtm", "--mechanism", "subsampled-gaussian", "--mu", "1e-10", "--steps", "2",
                                 "--alpha", "0.1", "0.5"])
    assert code == 0
    for key in ("j", "j_inv", "J"):
        assert all(v >= f * (1 - 1e-12) for v, f in zip(out[key], out["f_dp"])), key
    assert out["J"][0] > 0.89


# --- 3. an interval without a certified lower end --------------------------------------------------------


def test_a_calibration_without_a_certified_lower_end_starts_at_0():
    """Interval(0.99999054, 0.99999054) at noise 16.2825 missed the true eps there (at most 0.99998977 by integer-order
    RDP): the RDP fallback has no certified lower end, and the interval now says so."""
    res = calibrate.solve(Epsilon(1.0, delta=1e-300), 0.1, steps=10)
    assert res.achieved_lower is None and res.achieved_interval == Interval(0.0, res.achieved)
    assert 0.0 < res.achieved <= 1.0


def test_interval_refuses_reversed_or_nan_ends():
    with pytest.raises(ValueError, match="lower must be <= upper"):
        Interval(0.2, 0.1)
    with pytest.raises(ValueError, match="NaN"):
        Interval(float("nan"), 0.1)
    assert Interval(np.array([0.1, 0.2]), np.array([0.1, 0.3])).contains(0.1).tolist() == [True, False]


# --- 4. pessimistic, but needlessly so --------------------------------------------------------------------


def test_subsampled_calibration_at_a_tiny_fpr_is_at_most_the_full_batchs():
    """Rate 0.5, 10 steps, TPR 1e-19 at FPR 1e-20 returned 142.3 where 12.70 certifies it (the full batch's closed
    form is an upper bound for every sampling rate)."""
    full = calibrate.solve(TPR(1e-19, fpr=1e-20), 1.0, steps=2, rtol=1e-2)
    sub = calibrate.solve(TPR(1e-19, fpr=1e-20), 0.5, steps=2, rtol=1e-2)
    assert sub.noise_multiplier <= full.noise_multiplier * (1 + 1e-12) and sub.achieved <= 1e-19


def test_rtm_readings_never_exceed_the_dp_ones_in_a_report():
    """noise 1e10, 2 steps: the RTM TPR and advantage read 1.0 while the DP advantage is 5.6e-11."""
    rep = risk.report(Mechanism("gaussian", 1e10, 1.0, 2))
    assert rep.rtm.advantage <= rep.advantage and np.all(rep.rtm.tpr <= rep.tpr)
    assert np.all(rep.rtm.gamma <= rep.rero.upper) and np.all(rep.rtm.tpr_lower <= rep.rtm.tpr)


@pytest.mark.parametrize("mu", [1e-300, 1e-20, 1e-6, 1e-3, 1.0, 5.0, 38.0, 1e3, 1e200, 1e300])
def test_bayes_success_bound_is_never_below_the_exact_one(mu):
    """The bound was 1 at mu 1e-6 (its error term 8 z^2 u at z = 4.6e6) and, written naively, 0.99 at mu 1e300."""
    priors = [1e-300, 1e-10, 0.01, 0.5, 0.9, 1 - 1e-10]
    bayes = mia.gaussian_membership_bounds(mu, [0.1], priors)[2]
    for p, b in zip(priors, bayes):
        m, pp = mpf(mu), mpf(p)
        z = mp.log((1 - pp) / pp) / m + m / 2
        def phi(x):
            return mpf(1) if x > 1e6 else mpf(0) if x < -1e6 else ncdf(x)
        exact = pp * phi(m - z) + (1 - pp) * phi(z)
        assert exact <= b <= 1.0 and b - exact <= 1e-12, (mu, p)


# --- 5-9. answers in bounded time, clear refusals ----------------------------------------------------------


def test_refusals_name_the_parameter(capsys):
    code, _, err = _run(capsys, ["gdp", "--noise-multiplier", "1e-320"])
    assert code == 2 and err.count("\n") == 1 and "--noise-multiplier must be at least" in err
    code, _, err = _run(capsys, ["rero", "--mechanism", "gaussian", "--mu", "1", "--kappa", "0.5", "--kappa", "0.1"])
    assert code == 2 and "--kappa is given twice" in err
    code, _, err = _run(capsys, ["report", "--noise-multiplier", "1", "--noise-multiplier", "2"])
    assert code == 2 and "--noise-multiplier is given twice" in err
    m = Mechanism("gaussian", 1.0, 0.1, 3)
    for kappa in ([[0.1, 0.2]], None, "0.1"):
        with pytest.raises(ValueError, match="^kappa must"):
            risk.rero(m, kappa)
    with pytest.raises(ValueError, match="^rero_discretization must"):
        risk.report(m, rero_discretization=1e3)


@pytest.mark.parametrize("value", [5e-324, 1e-300, 1e300])
def test_epsilon_targets_at_the_ends_of_the_float_range(capsys, value):
    """1e-300 and 5e-324 were a 'math domain error'; 1e300 ran 500 evaluations and blamed an internal mu."""
    code, out, _ = _run(capsys, ["calibrate", "--steps", "10", "--epsilon", repr(value)])
    assert code == 0 and out["achieved"] <= value and out["evaluations"] < 100


def test_far_from_private_and_near_identity_mechanisms_are_read(capsys):
    """Noise 1e200 and Laplace 1e300 overflowed ('a number overflowed double precision', no flag named); the
    subsampled Laplace at 1e50 blamed --discretization; a Laplace scale of 1e7 reads eps 0 at delta 1e-5."""
    code, out, _ = _run(capsys, ["report", "--noise-multiplier", "1e200"])
    assert code == 0 and out["dp"]["epsilon_rdp"] == 0.0
    code, out, _ = _run(capsys, ["report", "--mechanism", "laplace", "--noise-multiplier", "1e300", "--steps", "5"])
    assert code == 0 and out["gdp"]["mu"] > 0.0 and out["dp"]["epsilon_pld"] == 0.0  # delta 1e-5 >= tanh(eps / 2)
    code, out, _ = _run(capsys, ["rero", "--mechanism", "subsampled-laplace", "--noise-multiplier", "1e50",
                                 "--kappa", "0.1"])
    assert code == 0 and out["gamma_lower"][0] <= 0.1 * math.exp(1e-50) <= out["gamma_upper"][0]


ISSUE_COMMANDS = [
    "report --noise-multiplier 3.3333333 --steps 1 --fpr 1e-320 5e-324 --json",
    "rero --mechanism subsampled-gaussian --noise-multiplier 3.3333333 --kappa 1e-320",
    "calibrate --steps 1 --tpr-at-fpr 1e-319 1e-320",
    "calibrate --steps 5 --rero 1e-312 --kappa 1e-320",
    "rtm --mechanism gaussian --mu 1e-3 --dimension 10000000 --alpha 0.999999",
    "rtm --mechanism laplace --mu 100 --alpha 0.999999999",
    "calibrate --steps 10 --sampling-rate 0.5 --tpr-at-fpr 1e-49 1e-50",
    "report --noise-multiplier 1e10 --steps 2",
    "report --noise-multiplier 1e6",
    "rtm --mechanism subsampled-gaussian --mu 1e-10 --steps 2 --alpha 0.1",
    "rtm --mechanism gaussian --mu 1 --steps 9007199254740992 --alpha 0.1",
    # (the issue's "calibrate --steps 100 --sampling-rate 1e-6 --epsilon 0.001" takes 26 s, was 139 s: its epsilon
    # evaluations keep one step under EPSILON_MAX_POINTS, tested below without the search)
    "rero --mechanism gaussian --mu 1e308 --kappa 0.1",
    "rtm --mechanism laplace --mu 1000 --alpha 0.1 0 1",
    "report --noise-multiplier 1e-300",
    # (the issue's "calibrate --steps 1000 --sampling-rate 0.01 --rtm-tpr-at-fpr 0.5 0.1 --rtm-dimension 1000000" now
    # answers in about 60 s, with a warning that its probes below the noise found left the RTM statistic's range: too
    # long for the suite; its raw warning came from privacy_loss.subsampled, tested below)
    "report --noise-multiplier 1e200",
    "report --mechanism laplace --noise-multiplier 1e300 --steps 5",
    "report --mechanism laplace --noise-multiplier 0.001 --steps 10",
    "rero --mechanism subsampled-laplace --noise-multiplier 1e50 --kappa 0.1",
    "gdp --noise-multiplier 1e-320",
    "calibrate --steps 10 --epsilon 1e-300",
    "calibrate --steps 10 --epsilon 1e300",
    "calibrate --epsilon 5e-324 --steps 4",
]

#: A line printed by Python's warnings module: "<file>.py:<line>: <Category>Warning: ..."
WARNING_LINE = re.compile(r"\.py:\d+: \w*Warning")


def test_every_command_of_the_issue_answers_or_refuses_in_bounded_time_without_raw_warnings():
    """Each command exits 0 or 2 within 120 s (two of the issue's list ran 449 s and 139 s; two are run here with fewer
    steps, the same code paths) and prints no line from the warnings module and no traceback."""
    for command in ISSUE_COMMANDS:
        done = subprocess.run([sys.executable, "-m", "fdp", *command.split()], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode in (0, 2), (command, done.stderr[-500:])
        assert not WARNING_LINE.search(done.stderr) and "Traceback" not in done.stderr, (command, done.stderr[-500:])


def test_the_subsampled_loss_of_a_nan_is_nan_without_a_warning():
    """`calibrate ... --rtm-dimension 1000000` printed numpy's 'invalid value encountered in logaddexp' from a NaN loss
    (a statistic out of range), before its refusal; the caller's finiteness check refuses it, silently below."""
    from fdp.accounting.privacy_loss import subsampled

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = subsampled(np.array([np.nan, 40.0, 1.0]), 0.5)
    assert np.isnan(out[0]) and np.all(np.isfinite(out[1:]))


def test_an_epsilon_evaluation_keeps_one_step_under_its_point_budget():
    """At noise 0.35, rate 1e-6 and spacing 1e-5 one step had 1.9 million points (16 s in dp_accounting's PLD); the
    calibration's spacing is coarsened to EPSILON_MAX_POINTS, and says so."""
    from fdp.accounting import lattice
    from fdp.accounting.privacy_loss import dpsgd

    h = Epsilon(1.0).default_discretization(dpsgd(0.35, 1e-6, 100))
    assert lattice.lattice_points(dpsgd(0.35, 1e-6, 100).one_step, h) <= targets.EPSILON_MAX_POINTS * 1.01
    assert Epsilon(1.0).default_discretization(dpsgd(1.0, 0.01, 100)) == Mu(1.0).default_discretization(dpsgd(1.0, 0.01, 100))


def test_a_spacing_below_1e_300_is_refused_by_name(capsys):
    """--discretization 5e-324 stopped with 'a number overflowed double precision', naming no flag."""
    code, _, err = _run(capsys, ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1",
                                 "--sampling-rate", "0.1", "--kappa", "0.1", "--discretization", "5e-324"])
    assert code == 2 and err.count("\n") == 1 and "--discretization must be at least 1e-300" in err


def test_laplace_far_from_private_is_read_with_the_pure_dp_bound():
    """`report --mechanism laplace --noise-multiplier 0.001 --steps 10` refused ('no finite mu* holds'): the curve is 0
    in double precision, but 1/b = 1000 per step is 1000-DP, so mu* <= sqrt(steps) (-2 Phi^{-1}(1 / (1 + e^1000)))
    (GDP paper Prop. 6.1), the cap the report now reads (the whole report runs in the command list below); and its
    RTM lattice, whose folded Laplace law underflows at mu > 700, printed a TPR of 0.001 (the truth is 1) once the
    report ran: it is refused by name, and the report leaves the RTM reading out with that warning."""
    z = mp.findroot(lambda x: mp.log(ncdf(x)) + 1000, -44.6)  # Phi(z) = e^-1000 = 1 / (1 + e^1000) in doubles
    bound = math.sqrt(10) * float(-2 * z)
    assert bound <= Mechanism("laplace", 0.001, 1.0, 10).full_batch_mu <= bound * (1 + 1e-11)
    with pytest.raises(ValueError, match="e\\^-mu underflows"):
        rtm.tensor_bracket(Mechanism("laplace", 0.001, 1.0, 1), 1)


def test_membership_readings_move_past_the_running_sums_of_a_certified_curve():
    """One step of noise 0.0625 at rate 0.5: the certified symmetrised curve reads 8.2e-15 at alpha 0.5, where the exact
    curve is below 6e-16 (the rounding of its running sums, (2 n + 8) u); the TPR read there was 1 - 8.2e-15, below
    the exact TPR.  The readings now move past that rounding."""
    exact = tradeoff.symmetrise(tradeoff.subsample(tradeoff.gaussian(16.0), 0.5), grid=np.linspace(0.0, 1.0, 2001))
    curve = pld.certified_lower_curve(Mechanism("gaussian", 0.0625, 0.5, 1), discretization=1e-3,
                                      direction="symmetrised")
    tpr, _, _ = mia.membership_bounds(curve, [0.5], [0.5])
    assert float(curve(0.5)) > float(exact(0.5))  # the rounding this test is about
    assert tpr[0] >= 1.0 - float(exact(0.5))
