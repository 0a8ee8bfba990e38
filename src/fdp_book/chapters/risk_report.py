"""Tables and run-dependent prose of the chapter that reads DP-SGD runs four ways (:func:`fdp.risk.report`) and
calibrates the noise to a risk target (:func:`fdp.calibrate.solve`).

A run is ``(label, noise, rate, steps)``; ``reports`` holds one :class:`fdp.risk.Report` per run, at the levels
``kappa``, ``fpr`` and ``prior`` (arrays).  A target is ``(target, value, level)``; ``calibrations`` holds one
:class:`fdp.calibrate.Calibration` per target.
"""

from __future__ import annotations

import numpy as np

from fdp import presentation, risk
from fdp.accounting import pld
from fdp.formatting import lower, times_ten, upper

from .. import plotting, results
from . import see

#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 1


def _up(value, digits=4):  # an upper bound in the table: rounded up, trailing zeros kept (one precision per row)
    return upper(value, digits, keep_zeros=True)


def _low(value, digits=4):
    return lower(value, digits, keep_zeros=True)


def _above_guessing(success: float, guess: float) -> str:
    """A Bayes success bound; one within 1e-3 of guessing as guessing plus the excess, which 4 digits would hide or
    round up into a seeming gain ("0.9901" for 0.99 + 1e-6)."""
    excess = success - guess
    return _up(success) if excess >= 1e-3 else f"{guess:g} + {upper(max(excess, 0.0), 2)}"


def _relative_width(low, up) -> str:
    return times_ten(float(np.max((up - low) / up)), 2)


def report_rows(runs, reports, kappa, fpr, prior) -> tuple[list, list]:
    """(header, rows) of the reports side by side, one column per run ``(label, noise, rate, steps, delta)``, one row
    per reading."""
    rows = [["noise, rate, steps"] + [f"{n:g}, {q:.5g}, {t}" for _, n, q, t, _ in runs],
            ["δ"] + [f"{d:g}" for *_, d in runs],
            ["ε at that δ, PLD"] + [_up(r.epsilon_pld) if r.epsilon_pld is not None else "inf" for r in reports],
            ["ε at that δ, RDP"] + [_up(r.epsilon_rdp) if r.epsilon_rdp is not None else "inf" for r in reports],
            ["μ* (α, β ≥ 1e-10)"] + [_up(r.gdp.mu, 5) for r in reports],
            ["μ* lies in (certified)"] + [f"[{_low(r.gdp.mu_lower, 5)}, {_up(r.gdp.mu, 5)}]" for r in reports],
            ["regret Δ(C, f_μ*)"] + [times_ten(r.gdp.regret, 3) + (" (above 0.01, the GDP paper's bar for a good fit)" if r.gdp.regret > 1e-2 else "")
                                     for r in reports]]
    rows += [[f"μ* (α, β ≥ {floor:g})"] + [_up(r.mu_at_floor[floor], 5) for r in reports] for floor in risk.REPORT_FLOORS]
    rows += [[f"TPR at FPR {a:g}, at most"] + [_up(r.tpr[i]) for r in reports] for i, a in enumerate(fpr)]
    rows.append(["advantage, at most"] + [_up(r.advantage) for r in reports])
    rows += [[f"Bayes success at prior {p:g}, at most (guessing alone: {max(p, 1 - p):g})"]
             + [_above_guessing(r.bayes_success[i], max(p, 1 - p)) for r in reports] for i, p in enumerate(prior)]
    rows += [[f"ReRo γ at κ = {k:g}, at most"] + [_up(r.rero.upper[i]) for r in reports] for i, k in enumerate(kappa)]
    rows += [[f"RTM TPR at FPR {a:g}, at most"] + [_up(r.rtm.tpr[i]) for r in reports] for i, a in enumerate(fpr)]
    rows += [[f"RTM γ at κ = {k:g}, at most"] + [_up(r.rtm.gamma[i]) for r in reports] for i, k in enumerate(kappa)]
    rows.append(["ReRo bracket, relative width"] + [_relative_width(r.rero.lower, r.rero.upper) for r in reports])
    rows.append(["RTM bracket, relative width"] + [_relative_width(np.r_[r.rtm.tpr_lower, r.rtm.gamma_lower],
                                                                   np.r_[r.rtm.tpr, r.rtm.gamma]) for r in reports])
    rows.append(["time to compute the report (s)"] + [f"{r.seconds:.1f}" for r in reports])
    return ["reading"] + [label for label, *_ in runs], rows


