"""Command line: ``python -m fdp <command>``.

``rero``
    ReRo bounds gamma (and the ReRo advantage) for a mechanism at one or more priors kappa.
``rtm``
    relaxed-threat-model curves j, j^-1, J and the DP-threat-model curve at given levels.
``gdp``
    tight mu-GDP and its regret for DP-SGD, or mu of a mechanism with a given (eps, delta).
``report``
    a DP-SGD run read four ways, (eps, delta), mu-GDP, membership inference and ReRo, the last two also under the
    relaxed threat model.
``calibrate``
    the DP-SGD noise multiplier (or number of steps) that meets a risk target (eps, mu, MIA advantage or TPR, ReRo,
    RTM TPR).

``--mechanism`` takes the same choices with the same meaning in every command (:data:`NOISE`).  Bad arguments exit
with status 2 and a one-line message on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import replace

import numpy as np

from . import formatting, presentation, risk
from .accounting.privacy_loss import Mechanism, RandomizedResponse, dpsgd
from .curves import tradeoff
from .diagnostics import FDPWarning
from .validation import check_array_in, spelled_as

#: ``--mechanism``: the same choices with the same meaning in every command.  It names the noise; ``subsampled-X`` is
#: ``X`` (the sampling rate is ``--sampling-rate``, default 1), kept for the scripts that spell it so.  Which
#: computation runs follows from the flags: ``--mu`` reads one step's closed form, ``--noise-multiplier`` the
#: accountant of ``--steps`` Poisson-subsampled steps, ``--epsilon`` the mechanism calibrated to it.
NOISE = {"gaussian": "gaussian", "laplace": "laplace", "randomized-response": "randomized-response",
         "subsampled-gaussian": "gaussian", "subsampled-laplace": "laplace"}
MECHANISM_HELP = ("the noise: gaussian, laplace or randomized-response (subsampled-gaussian and subsampled-laplace "
                  "are gaussian and laplace; the sampling rate is --sampling-rate)")


class _Once(argparse.Action):
    """A flag's values, refused when the flag is given twice (argparse keeps the last one silently)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given", set())
        if self.dest in given:
            many = " (a list flag takes all its values after one flag, e.g. --kappa 0.1 0.5)" if self.nargs == "+" else ""
            parser.error(f"{option_string} is given twice: give it once{many}")
        given.add(self.dest)
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        # no abbreviations: argparse read --n as --noise-multiplier and --t as --tail, silently
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})
        self.register("action", None, _Once)  # every flag that stores a value
        self.register("action", "store", _Once)

    def error(self, message):  # one line, exit status 2
        if "invalid" in message and "," in message.split("value:")[-1]:  # --fpr 1e-5,1e-3
            message += " (a list flag takes its values separated by spaces: --fpr 0.001 0.01)"
        self.exit(2, f"{self.prog}: error: {message}\n")


