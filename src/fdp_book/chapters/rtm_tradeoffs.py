"""Figures and "What we see" paragraphs of the chapter on the relaxed threat model's trade-off curves (Kaissis et al.
2023, Figures 1, 2 and appendix Figure 5a).

A curve is an :mod:`fdp.curves.tradeoff` curve (callable on alpha, with ``inverse`` and ``swapped``); ``grid`` is the
alpha grid every reading is taken on.  A claim "value <= threshold" is judged by the caller against
``data/paper/rtm_tradeoffs.yaml`` and passed in as a boolean.
"""

from __future__ import annotations

import numpy as np

from fdp import Mechanism
from fdp.accounting import pld, rtm

from .. import plotting, runtime
from . import and_list, see

J_STYLE = dict(color="C0", lw=2.2, label=r"RTM $J = C(j, j^{-1})$")
j_STYLE = dict(color="C1", lw=1.2, ls="--", label=r"RTM $j$")
jinv_STYLE = dict(color="C2", lw=1.2, ls="-.", label=r"RTM $j^{-1}$")
F_STYLE = dict(color="k", lw=1.5, label=r"DPTM $f$")
J_b_STYLE = dict(color="C3", lw=2, label=r"RTM $J$, reading (b)")


def draw(ax, curves, title, grid):
    """A trade-off panel: ``curves`` = [(curve, style)] over the off-diagonal 1 - alpha."""
    ax.plot(grid, 1 - grid, color="0.7", lw=1, ls=":", label=r"$1-\alpha$")
    for curve, style in curves:
        ax.plot(grid, curve(grid), **style)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel=r"type-I error $\alpha$", ylabel=r"type-II error $\beta$", title=title)


def one_panel(curves, title, grid):
    """One trade-off panel, its legend in the empty region above 1 - alpha."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.4)
    draw(ax, curves, title, grid)
    plotting.legend(ax, loc="upper right")
    return fig


def figure1ad(panels, grid, symmetrise):
    """Figure 1 a-d: f, j, j^{-1} and J per panel; ``panels`` = [(title, j, f)]."""
    fig, axes = plotting.column_figure(2, 2, row_height=3.3)
    for ax, (title, j, f) in zip(axes, panels):
        draw(ax, [(f, F_STYLE), (j, j_STYLE), (j.swapped(), jinv_STYLE), (symmetrise(j, grid), J_STYLE)], title, grid)
    plotting.legend(axes[0], fontsize=8, loc="upper right")
    return fig


def see_fig1ad(holds_all, closer):
    return see([("As in the paper, every RTM curve lies on or above $f$ in all four panels" if holds_all else
                 "**Some RTM curve falls below $f$**")
                + (" and $J$ stays much closer to the off-diagonal $1-\\alpha$ than $f$ (the gaps in the table)." if closer else ".")
                + " The two RTM directions are not symmetric, and which one is more powerful at small $\\alpha$ depends on the "
                  "mechanism: for the GM it is $j$ (null hypothesis: no target), for the LM $j^{-1}$ (null hypothesis: target "
                  "present). $J$ follows the more powerful one near both ends and bridges them with a segment of slope $-1$."])


def figure1e(curves, grid, steps):
    """Figure 1e: the subsampled Gaussian's curves (left) and their distances below the off-diagonal (right).
    ``curves``: f, j_a, J_a, j_b, J_b and j_a_up (the optimistic lattice)."""
    c = curves
    fig, axes = plotting.column_figure(1, 2, row_height=3.4)
    draw(axes[0], [(c["f"], F_STYLE), (c["j_a"], j_STYLE), (c["j_a"].swapped(), jinv_STYLE), (c["J_a"], J_STYLE),
                   (c["J_b"], J_b_STYLE)], f"(e) SGM, N = {steps}", grid)
    for curve, style in ((c["f"], F_STYLE), (c["J_a"], J_STYLE), (c["J_b"], J_b_STYLE),
                         (c["j_b"], dict(color="C3", lw=1, ls="--", label=r"RTM $j$, reading (b)")), (c["j_a"], j_STYLE),
                         (c["j_a_up"], {**j_STYLE, "ls": ":", "lw": 1.2, "label": r"RTM $j$, optimistic lattice"})):
        axes[1].plot(grid, 1 - grid - curve(grid), **style)
    axes[1].set(xlabel=r"type-I error $\alpha$", ylabel=r"$(1 - \alpha) - \beta$", title="distance below the off-diagonal")
    plotting.legend(axes[1], fontsize=8, title="(a) unless marked", title_fontsize=8)
    return fig


def see_fig1e(m, claim_holds, seconds):
    """Figure 1e's paragraph from its readings ``m`` (gaps, asymmetries, lattice width)."""
    return see([("Both readings satisfy the paper's claim" if claim_holds else "**A reading violates the paper's claim**")
                + f": the DP curve lies up to {m['gap_f']:.3f} below the off-diagonal, the RTM curves only {m['gap_a']:.3f} (a) "
                  f"and {m['gap_b']:.3f} (b). The readings differ by a factor of {m['gap_b'] / m['gap_a']:.1f} in that distance: "
                  "the norm of the sum (b) uses the fact that every sampled step shifts the release in the same direction, "
                  "which the per-step magnitudes of (a) discard. The tensor product is "
                  f"{'almost ' if m['asym_a'] < 0.5 * m['asym_b'] else ''}symmetric (largest $|j - j^{{-1}}|$ {m['asym_a']:.4f}, a "
                  f"central-limit effect), reading (b) less so ({m['asym_b']:.4f}). The pessimistic and optimistic lattice curves "
                  f"of reading (a) are {m['width']:.1e} apart; all curves of this panel took {seconds:.1f} s."])


