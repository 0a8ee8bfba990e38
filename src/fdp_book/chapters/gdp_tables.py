"""Figures and "What we see" paragraphs of the chapter on Gaussian-DP reporting (Gomez et al. 2025).

A run of Table 2 is a dictionary with ``eps`` (De et al.'s epsilon), ``noise``, ``steps``, ``q``, ``curve`` (the
accountant's trade-off curve), ``mu``, ``regret``, ``eps_pld`` and ``eps_rdp``.  A representation of Figure 1 is a
dictionary with ``curve``, ``reps`` (summary name -> its trade-off curve), ``mu``, ``regret`` (summary name -> exact
regret) and ``eq24`` (the paper's regret through eq. 24).
"""

from __future__ import annotations

import numpy as np

from fdp import Mechanism
from fdp.accounting import mechanism_gdp
from fdp.curves import tradeoff
from fdp.formatting import upper

from .. import plotting, runtime
from . import see

#: Figure 1's summaries, in the order of panel c, and their colours
NAMES = {"eps_dp": r"$\varepsilon$-DP", "eps_delta": r"$(\varepsilon,\delta)$-DP", "zcdp": r"$\rho$-zCDP",
         "gdp": r"$\mu$-GDP", "rdp": r"RDP curve"}
COLORS = {"eps_dp": "C2", "eps_delta": "C1", "zcdp": "C4", "gdp": "C0", "rdp": "C3"}


def join(values, fmt) -> str:
    """Numbers separated by commas; ``fmt`` "up4": upper bounds rounded up to 4 significant digits (as every page prints
    them), else a format specification."""
    return ", ".join(upper(v, 4, keep_zeros=True) if fmt == "up4" else format(v, fmt) for v in values)


def see_table3(mu3, epsilons, deltas, distances, statuses):
    """Table 3's paragraph: agreement with the printed values, and (8, 1e-9) against (6, 1e-5)."""
    out = []
    if distances:
        out.append(f"{statuses.count('match')} of the {len(distances)} entries with a printed value agree with it to its two "
                   f"decimals; the largest distance is {max(distances):.4f}.")
    if {8.0, 6.0} <= set(epsilons) and {1e-9, 1e-5} <= set(deltas):
        a = mu3[epsilons.index(8.0), deltas.index(1e-9)]
        b = mu3[epsilons.index(6.0), deltas.index(1e-5)]
        out.append(f"The Gaussian mechanism at $(8, 10^{{-9}})$ has $\\mu = {a:.4f}$, " + ("below" if a < b else "not below")
                   + f" the $\\mu = {b:.4f}$ of $(6, 10^{{-5}})$"
                   + (": a larger $\\varepsilon$ can be the more private mechanism once $\\delta$ differs, which is the paper's "
                      "point against comparing $\\varepsilon$ across papers." if a < b else "."))
    return see(out)


def _table2_against_paper(in_table2, alt_by_eps, main, alt, sizes):
    batch, n, n_alt = sizes
    alt_mu = join([alt_by_eps[r["eps"]]["mu"] for r in in_table2], "up4")
    if all(s == "match" for s in alt) and all(s != "match" for s in main):
        return (f"The values printed in Table 2 are **not** those of these runs at rate {batch:,}/{n:,}, but they are "
                f"reproduced to every printed digit ({alt_mu}) by the same runs at rate {batch:,}/{n_alt:,}: Table 2 appears "
                f"to have been computed with all {n_alt:,} CIFAR-10 images (training plus test set) as the dataset size, "
                f"which makes its $\\mu$ about {100 * (1 - alt_by_eps[in_table2[-1]['eps']]['mu'] / in_table2[-1]['mu']):.0f} % "
                "too small (optimistic); see the {ref}`erratum <gdp-table2-dataset-size>`.")
    return (f"Against Table 2: {main.count('match')} of {len(main)} printed values match at rate {batch:,}/{n:,}, "
            f"{alt.count('match')} at rate {batch:,}/{n_alt:,} ({alt_mu}).")