def glance_reading(runs, reports, kappa, fpr) -> str:
    """The glance box's headline: the first run read four ways, as in the table's first column (upper bounds rounded
    up, the regret to 3 digits), with the smallest FPR and prior."""
    (label, *_, delta), r = runs[0], reports[0]
    i, k = _lowest_fpr(fpr), int(np.argmin(kappa))
    eps = _up(r.epsilon_pld) if r.epsilon_pld is not None else "inf"
    tpr, gamma = _up(r.rtm.tpr[i]), _up(r.rtm.gamma[k])
    rtm = f"both fall to {tpr}" if tpr == gamma else f"these two bounds fall to {tpr} and {gamma}"
    delta = f"{delta:g}".replace("-", "\u2011")  # (non-breaking: "1e-" / "05" and "δ =" / "1e-05" split across lines)
    return (f"the first run, {label}, satisfies (ε\u00a0=\u00a0{eps}, δ\u00a0=\u00a0{delta})-DP and μ\u00a0=\u00a0{_up(r.gdp.mu, 5)}-GDP at regret "
            f"{times_ten(r.gdp.regret, 3)}; no membership test reaches a TPR above {_up(r.tpr[i])} at FPR {fpr[i]:g}, and no "
            f"reconstruction succeeds with probability above {_up(r.rero.upper[k])} at prior κ = {kappa[k]:g}. In the relaxed "
            f"threat model (d = {r.rtm.dimension}) {rtm}. "
            "The table *Each run read four ways* below reads every run.")


#: The defaults of ``python -m fdp report`` (fdp.cli): a flag is written only where the page's value differs
CLI_DEFAULTS = {"delta": 1e-5, "kappa": risk.REPORT_KAPPA, "fpr": risk.REPORT_FPR, "prior": risk.REPORT_PRIOR, "rtm-dimension": 1}


#: The flags of ``python -m fdp calibrate`` that set each target (fdp.cli), as its help writes them (the flag first)
CALIBRATE_FLAGS = {"epsilon": "--epsilon", "mu": "--mu", "advantage": "--advantage", "tpr": "--tpr-at-fpr TPR FPR",
                   "rero": "--rero GAMMA --kappa K", "rtm_tpr": "--rtm-tpr-at-fpr TPR FPR"}


def cli_text(run, kappa, fpr, prior, dimension: int, target, discretization: float) -> dict[str, str]:
    """The command lines (Markdown code) that print the first run's report (``cli_report``) and calibrate its noise to
    the page's first calibration target ``(name, value, level)`` at the page's spacing (``cli_calibrate``, followed by
    the other targets' flags): this run's values, exact (``repr``), each flag of the report that the page sets apart
    from the CLI's defaults; and the relative width the CLI's ReRo bracket aims at (``cli_rero_rtol``)."""
    _, noise, rate, steps, delta = run
    delta, dimension = float(delta), int(dimension)  # (a numpy scalar's repr is not a number the CLI reads)
    values = {"delta": delta, "kappa": list(kappa), "fpr": list(fpr), "prior": list(prior), "rtm-dimension": dimension}
    flags = [f"--{name} " + (" ".join(repr(float(v)) for v in value) if isinstance(value, list) else repr(value))
             for name, value in values.items() if not results.same(value, CLI_DEFAULTS[name])]
    run_flags = f"--sampling-rate {float(rate)!r} --steps {steps}"
    name = target[0]
    aim = target_flags(target, delta, dimension)
    others = ", ".join(f"`{flags}`" for key, flags in CALIBRATE_FLAGS.items() if key != name)
    return {"cli_report": f"`python -m fdp report --noise-multiplier {float(noise)!r} {run_flags}{''.join(' ' + f for f in flags)}`",
            "cli_calibrate": f"`python -m fdp calibrate {run_flags} {aim} --discretization {float(discretization)!r}` (or {others})",
            "cli_rero_rtol": times_ten(risk.RERO_RTOL, 1).replace(" ", "\u00a0")}  # ("1 ×" / "10⁻⁴" split across lines)