def _count(text: str) -> int:
    """A whole number as a person writes it: "60000", "60_000" or "1e12" (argparse's int refuses the last)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value == value and value != float("inf") and value == int(value)):  # NaN, inf and 2.5 are no counts
        raise argparse.ArgumentTypeError(f"a whole number is needed, such as 60000 or 1e6, got {text!r}")
    return int(value)


#: Flags that several commands take, with one meaning and one help text.
COMMON = {
    "--mechanism": {"choices": tuple(NOISE), "help": MECHANISM_HELP},
    "--noise-multiplier": {"type": float, "help": "noise multiplier sigma (Laplace noise: its scale b), sensitivity 1, > 0"},
    "--sampling-rate": {"type": float, "help": "Poisson sampling rate in (0, 1] (default 1)"},
    "--steps": {"type": _count, "help": "number of composed steps, >= 1 (default 1; required with a --sampling-rate below 1)"},
    "--delta": {"type": float, "help": "delta in (0, 1) (default 1e-5)"},
    "--batch-size": {"type": _count, "help": "expected batch size of Poisson sampling; with --dataset-size, instead of "
                     "--sampling-rate (the rate is batch size / dataset size)"},
    "--dataset-size": {"type": _count, "help": "number of training records (with --batch-size)"},
    "--epochs": {"type": float, "help": "passes over the data, with --batch-size and --dataset-size, instead of --steps "
                 "(steps = ceil(epochs * dataset size / batch size))"},
    "--kappa": {"type": float, "nargs": "+", "help": "ReRo priors (the prior probability of a correct reconstruction), in (0, 1)"},
    "--discretization": {"type": float, "help": "privacy-loss lattice spacing in nats (default: chosen by the library, "
                         "see its reference)"},
    "--json": {"action": "store_true", "help": "print one JSON object"},
}


def _command(sub, name: str, summary: str, description: str, common: tuple[str, ...], **changed):
    """A subcommand with the :data:`COMMON` flags ``common`` (``changed`` replaces a flag's settings, by its dest)."""
    p = sub.add_parser(name, help=summary, description=description)
    for flag in common:
        p.add_argument(flag, **{**COMMON[flag], **changed.get(flag[2:].replace("-", "_"), {})})
    return p


def _rero_flags(sub) -> None:
    p = _command(sub, "rero", "ReRo bound gamma = 1 - f(kappa) for a mechanism (add direction)",
                 "With --mu: one step of the mechanism with effect size --mu, closed form. With --noise-multiplier: "
                 "--steps-fold composition of the Poisson-subsampled mechanism, computed by --method (bracket: certified "
                 "bracket of the PLD lattice; edgeworth, clt: approximations with an error estimate; mc: Monte Carlo with "
                 "a confidence interval; mpmath: certified ground truth). Warnings go to stderr and to the JSON field "
                 "'warnings'. rero_advantage is the ReRo advantage (gamma - kappa) / (1 - kappa) (Hayes et al. eq. 4), "
                 "not the membership advantage of report; an upper bound where gamma is one.",
                 ("--mechanism", "--noise-multiplier", "--sampling-rate", "--steps", "--kappa", "--discretization", "--json"),
                 mechanism={"required": True}, kappa={"required": True},
                 discretization={"help": "loss lattice spacing (--method bracket; default: chosen for a relative width "
                                 "of the bracket of 1e-4)"})
    p.add_argument("--mu", type=float, help="effect size Delta_2/sigma (gaussian) or Delta_1/b (laplace), >= 0: one "
                   "step, closed form")
    p.add_argument("--method", choices=risk.METHODS, help="for --noise-multiplier (default bracket)")
    p.add_argument("--order", type=int, help="Edgeworth order 0..4 (default 4; --method edgeworth)")
    p.add_argument("--samples", type=int, help="Monte-Carlo samples (default 1000000; --method mc)")
    p.add_argument("--seed", type=int, help="Monte-Carlo seed >= 0 (default 0; --method mc)")


def _rtm_flags(sub) -> None:
    p = _command(sub, "rtm", "relaxed-threat-model trade-off curves (RTM paper)",
                 "Prints, at each level --alpha, the RTM curve j (add direction), its inverse j_inv, the symmetrised "
                 "J = C(j, j_inv) and the DP-threat-model curve f_dp of the same mechanism, each moved down past its "
                 "rounding (a curve value's safe side is below). --mu is Delta/b (laplace) or Delta/sigma (gaussian). "
                 "Two release models of --steps compositions, named in the output's 'release': --release tensor "
                 "(default) tests the releases jointly (tensor product of the per-step RTM curves), the reading that "
                 "report and calibrate use for a DP-SGD run; --release averaged (Gaussian noise without subsampling) "
                 "averages them (one test of the norm of their mean, RTM paper Lemma 8).",
                 ("--mechanism", "--steps", "--sampling-rate", "--json"), mechanism={"required": True},
                 steps={"help": "number of composed steps, >= 1 (default 1, also for a --sampling-rate below 1: the "
                        "curve of one subsampled step)"},
                 sampling_rate={"help": "Poisson sampling rate in (0, 1] (gaussian, --release "
                                                      "tensor; default 1)"})
    p.add_argument("--release", choices=("tensor", "averaged"), help="how --steps releases are read (default tensor)")
    p.add_argument("--mu", required=True, type=float, help="effect size Delta/b or Delta/sigma, > 0")
    p.add_argument("--dimension", type=int, help="output dimension d of the Gaussian mechanisms (default 1)")
    p.add_argument("--alpha", required=True, type=float, nargs="+", help="levels in [0, 1]")


def _gdp_flags(sub) -> None:
    p = _command(sub, "gdp", "tight mu-GDP and regret (GDP reporting paper)",
                 "With --noise-multiplier: DP-SGD (Poisson-subsampled Gaussian, sensitivity 1); prints the tight mu* "
                 "over alpha, beta >= --tail (the alpha floor), its regret, eps at --delta and the run time (full "
                 "batches, --sampling-rate 1, are exactly sqrt(steps)/sigma-GDP). With --epsilon instead (and --delta "
                 "for gaussian): the exact mu of the --mechanism calibrated to (eps, delta), from its closed form, and "
                 "its regret.",
                 ("--mechanism", "--noise-multiplier", "--sampling-rate", "--steps", "--batch-size", "--dataset-size",
                  "--epochs", "--delta", "--discretization", "--json"),
                 mechanism={"help": MECHANISM_HELP + " (default gaussian)"},
                 discretization={"help": "PLD loss discretisation (--sampling-rate < 1; default 1/200 of the CLT mu "
                                 "clipped to [1e-5, 3e-4], refined while mu*'s interval is wider than "
                                 f"{100 * risk.MU_RTOL:g} %%)"})
    p.add_argument("--epsilon", type=float, help="epsilon of the mechanism, in (0, 700] (instead of --noise-multiplier)")
    p.add_argument("--tail", type=float,
                   help="alpha floor in [0, 0.5) (--sampling-rate < 1; default 1e-10, as gdpnum): mu* is certified for "
                   "alpha >= tail and beta >= tail, the levels where the curve is read; below 1e-300 it is the full "
                   "batch's sqrt(steps)/sigma, which caps mu* at every floor")


def _report_flags(sub) -> None:
    p = _command(sub, "report", "privacy risk report of a DP-SGD run: (eps, delta), mu-GDP, membership inference, ReRo",
                 "DP-SGD (Poisson-subsampled Gaussian, sensitivity 1) read four ways: eps at --delta from the tight PLD "
                 "and the RDP accountant; the certified mu* with its regret and alpha floor, and mu* at two larger "
                 "floors; upper bounds on membership inference (TPR at each --fpr, the membership advantage TPR - FPR, "
                 "the Bayes success at each --prior); the certified ReRo bracket at each --kappa; the membership TPR "
                 "and the ReRo bound under the relaxed threat model (an adversary without the target record, release of "
                 "dimension --rtm-dimension). Markdown by default. --mechanism laplace reads --steps-fold Laplace noise "
                 "of scale --noise-multiplier (no subsampling); --mechanism randomized-response reads binary randomized "
                 "response with --epsilon (exact, no RDP or RTM reading).",
                 ("--mechanism", "--noise-multiplier", "--sampling-rate", "--steps", "--batch-size", "--dataset-size",
                  "--epochs", "--delta", "--kappa", "--discretization", "--json"),
                 mechanism={"help": MECHANISM_HELP + " (default gaussian: DP-SGD)"},
                 kappa={"help": "ReRo priors in (0, 1) (default 1e-3 1e-2 0.1)"},
                 discretization={"help": "loss lattice spacing of the curve, the ReRo bracket and the RTM reading "
                                 "(default: 1/200 of the CLT mu clipped to [1e-5, 3e-4] for the curve, refined while mu*'s "
                                 f"interval is wider than {100 * risk.MU_RTOL:g} %%, the spacing that gives the ReRo "
                                 "bracket a relative width of 1e-4, and 1e-4 for the RTM reading)"})
    p.add_argument("--epsilon", type=float, help="epsilon of randomized response, > 0")
    p.add_argument("--fpr", type=float, nargs="+", help="false-positive rates in [0, 1] (default 1e-3 1e-2 0.1)")
    p.add_argument("--prior", type=float, nargs="+", help="membership priors in (0, 1) (default 0.01 0.5)")
    p.add_argument("--rtm-dimension", type=int, help="dimension of the release in the relaxed-threat-model reading "
                   "(default 1, the worst case)")
    p.add_argument("--figure", help="also write the report's figure to this file (.png or .svg)")
    p.add_argument("--noise-for", nargs="+", metavar="TARGET", help="also the smallest noise multiplier at this run's rate "
                   "and steps that meets a target: 'epsilon 3' (at --delta), 'mu 1', 'advantage 0.1', 'tpr 0.05 1e-3' (TPR "
                   "at an FPR), 'rero 0.05 1e-3' (at a prior), 'rtm_tpr 0.05 1e-3' (DP-SGD only)")


def _calibrate_flags(sub) -> None:
    p = _command(sub, "calibrate", "the DP-SGD noise multiplier (or number of steps) that meets a risk target",
                 "The smallest noise multiplier (to --rtol) of DP-SGD with --sampling-rate and --steps, or with "
                 "--noise-multiplier instead of --steps the largest number of steps, whose certified risk meets exactly "
                 "one target: --epsilon (at --delta, PLD accountant), --mu (certified mu*), --advantage (membership "
                 "advantage TPR - FPR) or --tpr-at-fpr TPR FPR (membership inference, upper bounds), --rero GAMMA "
                 "--kappa K (upper end of the certified ReRo bracket), --rtm-tpr-at-fpr TPR FPR (membership TPR of the "
                 "relaxed-threat-model adversary, release of dimension --rtm-dimension). Prints the noise, the certified "
                 "risk it reaches, a lower bound on that risk from the optimistic curve and noise_lower: the exact "
                 "smallest noise lies in (noise_lower, noise].",
                 ("--sampling-rate", "--steps", "--batch-size", "--dataset-size", "--epochs", "--noise-multiplier", "--delta",
                  "--kappa", "--discretization", "--json"),
                 steps={"help": "number of DP-SGD steps, >= 1 (the noise multiplier is searched)"},
                 noise_multiplier={"help": "noise multiplier, > 0 (the number of steps is searched)"},
                 delta={"help": "delta in (0, 1) (default 1e-5; --epsilon)"},
                 kappa={"nargs": None, "help": "prior of the ReRo target, in (0, 1)"},
                 discretization={"help": "loss lattice spacing (default: chosen at each noise tried, the PLD's default "
                                 "spacing refined while epsilon has not converged; 1e-4 for --rtm-tpr-at-fpr)"})
    p.add_argument("--epsilon", type=float, help="target epsilon, > 0 (with --delta)")
    p.add_argument("--mu", type=float, help="target mu*, > 0")
    p.add_argument("--advantage", type=float, help="target membership advantage TPR - FPR, in (0, 1)")
    p.add_argument("--tpr-at-fpr", type=float, nargs=2, metavar=("TPR", "FPR"), help="target TPR at an FPR, TPR > FPR")
    p.add_argument("--rero", type=float, help="target ReRo bound gamma, above --kappa")
    p.add_argument("--rtm-tpr-at-fpr", type=float, nargs=2, metavar=("TPR", "FPR"),
                   help="target TPR at an FPR of the relaxed-threat-model adversary, TPR > FPR")
    p.add_argument("--rtm-dimension", type=int, help="dimension of the release for --rtm-tpr-at-fpr (default 1)")
    p.add_argument("--rtol", type=float, help="relative accuracy of the noise, in [1e-12, 1) (default 1e-3)")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m fdp", description="Trade-off functions and reconstruction robustness.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add_flags in (_rero_flags, _rtm_flags, _gdp_flags, _report_flags, _calibrate_flags):
        add_flags(sub)
    parser.commands = sub.choices  # each command's parser (to name its flags when an unknown one is given)
    return parser


#: What other tools and the papers call a flag (TF Privacy, Opacus, the DP-SGD literature): named in the error
SYNONYMS = {"sigma": "--noise-multiplier", "noise": "--noise-multiplier", "noise-scale": "--noise-multiplier",
            "q": "--sampling-rate", "rate": "--sampling-rate", "sample-rate": "--sampling-rate", "eps": "--epsilon",
            "target-epsilon": "--epsilon", "target-delta": "--delta", "batch": "--batch-size", "n": "--dataset-size", "dataset": "--dataset-size",
            "t": "--steps", "iterations": "--steps", "epoch": "--epochs"}


def _unknown(command: argparse.ArgumentParser, unknown: list[str]) -> str:
    """The error for flags a command does not take, with the flag meant where one is recognisable."""
    import difflib

    flags = [o for o in command._option_string_actions if o.startswith("--")]
    hints = []
    for token in (t for t in unknown if t.startswith("--")):
        name = token[2:].split("=")[0].lower().replace("_", "-")
        near = difflib.get_close_matches(name, [f[2:] for f in flags], 1, 0.8)  # a typo, not another quantity
        meant = SYNONYMS.get(name) if name in SYNONYMS else "--" + near[0] if near else None
        if token.split("=")[0] in flags:  # given before the command: python -m fdp --json gdp ...
            hints.append(f"{token.split('=')[0]} goes after the command")
        elif meant in flags:
            hints.append(f"{token.split('=')[0]} is written {meant} here")
        elif name in ("max-grad-norm", "clip", "clipping-norm", "l2-norm-clip"):
            hints.append(f"{token.split('=')[0]} is not needed: the guarantee depends on the clipping norm only through "
                         "the noise multiplier, the noise's standard deviation over that norm")
    return (f"unrecognized arguments: {' '.join(unknown)}" + (f" ({'; '.join(hints)})" if hints else "")
            + f"; python -m fdp {command.prog.split()[-1]} --help lists its flags")


# --- validation: every flag checked, with its own name, before any computation ----------------


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _forbid(args, dests, why: str) -> None:
    """Options that do not apply are an error, not silently ignored."""
    for dest in dests:
        if getattr(args, dest) is not None:
            raise ValueError(f"{_flag(dest)} does not apply {why}")


def _require(args, dest: str, why: str):
    value = getattr(args, dest)
    if value is None:
        raise ValueError(f"{_flag(dest)} is required {why}")
    return value


def _emit(out: dict, args, columns=None) -> int:
    """Print ``out`` as JSON or a table, warnings to stderr; refuse NaN or inf anywhere."""
    for key, value in out.items():
        arr = np.asarray(value) if isinstance(value, (list, float, int, np.floating)) else None
        if arr is not None and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"internal error: {key} is not finite ({value!r}); please report this input")
    for w in out.get("warnings", []):
        print(f"python -m fdp {args.command}: warning: {w}", file=sys.stderr)
    if args.json:
        print(json.dumps(out, allow_nan=False))
    elif columns is None:
        # a value that does not exist here (no epsilon at this delta, no lattice for a closed form) is left out of the
        # table; the JSON keeps it as null and the warnings say why
        print("\n".join(f"{k:>17}: {_field(k, v)}" for k, v in out.items() if k != "warnings" and v is not None))
    else:
        print(" ".join(f"{c:>12}" for c in columns))
        for i in range(len(out[columns[0]])):
            print(" ".join(f"{_cell(c, out[c][i]):>12}" for c in columns))
    return 0


