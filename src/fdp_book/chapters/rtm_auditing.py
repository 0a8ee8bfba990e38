"""Figures and "What we see" paragraphs of the chapter that audits the relaxed threat model (Kaissis et al. 2023).

An audit's outcome is a :class:`fdp.experiments.attacks.CurveComparison` (the mean empirical curve against a theory
curve: ``gap``, ``error``, ``max_gap``, ``violation``); the empirical curves are the (repetitions, thresholds) arrays
of :func:`fdp.experiments.attacks.pooled_tradeoff`.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from fdp import Mechanism, parallel
from fdp.accounting import rtm
from fdp.curves import tradeoff
from fdp.experiments import audit, datasets
from fdp.experiments.dpsgd import Training
from fdp.formatting import upper
from fdp.parallel import Execution

from .. import plotting, runtime
from . import see

#: The header of the tables that compare an audit with its theory (rows from :func:`summary_row`)
COMPARISON = ["comparison", "largest gap", "at α", "largest s.e.", "violation"]


def plot_audit(ax, a, b, curves, title, legend=True):
    """The empirical curve (green, band of one standard deviation) and its mirror image, the swapped test (blue),
    broad and translucent under the theory ``curves`` = [(curve, style, label)] drawn thin on top: where they coincide
    both stay visible."""
    am, bm, bs = a.mean(0), b.mean(0), b.std(0, ddof=1)
    grid = np.linspace(0, 1, 401)
    ax.fill_between(am, np.clip(bm - bs, 0, 1), np.clip(bm + bs, 0, 1), color="C2", alpha=0.2, lw=0, zorder=1)
    ax.plot(bm, am, color="C0", lw=3.0, alpha=0.5, label="empirical, swapped", zorder=2)
    ax.plot(am, bm, color="C2", lw=3.5, alpha=0.6, label="empirical, mean ± 1 sd", zorder=3)
    for curve, style, label in curves:
        ax.plot(grid, curve(grid), style, lw=1.2, label=label, zorder=4)
    ax.plot([0, 1], [1, 0], ":", color="0.6", lw=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")  # j and its inverse mirror each other about the diagonal
    ax.set(xlabel=r"type-I error $\alpha$", ylabel=r"type-II error $\beta$", title=title)
    if legend:  # (else the figure's shared legend holds its entries)
        plotting.legend(ax, loc="upper right")


def plot_gap(ax, comparisons, title, z_error):
    """The measurement itself: mean empirical beta minus each theory curve at the mean alpha, with the band of
    ``z_error`` standard errors that the violation test tolerates below the curve."""
    for comparison, style, label in comparisons:
        line, = ax.plot(comparison.alpha, comparison.gap, style, lw=1.4, label=label)
        ax.fill_between(comparison.alpha, -z_error * comparison.error, z_error * comparison.error, color=line.get_color(),
                        alpha=0.15, lw=0)
    ax.axhline(0.0, color="0.4", lw=0.8)
    ax.set(xlim=(0, 1), xlabel=r"type-I error $\alpha$", ylabel=r"empirical $\beta$ minus theory", title=title)


def audit_figure(a, b, curves, title, gaps=None, z_error=None, second=None):
    """Two panels: the audit (left) and either the distance to the theory (``gaps``, a list for :func:`plot_gap`) or a
    second audit ``second`` = (a, b, curves, title) on the right, the two audits under one legend."""
    if second is not None:
        fig, axes = plotting.column_figure(1, 2, row_height=4.3)
        plot_audit(axes[0], a, b, curves, title, legend=False)
        plot_audit(axes[1], *second, legend=False)
        plotting.shared_legend(fig, axes, last="DP threat model")  # columns: the empirical pair, each j and its inverse
        return fig
    fig, axes = plotting.column_figure(1, 2, row_height=3.5)
    plot_audit(axes[0], a, b, curves, title, legend=False)
    plot_gap(axes[1], gaps, f"b: distance to the theory (band: {z_error:g} s.e.)", z_error)
    plotting.legend(axes[0], loc="upper right")
    plotting.legend(axes[1])
    return fig


def summary_row(name, comparison):
    """A row of the :data:`COMPARISON` table."""
    i = int(np.argmax(np.abs(comparison.gap)))
    return [name, f"{upper(comparison.max_gap, 2)}", f"{comparison.alpha[i]:.3f}", f"{comparison.error.max():.4f}",
            f"{upper(comparison.violation, 2)}"]


def see_fig3a(one, dp_side, two, effect, mu):
    """Figure 3a's paragraph: the one-sided LiRA against the DP and the RTM curve, the target's effect size, the
    two-sided test."""
    out = [f"One-sided LiRA: largest distance to the DP curve $G_1$ {upper(dp_side.max_gap, 2)} (violation "
           f"{upper(dp_side.violation, 2)}), to the RTM curve {upper(one.max_gap, 2)} (violation {upper(one.violation, 2)}). "
           "The target's effect size in logit space, $\\|\\mathrm{clip}(g^*)\\|/(\\sigma C)$, has median "
           f"{np.median(effect):.3f} over the repetitions, {np.mean(effect > 0.999 * mu):.1%} at the maximum {mu:g} and 10th "
           f"percentile {np.percentile(effect, 10):.3f}."]
    if one.violation > 0:
        out.append("The one-sided LiRA, implemented as the paper describes it, does *not* stay above the RTM curve: it lies "
                   + ("on or just above the DP-threat-model curve $G_1$" if dp_side.violation == 0 else
                      "**below even the DP-threat-model curve $G_1$**, which no correct attack can do")
                   + ", well below $j$. This is not an error in the attack. "
                   "Offline LiRA queries the model on $x^*$ and knows which way the flipped label pushes the confidence, so "
                   "it has exactly the knowledge the RTM denies the adversary; for it the DP curve is the bound, and it "
                   "nearly reaches it (the remaining distance comes from repetitions whose target gradient was not clipped).")
    if two.violation == 0:
        out.append("The test that *is* computable in the RTM, the magnitude of the centred logit, does not fall below the "
                   "RTM curve.")
    if one.violation > 0:
        out.append("We therefore cannot confirm that the LiRA audit \"nearly perfectly matches\" the RTM bound: under the "
                   "paper's own description, either the plotted theory is the DP curve, or the attack was two-sided "
                   "({ref}`rtm-fig3a-lira`).")
    return see(out)


def see_fig3b(canary, lap):
    """Figures 3b and 5b's paragraph."""
    sound = canary.violation == 0 and lap.violation == 0
    return see([(f"Both canary audits lie on their RTM curves: the largest distance between the mean empirical curve and $j$ "
                 f"({upper(canary.max_gap, 2)} and {upper(lap.max_gap, 2)}) is of the order of the standard error of the "
                 "mean, and nowhere does the curve fall below $j$ beyond it. This confirms \"matched exactly\" for the "
                 "gradient-space audits." if sound else
                 "**A canary audit falls below its RTM curve beyond the statistical error** (table).")
                + " (What is audited: the adversary subtracts the known gradients exactly, so the statistic depends only on "
                  "the noise and the canary, and the audit checks the noise mechanism and the magnitude test rather than "
                  "anything about the trained model.)"])


