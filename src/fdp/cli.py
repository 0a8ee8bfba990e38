"""Command line: ``python -m fdp <command>``.

``rero``   ReRo bounds gamma (and advantage) for a mechanism at one or more priors kappa.
``rtm``    relaxed-threat-model curves j, j^-1, J and the DP-threat-model curve at given levels.
``gdp``    tight mu-GDP and its regret for DP-SGD, or mu of a mechanism with a given (eps, delta).
``verify`` check the results registry (used by ``make verify``).

Bad arguments exit with status 2 and a one-line message on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from . import rero, tradeoff
from .paths import ROOT
from .validation import check_open_unit, check_positive, check_positive_int, check_sampling_rate

CLOSED_FORMS = {"gaussian": tradeoff.gaussian, "laplace": tradeoff.laplace}
SUBSAMPLED = {"subsampled-gaussian": "gaussian", "subsampled-laplace": "laplace"}
METHODS = ("pld", "edgeworth", "clt", "mc", "mpmath")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m fdp", description="Trade-off functions and reconstruction robustness.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser(
        "rero",
        help="ReRo bound gamma = 1 - f(kappa) for a mechanism (add direction)",
        description="gaussian/laplace: one mechanism with effect size --mu, closed form. "
        "subsampled-gaussian/subsampled-laplace: --steps-fold composition of the Poisson-subsampled "
        "mechanism with sensitivity 1 and noise scale --noise-multiplier, computed by --method.",
    )
    p.add_argument("--mechanism", required=True, choices=sorted(CLOSED_FORMS) + sorted(SUBSAMPLED))
    p.add_argument("--mu", type=float, help="effect size Delta_2/sigma (gaussian) or Delta_1/b (laplace)")
    p.add_argument("--noise-multiplier", type=float, help="sigma (Gaussian) or b (Laplace), sensitivity 1")
    p.add_argument("--sampling-rate", type=float, default=1.0, help="Poisson sampling rate in (0, 1] (default 1)")
    p.add_argument("--steps", type=int, default=1, help="number of composed steps (default 1)")
    p.add_argument("--kappa", required=True, type=float, nargs="+", help="prior success probability, in (0, 1)")
    p.add_argument("--method", choices=METHODS, default="pld", help="for subsampled mechanisms (default pld)")
    p.add_argument("--order", type=int, default=4, help="Edgeworth order 0..4 (default 4)")
    p.add_argument("--discretization", type=float, default=1e-4, help="PLD loss discretisation (default 1e-4)")
    p.add_argument("--samples", type=int, default=1_000_000, help="Monte-Carlo samples (default 1e6)")
    p.add_argument("--seed", type=int, default=0, help="Monte-Carlo seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    r = sub.add_parser(
        "rtm",
        help="relaxed-threat-model trade-off curves (RTM paper)",
        description="Prints, at each level --alpha, the RTM curve j (add direction), its inverse j_inv, the "
        "symmetrised J = C(j, j_inv) and the DP-threat-model curve f_dp of the same mechanism. --mu is Delta/b "
        "(laplace) or Delta/sigma (gaussian, subsampled-gaussian); composed subsampled curves use the tensor "
        "product of the per-step RTM curves.",
    )
    r.add_argument("--mechanism", required=True, choices=("laplace", "gaussian", "subsampled-gaussian"))
    r.add_argument("--mu", required=True, type=float, help="effect size Delta/b or Delta/sigma")
    r.add_argument("--dim", type=int, default=1, help="output dimension d of the Gaussian mechanisms (default 1)")
    r.add_argument("--steps", type=int, default=1, help="number of non-adaptive compositions (default 1)")
    r.add_argument("--sampling-rate", type=float, default=1.0, help="Poisson sampling rate (subsampled-gaussian)")
    r.add_argument("--alpha", required=True, type=float, nargs="+", help="levels in [0, 1]")
    r.add_argument("--json", action="store_true", help="print one JSON object")

    g = sub.add_parser(
        "gdp",
        help="tight mu-GDP and regret (GDP reporting paper)",
        description="Without --mechanism: DP-SGD (Poisson-subsampled Gaussian, sensitivity 1) with --noise-multiplier, "
        "--sampling-rate and --steps; prints the tight mu*, its regret, eps at --delta and the run time. With "
        "--mechanism gaussian|laplace|randomized-response and --epsilon (and --delta for gaussian): the mu of that "
        "mechanism calibrated to (eps, delta), and its regret.",
    )
    g.add_argument("--mechanism", choices=("gaussian", "laplace", "randomized-response"))
    g.add_argument("--noise-multiplier", type=float, help="DP-SGD noise multiplier sigma")
    g.add_argument("--sampling-rate", type=float, default=1.0, help="Poisson sampling rate in (0, 1] (default 1)")
    g.add_argument("--steps", type=int, default=1, help="number of DP-SGD steps (default 1)")
    g.add_argument("--epsilon", type=float, help="epsilon of the mechanism (with --mechanism)")
    g.add_argument("--delta", type=float, default=1e-5, help="delta (default 1e-5)")
    g.add_argument("--discretization", type=float, default=None,
                   help="PLD loss discretisation (default: for DP-SGD 1/200 of the CLT mu clipped to [1e-5, 3e-4]; for Laplace 1e-4)")
    g.add_argument("--tail", type=float, default=1e-10,
                   help="ignore breakpoints with alpha or beta below this (default 1e-10, as gdpnum): the pessimistic "
                   "PLD's truncated lower tail leaves A-mass at loss -inf, which would forbid any finite mu")
    g.add_argument("--json", action="store_true", help="print one JSON object")

    v = sub.add_parser("verify", help="check the results registry against the papers' values")
    v.add_argument("--results-dir", default=None, help="folder of results (default data/results)")
    return parser


def _subsampled_gamma(args, kappa) -> dict:
    """gamma (and its bracket or interval where the method has one) for a subsampled mechanism."""
    base = SUBSAMPLED[args.mechanism]
    scale, rate, steps = args.noise_multiplier, args.sampling_rate, args.steps
    if scale is None:
        raise ValueError(f"--noise-multiplier is required for {args.mechanism}")
    if args.method == "pld":
        from .pld import tradeoff_bracket

        lower, upper = tradeoff_bracket(base, scale, rate, steps, discretization=args.discretization).gamma(kappa)
        # the certified upper end is the bound to report
        return {"gamma": upper, "gamma_lower": lower, "gamma_upper": upper}
    if args.method == "mpmath":
        from .groundtruth import gamma_ground_truth

        gt = gamma_ground_truth(base, scale, rate, steps, kappa)
        return {"gamma": gt.upper, "gamma_lower": gt.lower, "gamma_upper": gt.upper}
    if args.method == "edgeworth":
        from .edgeworth import gamma_edgeworth

        return {"gamma": gamma_edgeworth(base, scale, rate, steps, kappa, order=args.order)}
    if args.method == "clt":
        from .edgeworth import clt_curve

        return {"gamma": rero.gamma(clt_curve(base, scale, rate, steps), kappa)}
    # mc: Hayes et al. Algorithm 1 (Gaussian or Laplace noise)
    from .montecarlo import gamma_mc

    res = gamma_mc(scale, rate, steps, kappa, samples=args.samples, seed=args.seed, mechanism=base)
    return {"gamma": res.estimate, "ci_lower": res.lower, "ci_upper": res.upper}


def _rero(args) -> int:
    kappa = np.asarray(args.kappa, dtype=float)
    inputs = {"mechanism": args.mechanism}
    if args.mechanism in CLOSED_FORMS:
        if args.mu is None:
            raise ValueError(f"--mu is required for {args.mechanism}")
        out = {"gamma": rero.gamma(CLOSED_FORMS[args.mechanism](args.mu), kappa)}
        inputs["mu"] = args.mu
    else:
        out = _subsampled_gamma(args, kappa)
        inputs.update(noise_multiplier=args.noise_multiplier, sampling_rate=args.sampling_rate, steps=args.steps,
                      method=args.method)
    out = {k: np.atleast_1d(v).astype(float).tolist() for k, v in out.items()}
    out["advantage"] = np.atleast_1d(rero.advantage(np.minimum(out["gamma"], 1.0), kappa)).tolist()
    if args.json:
        print(json.dumps({**inputs, "kappa": kappa.tolist(), **out}))
    else:
        cols = ["kappa", *out]
        print(" ".join(f"{c:>12}" for c in cols))
        for i, k in enumerate(kappa):
            print(" ".join(f"{v:12.6g}" for v in [k, *(out[c][i] for c in out)]))
    return 0


def _rtm(args) -> int:
    from . import pld, rtm
    from .validation import check_array_in

    alpha = check_array_in("--alpha", np.asarray(args.alpha, dtype=float), 0.0, 1.0)
    mu = check_positive("--mu", args.mu)
    steps = check_positive_int("--steps", args.steps)
    d = check_positive_int("--dim", args.dim)
    grid = np.union1d(tradeoff.default_grid(), alpha)  # sample the envelope at the asked levels too
    if args.mechanism == "laplace":
        if steps == 1:
            j, f_dp = rtm.laplace(mu), tradeoff.laplace(mu)
        else:
            j = rtm.tensor_composition("laplace", mu, 1.0, steps)
            f_dp = pld.tradeoff_curve(pld.mechanism_pld("laplace", 1.0 / mu, 1.0, steps), "symmetrised")
        big_j = tradeoff.symmetrise(j, grid)
    elif args.mechanism == "gaussian":
        j, f_dp = rtm.gaussian(mu, d, steps), tradeoff.gaussian_composition(mu, steps=steps)
        big_j = tradeoff.symmetrise(j, grid)
    else:
        p = args.sampling_rate
        if steps == 1:
            j, big_j = tradeoff.subsample(rtm.gaussian(mu, d), p), rtm.subsampled_gaussian(mu, p, d, grid)
        else:
            j = rtm.tensor_composition("gaussian", mu, p, steps, d)
            big_j = rtm.composed_subsampled_gaussian(mu, p, steps, d)
        f_dp = pld.tradeoff_curve(pld.mechanism_pld("gaussian", 1.0 / mu, p, steps), "symmetrised")
    out = {"mechanism": args.mechanism, "mu": mu, "dim": d, "steps": steps, "sampling_rate": args.sampling_rate,
           "alpha": alpha.tolist()}
    for key, curve in (("j", j), ("j_inv", j.inverse), ("J", big_j), ("f_dp", f_dp)):
        out[key] = np.atleast_1d(np.asarray(curve(alpha), dtype=float)).tolist()
    if args.json:
        print(json.dumps(out))
    else:
        cols = ["alpha", "j", "j_inv", "J", "f_dp"]
        print(" ".join(f"{c:>12}" for c in cols))
        for i in range(alpha.size):
            print(" ".join(f"{out[c][i]:12.6g}" for c in cols))
    return 0


def _gdp(args) -> int:
    import time

    from . import gdp, pld

    t0 = time.perf_counter()
    if args.mechanism is None:
        if args.noise_multiplier is None:
            raise ValueError("--noise-multiplier is required without --mechanism")
        s = check_positive("--noise-multiplier", args.noise_multiplier)
        q = check_sampling_rate("--sampling-rate", args.sampling_rate)
        steps = check_positive_int("--steps", args.steps)
        h = gdp.default_discretization(s, q, steps) if args.discretization is None else args.discretization
        dist = pld.mechanism_pld("gaussian", s, q, steps, discretization=h)
        curve = pld.tradeoff_curve(dist, "symmetrised", normalise=True)
        mu, regret = gdp.mu_and_regret(curve, symmetrise=False, tail=args.tail)
        out = {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate, "steps": args.steps,
               "delta": args.delta, "discretization": h, "mu": mu, "regret": regret,
               "epsilon": float(dist.get_epsilon_for_delta(check_open_unit("--delta", args.delta)))}
    else:
        if args.epsilon is None:
            raise ValueError(f"--epsilon is required with --mechanism {args.mechanism}")
        eps = check_positive("--epsilon", args.epsilon)
        out = {"mechanism": args.mechanism, "epsilon": eps}
        if args.mechanism == "gaussian":  # exactly Gaussian: regret 0
            out.update(delta=args.delta, mu=float(gdp.mu_from_eps_delta(eps, check_open_unit("--delta", args.delta))),
                       regret=0.0)
        else:
            if args.mechanism == "laplace":  # Laplace noise of scale 1/eps: pure eps-DP
                curve = pld.tradeoff_curve(pld.mechanism_pld("laplace", 1.0 / eps,
                                                             discretization=args.discretization or 1e-4),
                                           "symmetrised", normalise=True)
            else:
                curve = gdp.randomized_response(eps)
            mu, regret = gdp.mu_and_regret(curve, tail=args.tail)
            out.update(mu=mu, regret=regret)
    out = {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in out.items()}
    out["seconds"] = time.perf_counter() - t0
    if args.json:
        print(json.dumps(out))
    else:
        print("\n".join(f"{k:>17}: {v}" for k, v in out.items()))
    return 0


def _verify(args) -> int:
    from . import results

    expected = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb") if p.stem != "report")
    ok, lines = results.verify(expected, args.results_dir)
    print("\n".join(lines))
    print("verify: OK" if ok else "verify: FAILED")
    return 0 if ok else 1


def main(argv=None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return {"rero": _rero, "rtm": _rtm, "gdp": _gdp, "verify": _verify}[args.command](args)
    except ValueError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2
