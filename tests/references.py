"""The tests' shared references: closed forms and mpmath oracles (independent of the library's numerics), and
the command line run in process (``run_cli``).  The break reviews' tests use them from the module test files."""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
from hypothesis import strategies as st
from mpmath import erfinv, exp, mp, mpf, ncdf, sqrt
from scipy.stats import norm

from fdp.cli import main
from fdp.curves import tradeoff


def run_cli(capsys, argv, json_out=True):
    """``python -m fdp`` in process: ``(exit code, output, stderr)``; the output is the JSON read back (``--json`` is
    added) or, with ``json_out=False``, the text; None where the command failed.  argparse's refusals (exit 2) count
    as exit codes; ``verify`` (not a command of the library) runs as given."""
    json_out = json_out and argv[0] != "verify"
    try:
        code = main([*argv, "--json"] if json_out else argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, ((json.loads(out) if json_out else out) if code == 0 else None), err


def one_step_add_tpr(a, q, sigma):
    """Exact TPR of the most powerful test of one subsampled Gaussian step, add direction."""
    return (1.0 - q) * a + q * norm.sf(norm.isf(a) - 1.0 / sigma)


def mu_at(a, tpr):
    """mu(a) = Phi^-1(1 - a) - Phi^-1(1 - TPR(a)): the mu-GDP curve through the point (a, 1 - TPR)."""
    return norm.isf(a) - norm.isf(tpr)


def max_test(a, q, sigma, steps):
    """Power at level a of the test "reject if the largest release exceeds t" (add direction): a lower bound on
    the most powerful test's power, exact in every step's law. Under P the releases are N(0, sigma^2), under Q
    (1 - q) N(0, sigma^2) + q N(1, sigma^2); P(max <= t) = Phi(t / sigma)^T = 1 - a."""
    mp.dps = 50
    keep = (1 - mpf(a)) ** (mpf(1) / steps)  # Phi(t / sigma)
    t = sigma * sqrt(2) * erfinv(2 * keep - 1)
    return float(1 - ((1 - q) * keep + q * ncdf((t - 1) / sigma)) ** steps)


def rtm_one_step_power(a, q, sigma):
    """The RTM curve of one step (RTM paper Lemma 9, d = 1): the test |x| > c has level a = 2 Phi(-c) and power
    (1 - q) a + q [Phi(mu - c) + Phi(-mu - c)], mu = 1 / sigma; exact, since |x| is the sufficient statistic."""
    c = norm.isf(a / 2.0)
    return (1.0 - q) * a + q * (norm.cdf(1.0 / sigma - c) + norm.cdf(-1.0 / sigma - c))


def exact_gaussian_power(mu, level):
    """Phi(Phi^-1(level) + mu) in mpmath (a float mu and level taken as exact; 1 - 2 level kept to 40 digits)."""
    with mp.workdps(40 + int(-math.log10(level))):
        return ncdf(-sqrt(2) * erfinv(1 - 2 * mpf(level)) + mpf(mu))


def exact_mu_pure_dp(eps):
    """2 Phi^-1(e^eps / (1 + e^eps)) = -2 Phi^-1(1 / (1 + e^eps)) in mpmath."""
    with mp.workdps(60 + int(eps)):
        e = mpf(eps)
        return -2 * sqrt(2) * erfinv(2 / (1 + exp(e)) - 1)


def one_step_mu_star(sigma: float, rate: float, floor: float) -> float:
    """The exact mu* of one Poisson-subsampled Gaussian step over alpha, beta >= floor: the symmetrised curve is the
    add curve up to its slope -1 point and its mirror image, so mu* is the largest Phi^{-1}(TPR(a)) - Phi^{-1}(a),
    TPR(a) = (1 - q) a + q Phi(Phi^{-1}(a) + 1/sigma), over a in [floor, Phi(-1/(2 sigma))].  scipy's quantiles
    are good to 1e-15 relative at any level, so the difference is good to about 1e-12 relative here."""
    from scipy.optimize import minimize_scalar

    def mu_at(log_a):
        a = math.exp(log_a)
        z = norm.ppf(a)
        return float(norm.ppf((1.0 - rate) * a + rate * norm.cdf(z + 1.0 / sigma)) - z)

    top = math.log(norm.cdf(-0.5 / sigma))
    grid = np.linspace(math.log(floor), top, 2000)
    best = grid[int(np.argmax([mu_at(x) for x in grid]))]
    res = minimize_scalar(lambda x: -mu_at(x), bounds=(max(math.log(floor), best - 1), min(top, best + 1)),
                          method="bounded", options={"xatol": 1e-10})
    return max(-res.fun, mu_at(math.log(floor)), mu_at(best))


def z_mp(alpha):
    """Phi^-1(alpha) in mpmath, for the float alpha as it is (subnormals included)."""
    a = mpf(alpha)
    return mp.findroot(lambda x: mp.log(ncdf(x)) - mp.log(a), mpf(float(norm.ppf(alpha))))


def power_mp(mu, alpha):
    return mpf(0) if alpha == 0.0 else mpf(1) if alpha == 1.0 else ncdf(z_mp(alpha) + mu)


def finite_tree(obj):
    if isinstance(obj, dict):
        return all(finite_tree(v) for v in obj.values())
    if isinstance(obj, list):
        return all(finite_tree(v) for v in obj)
    return not isinstance(obj, float) or np.isfinite(obj)


def isf_mp(x) -> float:
    """Phi^{-1}(1 - x) in 50-digit arithmetic (an oracle independent of scipy's ndtri)."""
    with mpmath.workdps(50):
        x = mpmath.mpf(x)
        return float(mpmath.findroot(lambda z: mpmath.log(mpmath.ncdf(-z)) - mpmath.log(x), mpmath.sqrt(-2 * mpmath.log(x))))


def log_uniform(lo: float, hi: float):
    return st.floats(np.log10(lo), np.log10(hi)).map(lambda x: float(10.0**x))


def answer_or_refusal(capsys, argv):
    """Memory and time are held by the lattice and draw guards (their limits are tested above)."""
    code, out, err = run_cli(capsys, argv)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "error:" in lines[0] and "--" in lines[0], err
        return None
    assert code == 0 and finite_tree(out), (argv, out)
    return out


def gaussian_breakpoints(mu: float, n: int, span: float = 6.5) -> tradeoff.PiecewiseLinear:
    """Breakpoints lying on f_mu: (Phi(-z), Phi(z - mu)) for z >= mu/2 and their mirror images.

    Each half is computed where its coordinates are accurate (the small one from a tail function).
    """
    z = np.linspace(mu / 2, mu / 2 + span, n // 2)
    x, y = norm.sf(z), norm.cdf(z - mu)
    a = np.concatenate([[0.0], x[::-1], y[1:], [1.0]])
    b = np.concatenate([[1.0], y[::-1], x[1:], [0.0]])
    return tradeoff.piecewise_linear(a, b)