def figure2b(mus, pw, alpha):
    """Figure 2b: power at ``alpha`` against the effect size, DP and RTM."""
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.2)
    ax.plot(mus, pw["f"], **dict(F_STYLE, label="DPTM $f = G_\\mu$"))
    for key, style in (("J", J_STYLE), ("j", j_STYLE), ("jinv", jinv_STYLE)):
        ax.plot(mus, pw[key], **style)
    # a log axis: the relative loss of power at small effect sizes, which the text quantifies, is invisible on a linear one
    ax.set(xlabel=r"$\Delta_2/\sigma$", ylabel=rf"power $1-\beta$ at $\alpha$ = {alpha:g} (log scale)", title="(b) GM, d = 1",
           yscale="log", ylim=(0.5 * alpha, 1.5))
    plotting.legend(ax, loc="upper left")  # the power is small there
    return fig


def see_fig2b(mus, pw, claim_holds, viol):
    ratio = pw["J"] / pw["f"]
    i = int(np.argmin(ratio))
    return see([("The claim holds over the whole sweep" if claim_holds else "**The claim fails somewhere on the sweep**")
                + ("" if viol == 0 else f" (violation {viol:.1e})") + f". The RTM adversary's power is between "
                  f"{100 * (1 - ratio.max()):.0f} % and {100 * (1 - ratio.min()):.0f} % below the DP adversary's; the relative "
                  f"loss is largest at $\\Delta_2/\\sigma$ = {mus[i]:.2f} ({pw['J'][i]:.2e} against {pw['f'][i]:.2e}) and small for "
                  "large effect sizes, where both powers approach 1; as $\\Delta_2/\\sigma \\to 0$ both tend to $\\alpha$. "
                  "$j^{-1}$ is far less powerful at this small level than $j$: testing \"target present\" as the null "
                  "hypothesis is hard for the magnitude statistic."])


def figure2c(mus, pc, alpha, rate, steps, mu_max):
    """Figure 2c: power of the subsampled Gaussian against the effect size, linear and (detail) log scale."""
    fig, axes = plotting.column_figure(1, 2, row_height=3.3)
    for ax, log in zip(axes, (False, True)):
        ax.plot(mus, pc["clt"], color="k", lw=1.5, ls="--", label="DPTM, CLT (Bu et al.)")
        ax.plot(mus, pc["tight"], color="k", lw=1.5, label="DPTM, tight")
        for key, style in (("J", J_STYLE), ("j", j_STYLE), ("jinv", jinv_STYLE)):
            ax.plot(mus, pc[key], **style)
        ax.set(xlabel=r"$\Delta_2/\sigma$", ylabel=rf"power at $\alpha$ = {alpha:g}")
        if log:
            ax.set(yscale="log", xlim=(0, min(2.5, mu_max)), ylim=(alpha * 0.9, 0.2))
    axes[0].set_title(f"(c) SGM, p = {rate:g}, N = {steps}")
    axes[1].set_title("detail (log scale)")
    plotting.legend(axes[0], fontsize=8, loc="lower right")
    return fig


