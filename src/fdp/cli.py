"""Command line: ``python -m fdp <command>``.

``rero``   ReRo bounds gamma (and advantage) for a mechanism at one or more priors kappa.
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

MECHANISMS = {"gaussian": tradeoff.gaussian, "laplace": tradeoff.laplace}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m fdp", description="Trade-off functions and reconstruction robustness.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("rero", help="ReRo bound gamma = 1 - f(kappa) for a mechanism")
    p.add_argument("--mechanism", required=True, choices=sorted(MECHANISMS))
    p.add_argument("--mu", required=True, type=float, help="effect size: Delta_2/sigma (gaussian) or Delta_1/b (laplace)")
    p.add_argument("--kappa", required=True, type=float, nargs="+", help="prior success probability, in (0, 1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    v = sub.add_parser("verify", help="check the results registry against the papers' values")
    v.add_argument("--results-dir", default=None, help="folder of results (default data/results)")
    return parser


def _rero(args) -> int:
    curve = MECHANISMS[args.mechanism](args.mu)
    kappa = np.asarray(args.kappa, dtype=float)
    gamma = rero.gamma(curve, kappa)
    adv = rero.advantage(gamma, kappa)
    if args.json:
        out = {
            "mechanism": args.mechanism,
            "mu": args.mu,
            "kappa": kappa.tolist(),
            "gamma": np.atleast_1d(gamma).tolist(),
            "advantage": np.atleast_1d(adv).tolist(),
        }
        print(json.dumps(out))
    else:
        print(f"{'kappa':>12} {'gamma':>12} {'advantage':>12}")
        for k, g, a in zip(kappa, np.atleast_1d(gamma), np.atleast_1d(adv)):
            print(f"{k:12.6g} {g:12.6g} {a:12.6g}")
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
        return {"rero": _rero, "verify": _verify}[args.command](args)
    except ValueError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2