_LEVELS = ("kappa", "alpha")  # the inputs of a table, printed as given
_CURVES = ("j", "j_inv", "J", "f_dp")  # trade-off curve values (type-II errors): a smaller one is the safe side


def _field(key: str, value) -> str:
    """A field of a command's text output: a number as typed where six digits hold it exactly, otherwise to six
    significant digits rounded outward (lower ends down, the rest up: more noise, a larger risk); seconds to 0.1 s."""
    if not isinstance(value, float):
        return str(value)
    if key == "seconds":
        return f"{value:.1f}"
    if float(f"{value:.6g}") == value:
        return f"{value:.6g}"
    text = formatting.bound(value, 6, "lower" if key.endswith("_lower") else "upper")
    return text if np.isfinite(float(text)) else repr(value)  # (rounded up past the largest double)


def _cell(column: str, value: float) -> str:
    """A table cell to 6 significant digits, rounded outward: lower ends and curve values down, the rest (upper
    ends, estimates of a risk) up, so that no printed risk lies below the computed one."""
    if column in _LEVELS:
        return f"{value:.6g}"
    return formatting.bound(value, 6, "lower" if column.endswith("_lower") or column in _CURVES else "upper")


# --- rero ------------------------------------------------------------------------------------


def _validate_rero(args) -> np.ndarray:
    """The flags that apply to the --mechanism and --method given, with their defaults; the values are checked by
    the library (its errors name the flags)."""
    kappa = check_array_in("--kappa", args.kappa, 0.0, 1.0, open_low=True, open_high=True)
    if NOISE[args.mechanism] == "randomized-response":
        raise ValueError("rero reads additive noise: randomized response's ReRo bound is in report --mechanism "
                         "randomized-response --epsilon E")
    if (args.mu is None) == (args.noise_multiplier is None):
        raise ValueError("give --mu (one step, closed form) or --noise-multiplier (with --sampling-rate and --steps: "
                         "the accountant), not both and not neither")
    if args.mu is not None:
        _forbid(args, ("sampling_rate", "steps", "method", "order", "discretization", "samples", "seed"),
                "with --mu (one step, a closed form; use --noise-multiplier for the accountant)")
        return kappa
    _length(args)
    args.sampling_rate = 1.0 if args.sampling_rate is None else args.sampling_rate
    args.steps = 1 if args.steps is None else args.steps
    args.method = "bracket" if args.method is None else args.method
    why = f"to --method {args.method}"
    if args.method != "edgeworth":
        _forbid(args, ("order",), why)
    if args.method != "bracket":
        _forbid(args, ("discretization",), why)
    if args.method != "mc":
        _forbid(args, ("samples", "seed"), why)
    if _full_batch_gaussian(args):
        _forbid(args, ("discretization",), "to full batches (--sampling-rate 1: the exact Gaussian closed form)")
    if args.method == "edgeworth":
        args.order = 4 if args.order is None else args.order
    elif args.method == "mc":
        args.samples = 1_000_000 if args.samples is None else args.samples
        args.seed = 0 if args.seed is None else args.seed
    return kappa


