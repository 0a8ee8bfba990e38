"""A risk report for people: its Markdown and its figure (:class:`fdp.risk.Report` holds the numbers, this module
how they read).

* :func:`markdown` -- one table per reading, every bound rounded outward (:mod:`fdp.formatting`); the command line's
  ``report`` prints it.
* :func:`figure` -- four panels: the certified curve with its mu*-GDP fit and the (eps, delta) curve, the privacy
  profile, the membership-inference ROC bound and the ReRo bracket.
* :func:`noise_section` -- the noise a chosen target needs, as a section after the report (``report --noise-for``).
* :func:`figure_format` and :func:`save_figure` -- the figure written to a .png or .svg file (the command line's
  ``report --figure``).
"""

from __future__ import annotations

import numpy as np

from .accounting.privacy_loss import Mechanism, RandomizedResponse
from .curves import conversions, gdp, tradeoff
from .formatting import ULPS_DOWN, ULPS_UP, lower, upper
from .risk import PURE_DP_METHOD, Report
from .validation import EPS_MAX, optional_import, spelled

__all__ = ["markdown", "plain_words", "noise_section", "figure", "figure_format", "save_figure"]


def markdown(report: Report) -> str:
    """The report as Markdown: one table per reading, every bound rounded outward (:mod:`fdp.formatting`).

    Parameters
    ----------
    report : fdp.risk.Report

    Returns
    -------
    str
        Markdown ending in a newline; the report's warnings last.
    """
    g, r = report.gdp, report.rtm
    rr = isinstance(report.mechanism, RandomizedResponse)
    if rr:
        title = str(report.mechanism)
    else:
        noise, sigma, rate, steps = report.mechanism.args
        title = (f"DP-SGD: noise multiplier {sigma:g}, sampling rate {rate:g}, {steps:,} step{'s' if steps != 1 else ''}" if noise == "gaussian"
                 else f"Laplace noise: scale {sigma:g} per unit of sensitivity, {steps:,} composition{'s' if steps != 1 else ''}")

    def eps(v):
        return "infinite" if v is None else upper(v, 5)

    floors = ", ".join(f"{upper(v, 5)} (alpha, beta >= {k:g})" for k, v in report.mu_at_floor.items())
    def at_least(v, digits=4):
        return "-" if v is None else lower(v, digits)

    accountants = ([f"| exact | {eps(report.epsilon_pld)} | - | {report.delta:g} |"] if rr else
                   [f"| {'eps-DP bound (steps / b)' if report.gdp.method == PURE_DP_METHOD else _pld_row(report)} | "
                    f"{eps(report.epsilon_pld)} | {at_least(report.epsilon_pld_lower, 5)} | {report.delta:g} |",
                    *[f"| {name} | {eps(value)} | - | {report.delta:g} |" for name, value in _rdp_rows(report)]])
    tpr_lower = [None] * len(report.fpr) if report.tpr_lower is None else report.tpr_lower
    rtm_lines = [] if r is None else [
        f"## Relaxed threat model (adversary without the target record, d = {r.dimension})", "",
        "The adversary knows the data set but not the target record and tests the magnitude of each release "
        "(Kaissis et al. 2023, RTM; tensor reading).", "",
        "| FPR | RTM TPR bound 1 - J(FPR) |", "| --- | --- |",
        *[f"| {_level(a)} | [{lower(lo)}, {upper(up)}] |" for a, lo, up in zip(report.fpr, r.tpr_lower, r.tpr)], "",
        "| prior kappa | RTM gamma |", "| --- | --- |",
        *[f"| {_level(k)} | [{lower(lo)}, {upper(up)}] |" for k, lo, up in zip(report.kappa, r.gamma_lower, r.gamma)],
        "", f"RTM advantage at most {upper(r.advantage)}. Each interval contains the exact value; its width is the "
        f"error of the RTM lattices (spacing {r.discretization:.3g}, the optimistic one ten times finer), and a smaller "
        f"{spelled('rtm_discretization')} narrows it.", ""]
    spacing = "exact curve" if report.discretization is None else f"loss lattice spacing {report.discretization:.3g}"
    lines = [
        f"# Privacy risk of {title}", "",
        *plain_words(report), "",
        "## (epsilon, delta)", "",
        "| accountant | epsilon at most | exact epsilon at least | delta |", "| --- | --- | --- | --- |",
        *accountants, "",
        "## Gaussian DP", "",
        f"mu* = **{upper(g.mu, 5)}** on alpha, beta >= {g.alpha_floor:g} ({g.method}"
        + ("" if g.mu_lower is None or g.mu_lower >= g.mu else
           f"; the exact value lies in [{lower(g.mu_lower, 5)}, {upper(g.mu, 5)}]")
        + f"); regret {g.regret:.3g}. "
        f"At other floors: {floors}.", "",
        "## Membership inference", "",
        "| FPR | TPR at most | exact TPR at least |", "| --- | --- | --- |",
        *[f"| {_level(a)} | {upper(t)} | {at_least(lo)} |" for a, t, lo in zip(report.fpr, report.tpr, tpr_lower)], "",
        f"Advantage TPR - FPR at most {upper(report.advantage)}. Bayes success (guessing membership right) at most "
        + ", ".join(f"{upper(b)} at prior {_level(p)}" for p, b in zip(report.prior, report.bayes_success))
        + "; always guessing the likelier answer, with no attack, already succeeds with the larger of the prior and one "
        "minus it.", "",
        "## Reconstruction robustness (ReRo)", "",
        "| prior kappa | gamma (certified) |", "| --- | --- |",
        *[f"| {_level(k)} | [{lower(lo, 6)}, {upper(up, 6)}] |" for k, lo, up in zip(report.kappa, report.rero.lower,
                                                                               report.rero.upper)],
        "",
        *rtm_lines,
        f"fdp {report.version}, {spacing}, {report.seconds:.2f} s.",
    ]
    if report.warnings:
        lines += ["", "**Warnings.**", *[f"- {w}" for w in report.warnings]]
    return "\n".join(lines) + "\n"


