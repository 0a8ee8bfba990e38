"""Figures and run-dependent prose of the chapter on the sampling rate at a fixed (epsilon, delta) (Kaissis et al.
2023a, Figure 1f and App. Figures 3-4; Hayes et al. 2023, Figures 5a, 14 and 15).

Each mechanism is calibrated to the same (epsilon, delta): ``noise[p]`` is the noise multiplier of sampling rate p.
``fig5[accountant]`` lists, per rate, ``(sigma, gamma lower, gamma upper)`` of the calibration by that accountant;
``sweep[eps]`` lists, per rate, ``(sigma, [gamma upper per prior size])``.
"""

from __future__ import annotations

import numpy as np

from fdp import Mechanism, calibrate
from fdp.accounting import pld
from fdp.targets import Epsilon

from .. import plotting, runtime

DIRECTIONS = (("add", "-"), ("remove", ":"), ("symmetrised", "--"))
MARKERS = "osD^vP*X"


def _profile_panel(ax, eps_grid, epsilon, delta):
    ax.axvline(epsilon, color="0.5", lw=0.8)
    ax.axhline(delta, color="0.5", lw=0.8)
    ax.set(xlabel=r"$\varepsilon$", ylabel=r"$\delta(\varepsilon)$", ylim=(1e-8, 1), title="a: privacy profiles")
    plotting.legend(ax)


def one_step_figure(noise: dict, profiles: dict, curves: dict, gammas: dict, grids: dict, epsilon: float, delta: float):
    """Four panels for one step: (a) the privacy profiles ``profiles[p]`` on ``grids["eps"]``, (b) the trade-off curves
    ``curves[p][direction]`` on ``grids["alpha"]``, (c) the ReRo bound ``gammas[p]`` on ``grids["kappa"]``, (d) the
    noise each rate needs."""
    fig, axes = plotting.column_figure(2, 2)
    for i, p in enumerate(noise):
        axes[0].semilogy(grids["eps"], np.maximum(profiles[p], 1e-12), color=f"C{i}", label=f"p = {p:g}")
        for direction, ls in DIRECTIONS:
            axes[1].plot(grids["alpha"], curves[p][direction], color=f"C{i}", ls=ls)
        axes[2].loglog(grids["kappa"], gammas[p], color=f"C{i}", label=f"p = {p:g}")
        axes[3].plot([p], [noise[p]], "o", color=f"C{i}", ms=7)
        axes[3].annotate(f"σ = {noise[p]:.3f}", (p, noise[p]), textcoords="offset points", xytext=(8, -4), fontsize=9)
    for direction, ls in DIRECTIONS:
        axes[1].plot([], [], color="0.3", ls=ls, label=direction)
    _profile_panel(axes[0], grids["eps"], epsilon, delta)
    axes[1].set(xlabel=r"type-I error $\alpha$", ylabel="type-II error", title="b: trade-off curves")
    plotting.legend(axes[1])
    axes[2].loglog(grids["kappa"], grids["kappa"], color="0.6", ls=":", label=r"$\gamma = \kappa$")
    axes[2].set(xlabel=r"prior $\kappa$", ylabel=r"bound $\gamma$", title="c: ReRo bound")
    plotting.legend(axes[2])
    axes[3].plot(list(noise), list(noise.values()), color="0.6", lw=0.8, zorder=0)
    axes[3].set(xlabel="sampling rate p", ylabel=r"calibrated noise $\sigma$", xlim=(0, 1.15),
                title=rf"d: noise for ({epsilon:g}, {delta:g})-DP, one step")
    return fig


def one_step_text(gap: float, low: float, high: float, kappa: float = 0.1) -> str:
    """How the certified bounds at the smallest and the largest rate compare (``gap``: the lower end at the largest
    rate minus the upper end at the smallest), as a sentence."""
    if gap > 0:
        return (f"At κ = {kappa:g} the bound is certainly lower at p = {low:g} than at p = {high:g}: the same (ε, δ) leaves "
                "a different reconstruction risk, as Kaissis et al. state.")
    return (f"At κ = {kappa:g} the certified brackets at p = {low:g} and p = {high:g} do not separate the two rates in this "
            "run, so it does not confirm Kaissis et al.'s statement that the bound grows with the rate.")