def _full_batch_gaussian(args) -> bool:
    """--method bracket for Gaussian noise without subsampling: answered by the exact closed form."""
    return args.method == "bracket" and NOISE[args.mechanism] == "gaussian" and args.sampling_rate == 1.0


def _subsampled_gamma(args, kappa) -> dict:
    """gamma (and its bracket, interval or error estimate) for a subsampled mechanism, with warnings."""
    mechanism = Mechanism(NOISE[args.mechanism], args.noise_multiplier, args.sampling_rate, args.steps)
    est = risk.rero(mechanism, kappa, args.method, discretization=args.discretization,
                    order=4 if args.order is None else args.order, samples=1 if args.samples is None else args.samples,
                    seed=0 if args.seed is None else args.seed)
    out = {"gamma": est.value, "certified": est.certified, "warnings": list(est.warnings), "method": est.method,
           "rero_advantage": est.advantage(kappa)}
    if est.certified:
        out.update(gamma_lower=est.lower, gamma_upper=est.upper)
    elif est.lower is not None:
        out.update(ci_lower=est.lower, ci_upper=est.upper)
    if est.error_estimate is not None:
        out["error_estimate"] = est.error_estimate
    return out


def _rero(args) -> int:
    kappa = _validate_rero(args)
    inputs = {"mechanism": args.mechanism}
    if args.mu is not None:
        est = risk.rero_closed_form(NOISE[args.mechanism], args.mu, kappa)
        out = {"gamma": est.value, "certified": True, "warnings": [], "rero_advantage": est.advantage(kappa)}
        inputs["mu"] = args.mu
    else:
        out = _subsampled_gamma(args, kappa)
        inputs.update(noise_multiplier=args.noise_multiplier, sampling_rate=args.sampling_rate, steps=args.steps,
                      method=out.pop("method"))
    warnings, certified = out.pop("warnings"), out.pop("certified")
    out = {k: np.atleast_1d(v).astype(float).tolist() for k, v in out.items()}
    result = {**inputs, "kappa": kappa.tolist(), **out, "certified": certified, "warnings": warnings}
    return _emit(result, args, None if args.json else ["kappa", *out])