def see_fig2c(readings, holds_tight, holds_clt, rate, alpha):
    """Figure 2c's paragraph.  ``readings``: the violations against the tight and the CLT curve, the effect sizes
    where the RTM power is above the CLT curve (``bad``) and where the CLT power exceeds p + (1 - p) alpha
    (``over``), the RTM/DP power ratios of the SGM and the GM, and the fraction of effect sizes where subsampling
    lowers the ratio."""
    r = readings
    out = [("Against the tight DP curve the paper's claim holds: the RTM adversary is less powerful at every effect size"
            if holds_tight else "**Against the tight DP curve the claim fails**")
           + ("." if r["viol_tight"] == 0 else f" (violation {r['viol_tight']:.1e}).")]
    if not holds_clt:
        out.append(f"Against the CLT formula it does not (violation {r['viol_clt']:.1e}"
                   + (f", at $\\Delta_2/\\sigma$ from {r['bad'].min():.2f} to {r['bad'].max():.2f}" if r["bad"].size else "")
                   + "): for moderate effect sizes the formula *understates* the DP adversary's power, by enough that the RTM "
                     "curve rises above it.")
    if r["over"].size:
        out.append(f"For $\\Delta_2/\\sigma \\ge$ {r['over'].min():.2f} it *overstates* it: the formula gives a DP power above "
                   f"$p + (1-p)\\alpha$ = {rate + (1 - rate) * alpha:.4f}, the largest power any test can have against one "
                   "subsampled step (the target is absent from the batch with probability $1-p$), and makes the gap between "
                   "the DP and RTM curves look large.")
    amplified = r["amplified"]
    out.append(f"The ratio of RTM to tight DP power is {r['ratio_sgm'].min():.2f} to {r['ratio_sgm'].max():.2f} for the SGM and "
               f"{r['ratio_gm'].min():.2f} to {r['ratio_gm'].max():.2f} for the GM (Figure 2b); "
               + ("subsampling never lowers the ratio" if amplified == 0 else
                  f"subsampling lowers it at {100 * amplified:.0f} % of the effect sizes")
               + (", so the paper's remark that \"the loss of power is amplified through subsampling\" is not borne out by "
                  "the tight curves of one step (our reading: the paper does not print its $N$); against the CLT curve of one "
                  "step it looks amplified ({ref}`rtm-fig2c-clt`)."
                  if amplified < 0.5 else "."))
    return see(out)


def steps_check_text(check: dict, steps: int) -> str:
    """Figure 2c's comparison at more steps, for the chapter and the erratum: ``check`` maps a number of steps to (the
    largest excess of the CLT formula's power over the tight DP power, the number of effect sizes where subsampling
    lowers the ratio of RTM to tight DP power by more than 1 %, the number where the comparison can show anything:
    the Gaussian mechanism composed as often below power 0.99); ``steps`` is the figure's own number of steps."""
    if not check:
        return "This run repeats the comparison at no other number of steps."
    out = (f"At {and_list([f'{n:,}' for n in check])} steps (the figure above has {steps:,}) the CLT formula's power "
           f"exceeds the tight DP power by up to {and_list([f'{e:.2f}' for e, _, _ in check.values()])}. Against the "
           "tight curve, of the effect sizes where the Gaussian mechanism composed as often is not already at power 1, "
           f"subsampling lowers the ratio of RTM to DP power by more than 1 % at "
           f"{and_list([f'{k} of {m}' if m else 'none of none' for _, k, m in check.values()])}")
    if not any(m for _, _, m in check.values()):
        return out + (": at these numbers of steps the Gaussian mechanism is at power 1 at every effect size checked, "
                      "so the comparison cannot show an amplification either way.")
    if any(k for _, k, _ in check.values()):
        return out + ": with more steps some of the amplification the paper describes appears against the tight curve."
    return out + (": the tight curves show no amplification at these numbers of steps either, where the comparison "
                  "can show anything (at the other effect sizes both mechanisms' powers are 1).")