def see_table2(cifar, finetune, in_table2, alt_by_eps, statuses, sizes):
    """Table 2's paragraph.  ``statuses``: registry status of ``sec5/mu_eps8`` (or None) and the lists of Table 2's
    statuses at the two rates; ``sizes``: (batch size, dataset size, the other dataset size)."""
    sec5, main, alt = statuses
    out = [f"With {sizes[1]:,} images De et al.'s RDP accountant gives $\\varepsilon$ = {join([r['eps_rdp'] for r in cifar], 'up4')} "
           f"for their runs of $\\varepsilon$ = {join([r['eps'] for r in cifar], 'g')}, and the tight PLD accountant "
           f"{join([r['eps_pld'] for r in cifar], 'up4')}; $\\mu^*$ = {join([r['mu'] for r in cifar], 'up4')} (upper bounds, "
           "rounded up to four digits here and to five in the table)."]
    eight = [r for r in cifar if r["eps"] == 8.0]
    if eight:
        out.append(f"The $\\varepsilon = 8$ run has $\\mu^* = {upper(eight[0]['mu'], 4)}$ (Section 5 prints 1.57; {sec5}).")
    if in_table2:
        out.append(_table2_against_paper(in_table2, alt_by_eps, main, alt, sizes))
        worst = max(in_table2, key=lambda r: r["regret"])
        by_mu = [r["regret"] for r in sorted(in_table2, key=lambda r: r["mu"])]
        out.append(("The regret grows with $\\mu$ up to" if np.all(np.diff(by_mu) >= 0) else "The largest regret is")
                   + f" {worst['regret']:.3g} for the $\\varepsilon = {worst['eps']:g}$ run"
                   + (", which meets the caption's \"below $10^{-3}$\"." if worst["regret"] < 1e-3 else
                      ", at the caption's \"below $10^{-3}$\" only up to rounding (the paper itself prints 0.10 % in Fig. 1c)."))
    if finetune:
        out.append(f"The fine-tuning runs of App. Table 5 have $\\mu^*$ = {join([r['mu'] for r in finetune], 'up4')} with regret "
                   f"up to {max(r['regret'] for r in finetune):.3g}.")
    return see(out)


def table2_rows(runs, alt_runs, printed):
    """Table 2's rows: mu* and regret at the training set's rate, mu* at the other rate, the printed mu."""
    return [[f"{r['eps']:g}", upper(r["mu"], 5, keep_zeros=True), f"{r['regret']:.2e}", upper(a["mu"], 5, keep_zeros=True),
             "not printed" if printed(r) is None else f"{printed(r):g}"] for r, a in zip(runs, alt_runs)]


def curves_figure(rows, alpha_grid):
    """Figures 7 and 8: each run's curve against its mu*-GDP curve, and their difference against twice the regret."""
    fig, axes = plotting.column_figure(1, 2, row_height=3.3)
    for i, r in enumerate(rows):
        f_mu = tradeoff.gaussian(r["mu"])
        axes[0].plot(alpha_grid, r["curve"](alpha_grid), color=f"C{i}", lw=1.5)
        axes[0].plot(alpha_grid, f_mu(alpha_grid), color=f"C{i}", ls=":", lw=2.0)
        inside = alpha_grid > 0
        axes[1].semilogx(alpha_grid[inside], (r["curve"](alpha_grid) - f_mu(alpha_grid))[inside], color=f"C{i}",
                         label=f"σ {r['noise']:g}, T {r['steps']}")
        axes[1].axhline(2 * r["regret"], color=f"C{i}", ls="--", lw=0.8)
    axes[0].plot([0, 1], [1, 0], color="0.7", lw=0.8)
    axes[0].set(xlabel=r"FPR $\alpha$", ylabel=r"FNR $\beta$", title=r"accountant (solid), $\mu^*$-GDP (dotted)")
    axes[1].set(xlabel=r"FPR $\alpha$", ylabel=r"$f(\alpha) - f_{\mu^*}(\alpha)$", title=r"difference; dashed: $2\Delta$")
    plotting.legend(axes[0], *axes[1].get_legend_handles_labels(), fontsize=8, loc="upper right")  # the empty corner
    return fig


#: The runs the paper's Figure 7 plots, by De et al.'s epsilon (App. F: "four DP-SGD mechanisms (ε=1,2,4,8)"; Figure 8
#: plots all the fine-tuning runs), and the noise of the run App. F exempts from "at most 2 Delta"
FIG7_EPSILONS, FIG78_EXEMPT_NOISE = (1.0, 2.0, 4.0, 8.0), 9.4