# --- rtm -------------------------------------------------------------------------------------


def _rtm(args) -> int:
    from .accounting import rtm

    alpha = check_array_in("--alpha", args.alpha, 0.0, 1.0)
    noise = NOISE[args.mechanism]
    if noise == "randomized-response":
        raise ValueError("rtm reads additive noise (gaussian or laplace), not randomized response")
    if noise == "laplace":
        _forbid(args, ("dimension", "sampling_rate"), f"to --mechanism {args.mechanism} (one-dimensional, no subsampling)")
    args.steps = 1 if args.steps is None else args.steps  # (one subsampled step is a curve the RTM paper draws)
    release = args.release or "tensor"
    if release == "averaged":
        _forbid(args, ("sampling_rate",), "to --release averaged (it averages full releases)")
    d = 1 if args.dimension is None else args.dimension
    p = 1.0 if args.sampling_rate is None else args.sampling_rate
    grid = np.union1d(tradeoff.default_grid(), alpha)  # sample the envelope at the asked levels too
    mu = check_array_in("mu", args.mu, 1e-300, rtm.release.MU_MAX if noise == "gaussian" else 1e300).item()
    mechanism = Mechanism(noise, 1.0 / mu, p, args.steps)  # the RTM paper's effect size mu is 1 / noise multiplier
    curves = rtm.release_curves(mechanism, dimension=d, release=release, grid=grid)
    out = {"mechanism": args.mechanism, "mu": float(args.mu), "dimension": d, "steps": args.steps, "sampling_rate": float(p),
           "release": curves.release, "alpha": alpha.tolist(), **curves.values(alpha)}
    if not args.json:
        print(f"release: {out['release']}")
    return _emit(out, args, None if args.json else ["alpha", "j", "j_inv", "J", "f_dp"])