def _dpsgd(report: Report) -> bool:
    """Whether the report's mechanism is DP-SGD (Gaussian noise), the one the training libraries account."""
    return isinstance(report.mechanism, Mechanism) and report.mechanism.noise == "gaussian"


def _pld_row(report: Report) -> str:
    """The tight accountant's row; for DP-SGD, Opacus's default accountant (PRV, Gopi et al. 2021) estimates it."""
    return "PLD (tight; what Opacus's default PRV accountant estimates)" if _dpsgd(report) else "PLD (tight)"


def _rdp_rows(report: Report) -> list[tuple[str, float | None]]:
    """The RDP accountant's rows: dp_accounting's orders (TF Privacy) and Opacus's, one row where they agree (and
    one plain row for Laplace noise, which neither training library accounts)."""
    tf, opacus = report.epsilon_rdp, report.epsilon_rdp_opacus
    if not _dpsgd(report):
        return [("RDP", tf)]
    if (tf is None and opacus is None) or (tf is not None and opacus is not None and upper(tf, 5) == upper(opacus, 5)):
        return [("RDP (TF Privacy without microbatching; Opacus with accountant='rdp')", tf)]
    return [("RDP, dp_accounting's orders (TF Privacy without microbatching)", tf),
            ("RDP, Opacus's orders (accountant='rdp')", opacus)]


def _percent(p: float, side: str = "upper") -> str:
    """A probability as a percentage, rounded outward to 3 significant digits (never above 100 %)."""
    return (upper(min(100.0 * p * ULPS_UP, 100.0), 3) if side == "upper" else lower(100.0 * p * ULPS_DOWN, 3)) + " %"