def summary(claims, dims):
    """The summary's bullets; ``claims`` maps each judged claim to whether it holds, ``dims`` = (d low, d high)."""
    c = claims
    return "\n".join([
        ("* Figures 1 a-f, 2b and appendix 5a reproduce: every RTM curve lies on or above the DP curve"
         if c["above"] and c["fig2b"] else "* **Some RTM curve falls below its DP curve** (Figures 1, 2b, 5a)")
        + (f", $d$ = {dims[1]} gives a stronger guarantee than $d$ = {dims[0]}" if c["dimension"] else "")
        + (", and subsampling moves the RTM curves towards $1-\\alpha$." if c["subsampling"] else "."),
        "* Figure 2a reproduces with eq. 7 corrected: as printed, both sides of eq. 7 have wrong shifts, and Lemma 8 and "
        "eq. 3 have misprints too ({ref}`rtm-lemma8`, {ref}`rtm-thm1-eq3`, {ref}`rtm-thm3-eq7`).",
        ("* Figure 2c: against the tight DP curve the claim holds" if c["fig2c_tight"] else "* Figure 2c: the claim fails")
        + ("; the CLT formula the paper used is a poor approximation for one step (the $N$ we read: the paper does not "
           "print it), and at one step the \"amplified loss of power\" is an artefact of it." if not c["fig2c_clt"] else "."),
        "* Composition of subsampled mechanisms (numbers on the {doc}`rtm_dpsgd` page): the paper's numbers fit the tensor "
        "product of the one-step RTM curves (reading a) much better than one statistic of all releases (reading b), and "
        "reading (a) does not cover an adversary who combines the releases the way reading (b) does."])


def fig1e_rows(m: dict) -> list:
    """The rows of Figure 1e's table: the gap of each curve, the violation of the claim and the asymmetry of j."""
    return [["DPTM f (tight PLD)", f"{m['gap_f']:.4f}", "", ""],
            ["RTM J, (a) tensor product", f"{m['gap_a']:.4f}", f"{m['viol_a']:.1e}", f"{m['asym_a']:.4f}"],
            ["RTM J, (b) norm of the sum", f"{m['gap_b']:.4f}", f"{m['viol_b']:.1e}", f"{m['asym_b']:.4f}"]]


def figure1f(f, low: tuple, high: tuple, mu: float, grid):
    """Figure 1f: the DP curve and the RTM curves j and J in two dimensions, ``low`` = (d, j, J) and ``high``."""
    curves = [(f, F_STYLE)]
    for (d, j, big_j), color in ((low, "C0"), (high, "C3")):
        curves += [(big_j, dict(color=color, lw=2, label=f"RTM $J$, d = {d}")), (j, dict(color=color, lw=1, ls="--", label=f"$j$, d = {d}"))]
    return one_panel(curves, f"(f) GM, $\\Delta_2/\\sigma$ = {mu:g}", grid)


def see_fig1f(m: dict, dims: tuple, claim_holds: bool) -> str:
    """Figure 1f's paragraph: whether the higher dimension's curve lies above, and the gaps."""
    low, high = dims
    return see([(f"The claim holds: the $d$ = {high} curve lies above the $d$ = {low} curve everywhere" if claim_holds else
                 f"**The $d$ = {high} curve falls below the $d$ = {low} curve**")
                + f", and its largest distance below $1-\\alpha$ is {m['gap_hi']:.3f} against {m['gap_lo']:.3f} ($f$: "
                f"{m['gap_f']:.3f}).", f"The statistic $\\|\\theta\\|^2$ adds the noise of {high - low} more coordinates that carry "
                "no signal."])


#: The forms of eq. 7 (Theorem 3) drawn in Figure 2a, and their styles
EQ7_FORMS = {"clt": "eq. 7 left, corrected", "gaussian": "eq. 7 right, corrected",
             "clt_printed": "eq. 7 left, printed", "gaussian_printed": "eq. 7 right, printed"}
EQ7_STYLES = {"clt": dict(color="C3", lw=1.5, ls="--"), "gaussian": dict(color="C4", lw=1.5, ls=":"),
              "clt_printed": dict(color="C5", lw=1.2, ls="-."), "gaussian_printed": dict(color="C7", lw=1.2, ls="-.")}


def figure2a(exact, forms: dict, title: str, grid):
    """Figure 2a: the exact j and its inverse against each form of eq. 7 (``forms``: key of :data:`EQ7_FORMS` -> curve)."""
    curves = [(exact, dict(color="C1", lw=2.5, label=r"exact $j$")), (exact.swapped(), dict(color="C2", lw=1.5, label=r"exact $j^{-1}$"))]
    return one_panel(curves + [(curve, dict(EQ7_STYLES[k], label=EQ7_FORMS[k])) for k, curve in forms.items()], title, grid)