def fig78_ratios(ratios) -> dict:
    """The registry's key of each run's largest difference over twice the regret (``ratios`` by (noise, steps))."""
    return {f"fig7_8/maxdiff_over_2regret_noise{s:g}_T{t}": v for (s, t), v in ratios.items()}


def two_regret_excess(cifar, finetune, ratios) -> float:
    """How far the largest difference exceeds twice the regret (0 if nowhere), over the runs the paper plots in
    Figures 7 and 8 (the CIFAR-10 runs of :data:`FIG7_EPSILONS`, every fine-tuning run) except the one App. F exempts."""
    plotted = [r for r in cifar if r["eps"] in FIG7_EPSILONS] + list(finetune)
    return max([0.0] + [ratios[(r["noise"], r["steps"])] - 1.0 for r in plotted if r["noise"] != FIG78_EXEMPT_NOISE])


def see_fig78(ratios, excess: float):
    """Figures 7 and 8's paragraph: where the largest difference is 2 regret and where it exceeds it (``excess``: by
    how much at most, over the runs the paper plots, :func:`two_regret_excess`)."""
    close = [k for k, v in ratios.items() if abs(v - 1) <= 0.01]
    above = sorted(((v, k) for k, v in ratios.items() if v > 1.01), reverse=True)
    out = ["As in the paper, the solid and dotted curves are indistinguishable at this scale."]
    if close:
        out.append(f"The maximum is $2\\Delta$ to within 1 % for the runs with noise {join([k[0] for k in close], 'g')}, where "
                   "the largest diagonal shift sits near the curves' symmetric point (slope $-1$, where the vertical gap is "
                   "twice the diagonal one).")
    if above:
        out.append("For the less noisy runs the largest shift moves to smaller $\\alpha$, where the curves are steeper, and "
                   "the vertical difference grows: " + ", ".join(f"{v:.2f} for noise {k[0]:g}, T {k[1]}" for v, k in above)
                   + " times $2\\Delta$.")
    if excess > 0.005:  # (the tolerance of the registry's record: the lattice's accuracy)
        out.append(f"So the paper's \"at most $2\\Delta$ except noise {FIG78_EXEMPT_NOISE:g}\" is an approximation: among the "
                   f"runs it plots, the largest difference exceeds $2\\Delta$ by up to {100 * excess:.1f} % (see the "
                   "{ref}`erratum <gdp-fig7-8-two-delta>`).")
    return see(out)


# --- Figure 1 ------------------------------------------------------------------------------------------------------

def _curves_panel(ax, title, m, alpha_grid):
    ax.plot(alpha_grid, m["curve"](alpha_grid), color="k", lw=2.5, label="accountant")
    for k, g in m["reps"].items():  # the eps-DP curve of Laplace is the accountant's: dotted on top, to stay visible
        ax.plot(alpha_grid, g(alpha_grid), color=COLORS[k], lw=1.8 if k == "eps_dp" else 1.3, ls=":" if k == "eps_dp" else "-",
                zorder=3 if k == "eps_dp" else 2, label=NAMES[k])
    ax.plot(alpha_grid, tradeoff.gaussian(m["mu"])(alpha_grid), color=COLORS["gdp"], ls="--", lw=1.5, label=r"$\mu^*$-GDP")
    ax.set(xlabel=r"FPR $\alpha$", ylabel=r"FNR $\beta$", title=title)


def _mia_panel(ax, sgd, alpha_grid, fpr):
    small = alpha_grid[(alpha_grid > 0) & (alpha_grid <= 0.5)]
    ax.loglog(small, 1 - sgd["curve"](small), color="k", lw=2.5, label="accountant")
    ax.loglog(small, 1 - tradeoff.gaussian(sgd["mu"])(small), color=COLORS["gdp"], ls="--", label=r"$\mu^*$-GDP")
    for k in ("eps_delta", "rdp", "zcdp"):  # zCDP on the axes in b
        ax.loglog(small, 1 - sgd["reps"][k](small), color=COLORS[k], label=NAMES[k])
    ax.axvline(fpr, color="0.6", lw=0.8, ls=":")
    ax.set(xlabel=r"FPR $\alpha$", ylabel=r"TPR bound $1 - f(\alpha)$", title="b as an MIA bound at small FPR")
    plotting.legend(ax, fontsize=8)


