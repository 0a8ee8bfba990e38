"""Tables, Figure 7 and the run-dependent prose of the chapter on the DP-SGD settings of the RTM paper (Kaissis et al.
2023b, App. 7.3 and App. Figure 7).

A workload is ``(label, noise, rate, steps, delta)`` (a row of the ``runs`` parameter, through
:func:`fdp_book.parameters.dpsgd_runs`).  ``dp[label]`` holds its epsilon by the RDP and the PLD accountant
(``rdp``, ``pld``), the paper's stated epsilon (``stated``, None for a workload of your own) and the noise each
accountant needs for it (``noise_rdp``, ``noise_pld``).  ``calib`` lists, per workload, the RTM sandwich of each reading
(``tensor``, ``sum``: the noise ``upper`` and ``lower`` and their epsilons) and the paper's RTM epsilon
(``eps_rtm_paper``).  ``fig7[label]`` lists one dict per budget: ``eps``, ``noise``, and gamma under the DP threat
model (``dp``), the RTM (``rtm``) and by Edgeworth (``edgeworth``, NaN where the series is not a distribution).
"""

from __future__ import annotations

import warnings

import numpy as np

from fdp import FDPWarning, Mechanism, calibrate
from fdp.accounting import pld
from fdp.experiments import estimators
from fdp.formatting import upper
from fdp.targets import Epsilon

from .. import page, plotting, results, runtime
from . import see

READINGS = ("tensor", "sum")


def _eps(value: float) -> str:
    """An epsilon as every page writes it: an upper bound rounded up to 4 significant digits, trailing zeros kept."""
    return upper(value, 4, keep_zeros=True)


def key(label: str) -> str:
    """The workload's key in the registry (``CIFAR-10`` -> ``cifar10``)."""
    return label.lower().replace("-", "").replace(" ", "_")