def target_flags(target, delta: float, dimension: int = 1) -> str:
    """The flags of ``python -m fdp calibrate`` that set a target ``(name, value, level)``, with the --delta of an
    epsilon target and the --rtm-dimension of an RTM one where they differ from the CLI's defaults."""
    name, value, level = target
    aim = f"{CALIBRATE_FLAGS[name].split()[0]} {float(value)!r}"
    if name == "rero":
        aim += f" --kappa {float(level)!r}"
    elif level is not None:
        aim += f" {float(level)!r}"
    if name == "epsilon" and not results.same(float(delta), CLI_DEFAULTS["delta"]):
        aim += f" --delta {float(delta)!r}"
    if name == "rtm_tpr" and int(dimension) != 1:
        aim += f" --rtm-dimension {int(dimension)}"
    return aim


def paper_run(runs) -> int | None:
    """The index of De et al.'s eps = 8 run (``run0`` of data/paper/risk_report.yaml: noise, rate, steps) among
    ``runs`` (``(label, noise, rate, steps, delta)``), None if it is not one of them: the page records that run's
    numbers, wherever it stands, and no other run's under its name."""
    run0 = results.paper_setting("risk_report")["run0"]
    return next((i for i, run in enumerate(runs) if results.same(list(run[1:4]), run0)), None)


def checked_text(mu_status: str, eps_status: str, paper: dict) -> str:
    """The section "Numbers checked against the papers": what De et al.'s eps = 8 run (the ``setting`` of
    data/paper/risk_report.yaml) has printed for it (``paper``, its records), and whether this run compares it (only
    where one of its runs is that run and, for eps, at the paper's delta; ``"not compared"`` where none is)."""
    setting = results.paper_setting("risk_report")
    noise, rate, steps = setting["run0"]
    paper_mu, paper_eps = (f"{paper[k]['paper']:g}" for k in ("de_eps8/mu", "de_eps8/epsilon_rdp"))
    out = [f"The ε ≈ 8 CIFAR-10 run of {{cite:t}}`de2022unlocking` (noise {noise:g}, sampling rate {rate:g}, {steps:,} steps) has two "
           "numbers printed for it: "
           f"$\\varepsilon$ = {paper_eps} at δ\u00a0=\u00a0{setting['delta']:.1g}, which De et al. computed with the RDP accountant "
           f"(Gomez et al., App. Table 4; the tight accountant gives a smaller $\\varepsilon$), and $\\mu^*$ = {paper_mu} (Gomez et "
           "al., Sec. 5). The GDP chapter counts $\\mu^*$ for the paper; here it is a check of our own, since this report reads it "
           "from the same curve."]
    if eps_status != "not compared" and mu_status != "not compared":
        out.append("This page reads that run, so both are compared: the table *Each run read four ways* shows our "
                   "readings, and the {doc}`reproduction report <report>` lists them next to the paper's.")
    elif mu_status != "not compared":
        out.append("This page reads that run, but at another $\\delta$, so only $\\mu^*$ is "
                   "compared (the {doc}`reproduction report <report>` lists the comparison).")
    else:
        out.append("That run is not among this page's runs, so neither is compared here; the book's own run of this page "
                   "compares both (the {doc}`reproduction report <report>`).")
    return " ".join(out)