def _regret_panel(ax, lap, sgd, printed):
    """Panel c as bars on a log scale (the regrets span 0.1 % to tens of percent), the printed regrets as open circles,
    and, for the summaries that are privacy profiles (zCDP, RDP), eq. 24 on the converted profile (the paper's
    quantity, which the registry compares) as a black bar across the column."""
    width, keys = 0.38, list(NAMES)
    for i, (mech, m) in enumerate((("laplace", lap), ("dpsgd", sgd))):
        ks = [k for k in keys if k in m["regret"]]
        xs = np.array([keys.index(k) for k in ks]) + (i - 0.5) * width
        ax.bar(xs, [100 * m["regret"][k] for k in ks], width, color=f"C{7 + i}", label=["Laplace", "DP-SGD"][i])
        eq24 = [(x, 100 * m["eq24"][k]) for x, k in zip(xs, ks) if k in m.get("eq24", {})]
        if eq24:
            ax.plot(*zip(*eq24), ls="none", marker="_", markersize=13, mew=2, color="k")
        pts = [(x, 100 * printed(mech, k)) for x, k in zip(xs, ks) if printed(mech, k) is not None]
        if pts:
            ax.plot(*zip(*pts), color="k", **plotting.PAPER_STYLE)
    ax.plot([], [], ls="none", marker="_", markersize=13, mew=2, color="k", label="eq. 24 (zCDP, RDP)")
    ax.plot([], [], color="k", **plotting.PAPER_STYLE, label="paper (Fig. 1c)")
    bottom = min(min(v for m in (lap, sgd) for v in (100 * x for x in m["regret"].values()) if v > 0) / 3, 0.01)
    ax.set_yscale("log")
    ax.set_ylim(bottom, 100.0)  # a regret is at most 1 (100 %)
    for i, m in enumerate((lap, sgd)):  # a regret below the axis is labelled, not lost
        for k in (k for k in keys if k in m["regret"] and 100 * m["regret"][k] < bottom):
            ax.text(keys.index(k) + (i - 0.5) * width, bottom * 1.2, "≈0", ha="center", va="bottom", fontsize=7)
    if "eps_dp" not in sgd["regret"]:  # DP-SGD is not eps-DP for any finite eps
        ax.text(0.5 * width, bottom * 1.2, "n/a", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(keys)), ["ε-DP", "(ε,δ)", "zCDP", "GDP", "RDP"])
    ax.set(ylabel="regret (%, log scale)", title="c: regret of each representation")
    plotting.legend(ax, fontsize=8, loc="upper left")  # inside where the bars leave room, else under the panel


def figure1(lap, sgd, titles, alpha_grid, fpr, printed):
    """Figure 1: the curves of Laplace (a) and DP-SGD (b) with their summaries, b as an MIA bound, the regrets (c).
    ``printed(mechanism, summary)`` is the paper's regret or None."""
    fig, axes = plotting.column_figure(2, 2, row_height=3.2)
    for ax, title, m in zip(axes[:2], titles, (lap, sgd)):
        _curves_panel(ax, title, m, alpha_grid)
    plotting.legend(axes[0], fontsize=8)
    _mia_panel(axes[2], sgd, alpha_grid, fpr)
    _regret_panel(axes[3], lap, sgd, printed)
    return fig


def figure1c_rows(lap, sgd, printed):
    """Figure 1c's table rows: exact regret, the eq. 24 regret and the paper's, in %."""
    rows = []
    for mech, m in (("laplace", lap), ("dpsgd", sgd)):
        for k in (k for k in NAMES if k in m["regret"]):
            alt, p = m["eq24"].get(k), printed(mech, k)
            rows.append(["Laplace" if mech == "laplace" else "DP-SGD", NAMES[k].replace(" curve", ""), f"{100 * m['regret'][k]:.4f}",
                         f"{100 * alt:.4f}" if alt is not None else "(same)", "" if p is None else f"{100 * p:.2f}"])
    return rows


# --- Figures 4, 5 and 6 --------------------------------------------------------------------------------------------