def many_steps_figure(noise: dict, profiles: dict, curves: dict, grids: dict, epsilon: float, delta: float):
    """Two panels for many steps: (a) the privacy profiles, (b) the CLT and the PLD trade-off curves
    ``curves[p] = (clt, pld)`` of each rate."""
    fig, axes = plotting.column_figure(1, 2, row_height=3.2)
    for i, p in enumerate(noise):
        axes[0].semilogy(grids["eps"], np.maximum(profiles[p], 1e-12), color=f"C{i}", ls=["-", "--", ":"][i % 3],
                         label=f"p = {p:g}, σ = {noise[p]:.3f}")
        for kind, values, ls in (("CLT", curves[p][0], "-"), ("PLD", curves[p][1], "--")):
            axes[1].plot(grids["alpha"], values, color=f"C{i}", ls=ls, label=f"p = {p:g}, {kind}")
    _profile_panel(axes[0], grids["eps"], epsilon, delta)
    axes[1].set(xlabel=r"type-I error $\alpha$", ylabel="type-II error", title="b: trade-off curves")
    plotting.legend(axes[1], ncol=1)
    return fig


def coincide_text(profile_gap: float, curve_gap: float, steps: int, tolerance: float = 0.01) -> str:
    """The summary's sentence on the many-step mechanisms: whether the curves coincide within the recorded ``tolerance``."""
    if max(profile_gap, curve_gap) <= tolerance:
        return (f"After {steps:,} steps the central limit theorem has made them one Gaussian mechanism: the profiles and all "
                f"the trade-off curves coincide (largest spreads {profile_gap:.1e} and {curve_gap:.1e}).")
    return (f"After {steps:,} steps the curves still differ by up to {curve_gap:.1e} and the profiles by {profile_gap:.1e}: "
            "in this run the central limit theorem has not yet made them one mechanism.")


def figure5a(rates, fig5: dict, paper: dict):
    """Hayes et al.'s Figure 5a: the noise (left) and the bound's upper end (right) against the rate, PLD and RDP
    calibrated, with the values their text states (``paper[q]``) as open circles."""
    fig, axes = plotting.column_figure(1, 2, row_height=3.0)
    for acc, ls in (("pld", "-"), ("rdp", "--")):
        arr = np.array(fig5[acc])
        axes[0].plot(rates, arr[:, 0], ls=ls, marker=".", label=acc.upper())
        axes[1].plot(rates, arr[:, 2], ls=ls, marker=".", label=f"σ from {acc.upper()}")
    for i, (q, value) in enumerate(paper.items()):
        axes[1].plot([q], [value], color="k", **plotting.PAPER_STYLE, label="paper (stated in its text)" if i == 0 else None)
    for ax, ylabel, title in zip(axes, (r"noise multiplier $\sigma$", r"bound $\gamma$"), ("a: calibrated noise", "b: the bound")):
        ax.set_xscale("log")  # the bound changes most between 0.01 and 0.1
        ax.set(xlabel="sampling rate q (log scale)", ylabel=ylabel, title=title)
        plotting.legend(ax)
    return fig


def figure5a_rows(rates, fig5: dict) -> tuple[list, list]:
    """(header, rows) of Figure 5a."""
    return ["q", "σ (PLD)", "γ bracket (PLD σ)", "σ (RDP)", "γ, RDP σ"], [
        [f"{q:g}", f"{a[0]:.4f}", f"[{a[1]:.4f}, {a[2]:.4f}]", f"{b[0]:.4f}", f"{b[2]:.4f}"]
        for q, a, b in zip(rates, fig5["pld"], fig5["rdp"])]


def figure5a_claim(rates, fig5: dict, paper: dict, other: str = "") -> str:
    """The summary's sentence on Figure 5a: the bound where the text states one (``paper``: empty when this run's
    set-up differs from the paper's, described by ``other``), and how RDP calibration moves it."""
    stated = [f"{fig5['pld'][list(rates).index(q)][2]:.3f} at q = {q:g} where the text says about {value:.2f}"
              for q, value in paper.items() if q in rates]
    more_noise = all(b[0] >= a[0] for a, b in zip(fig5["pld"], fig5["rdp"]))
    lower_bound = all(b[2] <= a[2] for a, b in zip(fig5["pld"], fig5["rdp"]))
    return (("with the tight accountant the upper end of the bracket is " + "; ".join(stated) + " (the report gives the "
             "verdicts). " if stated else "")
            + (f"The paper's values are for {other}, so this run's set-up is not compared with them. " if other else "")
            + "With RDP calibration σ is " + ("larger" if more_noise else "not always larger") + " and the bound "
            + ("smaller" if lower_bound else "not always smaller") + " at every rate of this run.")


