"""Figure 11, the tables and the run-dependent prose of the chapter on Guo et al.'s Fano bound (Hayes et al. App. H).

The run's numbers arrive as dictionaries: ``table[n, method]`` lists one advantage bound per noise of the run for
each prior size ``n`` and each method of :data:`LABELS`; ``printed[n, method, sigma]`` is Table 2's value of that cell
or None where the paper prints none; ``z_scores[n, sigma][samples]`` is how many standard deviations of Algorithm 1
with that many samples separate the printed "Ours" value (anywhere in its rounding) from the exact one.
"""

from __future__ import annotations

import numpy as np

from fdp import Mechanism
from fdp.accounting import montecarlo
from fdp.curves import rero

from .. import plotting, runtime
from . import see

#: The three bounds of Table 2, in its column order
LABELS = {"guo_analytic": "Guo et al. (analytic)", "guo_mc": "Guo et al. (MC)", "ours": "Ours (trade-off, exact)"}
COLORS = {"guo_analytic": "C0", "guo_mc": "C1", "ours": "C2"}
#: Half a unit of Table 2's last printed decimal (it prints 3)
ROUNDING = 0.0005


def _printed_cells(printed, method=None) -> list:
    return [key for key, value in printed.items() if value is not None and (method is None or key[1] == method)]


def rounding_gap(printed: float, exact: float) -> float:
    """Signed distance from ``exact`` to the nearest point of the printed value's rounding interval (0 inside it)."""
    return float(np.sign(printed - exact) * max(abs(printed - exact) - ROUNDING, 0.0))


def z_text(z: float) -> str:
    """A z-score to 2 decimals; one just beyond 3 keeps 4, so that it never reads as 3.00 next to a verdict, and one that
    is not 0 but rounds to it keeps its sign and first digit (0 means the rounding interval holds the exact value)."""
    if z != 0 and round(z, 2) == 0:
        return f"{z:+.0e}"
    return f"{z:+.4f}" if round(abs(z), 2) == 3.0 and abs(z) != 3.0 else f"{round(z, 2) + 0.0:+.2f}"  # no -0.00


def table2(table, printed, n, sigmas) -> tuple[list, list, str]:
    """(header, rows, caption) of Table 2 for prior size ``n``: our value of each bound, the print in parentheses."""
    rows = [[f"{s:g}"] + [f"{table[n, m][i]:.3f}" + ("" if printed[n, m, s] is None else f" ({printed[n, m, s]:.3f})")
                          for m in LABELS] for i, s in enumerate(sigmas)]
    has_print = any(printed[n, m, s] is not None for m in LABELS for s in sigmas)
    which = "ours (printed in Table 2)" if has_print else "ours (Table 2 prints none of these cells)"
    return ["σ", *LABELS.values()], rows, f"Prior size {n} (κ = {1 / n:g}): advantage bounds, {which}"


def sigma_table(columns: dict, sigmas, cell) -> tuple[list, list]:
    """(header, rows): one row per noise, one column per prior size, ``cell(n, i)`` the entry of the i-th noise."""
    return ["σ", *(f"prior size {n}" for n in columns)], [[f"{s:g}", *(cell(n, i) for n in columns)] for i, s in enumerate(sigmas)]


