"""Figures, tables and run-dependent prose of the chapter on ReRo bounds for subsampled mechanisms (Kaissis et al.
2023a, Figure 1 and appendix Figure 2).

The run's numbers arrive as :class:`fdp.experiments.estimators.GammaSweep` (one per panel a-d, keyed by the panel's
letter, with the panel's settings ``cfg`` = dict(mechanism, sampling_rate, steps, mu_max)) and
:class:`fdp.experiments.estimators.GammaCurves` (one per workload).
"""

from __future__ import annotations

import numpy as np

from fdp import Mechanism
from fdp.accounting import ground_truth, montecarlo, pld
from fdp.formatting import upper

from .. import page, parameters, plotting, runtime


def _nb(text: str) -> str:
    """Non-breaking hyphens: 1.74e-01 never wraps at its minus in a table cell."""
    return text.replace("-", "\u2011")


def panel_title(name: str, cfg: dict) -> str:
    """``b: SGM, p = 0.5, N = 10``: the panel's letter, the mechanism (S for subsampled) and its settings."""
    return (f"{name}: {'S' if cfg['sampling_rate'] < 1 else ''}{'LM' if cfg['mechanism'] == 'laplace' else 'GM'}, "
            f"p = {cfg['sampling_rate']:g}, N = {cfg['steps']}")


def figure1(panels: dict, sweeps: dict, lines: dict, mp_checks: dict):
    """Figure 1a-d: gamma against the effect size; ``lines[name]`` = (effect sizes, certified upper end, CLT) drawn as
    lines, the sweep's Edgeworth and Monte Carlo as markers, ``mp_checks[name, mu]`` (mpmath ground truths) as circles."""
    fig, axes = plotting.column_figure(2, 2, row_height=2.9)
    for ax, (name, cfg) in zip(axes, panels.items()):
        s, (line_mu, line_up, line_clt) = sweeps[name], lines[name]
        ax.plot(line_mu, line_up, color="k", lw=2.5, label="ground truth (certified)")
        ax.plot(s.effect_sizes, s.edgeworth, color="C0", marker="o", ms=4, ls="none", label="Edgeworth (4th order)")
        ax.plot(line_mu, line_clt, color="C1", ls="--", label="CLT")
        ax.errorbar(s.effect_sizes, s.mc, yerr=np.clip([s.mc - s.mc_lower, s.mc_upper - s.mc], 0, None), color="C2", fmt="s", ms=3,
                    capsize=2, label="Monte Carlo")
        for (panel, mu), gt in mp_checks.items():
            if panel == name:
                ax.plot([mu], gt.midpoint, **plotting.PAPER_STYLE, color="k")
        word = "\\Delta_1/b" if cfg["mechanism"] == "laplace" else "\\Delta_2/\\sigma"
        ax.set(xlabel=f"effect size ${word}$", ylabel=r"$\gamma$", title=panel_title(name, cfg), ylim=(0, 1.05))
    if mp_checks:  # the open circles: the paper's own method, at two effect sizes of the panels with few steps
        axes[0].plot([], [], color="k", **plotting.PAPER_STYLE, label="mpmath integration")
    plotting.legend(axes[0], loc="lower right")
    return fig


def panel_rows(panels: dict, sweeps: dict, eps_max: dict, paper_eps_max: dict) -> tuple[list, list]:
    """(header, rows): each panel's settings, the epsilon at its largest effect size against the paper's, and the
    bracket's largest width."""
    header = ["panel", "mechanism", "p", "N", "largest effect size", "ε there (ours)", "ε_max (paper)", "bracket width"]
    return header, [[name, cfg["mechanism"].capitalize(), f"{cfg['sampling_rate']:g}", f"{cfg['steps']}", f"{cfg['mu_max']:g}",
                     f"{eps_max[name]:.4g}", paper_eps_max[name], f"{np.max(sweeps[name].upper - sweeps[name].lower):.1e}"]
                    for name, cfg in panels.items()]


def time_rows(sweeps: dict) -> tuple[list, list]:
    """(header, rows): seconds each method took over a panel's sweep."""
    return ["panel", "bracket (s)", "Edgeworth (s)", "Monte Carlo (s)"], [
        [name, f"{s.seconds['bracket']:.1f}", f"{s.seconds['edgeworth']:.2f}", f"{s.seconds['mc']:.1f}"] for name, s in sweeps.items()]