def _sweep_panels(prior_sizes):
    return plotting.column_figure((len(prior_sizes) + 1) // 2, 2 if len(prior_sizes) > 1 else 1, row_height=2.8)


def _title(j, n):
    return f"{chr(97 + j)}: prior size {n} (κ = {1 / n:g})"


def figure14(rates, sweep: dict, prior_sizes):
    """Hayes et al.'s Figure 14 (upper-bound part): the bound against the rate, a panel per prior size, a line per epsilon."""
    fig, axes = _sweep_panels(prior_sizes)
    for j, n in enumerate(prior_sizes):
        for k, (e, points) in enumerate(sweep.items()):
            axes[j].plot(rates, [pt[1][j] for pt in points], marker=MARKERS[k % len(MARKERS)], ms=4, label=f"ε = {e:g}")
        axes[j].set(title=_title(j, n), xlabel="sampling rate q (log scale)", ylabel=r"bound $\gamma$", ylim=(0.0, 1.02))
        plotting.log_rate_axis(axes[j], rates)
    if plotting.spare_panels(axes, len(prior_sizes), source=axes[0], title="calibrated to (ε, δ)") is None:
        plotting.legend(axes[0])
    return fig


def figure15(rates, sweep: dict, prior_sizes):
    """Hayes et al.'s Figure 15: the calibrated noise against the rate, each marker coloured by the bound."""
    fig, axes = _sweep_panels(prior_sizes)
    for j, n in enumerate(prior_sizes):
        for k, (e, points) in enumerate(sweep.items()):
            marker, sig = MARKERS[k % len(MARKERS)], [pt[0] for pt in points]
            axes[j].plot(rates, sig, color="0.6", lw=0.7, zorder=0)
            colours = axes[j].scatter(rates, sig, c=[pt[1][j] for pt in points], cmap="viridis", vmin=0.0, vmax=1.0, s=36,
                                      marker=marker, edgecolors="0.3", linewidths=0.4)
            axes[j].plot([], [], color="0.6", lw=0.7, marker=marker, mfc="white", mec="0.3", label=f"ε = {e:g}")
        axes[j].set_yscale("log")
        axes[j].set(title=_title(j, n), xlabel="sampling rate q (log scale)", ylabel=r"noise multiplier $\sigma$")
        plotting.log_rate_axis(axes[j], rates)
    fig.colorbar(colours, ax=axes[:len(prior_sizes)], label=r"bound $\gamma$ (one scale for every panel)", shrink=0.8)
    if plotting.spare_panels(axes, len(prior_sizes), source=axes[0], title="calibrated to (ε, δ): marker") is None:
        plotting.legend(axes[0])
    return fig


#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 5


def estimate(p: dict, workers: int) -> None:
    """Print the chapter's estimated run time.  The unit of every figure is one calibration and the
    bracket of its mechanism, probed at each figure's costliest corner (the smallest rate, the largest epsilon), so that
    the estimate errs long."""
    def probe(eps, rate, steps, fine=False):
        sigma = calibrate.solve(Epsilon(eps, p["delta"]), rate, steps=steps, discretization=p["discretization"], rtol=p["rtol"],
                                bound_below=False).noise_multiplier
        pld.tradeoff_bracket(Mechanism("gaussian", sigma, rate, steps), discretization=p["discretization"])
        if fine:  # the one-step figure also draws each mechanism's PLD on a ten times finer lattice
            pld.mechanism_pld(Mechanism("gaussian", sigma, rate, 1), discretization=p["discretization"] / 10)

    rates, hayes, sweep = p["rates"], p["hayes_rates"], len(p["sweep_epsilon"]) * len(p["sweep_rates"])
    runtime.estimate([(lambda: probe(p["epsilon"], min(rates), 1, fine=True), len(rates), False),
                             (lambda: probe(p["epsilon"], min(rates), p["clt_steps"]), len(rates)),
                             (lambda: probe(p["epsilon"], min(hayes), p["hayes_steps"]), 2 * len(hayes)),
                             (lambda: probe(max(p["sweep_epsilon"]), min(p["sweep_rates"]), p["hayes_steps"]), sweep)],
                            workers=workers, what=f"{2 * len(hayes) + sweep + 2 * len(rates)} calibrations", figures=FIGURES)


_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}


def count(n: int) -> str:
    """A small count in words ("three"), a larger one in digits."""
    return _WORDS.get(n, f"{n:,}")


def legend_where(panels: int) -> str:
    """Where Figures 14 and 15 put their legend: a grid of two per row leaves a spare panel with an odd count."""
    return "legend in the spare panel" if panels > 1 and panels % 2 else "legend in panel a"