def _percents(values, levels: bool = False) -> str:
    """``0.1 %, 1 % or 10 %``: probabilities in words, upper bounds rounded up (``levels``: the user's levels as given)."""
    words = [f"{100.0 * v:.12g} %" if levels else _percent(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _levels(values) -> str:
    return _percents(values, levels=True)


def _candidates(kappa) -> str:
    """``one of 1,000, 100 or 10 equally likely candidates`` where every ``1 / kappa`` is a whole number >= 2, else ``""``."""
    n = [1.0 / k for k in kappa]
    if not all(2 <= v <= 1e12 and abs(v - round(v)) < 1e-9 * v for v in n):  # (1 / 1e-300 is no count to print)
        return ""
    words = [f"{round(v):,}" for v in n]
    return "one of " + (words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]) + " equally likely candidates"


def plain_words(report: Report) -> list[str]:
    """The report's first section: what an attacker can and cannot do, in words, with the trivial baselines named.

    Parameters
    ----------
    report : fdp.risk.Report

    Returns
    -------
    list of str
        Markdown lines: a heading, a sentence, one bullet per reading, and where the terms are explained.
    """
    dpsgd = _dpsgd(report)
    released = "this run released (every noisy step, so the final model too)" if dpsgd else "this mechanism released"
    fpr, kappa = report.fpr, report.kappa
    lines = ["## In plain words", "",
             f"Whatever an attacker does with everything {released}, and whatever else it knows:", "",
             f"- **Membership.** To tell whether a person's record was in the {'training ' if dpsgd else ''}data, an attacker that may wrongly "
             f"accuse at most {_levels(fpr)} "
             f"of the people who were not in it catches at most {_percents(report.tpr)} of those who were (accusing at "
             "random catches as many as it wrongly accuses).",
             f"- **Reconstruction.** If a record is {_candidates(kappa)} (a blind guess is right with chance "
             f"{_levels(kappa)}), an attacker reconstructs it with chance at most {_percents(report.rero.upper)}."
             if _candidates(kappa) else
             f"- **Reconstruction.** Where a blind guess of a record is right with chance {_levels(kappa)}, an attacker "
             f"reconstructs it with chance at most {_percents(report.rero.upper)}.",
             ]
    if report.rtm is not None:
        lines.append(f"- **Without the target record** (relaxed threat model, releases of dimension {report.rtm.dimension}; "
                     "1 is the worst case, and a model's releases have as many dimensions as it has parameters, which only "
                     "lowers this bound). An attacker who knows every other record but not the target's and tests only the "
                     f"size of each release catches at most {_percents(report.rtm.tpr)} of members at the same "
                     "false-accusation rates. This number does not cover an attacker that also uses the direction the "
                     "releases share; the membership bound above covers every attacker.")
    eps = "no finite ε" if report.epsilon_pld is None else f"ε at most {upper(report.epsilon_pld, 4)}"
    fit = f" (a loose summary here: its regret is {report.gdp.regret:.2g})" if report.gdp.regret > 0.01 else ""
    floor = f" on error rates of at least {report.gdp.alpha_floor:g}" if report.gdp.alpha_floor > 0 else ""
    lines += [f"- **In the usual terms**: {eps} at δ = {report.delta:g}, and μ-GDP with μ at most {upper(report.gdp.mu, 4)}"
              f"{floor}{fit}.",
              "", "Every bound here errs on the safe side: the exact value lies on the printed side of it (the book's "
              "methods chapter, book/methods.md, says on what each rests). The terms are explained in the book's glossary "
              "(book/glossary.md)."]
    if dpsgd and report.mechanism.sampling_rate < 1.0:
        lines[-1] += (" The bounds assume Poisson sampling, each record joining each step with the sampling rate's "
                      "chance, as Opacus samples; shuffling the data and cutting fixed-size batches is another mechanism, "
                      "with another guarantee.")
    return lines


def noise_section(calibration, noise_multiplier: float) -> str:
    """A Markdown section: the smallest noise multiplier that meets ``calibration``'s target at its sampling rate and
    steps (:func:`fdp.calibrate.solve`: at most its ``noise_multiplier``, more than its ``noise_lower``), and whether
    the run's ``noise_multiplier`` meets it (inside that interval the search cannot tell; the report's own bound can).

    Parameters
    ----------
    calibration : fdp.calibrate.Calibration
        A noise search (``steps`` given).
    noise_multiplier : float
        The run's own noise multiplier.

    Returns
    -------
    str
    """
    c = calibration.to_dict()
    bound = calibration.target.describe()
    found, below = calibration.noise_multiplier, calibration.noise_lower
    steps = f"{c['steps']} step{'s' if c['steps'] != 1 else ''}"
    if noise_multiplier >= found:
        verdict = "meets it"
    elif below is not None and noise_multiplier > below:  # inside the search's tolerance: the report above decides
        verdict = f"lies within the search's tolerance of it (in ({lower(below, 4)}, {upper(found, 4)}]); the report above gives its own bound"
    else:
        factor = found / noise_multiplier
        verdict = (f"does not: it needs {upper(factor, 4)} times more noise (or fewer steps)" if np.isfinite(factor) else
                   "does not, by far: it needs more noise (or fewer steps)")
    smallest = (f" (the smallest noise that does lies in ({lower(below, 4)}, {upper(found, 4)}])" if below is not None and below > 0
                else "")
    need = (f"DP-SGD needs a noise multiplier of **{upper(found, 4)} or more**{smallest}; certified: at {upper(found, 4)} "
            f"the bound is {upper(calibration.achieved, 4)}" if found > 0 else
            f"DP-SGD needs **no noise**: the sampling alone keeps the bound at {upper(calibration.achieved, 4)}")
    return (f"## Noise for a target\n\nTo keep {bound} at most {c['value']:g} at sampling rate {c['sampling_rate']:.6g} over "
            f"{steps}, {need}. This run's {noise_multiplier:g} {verdict}.\n"
            + "".join(f"\n- {w}" for w in calibration.warnings) + ("\n" if calibration.warnings else ""))


def figure(report: Report, axes=None):
    """The report in one figure of four panels: the certified curve with its mu*-GDP fit and the
    (eps, delta) curve, the privacy profile ``delta(eps)`` of the certified curve with the two
    accountants' epsilons, the membership-inference ROC bound (log scales) and the certified ReRo
    bracket against the prior.

    Parameters
    ----------
    report : fdp.risk.Report
    axes : sequence of 4 matplotlib Axes, optional
        Where to draw (for example a 2 x 2 grid of a book figure).  By default a new plain
        :class:`matplotlib.figure.Figure` (no pyplot state) of 2 x 2 panels.

    Returns
    -------
    matplotlib.figure.Figure
        The figure the panels are drawn in.
    """
    if axes is None:
        fig = optional_import("matplotlib.figure", "plot").Figure(figsize=(9.0, 7.0), layout="constrained")
        axes = fig.subplots(2, 2).flat
    axes = list(axes)
    if len(axes) != 4:
        raise ValueError(f"axes must hold 4 axes (curve, profile, ROC, ReRo), got {len(axes)}")
    ax_curve, ax_profile, ax_roc, ax_rero = axes
    a = np.unique(np.concatenate([np.logspace(-8, 0, 400), np.linspace(0.0, 1.0, 401)]))
    ax_curve.plot(a, report.curve(a), color="k", lw=2.2, label="certified curve")
    ax_curve.plot(a, tradeoff.gaussian(report.gdp.mu)(a), color="C0", ls="--", label=f"{upper(report.gdp.mu)}-GDP")
    if report.epsilon_pld is not None:
        ax_curve.plot(a, tradeoff.eps_delta(report.epsilon_pld, report.delta)(a), color="C1", ls=":",
                      label=f"({upper(report.epsilon_pld)}, {report.delta:g})-DP")
    ax_curve.plot([0, 1], [1, 0], color="0.75", lw=0.8)
    ax_curve.set(xlabel=r"type-I error (FPR) $\alpha$", ylabel=r"type-II error $\beta$", title="trade-off curve")
    ax_curve.legend(fontsize=8)
    # delta(eps) of the certified lower curve: an upper bound on the mechanism's profile (Thm. 2.4)
    eps_known = [e for e in (report.epsilon_pld, report.epsilon_rdp) if e is not None]
    eps = np.linspace(0.0, min(1.25 * max(eps_known + [1.0]), EPS_MAX), 300)
    profile = (conversions.tradeoff_profile(report.curve, eps) if isinstance(report.curve, tradeoff.PiecewiseLinear)
               else gdp.gaussian_delta(eps, report.gdp.mu))
    ax_profile.semilogy(eps, profile, color="k", lw=2.2, label=r"$\delta(\varepsilon)$ of the curve")
    for e, label, marker in ((report.epsilon_pld, "PLD", "o"), (report.epsilon_rdp, "RDP", "s")):
        if e is not None:
            ax_profile.semilogy([e], [report.delta], marker, color="C1" if label == "PLD" else "C4",
                                label=f"{label}: $\\varepsilon$ = {upper(e)}")
    ax_profile.set(xlabel=r"$\varepsilon$", ylabel=r"$\delta$", title="privacy profile")
    ax_profile.legend(fontsize=8)
    fpr = np.logspace(-6, 0, 300)
    ax_roc.loglog(fpr, np.maximum(report.curve.power(fpr), fpr), color="k", lw=2.2, label="TPR at most")
    ax_roc.loglog(fpr, fpr, color="0.75", lw=0.8, label="guessing")
    if report.rtm is not None:
        ax_roc.loglog(fpr, np.maximum(1.0 - report.rtm.curve(fpr), fpr), color="C0",
                      ls="--", label=f"RTM ($d$ = {report.rtm.dimension}), at most")
    ax_roc.loglog(report.fpr, report.tpr, "o", color="C3", label="reported FPRs")
    ax_roc.set(xlabel="false-positive rate", ylabel="true-positive rate", title="membership inference (bound)")
    ax_roc.legend(fontsize=8)
    err = np.vstack([report.rero.upper - report.rero.lower, np.zeros_like(report.rero.upper)])
    ax_rero.errorbar(report.kappa, report.rero.upper, yerr=err, fmt="s", color="C2", label=r"certified $\gamma$")
    k = np.logspace(np.log10(min(report.kappa.min(), 1e-3)) - 1, 0, 200)
    ax_rero.loglog(k, np.maximum(report.curve.power(k), k), color="k", lw=1.2, alpha=0.6,
                   label=r"$1 - C(\kappa)$, symmetrised (above $\gamma$)")
    if report.rtm is not None:
        ax_rero.loglog(k, np.maximum(1.0 - report.rtm.bracket.lower(k), k), color="C0", ls="--",
                       label=f"RTM ($d$ = {report.rtm.dimension})")
    ax_rero.loglog(k, k, color="0.75", lw=0.8, label="prior")
    ax_rero.set(xlabel=r"prior $\kappa$", ylabel=r"reconstruction success $\gamma$", title="ReRo bound")
    # two decades below the smallest prior: every line lies on or above the diagonal, so the legend, lower right,
    # sits in the empty triangle beneath it instead of on the RTM and prior lines
    ax_rero.set_ylim(bottom=k.min() / 100.0)
    ax_rero.legend(fontsize=8, loc="lower right")
    return ax_curve.figure


def figure_format(path: str) -> str:
    """The format of the figure file ``path``: ``"png"`` or ``"svg"`` from its suffix.

    Checked before a report is computed: a ValueError naming ``figure`` for another suffix, or where matplotlib
    (the ``plot`` extra) is not installed.

    Parameters
    ----------
    path : str

    Returns
    -------
    str

    Examples
    --------
    >>> figure_format("risk.SVG")
    'svg'
    """
    suffix = str(path).lower().rsplit(".", 1)[-1]
    if suffix not in ("png", "svg"):
        raise ValueError(f"{spelled('figure')} must name a .png or .svg file, got {path!r}")
    try:
        optional_import("matplotlib.figure", "plot")
    except ImportError as exc:
        raise ValueError(f"{spelled('figure')}: {exc}") from None
    return suffix


def save_figure(report: Report, path: str, dpi: int = 150) -> None:
    """Write :func:`figure` of ``report`` to ``path`` (.png or .svg, :func:`figure_format`).

    Parameters
    ----------
    report : fdp.risk.Report
    path : str
    dpi : int, default 150

    Returns
    -------
    None
    """
    fmt = figure_format(path)
    try:
        figure(report).savefig(path, dpi=dpi, format=fmt)
    except OSError as exc:
        raise ValueError(f"{spelled('figure')}: cannot write {path!r} ({exc.strerror})") from None


def _level(x: float) -> str:
    """A level the user gave (FPR, prior, kappa) as given: ``:g`` where that is exact, else all its digits (a prior
    0.999999954604 printed as 1 would read as a certainty)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))