# --- gdp -------------------------------------------------------------------------------------


def _gdp(args) -> int:
    import time

    from .accounting import mechanism_gdp

    t0 = time.perf_counter()
    warnings: list[str] = []
    kind = NOISE[args.mechanism or "gaussian"]
    if (args.epsilon is None) == (args.noise_multiplier is None):
        raise ValueError("give --noise-multiplier (DP-SGD: with --sampling-rate and --steps) or --epsilon (the "
                         "--mechanism calibrated to it), not both and not neither")
    if args.noise_multiplier is not None:
        if kind == "randomized-response":
            raise ValueError("--noise-multiplier does not apply to --mechanism randomized-response: give --epsilon")
        if kind != "gaussian":
            raise ValueError(f"--noise-multiplier reads Gaussian noise (DP-SGD) here; for {kind} noise use "
                             f"report --mechanism {kind} (or --epsilon for its closed form)")
        run = _dpsgd(args, args.noise_multiplier)
        delta = 1e-5 if args.delta is None else args.delta
        if run.sampling_rate == 1.0:
            _forbid(args, ("discretization", "tail"), "to full batches (--sampling-rate 1: exact closed form)")
        report = risk.gdp(run, delta=delta, discretization=args.discretization, tail=1e-10 if args.tail is None else args.tail)
        out = {"noise_multiplier": run.noise_multiplier, "sampling_rate": run.sampling_rate, "steps": run.steps,
               **report.to_dict()}
        warnings += report.warnings
    else:
        _forbid(args, ("sampling_rate", "steps", "batch_size", "dataset_size", "epochs", "discretization", "tail"),
                "with --epsilon (the mechanism's mu is a closed form of --epsilon)")
        if kind != "gaussian":
            _forbid(args, ("delta",), f"to --mechanism {args.mechanism} (pure eps-DP)")
        eps = args.epsilon
        delta = (1e-5 if args.delta is None else args.delta) if kind == "gaussian" else None
        closed = mechanism_gdp.mu_and_regret_closed_form(kind, eps, delta)
        out = {"mechanism": args.mechanism or "gaussian", "epsilon": float(eps), **({} if delta is None else {"delta": delta}),
               **closed.to_dict(), "alpha_floor": 0.0}
    out = {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in out.items()}
    out["seconds"] = time.perf_counter() - t0
    out["warnings"] = warnings
    return _emit(out, args)


def _length(args) -> None:
    """Refuse a subsampled run without its length: a forgotten --steps must not read as one step."""
    if args.steps is None and getattr(args, "epochs", None) is None and 0.0 < (args.sampling_rate or 1.0) < 1.0:
        raise ValueError("give --steps with --sampling-rate: how many steps the run trained (one subsampled step is "
                         "rarely what is meant; write --steps 1 if it is)")


def _dpsgd(args, noise_multiplier: float, length_required: bool = True):
    """DP-SGD from the flags: --sampling-rate and --steps (default 1 each), or a training script's --batch-size,
    --dataset-size and --epochs, which :func:`fdp.dpsgd` converts (and refuses mixed with the others).  A run given
    by its batches needs its length (a forgotten --epochs must not read as one step)."""
    by_batch = args.batch_size is not None or args.dataset_size is not None
    if by_batch and args.sampling_rate is None and (args.batch_size is None or args.dataset_size is None):
        raise ValueError(f"give --batch-size and --dataset-size together (the sampling rate is their ratio), or --sampling-rate; "
                         f"got only --{'batch-size' if args.dataset_size is None else 'dataset-size'}")
    if by_batch and length_required and args.epochs is None and args.steps is None:
        raise ValueError("give --epochs (or --steps) with --batch-size and --dataset-size: how long the run trained")
    if length_required:
        _length(args)
    return dpsgd(noise_multiplier, args.sampling_rate if args.sampling_rate is not None or by_batch else 1.0,
                 args.steps if args.steps is not None or args.epochs is not None else 1,
                 batch_size=args.batch_size, dataset_size=args.dataset_size, epochs=args.epochs)


# --- report ----------------------------------------------------------------------------------