def report_figure(report):
    """The report's four panels (:func:`fdp.presentation.figure`) at the book's column width."""
    fig, axes = plotting.column_figure(nrows=2, ncols=2, row_height=3.0)
    presentation.figure(report, axes=axes)
    return fig


def warnings_text(runs, reports) -> str:
    """The reports' warnings, run by run, as a Markdown list ("" if none); the library's plain-text mu* is written as
    on the page, its asterisks escaped so that Markdown reads no emphasis."""
    notes = [f"* **{label}**: " + w.replace("mu*", "μ*").replace("*", r"\*") for (label, *_), r in zip(runs, reports)
             for w in r.warnings]
    return "The report's warnings:\n\n" + "\n".join(notes) if notes else ""


def _lowest_fpr(fpr) -> int:
    return min(range(len(fpr)), key=lambda i: (fpr[i] <= 0, fpr[i]))  # the smallest positive FPR


def see_report(runs, reports, kappa, fpr, dimension: int) -> str:
    """The paragraph under the table: RDP against PLD, the delta of each paper, how far mu* moves with the floor,
    ReRo against membership at equal levels, and how far the RTM adversary falls below the DP bound."""
    rdp_over = max((r.epsilon_rdp - r.epsilon_pld) / r.epsilon_pld for r in reports
                   if r.epsilon_pld is not None and r.epsilon_rdp is not None)
    floor = max(risk.REPORT_FLOORS)
    floor_drop = max((r.gdp.mu - r.mu_at_floor[floor]) / r.gdp.mu for r in reports)
    out = [f"The RDP accountant overstates ε by up to {100 * rdp_over:.0f} % against the tight PLD accountant (the report's "
           f"PLD lattice is the coarsest whose ε is within {100 * pld.EPSILON_RTOL:g} % of a converged one, so a chapter "
           "that uses a finer lattice, like the RTM chapter, can show an ε up to that much smaller; both are upper bounds).",
           "Each run is read at its own δ (the table's row δ; the papers state 1e-5 for the CIFAR-10 runs, 1.8e-6 for SNLI "
           "and 8e-7 for ImageNet). The RTM "
           "chapter's Figure 7 also recalibrates the noise multiplier to each ε with the RDP accountant, so at ε = 1 its "
           "noise is not the printed one and its ReRo bounds differ from this table's in the third digit.",
           f"$\\mu^*$ falls by up to {100 * floor_drop:.2g} % when it only has to hold for $\\alpha, \\beta \\ge {floor:g}$: "
           "for such a run the Gaussian summary is set by the far tails of the curve."]
    common = [float(k) for k in kappa if k in fpr]
    if common:
        same = max(abs(r.rero.upper[list(kappa).index(k)] - r.tpr[list(fpr).index(k)]) / r.rero.upper[list(kappa).index(k)]
                   for k in common for r in reports)
        out.append(f"Where a prior equals a false-positive rate, the ReRo bound and the membership TPR bound agree to "
                   f"within {times_ten(float(upper(same, 1)), 1)} (relative): both are $1 - f$ at that level, read from the add curve and from the "
                   "symmetrised one, which coincide near $\\alpha = 0$ here.")
    i = _lowest_fpr(fpr)
    share = max(r.rtm.tpr[i] / r.tpr[i] for r in reports)
    out.append(f"At FPR {fpr[i]:g} the RTM adversary ($d$ = {dimension}) reaches at most {upper(100 * share, 3)} % of the DP "
               "bound on the TPR in every run"
               + (f", and at most {upper(max(r.rtm.tpr[i] / fpr[i] for r in reports), 2)} times the FPR itself (the TPR of "
                  "guessing)." if fpr[i] > 0 else ".")
               + " These RTM readings take the releases one by one (reading (a) of {doc}`rtm_dpsgd`): they do not cover an "
                 "adversary who combines the releases, which can need several times more noise.")
    return see(out)