def see_fig3c(high, high_sym, mse, d, asymmetry, power):
    """Figure 3c's paragraph; ``power`` = (power at alpha 0.05 for d = 1, for d)."""
    return see([f"The network reaches a training MSE of {mse:.3f} (the standardised target has variance 1). "
                + (f"The audit lies on the exact RTM curve for $d$ = {d}" if high.violation == 0 else
                   f"**The audit falls below the exact RTM curve for $d$ = {d}**")
                + f", and that curve is almost symmetric (largest asymmetry $\\max|j - j^{{-1}}|$ = {asymmetry:.4f}); the "
                  f"audit's mean curve lies within {upper(high_sym.max_gap, 2)} of the Gaussian form of Theorem 3 (dotted "
                  "red). The dashed black $d = 1$ curve shows how much power the adversary loses when the target's influence "
                  f"is spread over all parameters: at $\\alpha = 0.05$ the same mechanism allows power {power[0]:.3f} at "
                  f"$d = 1$ and only {power[1]:.3f} at $d$ = {d}. "
                + ("This confirms the paper's reading of Figure 3c, with the caveat that the dimension in the theory must be "
                   "the number of parameters of the model, not the width of its latent layer ({ref}`rtm-fig3c-dimension`)."
                   if high.violation == 0 else
                   "This run does not confirm the paper's reading of Figure 3c ({ref}`rtm-fig3c-dimension`).")])