def _report(args) -> int:
    kind = NOISE[args.mechanism or "gaussian"]
    if kind == "randomized-response":
        _forbid(args, ("noise_multiplier", "sampling_rate", "steps", "batch_size", "dataset_size", "epochs",
                       "discretization", "rtm_dimension"), "to --mechanism randomized-response")
        eps = _require(args, "epsilon", "with --mechanism randomized-response")
        mechanism = RandomizedResponse(eps)
    else:
        _forbid(args, ("epsilon",), f"to --mechanism {kind} (it is randomized response's parameter)")
        if kind == "laplace":
            _forbid(args, ("rtm_dimension", "batch_size", "dataset_size", "epochs"), "to --mechanism laplace (one-dimensional, "
                    "no subsampling)")
        s = _require(args, "noise_multiplier", f"with --mechanism {kind}")
        mechanism = _dpsgd(args, s) if kind == "gaussian" else Mechanism(kind, s, 1.0 if args.sampling_rate is None else
                                                                          args.sampling_rate, 1 if args.steps is None else args.steps)
    delta = 1e-5 if args.delta is None else args.delta
    kappa = risk.REPORT_KAPPA if args.kappa is None else args.kappa
    fpr = risk.REPORT_FPR if args.fpr is None else args.fpr
    prior = risk.REPORT_PRIOR if args.prior is None else args.prior
    dimension = 1 if args.rtm_dimension is None else args.rtm_dimension
    if args.figure is not None:  # before the report is computed
        presentation.figure_format(args.figure)
    # the noise search first: a target no noise can meet is refused before the report's work
    found = None if args.noise_for is None else _noise_for(args, mechanism, _noise_target(args, kind, delta, dimension))
    spacing = {} if args.discretization is None else {"rero_discretization": args.discretization,
                                                       "rtm_discretization": args.discretization}
    report = risk.report(mechanism, delta=delta, kappa=kappa, fpr=fpr, prior=prior,
                         discretization=args.discretization, rtm_dimension=dimension, **spacing)
    if args.figure is not None:
        presentation.save_figure(report, args.figure)
    if args.dataset_size is not None and delta >= 1.0 / args.dataset_size:  # the one choice here a user should revisit
        report = replace(report, warnings=report.warnings + (
            f"--delta {delta!r} is not below 1 / --dataset-size = {1.0 / args.dataset_size!r}: an (epsilon, delta) "
            "guarantee with so large a delta allows a mechanism that publishes a few records whole; pass a smaller --delta",))
    out, text = report.to_dict(), presentation.markdown(report)
    if found is not None:
        out["noise_for"], text = found.to_dict(), text + "\n" + presentation.noise_section(found, mechanism.noise_multiplier)
    for w in out["warnings"]:
        print(f"python -m fdp report: warning: {w}", file=sys.stderr)
    print(json.dumps(out, allow_nan=False) if args.json else text, end="\n" if args.json else "")
    return 0


def _noise_target(args, kind: str, delta: float, dimension: int):
    """The target of report --noise-for TARGET VALUE [LEVEL] (:func:`fdp.targets.named`), checked before any work."""
    from . import targets

    if kind != "gaussian":
        raise ValueError(f"--noise-for needs DP-SGD (--mechanism gaussian), not --mechanism {kind}")
    name, *numbers = args.noise_for
    if not 2 <= len(args.noise_for) <= 3:
        raise ValueError(f"--noise-for takes a target, its value and (for tpr, rero and rtm_tpr) a level, such as "
                         f"'epsilon 3' or 'tpr 0.05 1e-3'; got {' '.join(args.noise_for)!r}")
    try:
        value, *level = (float(x) for x in numbers)
    except ValueError:
        raise ValueError(f"--noise-for: the value and level must be numbers, got {' '.join(numbers)!r}") from None
    leveled = {"tpr": "FPR", "rero": "prior", "rtm_tpr": "FPR"}
    if (name in leveled) != bool(level):
        raise ValueError(f"--noise-for {name} needs its {leveled[name]} after the value, such as '{name} 0.05 1e-3'" if name in leveled
                         else f"--noise-for {name} takes its value alone, such as '{name} 1', got {' '.join(args.noise_for)!r}")
    if level and not 0.0 < level[0] < 1.0:  # (named() would call it --fpr or --kappa: report's own flags)
        raise ValueError(f"--noise-for {name}: its {leveled[name]} must lie in (0, 1), got {level[0]!r}")
    if name == "rtm_tpr" and (isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1):
        raise ValueError(f"--rtm-dimension must be an integer >= 1, got {dimension!r}")
    return targets.named(name, value, level[0] if level else None, delta=delta, dimension=dimension, where="--noise-for")


def _noise_for(args, mechanism, aim):
    """The noise search of :func:`fdp.calibrate.solve` at the run's rate and steps; its warnings on stderr."""
    from .calibrate import solve

    found = solve(aim, mechanism.sampling_rate, steps=mechanism.steps, discretization=args.discretization)
    for w in found.warnings:
        print(f"python -m fdp report: warning: --noise-for: {w}", file=sys.stderr)
    return found


# --- calibrate -------------------------------------------------------------------------------