def error_rows(errors: dict, points: int) -> tuple[list, list]:
    """(header, rows) of how the methods compare with the ground truth, from each panel's ``GammaSweep.errors()``."""
    header = ["panel", "Edgeworth: error at most", "Edgeworth invalid", "CLT: error at most", "MC: error at most", "MC misses truth",
              "MC flags collapse"]
    return header, [[name, _nb(f"{m['ew_gap']:.2e}"), f"{m['invalid']} of {points}", _nb(f"{m['clt_gap']:.2e}"),
                     _nb(f"{m['mc_gap']:.2e}"), f"{m['mc_miss']} of {points}", f"{m['mc_collapsed']} of {points}"]
                    for name, m in errors.items()]


def mc_summary(errors: dict, points: int) -> str:
    """The summary's sentence on Algorithm 1: where its collapse is flagged, where an unflagged interval misses."""
    flagged = [f"{m['mc_collapsed']} of {points} points in panel {n}" for n, m in errors.items() if m["mc_collapsed"]]
    missed = [f"{m['mc_miss']} of {points} points in panel {n}" for n, m in errors.items() if m["mc_miss"]]
    return ("Algorithm 1 (Monte Carlo) breaks down where large likelihood ratios are rare: "
            + (f"our check flags the collapse at {', '.join(flagged)} and reports the trivial interval there"
               if flagged else "in this run our check flags no collapse")
            + (f"; an interval that misses the ground truth without being flagged: {', '.join(missed)}."
               if missed else "; no unflagged interval misses the ground truth."))


def ew_validity(errors: dict, points: int) -> str:
    """Where the Edgeworth series is not a distribution in this run (the sentence goes on "...: for few steps")."""
    invalid = sum(m["invalid"] for m in errors.values())
    if invalid == 0:
        return "In this run it is a valid distribution at every point of the four panels, but it need not be"
    return f"In this run it is not a distribution at {invalid} of {points * len(errors)} points, where the plot leaves a gap; in general"


def mpmath_text(checks: int, apart: float, ends: float) -> str:
    """How far the mpmath ground truth lies from the PLD bracket at the checked points (0 apart: they overlap)."""
    if not checks:
        return "This run checks the bracket against no mpmath computation (no panel has few enough steps)."
    return (f"mpmath ground truth against the PLD bracket at {checks} points: "
            + ("the two intervals overlap at every point" if apart == 0.0 else f"the intervals are up to {apart:.1e} apart")
            + f", and their ends differ by at most {ends:.1e}.")