def figure11(grid, curves, rdp, printed, sigmas, sensitivity):
    """Advantage bounds against the noise, one panel per prior size: ``curves[n][method]`` on ``grid``, the RDP-based
    bound ``rdp[n]`` dashed, Table 2's printed values as open circles."""
    sizes = list(curves)
    fig, axes = plotting.column_figure((len(sizes) + 1) // 2, 2 if len(sizes) > 1 else 1, row_height=3.4)
    for ax, n in zip(axes, sizes):
        for method, ys in curves[n].items():
            ax.plot(grid, ys, color=COLORS[method], label=LABELS[method])
        ax.plot(grid, rdp[n], color="0.4", linestyle="--", label="RDP-based bound (eq. 2)")
        for method in LABELS:
            points = [(s, printed[n, method, s]) for s in sigmas if printed[n, method, s] is not None]
            if points:
                ax.plot(*zip(*points), color=COLORS[method], **plotting.PAPER_STYLE)
        if _printed_cells({k: v for k, v in printed.items() if k[0] == n}):  # only where circles are drawn
            ax.plot([], [], color="k", **plotting.PAPER_STYLE, label="printed in Table 2")
        ax.set(xlabel=rf"noise $\sigma$ ($\Delta$ = {sensitivity:g})", ylabel="advantage upper bound",
               title=f"uniform prior of size {n}", ylim=(0, 1.02))
    plotting.legend(axes[0])
    for ax in axes[len(sizes):]:
        ax.axis("off")
    return fig


def figure11_texts(prior_sizes, printed) -> dict:
    """The caption's and the section's run-dependent phrases: which prior sizes are drawn, and the circles."""
    others = " and ".join(str(n) for n in prior_sizes if n != 10)
    paper = 10 in prior_sizes  # the paper's Figure 11 draws prior size 10 (Table 2 adds 100)
    return dict(
        guo_prior_sizes=" and ".join(f"n = {n}" for n in prior_sizes),
        guo_fig11_which=("Hayes et al.'s Figure 11 (prior size 10)" + (f" and the same for prior size {others}" if others else "")
                         if paper else f"Hayes et al.'s Figure 11 drawn for prior size {others}"),
        guo_fig11_added=(f"we add prior size {others}" if others else "this run draws it alone") if paper
        else f"this run draws prior size {others} instead",
        guo_fig11_circles=("Open circles: the values printed in Table 2" if _printed_cells(printed) else
                           "Table 2 prints no value on this run's grid, so no circles are drawn"))


def distance_check(table, printed, sigmas) -> str:
    """Whether taking Guo et al.'s distance as sqrt(2) Delta reproduces the printed analytic cells to their rounding."""
    pairs = [(table[n, m][list(sigmas).index(s)], printed[n, m, s]) for n, m, s in _printed_cells(printed, "guo_analytic")]
    off = sum(abs(ours - p) > ROUNDING + 1e-12 for ours, p in pairs)
    if not pairs:
        return "This run's grid holds no printed analytic cell to check this choice against."
    if not off:
        return f"On this run's grid this choice reproduces all {len(pairs)} printed analytic cells to their rounding."
    return f"On this run's grid {off} of the {len(pairs)} printed analytic cells lie outside their rounding."


def _rdp_places(curves, rdp) -> list[str]:
    """Where the RDP-based bound lies against the two Fano bounds somewhere on the grid, in the order below, between,
    above."""
    places = set()
    for n in curves:
        fano = np.array([curves[n]["guo_mc"], curves[n]["guo_analytic"]])
        low, high = fano.min(0), fano.max(0)
        places |= {"below" if r < lo else "above" if r > hi else "between" for r, lo, hi in zip(rdp[n], low, high)}
    return [p for p in ("below", "between", "above") if p in places]


def see_figure11(table, curves, rdp, printed) -> str:
    """Figure 11's paragraph: the paper's ordering of the three bounds, where the RDP-based bound lies, the print."""
    ordered = all(np.all(np.asarray(table[n, "ours"]) <= table[n, "guo_mc"]) and np.all(np.asarray(table[n, "guo_mc"])
                                                                                          <= table[n, "guo_analytic"])
                  for n in curves)
    rdp_above = all(np.all(np.asarray(rdp[n]) >= np.asarray(curves[n]["ours"])) for n in curves)
    found = [{"below": "below both", "between": "between them", "above": "above both"}[p] for p in _rdp_places(curves, rdp)]
    where = (("at every noise drawn it lies between the two Fano bounds" if found == ["between them"] else
              f"at every noise drawn it lies {found[0]} of the Fano bounds") if len(found) == 1 else
             "against the two Fano bounds it lies " + ", ".join(found[:-1]) + " or " + found[-1]
             + ", depending on the prior size and the noise")
    out = [("The ordering the paper reports holds at every cell of this run's table" if ordered else
            "The ordering the paper reports fails at some cells of this run's table (see the table below)")
           + ": the trade-off bound is the smallest, then the Fano bound with the true mutual information, then the Fano "
           "bound with the analytic mutual information.",
           "The RDP-based bound lies " + ("above the trade-off bound at every noise drawn" if rdp_above else
                                          "below the trade-off bound somewhere on the grid") + "; " + where + "."]
    out.append("Our lines pass through the printed analytic and Monte-Carlo values; the printed \"Ours\" values scatter "
               "around our exact line, which the next section examines." if _printed_cells(printed) else
               "Table 2 prints no value for this run's prior sizes and noises, so nothing here is compared with the paper.")
    return see(out)


def z_table(table, printed, z_scores, sigmas, sample_counts) -> tuple[list, list]:
    """(header, rows) of the z-scores of the printed "Ours" cells, one column per sample count of Algorithm 1."""
    header = ["prior size", "σ", "exact", "printed", *(f"z, N = {N:.0e}".replace("e+0", "e") for N in sample_counts)]
    rows = [[f"{n}", f"{s:g}", f"{table[n, 'ours'][list(sigmas).index(s)]:.4f}", f"{printed[n, 'ours', s]:.3f}",
             *(z_text(z[N]) for N in sample_counts)] for (n, s), z in z_scores.items()]
    return header, rows


def z_verdict(z_scores, sample_counts, paper_samples, appendix_samples) -> str:
    """The sentence under the z-table: at which sample counts the printed row is what Algorithm 1 produces (the
    caption of Figure 11 states ``paper_samples``, App. A ``appendix_samples``)."""
    verdict = []
    for N in sample_counts:
        far = sum(abs(z[N]) > 3.0 for z in z_scores.values())
        worst = z_text(max(abs(z[N]) for z in z_scores.values())).lstrip("+")
        verdict.append(f"with N = {N:,} samples, {far} of the {len(z_scores)} printed cells {'lies' if far == 1 else 'lie'} "
                       f"more than three standard deviations from the exact value, rounding allowed for (the farthest {worst})")
    stated = f" The caption of Figure 11 states {paper_samples:,} samples (App. A says {appendix_samples:,} for every experiment)"
    if paper_samples in sample_counts:
        stated += (": at that count the printed row is " + ("not " if any(abs(z[paper_samples]) > 3.0 for z in z_scores.values())
                                                             else "") + "what Algorithm 1 produces.")
    return "In this run, " + "; ".join(verdict) + "." + stated + ("." if paper_samples not in sample_counts else "")


CLOSED = "For a single Gaussian step the trade-off bound has a closed form, so a correct table would agree with it up to rounding."


def ours_method(table, printed, sigmas, z_scores, repeats) -> str:
    """The opening of the section that tests whether the printed "Ours" row is exact."""
    if not z_scores:
        return (f"{CLOSED} This run's grid holds none of the printed cells, so this section has nothing to test; on the "
                "paper's grid it asks whether the printed row is a Monte-Carlo estimate of the closed form.")
    above = sum(printed[n, "ours", s] > table[n, "ours"][list(sigmas).index(s)] for n, s in z_scores)
    sides = (f"Of the {len(z_scores)} printed cells on this run's grid, {above} {'lies' if above == 1 else 'lie'} above the "
             f"exact value and {len(z_scores) - above} below or on it." if 0 < above < len(z_scores) else
             f"All {len(z_scores)} printed cells on this run's grid lie on one side of the exact value.")
    return (f"{CLOSED} {sides} The paper estimates $\\gamma$ with its Algorithm 1, whose Monte-Carlo noise would scatter "
            "printed values around the exact ones. To test this we run Algorithm 1 (with the $1/N$ normalisation, see the "
            f"{{ref}}`erratum <hayes-alg1-normalisation>`) {repeats} times at each of several sample counts and ask how many "
            "standard deviations of that estimator separate the printed value, anywhere in its rounding interval, from the "
            "exact one. A printed value within about three standard deviations is what a Monte-Carlo run of that size "
            "produces; one ten standard deviations away is not.")


def no_grid_verdict(paper_keys) -> str:
    """The verdict of a run whose grid holds no printed "Ours" cell: the paper's grid, read from its keys
    (``ours/n<n>/sigma<s>``)."""
    keys = [k.split("/") for k in paper_keys if k.startswith("ours/")]
    sizes, noises = sorted({int(k[1][1:]) for k in keys}), sorted({float(k[2][5:]) for k in keys})
    return ("This run's grid holds no cell of Table 2's printed \"Ours\" row (it prints prior sizes "
            f"{' and '.join(map(str, sizes))} at σ = {noises[0]:g} to {noises[-1]:g}), so no Algorithm 1 run is made.")


def recorded_text(cells: int) -> str:
    """The sentence that opens the list of tolerances: how many printed cells this run records."""
    if cells:
        return (f"This run records the {3 * cells} printed cells of Table 2 that fall on its grid, {cells} per row, against "
                "these tolerances:")
    return ("This run's grid holds none of Table 2's printed cells, so it records nothing; a run on the paper's grid "
            "records them against these tolerances:")


def summary(analytic: list[str], mc: list[str], paper_samples: int) -> str:
    """The Summary's bullets, from the statuses of the recorded analytic and Monte-Carlo cells (empty: none recorded)."""
    out = []
    if analytic:
        out.append("The analytic Fano bound of Guo et al. matches the print in every cell when its mutual-information bound "
                   "uses the distance between two candidates' outputs ($\\sqrt2$ for orthonormal unit gradients) rather than "
                   "the sensitivity of one gradient; the {doc}`report <report>` lists every cell." if set(analytic) == {"match"}
                   else "The analytic Fano bound of Guo et al. is not compared with the print in this run (its sensitivity "
                   "differs from the paper's)." if set(analytic) == {"not compared"} else
                   f"The analytic Fano bound of Guo et al. matches the print in {analytic.count('match')} of "
                   f"{len(analytic)} cells; the {{doc}}`report <report>` gives each cell's verdict.")
        compared, agree = len(mc) - mc.count("not compared"), mc.count("match")
        out.append(f"The Monte-Carlo Fano bound agrees with the print within its Monte-Carlo error (three standard errors of "
                   f"ours and of a run with the paper's {paper_samples:,} samples, plus the rounding) in {agree} of the "
                   f"{compared} printed cells compared" + ("." if agree == compared else
                                                           "; the {doc}`report <report>` gives each cell's verdict.")
                   if compared else "The Monte-Carlo Fano bound is not compared with the print in this run: its settings "
                   "differ from those the tolerances were set for (the records say which).")
        out.append("The trade-off bound is exact here. The printed \"Ours\" row is a Monte-Carlo estimate; the table above "
                   "gives, for each cell, how far it lies from the exact value in units of Algorithm 1's standard deviation.")
    else:
        out.append("This run's grid holds no printed cell of Table 2, so nothing is compared with the paper; the tables and "
                   "the figure give the three bounds (and the RDP-based one) at this run's prior sizes and noises.")
        out.append("The trade-off bound is exact here (a closed form for one Gaussian step).")
    out.append("Independently of the numbers, Algorithm 1 as printed divides by $\\lceil\\kappa N\\rceil$ instead of $N$; see "
               "the {ref}`errata entry <hayes-alg1-normalisation>`.")
    return "\n".join(f"* {line}" for line in out)


#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 1


def estimate(p: dict, cells: int, workers: int) -> None:
    """Print the chapter's estimated run time.  The work grows with the samples: each probe runs 10^4 of
    them at the costliest cell (the largest prior, the least noise); ``cells`` printed "Ours" cells get Algorithm 1 runs."""
    probe, n = 10_000, max(p["prior_sizes"])
    mechanism = Mechanism("gaussian", min(p["sigmas"]) / p["sensitivity"], 1.0, 1)
    sigmas, counts, repeats = len(p["sigmas"]), p["alg1_sample_counts"], p["alg1_repeats"]
    mi_work = len(p["prior_sizes"]) * (sigmas * p["mi_samples"] + (p["grid_points"] + sigmas) * p["grid_mi_samples"])
    runtime.estimate([
        (lambda: rero.guo_mutual_information_mc(mechanism.noise_multiplier, n, samples=probe, seed=0), mi_work / probe),
        (lambda: montecarlo.gamma_from_log_ratios(montecarlo.log_likelihood_ratios(mechanism, probe, seed=0), 1 / n),
         cells * repeats * sum(counts) / probe, False)],
        workers=workers, what=f"{len(p['prior_sizes']) * sigmas} Monte-Carlo mutual informations, "
        f"{cells * repeats * len(counts):,} Algorithm 1 runs", figures=FIGURES)