def _calibrate(args) -> int:
    from . import calibrate, targets

    names = (*TARGET_FLAGS, "tpr_at_fpr", "rtm_tpr_at_fpr")
    chosen = [d for d in names if getattr(args, d) is not None]
    if len(chosen) != 1:
        raise ValueError(f"give exactly one target of {', '.join(_flag(t) for t in names)}"
                         + (f" (got {', '.join(_flag(t) for t in chosen)})" if chosen else ""))
    target = chosen[0]
    if target != "epsilon":
        _forbid(args, ("delta",), f"to {_flag(target)} (it is the delta of --epsilon)")
    if target != "rero":
        _forbid(args, ("kappa",), f"to {_flag(target)} (it is the prior of --rero)")
    if target != "rtm_tpr_at_fpr":
        _forbid(args, ("rtm_dimension",), f"to {_flag(target)} (it is the dimension of --rtm-tpr-at-fpr)")
    if (args.steps is None and args.epochs is None) == (args.noise_multiplier is None):
        raise ValueError("give --steps or --epochs (to find the noise multiplier) or --noise-multiplier (to find the "
                         "steps), not both and not neither")
    if args.noise_multiplier is not None:
        _forbid(args, ("rtol",), "with --noise-multiplier (the number of steps is found exactly)")
    run = _dpsgd(args, 1.0, length_required=False)  # the rate and the steps the flags give (noise searched, or given)
    value, *fpr = np.atleast_1d(getattr(args, target)).tolist()  # TPR FPR, or one value
    aim = targets.named(target.removesuffix("_at_fpr"), value, fpr[0] if fpr else args.kappa,
                        delta=1e-5 if args.delta is None else args.delta,
                        dimension=1 if args.rtm_dimension is None else args.rtm_dimension)
    steps = None if args.noise_multiplier is not None else run.steps
    res = calibrate.solve(aim, run.sampling_rate, steps=steps, noise_multiplier=args.noise_multiplier,
                          discretization=args.discretization, progress=steps is not None,
                          **({"rtol": 1e-3 if args.rtol is None else args.rtol} if steps is not None else {}))
    return _emit(res.to_dict(), args)


#: (library name, flag dest, spelling) of the parameters that a flag sets under another name, by command; the
#: alias holds when the flag is given (always where the dest is None).
ALIASES = {
    "rtm": [("noise_multiplier", "mu", "1/--mu")],
    "report": [("rero_discretization", None, "--discretization"), ("rtm_discretization", None, "--discretization")],
    "calibrate": [("tpr", "tpr_at_fpr", "--tpr-at-fpr (its TPR)"), ("fpr", "tpr_at_fpr", "--tpr-at-fpr (its FPR)"),
                  ("rtm_tpr", "rtm_tpr_at_fpr", "--rtm-tpr-at-fpr (its TPR)"), ("fpr", "rtm_tpr_at_fpr", "--rtm-tpr-at-fpr (its FPR)"),
                  ("dimension", "rtm_dimension", "--rtm-dimension"), ("kappa", "rero", "--kappa")],
}
#: calibrate's targets: a target's flag names a different quantity from the library's parameter of that name (an
#: internal mu of an epsilon calibration is not the --mu target).
TARGET_FLAGS = ("epsilon", "mu", "advantage", "rero")
#: Flags named in an error only when given: each is one of two ways to say something (--mu or --noise-multiplier; the
#: searched one of calibrate's --steps and --noise-multiplier), or a target, so the library's parameter of that name
#: in a run without the flag is another quantity.
ONLY_IF_GIVEN = {"rero": ("mu", "noise_multiplier"), "gdp": ("epsilon", "noise_multiplier"),
                 "report": ("epsilon", "noise_multiplier"), "calibrate": (*TARGET_FLAGS, "steps", "noise_multiplier")}


def _spelling(args) -> dict[str, str]:
    """How this command spells the library's parameters in an error message: by the command's flags (defaults
    included, those of :data:`ONLY_IF_GIVEN` when given) and :data:`ALIASES`."""
    given, only = getattr(args, "_given", set()), ONLY_IF_GIVEN.get(args.command, ())
    names = {dest: _flag(dest) for dest in vars(args) if dest not in ("command", "json", "_given")
             and (dest not in only or dest in given)}
    return names | {name: flag for name, dest, flag in ALIASES.get(args.command, []) if dest is None or dest in given}


def main(argv=None) -> int:
    parser = _build_parser()
    given = sys.argv[1:] if argv is None else list(argv)
    if given[:1] == ["verify"]:  # the book's command since the book's machinery left the library
        print("python -m fdp verify: error: verify is the book's command now: python -m fdp_book verify (make verify)",
              file=sys.stderr)
        return 2
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.commands[args.command].error(_unknown(parser.commands[args.command], unknown))
    try:
        commands = {"rero": _rero, "rtm": _rtm, "gdp": _gdp, "report": _report, "calibrate": _calibrate}
        with warnings.catch_warnings():  # each command prints its results' warnings once, in its own words
            warnings.simplefilter("ignore", FDPWarning)
            # numpy's floating-point warnings (an overflow in a branch that np.where discards) are not the user's to
            # act on: every printed number is checked finite (_emit), and a value that cannot be computed is an error
            warnings.simplefilter("ignore", RuntimeWarning)
            with spelled_as(_spelling(args)):
                return commands[args.command](args)
    except (ValueError, RuntimeError) as exc:  # bad input, or a refused computation
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OverflowError as exc:  # an input so extreme that a number left double precision before a guard saw it
        print(f"{parser.prog} {args.command}: error: a number overflowed double precision ({exc}): an input lies far "
              "outside the range this command computes (a spacing below 1e-300, a noise multiplier near 1e308, ...)",
              file=sys.stderr)
        return 2