def rtm_factor(runs, reports, fpr) -> str:
    """The summary's phrase: how many times below the DP bound the RTM bound on the TPR lies, at the smallest FPR."""
    i = _lowest_fpr(fpr)
    factors = [r.tpr[i] / r.rtm.tpr[i] for r in reports]
    weakest, strongest = int(np.argmin(factors)), int(np.argmax(factors))
    if weakest == strongest:
        return f"{factors[weakest]:.1f} times ({runs[weakest][0]})"
    return f"from {factors[weakest]:.1f} times ({runs[weakest][0]}) to {factors[strongest]:.1f} times ({runs[strongest][0]})"


def calibration_rows(names, calibrations) -> tuple[list, list]:
    """(header, rows): per target (``names``, :meth:`fdp.targets.Target.describe` in symbols), the noise, the certified smallest noise and the
    risk reached."""
    rows = []
    for name, c in zip(names, calibrations):
        reached = _up(c.achieved, 5) if c.achieved_lower is None else f"[{_low(c.achieved_lower, 5)}, {_up(c.achieved, 5)}]"
        exact = "-" if c.noise_lower is None else f"({_low(c.noise_lower, 5)}, {_up(c.noise_multiplier, 5)}]"
        rows.append([name, _up(c.noise_multiplier, 5), exact, reached, f"{c.seconds:.1f}"])
    return ["target", "noise multiplier", "smallest noise that meets it", "risk reached (certified)", "seconds"], rows


def steps_text(budget, first: str, run_noise: float, run_steps: int) -> str:
    """The dual question for the first target: how many steps the run's own noise allows (``budget``: the result of
    :func:`fdp.calibrate.solve` given the noise, or the ValueError it raised)."""
    if isinstance(budget, ValueError):  # a target the noise cannot meet even in one step, or meets beyond max_steps
        return f"At the run's own noise {run_noise:g} the steps search for the first target fails: {budget}."
    return (f"Turned around, at the run's own noise {run_noise:g} the same search over the number of steps "
            "(`fdp.calibrate.solve` with `noise_multiplier=` instead of `steps=`; `--noise-multiplier` instead of `--steps` on "
            "the command line) finds that "
            f"{budget.steps} steps keep the first target ({first}); the run took {run_steps}.")


def see_calibration(targets, names, calibrations, run_noise: float, steps: str) -> str:
    """The paragraph under the calibration table: the range of noises, how tight they are, the same TPR target in both
    threat models (when the targets hold it) and the steps search ``steps``."""
    widest = max((c.achieved - c.achieved_lower) / c.achieved for c in calibrations if c.achieved_lower is not None)
    noises = [c.noise_multiplier for c in calibrations]
    loudest, quietest = int(np.argmax(noises)), int(np.argmin(noises))
    out = [f"At the first run's rate and steps the targets ask for noise multipliers from {upper(noises[quietest])} "
           f"({names[quietest]}) to {upper(noises[loudest])} ({names[loudest]}); the run itself used {run_noise:g}. The "
           f"certified intervals of the risk reached are at most {100 * widest:.2g} % wide (relative), so each noise is close "
           "to the smallest that meets its target, and none is optimistic."]
    pairs = [(c, d) for (t, v, a), c in zip(targets, calibrations) if t == "tpr"
             for (t2, v2, a2), d in zip(targets, calibrations) if t2 == "rtm_tpr" and (v2, a2) == (v, a)]
    if pairs:
        dp, relaxed = pairs[0]
        out.append(f"Against the RTM adversary the same TPR target needs a noise multiplier of {upper(relaxed.noise_multiplier)}, "
                   f"{dp.noise_multiplier / relaxed.noise_multiplier:.1f} times less than in the DP threat model, against "
                   "an adversary who reads the releases one by one only (see above).")
    return see(out + [steps])