def figure4(reg4, rates, drawn, noise_multipliers, steps, threshold, floor):
    """Figure 4: the regret against the sampling rate, one panel per drawn noise multiplier, one line per T."""
    fig, axes = plotting.column_figure((len(drawn) + 1) // 2, 2 if len(drawn) > 1 else 1, row_height=2.8)
    shade = np.linspace(0.4, 1.0, len(steps))
    for ax, s in zip(axes, drawn):
        k = noise_multipliers.index(s)
        for j, t in enumerate(steps):
            ax.loglog(rates, np.where(reg4[k, j] > 0, reg4[k, j], np.nan), color="C0", alpha=shade[j], marker=".", label=f"T {t}")
        ax.axhline(threshold, color="k", ls=":", lw=1)
        ax.set(xlabel="sampling rate q", ylabel=r"regret $\Delta(f, f_{\mu^*})$", title=f"noise σ = {s:g}")
        # below the floor the regret only falls to 0 (not informative); a regret is at most 1 (f and f_mu are in [0, 1])
        ax.set_ylim(bottom=max(ax.get_ylim()[0], floor), top=min(ax.get_ylim()[1], 1.5))
    plotting.legend(axes[0], fontsize=8)
    for ax in axes[len(drawn):]:
        ax.axis("off")
    return fig


def rule_sentence(worst, peak, rule, ok_noises, drawn):
    """Figure 4's rule of thumb: the worst grid regret, its peak between grid points, the verdict.  ``rule`` =
    (noise minimum, steps minimum, threshold); ``peak`` = (regret, rate)."""
    noise_min, steps_min, threshold = rule
    text = (f"**The rule of thumb** (noise $\\ge$ {noise_min:g}, $T \\ge$ {steps_min}): the largest regret on the grid is "
            f"{worst['regret']:.4f}, at noise {worst['noise']:g}, $T$ = {worst['steps']}, rate {worst['rate']:.3g}; between grid "
            f"points it peaks at {peak[0]:.4f} (rate {peak[1]:.3g}). ")
    if worst["regret"] < threshold:
        return text + ("The rule holds on this grid." if peak[0] < threshold else
                       f"The rule holds at the grid points but not between them (the peak reaches {threshold:g}).")
    return text + ("So the rule is too generous at its edge ({ref}`erratum <gdp-fig4-rule-of-thumb>`)"
                   + (f"; noise {min(ok_noises):g} or more keeps every grid point below {threshold:g}"
                      + ("" if min(ok_noises) in drawn else
                         f" (noise {min(ok_noises):g} is computed for the rule on the same grid, not drawn)") + "."
                      if ok_noises else "."))


def noise_sentence(violations):
    """Figure 4's "more noise, better fit": where two neighbouring noise levels are in the wrong order.
    ``violations``: (less noise, more noise, T, rate, regret of the less noisy, regret of the noisier)."""
    if not violations:
        return "More noise gives a lower regret at every grid point."
    a = max(violations, key=lambda v: v[5] - v[4])
    return (f"**\"More noise, better fit\"** fails at {len(violations)} pairs of neighbouring noise levels, all at rates "
            f"{min(v[3] for v in violations):.3g} and above (largest: rate {a[3]:.3g}, $T$ = {a[2]}, noise {a[0]:g} has regret "
            f"{a[4]:.1e} and noise {a[1]:g} {a[5]:.1e}). The rate at which the regret peaks grows with the noise, and beyond "
            "the peak of the less noisy mechanism (large $\\mu^*$, curve close to the axes) its regret falls again, below that "
            "of the noisier one ({ref}`erratum <gdp-fig4-more-noise>`).")


def figure5(panels, alpha_grid):
    """Figure 5: exact curves against their mu*-GDP curves; ``panels`` = [(curve, mu, title)]."""
    fig, axes = plotting.column_figure(1, 2, row_height=3.3)
    for ax, (c, mu, title) in zip(axes, panels):
        ax.plot(alpha_grid, c(alpha_grid), color="k", lw=2.5, label="exact curve")
        ax.plot(alpha_grid, tradeoff.gaussian(mu)(alpha_grid), color="C0", ls="--", lw=1.5, label=r"$\mu^*$-GDP")
        ax.plot([0, 1], [1, 0], color="0.7", lw=0.8)
        ax.set(xlabel=r"FPR $\alpha$", ylabel=r"FNR $\beta$", title=title)
    plotting.legend(axes[0], fontsize=8)
    return fig


def figure6(mu, epsilon, delta, others, delta_of):
    """Figure 6: the privacy profile of mu-GDP with the reported pair and other points, and the MIA bounds that the
    whole profile and each point alone give.  ``delta_of(eps)`` is the profile."""
    fig, (ax, ax_mia) = plotting.column_figure(1, 2, row_height=3.3)
    e6 = np.linspace(0.0, 1.5 * epsilon, 400)
    ax.semilogy(e6, delta_of(e6), color="C0", lw=2, label=f"{mu:.3f}-GDP")
    ax.semilogy([epsilon], [delta], "o", color="C0", ms=8, label=f"({epsilon:g}, {delta:g})")
    ax.semilogy([e for e, _ in others], [d for _, d in others], "o", color="C1", label="other points")
    ax.set(xlabel=r"$\varepsilon$", ylabel=r"$\delta(\varepsilon)$", title="privacy profile")
    plotting.legend(ax, fontsize=8)
    fpr = np.logspace(-6, 0, 400)
    ax_mia.loglog(fpr, 1 - tradeoff.gaussian(mu)(fpr), color="C0", lw=3, label="whole profile")
    ax_mia.loglog(fpr, 1 - tradeoff.eps_delta(epsilon, delta)(fpr), color="C0", lw=0.8, label=f"only ({epsilon:g}, {delta:g})")
    for i, (e, d) in enumerate(others):
        ax_mia.loglog(fpr, 1 - tradeoff.eps_delta(e, d)(fpr), color="C1", ls="--", lw=0.8,
                      label="each other point alone" if i == 0 else None)
    ax_mia.loglog(fpr, fpr, color="0.7", lw=0.8, label="guessing")
    ax_mia.set_ylim(1e-6, 1.5)
    ax_mia.set(xlabel="FPR", ylabel="TPR bound", title="MIA bounds")
    plotting.legend(ax_mia, fontsize=8)
    return fig


def see_speed(times, mus, regrets, gaps, gdpnum_runs):
    """The speed comparison's paragraph.  ``times`` = (gdpnum, ours at its spacing, ours at our spacing); ``mus`` =
    (gdpnum, ours, certified lower end); ``regrets`` = (gdpnum, ours); ``gaps``: gdpnum's relative distance below the
    certified interval on ``gdpnum_runs``."""
    t_ref, t_same, t_ours = times
    mu_ref, mu_ours, mu_lo = mus
    out = [f"Time ratio gdpnum / fdp: **{t_ref / t_same:.2f}** at the same spacing, **{t_ref / t_ours:.2f}** at ours "
           "(`make bench` repeats the measurement on four runs in `benchmarks/bench_gdp.py`).",
           f"Our $\\mu^*$ is {'above' if mu_ours >= mu_lo else 'below'} the certified lower end"
           + (", as a pessimistic bound must be." if mu_ours >= mu_lo else ".")]
    if mu_ref < mu_lo:
        out.append(f"gdpnum's $\\mu^*$ falls {mu_lo - mu_ref:.1e} *below* the interval (relative {(mu_lo - mu_ref) / mu_lo:.0e}): "
                   "its curve combines the remove-direction PMF for $\\beta$ with the add-direction PMF for $\\alpha$ and is "
                   "therefore not a dominating pair's curve, so its $\\mu$ is not guaranteed pessimistic; the error is small, "
                   "but on the unsafe side ({ref}`erratum <gdp-gdpnum-optimistic>`).")
    out.append(f"Its regret, the lower end of a bisection on a grid, is {abs(100 * (regrets[1] - regrets[0]) / regrets[1]):.1f} % "
               + ("below" if regrets[0] <= regrets[1] else "above") + " ours.")
    if gaps and max(gaps) > max(0.0, (mu_lo - mu_ref) / mu_lo):
        w = int(np.argmax(gaps))
        out.append(f"On other runs the gap is larger: at noise {gdpnum_runs[w][0]:g}, rate {gdpnum_runs[w][1]:g} and "
                   f"{gdpnum_runs[w][2]} steps gdpnum's $\\mu^*$ lies {100 * gaps[w]:.1f} % below the certified interval (table "
                   "above), a guarantee that much weaker than the one it reports.")
    return see(out)


def verdict(states) -> str:
    """"reproduced to the printed digits" when every state is a match, else how many are."""
    return ("reproduced to the printed digits" if all(s == "match" for s in states) else
            f"{states.count('match')} of {len(states)} printed values reproduced")


def _pct(value: float) -> str:
    return f"{100 * value:.2f} %"


def figure1_texts(lap: dict, sgd: dict, tpr: tuple, alpha_grid, printed_zcdp, rho_grid: float, order_max: float) -> dict:
    """The numbers Figure 1's prose quotes (each from :func:`fdp.curves.conversions.representations` of the Laplace
    mechanism ``lap`` and of DP-SGD ``sgd``, with ``sgd["int_rdp"]`` and ``sgd["eq24_int_rdp"]`` for the integer orders);
    ``tpr`` = (fpr, TPR bound of the curve, TPR bound of its (eps, delta) curve)."""
    concise = [lap["regret"][k] for k in ("eps_dp", "eps_delta", "zcdp", "gdp")]
    other = [sgd["regret"][k] for k in ("eps_delta", "zcdp")]
    fpr, tpr_curve, tpr_adp = tpr
    return dict(
        f1_lap_range=f"{_pct(min(concise))}-{_pct(max(concise))}", f1_lap_gdp=_pct(lap["regret"]["gdp"]),
        f1_lap_gdp_best="is not" if lap["regret"]["gdp"] > min(concise) else "is",
        f1_sgd_gdp=_pct(sgd["regret"]["gdp"]),
        f1_sgd_gdp_best=("the smallest" if sgd["regret"]["gdp"] < min(v for k, v in sgd["regret"].items() if k != "gdp")
                         else "not the smallest"),
        f1_sgd_other=f"{_pct(min(other))}-{_pct(max(other))}", f1_sgd_rdp=_pct(sgd["regret"]["rdp"]),
        f1_tpr=upper(tpr_curve, 4, keep_zeros=True), f1_tpr_adp=upper(tpr_adp, 5, keep_zeros=True), f1_fpr=f"{fpr:g}",
        f1_lap_eps_dp=f"{100 * lap['regret']['eps_dp']:.4f} %", f1_lap_eps_delta=f"{100 * lap['regret']['eps_delta']:.4f} %",
        f1_sgd_eps_delta=f"{100 * sgd['regret']['eps_delta']:.3f} %",
        f1_lap_gap=f"{float(np.max(np.abs(lap['reps']['eps_dp'](alpha_grid) - lap['reps']['eps_delta'](alpha_grid)))):.0e}",
        f1_lap_zcdp=_pct(lap["regret"]["zcdp"]), f1_lap_rdp=_pct(lap["regret"]["rdp"]),
        f1_lap_zcdp24=_pct(lap["eq24"]["zcdp"]), f1_lap_rdp24=_pct(lap["eq24"]["rdp"]),
        f1_int_rdp=_pct(sgd["int_rdp"]), f1_int_rdp24=_pct(sgd["eq24_int_rdp"]), f1_sgd_zcdp=_pct(sgd["regret"]["zcdp"]),
        f1_sgd_zcdp24=_pct(sgd["eq24"]["zcdp"]), f1_sgd_rdp24=_pct(sgd["eq24"]["rdp"]),
        f1_zcdp_gap=f"{abs(100 * (sgd['eq24']['zcdp'] - printed_zcdp)):.2f}" if printed_zcdp else "",
        f1_rho=f"{sgd['rho']:.2f}", f1_rho_grid=f"{rho_grid:.2f}", f1_order_max=f"{order_max:g}")


def figure5_rows(mu_continuous, topdown, rr, rr_epsilon, pieces, paper) -> tuple[list, list]:
    """(header, rows) of Figure 5: TopDown as continuous and as ``pieces`` discrete Gaussians (``topdown`` = (mu,
    regret)), randomized response (``rr`` = (mu, regret)); ``paper`` = (TopDown's mu, randomized response's regret)."""
    return ["mechanism", "μ*", "regret", "paper"], [
        ["TopDown, continuous Gaussians: √(2ρ)", f"{mu_continuous:.5f}", "0", f"μ {paper[0]:g}"],
        [f"TopDown, {pieces} discrete Gaussians", f"{topdown[0]:.5f}", f"{topdown[1]:.1e}", f"μ {paper[0]:g}"],
        [f"randomized response, ε = {rr_epsilon:g}", f"{rr[0]:.5f}", f"{rr[1]:.5f}", f"regret {paper[1]:g}"]]


def off_interval(mu: float, low: float, high: float) -> float:
    """How far ``mu`` lies outside [low, high] (negative below, 0 inside)."""
    return min(0.0, mu - low) + max(0.0, mu - high)


def speed_rows(gdpnum, same, ours, h_ours: float, interval) -> list:
    """The rows of the speed table: ``gdpnum``, ``same`` (ours at gdpnum's spacing) and ``ours`` (at our default spacing
    ``h_ours``), each ((mu, regret), seconds), against the certified ``interval`` of mu*."""
    return [[route, lattice, f"{mu:.6f}", f"{off_interval(mu, *interval):+.1e}", f"{reg:.4e}", f"{t:.3f}"]
            for route, lattice, ((mu, reg), t) in (("gdpnum 0.1.2", "1e-4", gdpnum), ("fdp (certified)", "1e-4", same),
                                                   ("fdp (certified)", f"{h_ours:.0e}", ours))]


def gdpnum_row(run, mu: float, low: float, high: float) -> list:
    """A row of the gdpnum table: the run, gdpnum's mu*, the certified interval, and how far outside it gdpnum lies."""
    noise, rate, steps = run
    return [f"{noise:g}", f"{rate:g}", f"{steps}", f"{mu:.6f}", f"[{low:.6f}, {high:.6f}]",
            f"{100 * off_interval(mu, low, high) / low:+.2f} %"]


def summary(statuses: dict, in_table2, worst=None, peak=None) -> str:
    """The Summary's bullets: a verdict per recorded group (``statuses``: title -> statuses of its records), Table 2's
    mu row, the eq. 24 caveat, and the rule of thumb (``worst``: the worst grid point, ``peak`` = (regret, rate))."""
    out = [f"* {title}: {verdict(states)}." for title, states in statuses.items()]
    if in_table2:
        out.append(f"* Table 2's μ row: with the hyperparameters as published, μ* = {join([r['mu'] for r in in_table2], 'up4')} "
                   "(see the {ref}`erratum <gdp-table2-dataset-size>`).")
    out.append("* Fig. 1c's regrets of zCDP and RDP come from eq. 24 applied to converted profiles, which overstates them, "
               "and the RDP curve of DP-SGD misses the orders between 1 and 2; the exact regrets are smaller, the ranking unchanged.")
    if worst is not None:
        out.append(f"* The rule of thumb of Fig. 4: worst regret {worst['regret']:.4f} on the grid (noise {worst['noise']:g}, "
                   f"T = {worst['steps']}, rate {worst['rate']:.2g}), {peak[0]:.4f} at its peak between grid points (rate "
                   f"{peak[1]:.3g}).")
    return "\n".join(out)


#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 6


def estimate(p: dict, workers: int) -> None:
    """Print the chapter's estimated run time.  The unit of work is one DP-SGD run's mu* and regret
    (Table 2, Figure 4, the gdpnum comparisons), probed on the Figure 1 run; a run of Table 2 also has its PLD and RDP
    epsilons (about one more unit); the Figure 4 grid is shared among the workers."""
    points = len(set(p["fig4_noise_multipliers"]) | set(p["rule_noise_multipliers"])) * p["fig4_rate_points"] * len(p["fig4_steps"])
    unit = Mechanism("gaussian", p["fig1_noise_multiplier"], p["batch_size"] / p["dataset_size"], p["fig1_steps"])
    runs = 2 * len(p["cifar_runs"]) + len(p["finetune_runs"])
    runtime.estimate(
        [(lambda: mechanism_gdp.mu_and_regret_dpsgd(unit, tail=p["tail"], discretization=p["discretization"]),
          2 * runs + 3 * p["speed_repeats"] + 2 * len(p["gdpnum_runs"]) + 6, False),
         (lambda: mechanism_gdp.mu_and_regret_dpsgd(unit, tail=p["tail"]), points)],
        workers=workers, what=f"{runs} runs of Table 2, {points} points of Figure 4", figures=FIGURES)


def runs_rows(runs, with_mu: bool = False) -> list:
    """The rows of a table of DP-SGD runs (App. Tables 4-5): De et al.'s epsilon, the noise, the steps, epsilon by RDP
    and by PLD (upper bounds rounded up), and with ``with_mu`` mu* and the regret."""
    return [[f"{r['eps']:g}", f"{r['noise']:g}", r["steps"], upper(r["eps_rdp"], 4, keep_zeros=True), upper(r["eps_pld"], 4, keep_zeros=True)]
            + ([upper(r["mu"], 5, keep_zeros=True), f"{r['regret']:.2e}"] if with_mu else []) for r in runs]