def see_appfig6(sgm, literal):
    """Appendix Figure 6's paragraph: the typo reading against the literal one."""
    return see([f"With the typo reading the audit is within {upper(sgm.max_gap, 2)} of $j_p$ (violation "
                f"{upper(sgm.violation, 2)}); the literal reading's curve is {upper(literal.max_gap, 2)} away"
                + (", so the audit itself supports the typo reading ({ref}`rtm-appfig6-parametrisation`)."
                   if sgm.max_gap < literal.max_gap else ".")])


def summary(canary_violations, high, one):
    """The summary's bullets."""
    bullets = [("* The gradient-space canary audits (Figs. 3b, 5b, 6) match their RTM curves within sampling error, "
                "confirming the paper's \"exactly\"." if max(canary_violations) == 0 else
                "* **A gradient-space canary audit falls below its RTM curve.**"),
               ("* The high-dimensional audit (Fig. 3c) matches Theorem 2 when $d$ is the number of model parameters, and "
                "the curves are nearly symmetric, as Theorem 3 predicts." if high.violation == 0 else
                "* **The high-dimensional audit (Fig. 3c) falls below Theorem 2's curve.**")]
    if one.violation > 0:
        bullets.append("* The logit-space LiRA audit (Fig. 3a) as described (one-sided) is a DP-threat-model attack: it "
                       "reaches the DP curve $G_1$ and lies below the RTM curve. Only its two-sided (magnitude) version is an "
                       "RTM test.")
    return "\n".join(bullets)


#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 4