def _names(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else ("both " if len(labels) == 2 else "") + ", ".join(labels[:-1]) + " and " + labels[-1]


def dp_rows(workloads, dp) -> tuple[list, list]:
    """(header, rows) of each workload's epsilon by both accountants and the noise each needs for the stated epsilon."""
    return ["workload", "ε (RDP)", "ε (PLD)", "stated ε", "noise (RDP)", "noise (PLD)"], [
        [label, _eps(dp[label]["rdp"]), _eps(dp[label]["pld"])]
        + (["-", "-", "-"] if dp[label]["stated"] is None else
           [f"{dp[label]['stated']:g}", f"{dp[label]['noise_rdp']:.3f}", f"{dp[label]['noise_pld']:.3f}"])
        for label, *_ in workloads]


def see_dp(workloads, dp, statuses: dict) -> str:
    """The paragraph under the DP table: whether the RDP accountant certifies each stated epsilon (``statuses[label]``,
    the record's status), and which workloads the tight PLD accountant certifies."""
    out, spec = [], results.load_spec("rtm_dpsgd")  # (the paper's values and tolerances, read once)
    for label, noise, _, _, delta in workloads:
        d = dp[label]
        if d["stated"] is None:
            out.append(f"{label}: ε = {_eps(d['rdp'])} (RDP), {_eps(d['pld'])} (tight PLD).")
        elif statuses[label] == "match":
            tol = spec[f"app73/{key(label)}/dp_eps_rdp"]["tol"]
            out.append(f"{label}'s settings give ε = {_eps(d['rdp'])} with the RDP accountant, within the registry's "
                       f"tolerance ({tol:g}) of the stated ({d['stated']:g}, {delta:g}): for exactly ε = {d['stated']:g} the RDP accountant needs "
                       f"noise {d['noise_rdp']:.3f}, the printed one is {noise:g}.")
        else:
            out.append(f"{label}'s settings give ε = {_eps(d['rdp'])} with RDP: with the printed noise multiplier {noise:g} the "
                       f"RDP accountant does not certify ε = {d['stated']:g} (it needs noise {d['noise_rdp']:.3f}), so either the "
                       "printed value is rounded down or a different accountant or sampling scheme was used; the paper does "
                       "not say which" + (" ({ref}`rtm-app73-snli-eps`)." if label == "SNLI" else "."))  # that erratum is SNLI's
    certified = [label for label, *_ in workloads if dp[label]["stated"] is not None and dp[label]["pld"] <= dp[label]["stated"]]
    if certified:
        out.append(f"The tight PLD accountant certifies {_names(certified)} at or below the stated ε: the guarantees hold, "
                   "if not always by the accountant the paper names.")
    return see(out)


def calibration_rows(calib) -> tuple[list, list]:
    """(header, rows) of the RTM sandwich: per workload and reading, the two noises and their epsilons."""
    return ["workload", "reading", "σ upper / lower", "ε (RDP) upper / lower", "paper ε"], [
        [r["label"], f"({'a' if reading == 'tensor' else 'b'}) {reading}", f"{r[reading]['upper']:.3f} / {r[reading]['lower']:.3f}",
         f"{upper(r[reading]['eps_upper'], 3)} / {upper(r[reading]['eps_lower'], 3)}",
         "-" if r["eps_rtm_paper"] is None else f"about {r['eps_rtm_paper']:g}"] for r in calib for reading in READINGS]


def reading_b(calib) -> str:
    """Whether reading (b) needs more noise than reading (a) (the sentence goes on "... reading (b): <this>")."""
    more = [r["label"] for r in calib if r["sum"]["upper"] > r["tensor"]["upper"]]
    less = [r["label"] for r in calib if r["sum"]["upper"] <= r["tensor"]["upper"]]
    if not less:
        return ("it needs more noise for the same curve on every workload here. The RTM guarantees of the paper's "
                "deep-learning experiments hold only against adversaries who do not combine the releases beyond their "
                "magnitudes")
    if more:
        return (f"it needs more noise for the same curve on {', '.join(more)}, but not on {', '.join(less)}. Where it needs "
                "more, the paper's RTM guarantees hold only against adversaries who do not combine the releases beyond "
                "their magnitudes")
    return "it needs no more noise than reading (a) on any workload here"


def see_calibration(calib) -> str:
    """The paragraph under the calibration table: how far each reading lies from the printed RTM epsilons, and whether
    it keeps their order."""
    printed = [r for r in calib if r["eps_rtm_paper"] is not None]
    if not printed:
        return see(["No workload of this run has a printed RTM ε to compare with."])
    ratio = {reading: [r[reading]["eps_upper"] / r["eps_rtm_paper"] for r in printed] for reading in READINGS}
    order = {reading: all((a[reading]["eps_upper"] > b[reading]["eps_upper"]) == (a["eps_rtm_paper"] > b["eps_rtm_paper"])
                          for a in printed for b in printed if a is not b) for reading in READINGS}
    span = {reading: f"{min(v):.2f}-{max(v):.2f}" if len(v) > 1 else f"{v[0]:.2f}" for reading, v in ratio.items()}
    several = len(printed) > 1  # an order needs two workloads
    closer = "(a)" if max(abs(np.log(ratio["tensor"]))) <= max(abs(np.log(ratio["sum"]))) else "(b)"
    return see(["Neither reading reproduces the printed values exactly, but they are not equally close.",
                f"Reading (a), the tensor product, gives {span['tensor']} times the printed ε"
                + (" and keeps the printed order of the workloads" if several and order["tensor"] else "") + "; "
                f"reading (b) gives {span['sum']} times" + (" and reverses the order" if several and not order["sum"] else "") + ".",
                f"Reading {closer} fits the printed values better, which suggests the paper composed the SGM "
                + ("by the tensor product of the one-step RTM curves" if closer == "(a)" else "by one statistic of all releases")
                + "; the remaining gap cannot be attributed from the text, because \"optimally sandwich\" and the curves "
                "compared are not specified further ({ref}`rtm-app73-composition`)."])


def figure7(workloads, fig7, kappa: float, dimension: int):
    """App. Figure 7: the ReRo bound against the budget under the DP threat model and the RTM, one panel per workload."""
    fig, axes = plotting.column_figure((len(workloads) + 1) // 2, 2 if len(workloads) > 1 else 1, row_height=3.2)
    for ax, (label, _, rate, steps, _) in zip(axes, workloads):
        eps = [r["eps"] for r in fig7[label]]
        ax.plot(eps, [r["dp"] for r in fig7[label]], "o-", color="k", label="DP threat model")
        ax.plot(eps, [r["rtm"] for r in fig7[label]], "s-", color="C0", label=f"RTM ($d$ = {dimension})")
        ax.axhline(kappa, color="0.6", ls=":", lw=1, label=r"prior $\kappa$")
        ax.set_xscale("log")
        ax.set(ylim=(0, 1.02), xlabel=r"privacy budget $\varepsilon$", ylabel=r"ReRo bound $\gamma$",
               title=f"{label}: q = {rate:.4g}, T = {steps}")
    plotting.legend(axes[0], loc="upper left")
    for ax in axes[len(workloads):]:
        ax.axis("off")
    return fig


def figure7_rows(fig7) -> tuple[list, list]:
    """(header, rows) of Figure 7's points."""
    return ["workload", "ε", "noise", "γ DP", "γ RTM", "difference"], [
        [label, f"{r['eps']:g}", f"{r['noise']:.3f}", f"{r['dp']:.4f}", f"{r['rtm']:.4f}", f"{r['dp'] - r['rtm']:.4f}"]
        for label in fig7 for r in fig7[label]]


def always_below(fig7) -> bool:
    """Whether the RTM bound lies at or below the DP bound at every point (the paper's claim)."""
    return all(r["rtm"] <= r["dp"] for rows in fig7.values() for r in rows)


def edgeworth_gap(rows) -> float:
    """Largest distance of Edgeworth to the tight DP bound over a workload's points (NaN if it fails at all)."""
    return max([abs(r["edgeworth"] - r["dp"]) for r in rows if np.isfinite(r["edgeworth"])] or [np.nan])


def see_figure7(workloads, fig7, kappa: float) -> str:
    """Figure 7's paragraph: the claim, each workload's gap at the smallest and largest budget, Edgeworth's accuracy."""
    out = [("The claim holds at every budget: the RTM bound lies below the DP bound" if always_below(fig7) else
            "**The RTM bound is not below the DP bound at every budget**")
           + f", and at small budgets both approach the prior κ = {kappa:g}."]
    for label, _, rate, steps, _ in workloads:
        lo, hi = fig7[label][0], fig7[label][-1]
        out.append(f"{label} (q = {rate:.2g}, T = {steps}): the gap is {100 * (lo['dp'] - lo['rtm']):.1f} percentage points "
                   f"at ε = {lo['eps']:g} and {100 * (hi['dp'] - hi['rtm']):.1f} at ε = {hi['eps']:g}, where the DP bound "
                   f"allows {upper(hi['dp'], 2, keep_zeros=True)} and the RTM bound {upper(hi['rtm'], 2, keep_zeros=True)} (rounded up).")
    out.append("The RTM curve here is reading (a), the tensor product of the one-step curves; reading (b), one statistic of "
               "the sum of all releases, is another curve; the calibration table above compares the noise each reading needs, "
               "workload by workload.")
    out.append("The Edgeworth expansion the paper used stays within "
               + ", ".join(f"{edgeworth_gap(rows):.1e} ({label})" for label, rows in fig7.items())
               + " of the tight DP bound. How much lower the RTM bound is depends on the workload: at a small sampling rate "
               "a given ε allows little noise, so each step in which the target is sampled reveals much, but the target is "
               "rarely sampled; both bounds then stay low and close together.")
    return see(out)


def summary(workloads, dp, fig7) -> str:
    """The Summary's bullets."""
    out = [f"* {label}: the printed settings give ε = {_eps(dp[label]['rdp'])} with the RDP accountant the paper names "
           f"(stated {dp[label]['stated']:g}) and {_eps(dp[label]['pld'])} with the tight PLD accountant."
           for label, *_ in workloads if dp[label]["stated"] is not None]
    own = [label for label, *_ in workloads if dp[label]["stated"] is None]
    if own:
        out.append(f"* {_names(own)}: {'a workload' if len(own) == 1 else 'workloads'} of your own, not in App. 7.3: computed "
                   "as the paper's are, with no printed value to compare with (the paper's rows keep their comparisons).")
    if len(own) < len(workloads):
        out.append("* The RTM noise calibration comes closest to the paper's hypothetical ε under the tensor-product reading "
                   "of composition (see the calibration section for the ratios); the exact values are not reproducible from "
                   "the description. ImageNet is left out because its hyperparameters are not printed.")
    else:
        out.append("* The RTM noise calibration of each run is in the calibration section; the paper prints no RTM ε for "
                   "these runs, so there is nothing to compare it with.")
    out.append("* Figure 7: the RTM ReRo bound lies below the DP bound at every budget, as claimed." if always_below(fig7) else
               "* Figure 7: the RTM ReRo bound is **not** below the DP bound at every budget.")
    return "\n".join(out)


def quoted(workloads, dp, calib) -> dict:
    """Numbers other pages quote ({result}`rtm_dpsgd:<name>`, the errata), formatted once from this run."""
    out = {}
    for label, *_, delta in workloads:
        d, k = dp[label], key(label)
        out |= {f"{k}_eps_rdp": _eps(d["rdp"]), f"{k}_eps_pld": _eps(d["pld"]), f"{k}_delta": f"{delta:g}"}
        if d["stated"] is not None:
            out[f"{k}_noise_rdp"] = f"{d['noise_rdp']:.3f}"
    for r in calib:
        out |= {f"{key(r['label'])}_rtm_eps_{reading}": upper(r[reading]["eps_upper"], 3) for reading in READINGS}
    return out


#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 1


def estimate(p: dict, workloads) -> None:
    """Print the chapter's estimated run time.  The units of work, each timed on the first workload: a
    point of Figure 7 (calibration, then gamma under both threat models) at the largest budget, the RTM sandwich of a
    reading (the "sum" reading costs about the same), a calibration of the DP accounting; they run one after the other."""
    _, noise, rate, steps, delta = workloads[0]

    def figure7_point(eps):
        sigma = calibrate.solve(Epsilon(eps, delta, accountant=p["fig7_accountant"]), rate, steps=steps, discretization=1e-4,
                                rtol=1e-4, bound_below=False).noise_multiplier
        estimators.gamma_threat_models(Mechanism("gaussian", sigma, rate, steps), p["fig7_kappa"], p["fig7_d"],
                                       discretization=p["pld_discretization"], rtm_discretization=p["rtm_discretization"])

    def sandwich():
        h = p["sandwich_discretization"]
        target = pld.tradeoff_curve(pld.mechanism_pld(Mechanism("gaussian", noise, rate, steps), discretization=h), "symmetrised")
        calibrate.sandwich_noise(target, rate, steps, 1, "tensor", bounds=p["sandwich_bounds"], rtol=p["sandwich_rtol"], discretization=h)

    points = len(workloads) * len(p["fig7_epsilon"])
    runtime.estimate([(lambda: figure7_point(max(p["fig7_epsilon"])), points), (sandwich, 2 * len(workloads)),
                             (lambda: calibrate.solve(Epsilon(1.0, delta), rate, steps=steps, discretization=1e-4, rtol=1e-4,
                                                     bound_below=False), 2 * len(workloads))],
                            what=f"{page.plural(len(workloads), 'workload')}, {page.plural(points, 'point')} of Figure 7", figures=FIGURES)


class SearchNotes:
    """The library's notes on the noise searches between :meth:`start` and :meth:`show` (its FDPWarnings, such as a
    search that left ``sandwich_bounds``), shown as one Markdown note in the page's parameter names instead of as
    warnings on the notebook's error stream; other warnings pass through.  Two calls, so that the searches between
    them are a visible cell of their own."""

    def start(self) -> SearchNotes:
        self._catching = warnings.catch_warnings(record=True)
        self._caught = self._catching.__enter__()
        warnings.simplefilter("always")
        return self

    def show(self) -> None:
        from IPython.display import Markdown, display

        self._catching.__exit__(None, None, None)
        notes = []
        for w in self._caught:
            if issubclass(w.category, FDPWarning):
                note = str(w.message).replace("outside bounds ", "outside sandwich_bounds ")
                notes += [] if note in notes else [note]
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if notes:
            display(Markdown("**Note.** " + " ".join(n[0].upper() + n[1:] + "." for n in notes)))