def see_fig2a(asymmetry: float, exact_gap: float, gaps: dict, shifts: dict) -> str:
    """Figure 2a's paragraph: how close the corrected forms of eq. 7 lie, and what the printed shifts would draw."""
    return see([f"The exact curves are nearly symmetric (largest $|j - j^{{-1}}|$ {asymmetry:.4f}) and at most {exact_gap:.3f} "
                f"below the off-diagonal, and the corrected forms of eq. 7 lie within {max(gaps['clt'], gaps['gaussian']):.4f} of "
                "them, which is what the paper's figure shows.",
                f"The left side as printed has a shift {shifts['clt'] / shifts['clt_printed']:.0f} times too small and lies almost "
                f"on $1-\\alpha$; the right side as printed has a shift of {shifts['gaussian_printed']:.2f} instead of "
                f"{shifts['gaussian']:.2f} and describes a nearly perfect adversary.",
                "The paper's plot therefore cannot have used the printed formula; we record the printed forms as deviations "
                "({ref}`rtm-thm3-eq7`)."])


def appfig5a(f, f_sub, big_j, big_j_sub, j_sub, mu: float, rate: float, grid):
    """App. Figure 5a: the Laplace mechanism's DP and RTM curves with and without subsampling at ``rate``."""
    return one_panel([(f, dict(color="k", lw=1, ls="--", label="DPTM $f$, LM")), (f_sub, dict(color="k", lw=1.5, label=f"DPTM $f$, p = {rate:g}")),
                      (big_j, dict(color="C1", lw=2, label="RTM $J$, LM")), (big_j_sub, dict(color="C0", lw=2, label=f"RTM $J$, p = {rate:g}")),
                      (j_sub, dict(color="C0", lw=1, ls="--", label=f"RTM $j_p$, p = {rate:g}"))], f"LM, $\\Delta_1/b$ = {mu:g}", grid)


def see_appfig5a(m: dict, moves: bool, above: bool) -> str:
    """App. Figure 5a's paragraph: whether subsampling moves the RTM curve towards 1 - alpha, and stays above DP."""
    return see([("As stated: with subsampling the RTM curve moves towards $1-\\alpha$" if moves else
                 "**Subsampling does not move the RTM curve towards $1-\\alpha$ everywhere**")
                + f" (largest distance below it {m['gap_ls']:.3f} against {m['gap_l']:.3f})"
                + (", and it stays above the DP curve of the subsampled LM." if above else
                   ", but it falls below the DP curve of the subsampled LM.")])


#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 7


def estimate(p: dict, grid) -> None:
    """Print the chapter's estimated run time: Figure 1e (the tensor compositions on both lattices and
    the DP curve of the subsampled Gaussian), a point of the costlier power sweep (Figure 2c) at the largest effect
    size, and the asymptotic forms of Figure 2a."""
    sgm, h, h_pld = p["sgm"], p["discretization"], p["pld_discretization"]
    rate, steps = p["power_p"], p["power_steps"]

    sgm_run = Mechanism("gaussian", 1 / sgm["mu"], sgm["p"], sgm["steps"])

    def figure1e():
        for pessimistic in (True, False):
            rtm.tensor_composition(sgm_run, sgm["d"], discretization=h, pessimistic=pessimistic)
        pld.mechanism_pld(sgm_run, discretization=h_pld)

    def power_point(mu):
        run = Mechanism("gaussian", 1 / mu, rate, steps)
        if steps == 1:
            rtm.subsampled_gaussian(run, 1, grid)
        else:
            rtm.tensor_composition(run, discretization=h)
            pld.mechanism_pld(run, discretization=h_pld)

    a = p["asymptotic_setting"]
    runtime.estimate([(figure1e, 2), (lambda: power_point(p["power_mu_max"]), 2 * p["power_points"]),
                             (lambda: rtm.asymptotic_gap(a["mu"], a["d"], a["steps"], "clt", grid), 3)],
                            what=f"Figure 1e and appendix Figure 5a, {p['power_points']} effect sizes per power sweep", figures=FIGURES)