def estimate(p: dict, workers: int) -> None:
    """Print the chapter's estimated run time: each repeated step timed on one task's worth of runs and
    scaled to the parameters ``p`` (the work grows linearly in the runs, the training steps and the releases): three
    trainings (LiRA's models with an intercept, the canary and SGM audits' without), LiRA, four canary audits and the
    diabetes network; the tasks of a step are shared among the workers."""
    runs, samples, releases = p["runs"], p["samples"], p["target_models"]
    probe = min(runs, audit.RUNS_PER_TASK)
    chunks = runs / probe  # tasks of each repeated step
    data = datasets.one_feature_classification(samples, seed=0)
    held = np.random.default_rng(0).integers(samples, size=probe)
    x, y = data.x[1:], data.y[1:]  # |D| = samples - 1, one data set for every probed run
    probe_steps = 20  # enough steps that a probe's set-up does not count as training time (5 steps doubled it)
    short = Training(Mechanism("gaussian", 1.0, 1.0, probe_steps), clip_norm=1.0, learning_rate=p["learning_rate"])
    one = replace(short, mechanism=Mechanism("gaussian", 1.0))  # one step
    models = audit.train_linear_dpgd(x, y, short, runs=probe, execution=Execution(seed=0))
    diab, latent = datasets.diabetes(), p["diabetes_latent"]
    cluster = os.environ.get(parallel.SCHEDULER_ENV, "").strip()
    runtime.estimate([
        (lambda: audit.train_linear_dpgd(x, y, short, runs=probe, execution=Execution(seed=0)), chunks * p["train_steps"] / probe_steps),
        # the canary and SGM audits train without an intercept, which costs much less
        (lambda: audit.train_linear_dpgd(x, y, short, runs=probe, fit_intercept=False, execution=Execution(seed=0)),
         2 * chunks * p["train_steps"] / probe_steps),
        (lambda: audit.lira_offline_scores(x, y, models.weights, data.x[held], 1 - data.y[held], one,
                                           shadow_models=p["shadow_models"], target_models=releases, execution=Execution(seed=0)),
         chunks),
        (lambda: audit.canary_audit(models.final_gradients, 1.0, Mechanism("gaussian", 1.0), releases,
                                    execution=Execution(seed=0)), 3 * chunks),
        (lambda: audit.canary_audit(np.zeros((probe, latent * (diab.x.shape[1] + 2) + 1)), 1.0, Mechanism("gaussian", 1.0), releases,
                                    execution=Execution(seed=0)), chunks),
        (lambda: audit.train_linear_network_dpgd(diab.x, diab.y, replace(short, learning_rate=p["diabetes_learning_rate"]),
                                                 latent=latent, seed=0), p["diabetes_steps"] / probe_steps, False)],
        workers=min(workers, -(-runs // audit.RUNS_PER_TASK)), what=f"{runs:,} runs, {releases:,} releases per hypothesis" + (
            f"; estimated for {workers} local workers, not the Dask cluster at {cluster}" if cluster else ""), figures=FIGURES)


def figure3b(gaussian: tuple, laplace: tuple):
    """Figure 3b and App. Figure 5b side by side: each audit (a, b) against its RTM curve j and inverse and the DP
    curve; ``gaussian`` = (a, b, j, d, Delta/sigma), ``laplace`` = (a, b, j, Delta_1/b)."""
    a, b, j, d, mu = gaussian
    a_lap, b_lap, j_lap, mu_lap = laplace
    return audit_figure(a, b, [(j, "C1-", f"RTM $j$ ($d$ = {d}, $\\Delta/\\sigma$ = {mu:g})"), (j.swapped(), "C1--", "RTM $j^{-1}$"),
                               (tradeoff.gaussian(mu), "k-.", "DP threat model")], "Fig. 3b: Gaussian mechanism",
                        second=(a_lap, b_lap, [(j_lap, "C1-", f"RTM $j_{{\\mathrm{{Lap}}}}$ ($\\Delta_1/b$ = {mu_lap:g})"),
                                               (j_lap.swapped(), "C1--", "RTM $j_{\\mathrm{Lap}}^{-1}$"),
                                               (tradeoff.laplace(mu_lap), "k-.", "DP threat model")], "App. Fig. 5b: Laplace mechanism"))


def figure3c(a, b, j, symmetric, mu: float, d: int, comparisons: tuple, z_error: float):
    """Figure 3c: the diabetes audit against the exact j in d dimensions, Theorem 3's symmetric form and j at d = 1, and
    its distance to the first two (``comparisons`` = (exact, symmetric))."""
    exact, sym = comparisons
    return audit_figure(a, b, [(j, "C1-", f"RTM $j$ ($d$ = {d}, $\\Delta/\\sigma$ = {mu:g})"), (j.swapped(), "C1--", "RTM $j^{-1}$"),
                               (symmetric, "C3:", "Thm. 3 symmetric form"), (rtm.gaussian(mu, 1), "k--", "RTM $j$, $d$ = 1")],
                        f"a: Fig. 3c, diabetes, {d:,} parameters",
                        gaps=[(exact, "C1-", f"exact $j$ ($d$ = {d:,})"), (sym, "C3:", "Thm. 3 symmetric form")], z_error=z_error)


def appfig6(a, b, curves: tuple, mu: float, rate: float, comparisons: tuple, z_error: float):
    """App. Figure 6: the subsampled Gaussian's audit against j_p at Delta/sigma = ``mu`` and at its square root (the
    literal reading); ``curves`` and ``comparisons`` = (at mu, literal)."""
    j, literal = curves
    root = f"{np.sqrt(mu):.3g}"
    return audit_figure(a, b, [(j, "C1-", f"RTM $j_p$ ($\\Delta/\\sigma$ = {mu:g}, $p$ = {rate:g})"), (j.swapped(), "C1--", "RTM $j_p^{-1}$"),
                               (literal, "C3:", f"$j_p$ at $\\Delta/\\sigma$ = {root} (literal)")],
                        "a: App. Fig. 6, subsampled Gaussian",
                        gaps=[(comparisons[0], "C1-", f"$j_p$, $\\Delta/\\sigma$ = {mu:g}"),
                              (comparisons[1], "C3:", f"$j_p$, $\\Delta/\\sigma$ = {root} (literal)")], z_error=z_error)


def quoted(lira: dict, high, sgm: tuple, sgm_mu: float) -> dict:
    """Numbers other pages quote ({result}`rtm_auditing:<name>`, the errata), formatted once from this run: the LiRA
    comparisons, the diabetes audit and the subsampled audit at mu and at its square root."""
    return dict(lira_gap_rtm=upper(lira["one-sided vs RTM j"].max_gap, 2), lira_gap_dp=upper(lira["one-sided vs DP curve G"].max_gap, 2),
                lira_two_sided_gap=upper(lira["two-sided vs RTM j"].max_gap, 2), diabetes_gap=upper(high.max_gap, 2),
                sgm_gap=upper(sgm[0].max_gap, 2), sgm_literal_gap=upper(sgm[1].max_gap, 2), sgm_literal_mu=f"{np.sqrt(sgm_mu):.3g}")