def workloads_figure(labels: list, curves: list, epsilons: list, deltas: list):
    """App. Figure 2: gamma against kappa for each workload, certified (black), Edgeworth, CLT and the diagonal."""
    fig, axes = plotting.column_figure((len(curves) + 1) // 2, 2 if len(curves) > 1 else 1, row_height=3.0)
    for i, (ax, label, c, eps, delta) in enumerate(zip(axes, labels, curves, epsilons, deltas)):
        ax.loglog(c.kappa, c.upper, color="k", lw=2.5, label="ground truth (certified)")
        ax.loglog(c.kappa, c.edgeworth, color="C0", marker=".", label="Edgeworth")
        ax.loglog(c.kappa, c.clt, color="C1", ls="--", label="CLT")
        ax.loglog(c.kappa, c.kappa, color="0.6", lw=1, ls=":", label=r"$\gamma = \kappa$ (no leakage)")
        ax.set(title=f"{'abcdefgh'[i]}: {label}\n$\\varepsilon$ ≤ {upper(eps, 3)} at $\\delta$ = {delta:g}",
               xlabel=r"prior $\kappa$", ylabel=r"$\gamma$")
    plotting.legend(axes[0])
    for ax in axes[len(curves):]:
        ax.axis("off")
    return fig


def workload_rows(labels: list, curves: list, epsilons: list, deltas: list) -> tuple[list, list]:
    """(header, rows): each workload's epsilon, Edgeworth's and the CLT's largest relative error, the bracket's width."""
    header = ["workload", "ε at most (at δ)", "Edgeworth: rel. error at most", "CLT vs Edgeworth", "bracket width / γ",
              "seconds: bracket, Edgeworth"]
    return header, [[label, f"{upper(eps, 3)} ({_nb(f'{delta:g}')})", _nb(f"{c.edgeworth_error:.1e}"), _nb(f"{c.clt_vs_edgeworth:.1e}"),
                     _nb(f"{c.relative_width:.1e}"), f"{c.seconds['bracket']:.1f}, {c.seconds['edgeworth']:.2f}"]
                    for label, c, eps, delta in zip(labels, curves, epsilons, deltas)]


def speed_rows(c, setup: float, per_kappa: float, riskcal_seconds: float, riskcal_gap: float) -> tuple[list, list]:
    """(header, rows) of the performance table: Edgeworth, our bracket and dp_accounting + riskcal on workload ``c``."""
    return ["method", "time", "accuracy"], [
        ["Edgeworth (4th order)", f"setup {1e3 * setup:.1f} ms, {1e3 * per_kappa:.2f} ms per κ",
         f"rel. error at most {c.edgeworth_error:.1e} (to the bracket's farther end)"],
        ["certified bracket (ours)", f"{c.seconds['bracket']:.3g} s for all κ", f"width ≤ {np.max(c.upper - c.lower):.1e} (certified)"],
        ["dp_accounting + riskcal", f"{riskcal_seconds:.3g} s for all κ",
         f"rel. error at most {riskcal_gap:.1e} (to the bracket's farther end; no certificate of its own)"]]


def riskcal_speed(bracket_seconds: float, riskcal_seconds: float) -> str:
    """How fast the riskcal route was against the bracket ("... it was <this>")."""
    ratio, both = bracket_seconds / riskcal_seconds, f"({riskcal_seconds:.3g} s against {bracket_seconds:.3g} s)"
    if ratio >= 1.05:
        return f"{ratio:.1f} times as fast as the bracket {both}"
    if ratio <= 1 / 1.05:
        return f"{1 / ratio:.1f} times as slow as the bracket {both}"
    return f"as fast as the bracket {both}"


def clt_error(gap: float) -> str:
    """A relative error in per cent, one decimal below 10 %."""
    return f"{100 * gap:,.{1 if gap < 0.1 else 0}f} %"


def workloads_summary(curves: list, tolerance: float = 0.05) -> str:
    """The summary's bullet on the workloads: whether the CLT and Edgeworth agree with the certified value within the
    recorded ``tolerance`` (relative)."""
    ew = max(c.edgeworth_error for c in curves)
    clt = max(c.clt_vs_edgeworth for c in curves)
    if ew <= tolerance and clt <= tolerance:
        return (f"For the DP-SGD workloads the CLT and Edgeworth agree with the certified value within {tolerance:.0%} "
                f"relative (largest distances {ew:.1e} and {clt:.1e}), as the paper says.")
    return (f"For the DP-SGD workloads of this run the approximations leave the certified value: Edgeworth by up to "
            f"{ew:.1e} relative, the CLT by up to {clt:.1e} from Edgeworth (the recorded tolerance is {tolerance:.0%}).")


def mpmath_agreement(checks: int, apart: float) -> str:
    """The summary's sentence on the two independent ground truths."""
    if not checks:
        return "This run does not check it against the independent mpmath computation (no panel has few enough steps)."
    if apart == 0.0:
        return f"It agrees with the independent mpmath computation: the two intervals overlap at all {checks} points checked."
    return f"It disagrees with the independent mpmath computation: their intervals are up to {apart:.1e} apart."


#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 2
#: Effect sizes of Figure 1's smooth lines (certified and CLT) per panel: they are cheap, the markers are the sweep's.
LINE_POINTS = 40


def estimate(p: dict, panels: dict, workers: int) -> None:
    """Print the chapter's estimated run time.  Per panel, a bracket and a Monte-Carlo run at each effect
    size (probed at the largest, with 10^4 samples: the time grows with the samples), a bracket at each of the smooth
    line's :data:`LINE_POINTS` effect sizes, the mpmath ground truth at two
    points of the subsampled few-step panels (probed on 100 grid points: it grows with the grid), and a bracket per
    workload."""
    probe_samples, probe_grid, kappa, points = 10_000, 100, p["kappa"], p["points"]
    parts = []
    for cfg in panels.values():
        m = Mechanism(cfg["mechanism"], 1 / cfg["mu_max"], cfg["sampling_rate"], cfg["steps"])
        parts += [(lambda m=m: pld.tradeoff_bracket(m, discretization=p["discretization"], max_grid=p["max_grid"]).gamma(kappa),
                   points + LINE_POINTS, False),
                  (lambda m=m: montecarlo.gamma_mc(m, [kappa], samples=probe_samples, seed=0), points * p["mc_samples"] / probe_samples)]
        if cfg["sampling_rate"] < 1.0 and cfg["steps"] <= 10:
            parts.append((lambda m=m: ground_truth.gamma_ground_truth(m, [kappa], grid=probe_grid), 2 * p["mpmath_grid"] / probe_grid, False))
    _, noise, rate, steps, _ = parameters.dpsgd_runs(p["runs"])[0]
    parts.append((lambda: pld.tradeoff_bracket(Mechanism("gaussian", noise, rate, steps), discretization=p["workload_discretization"],
                                               level_min=p["kappa_min"]).gamma([p["kappa_min"]]), 2 * len(p["runs"]), False))
    runtime.estimate(parts, workers=workers, what=f"{len(panels) * points} points of Figure 1 with {p['mc_samples']:,} "
                            f"Monte-Carlo samples each, {page.plural(len(p['runs']), 'run')}", figures=FIGURES)
