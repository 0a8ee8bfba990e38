"""The practitioner's page (notebooks/your_run.ipynb): one DP-SGD run as a training script states it (noise
multiplier, batch size, data-set size, epochs, delta), read in plain words, its epsilon as the training libraries
print it, the attacks' bounds, and the noise a chosen target needs.

The tables and the calibration's rows are risk_report's (:mod:`fdp_book.chapters.risk_report`); this module writes
what is particular to one run: the command lines, the plain-words section and the epsilon table.
"""

from __future__ import annotations

import math

import numpy as np

from fdp import presentation
from fdp.formatting import lower, upper

from . import risk_report


def commands(noise: float, batch_size: int, dataset_size: int, epochs, delta: float, target,
             discretization: float) -> dict[str, str]:
    """The two command lines (Markdown code) of this run: the report (``cli_report``) and the noise for the page's
    target ``(name, value, level)`` at the same batch size, data-set size and epochs and at the page's lattice
    spacing, so that it prints the page's numbers (``cli_calibrate``)."""
    run = f"--batch-size {batch_size} --dataset-size {dataset_size} --epochs {_number(epochs)}"
    delta_flag = "" if delta == 1e-5 else f" --delta {float(delta)!r}"
    aim = risk_report.target_flags(target, delta)
    return {"cli_report": f"`python -m fdp report --noise-multiplier {float(noise)!r} {run}{delta_flag}`",
            "cli_calibrate": f"`python -m fdp calibrate {run} {aim} --discretization {_number(discretization)}`"}


def _number(x) -> str:
    """``x`` as typed: its shortest form that reads back as the same number (``30`` for 30.0)."""
    short = f"{float(x):g}"
    return short if float(short) == float(x) else repr(float(x))


def plain_words(report) -> str:
    """The report's plain-words section without its heading (the page has its own), the glossary linked."""
    text = "\n".join(presentation.plain_words(report)[2:])
    return (text.replace("the book's glossary (book/glossary.md)", "the {doc}`glossary <../glossary>`")
            .replace("the book's methods chapter, book/methods.md,", "the {doc}`methods chapter <../methods>`"))


def see_calibration(names, calibrations, report) -> str:
    """The sentences under the calibration table: each target's noise beside the run's own, then the report's and
    the calibrations' caveats (:func:`caveats`)."""
    parts = [f"{name} holds with a noise multiplier of {upper(c.noise_multiplier, 4)} or more"
             for name, c in zip(names, calibrations)]
    return (f"In words, at this batch size and number of epochs: {'; '.join(parts)} (this run uses {report.mechanism.noise_multiplier:g}). The "
            "risk falls as the noise grows, so every larger noise meets the target too; the exact smallest noise lies "
            "in the interval beside it." + caveats(report, calibrations, names))


def caveats(report, calibrations, names) -> str:
    """The report's and the calibrations' warnings (what the library would print on stderr) as a Markdown list under
    a sentence, or "" when there are none."""
    notes = [*report.warnings, *[f"{name}: {w}" for name, c in zip(names, calibrations) for w in c.warnings]]
    if not notes:
        return ""
    return "\n\nWhat the library adds to these numbers:\n\n" + "\n".join(
        "* " + w.replace("mu*", "μ*").replace("*", r"\*") + ("" if w.endswith(".") else ".")  # no emphasis from a star
        for w in notes)


def epsilon_rows(report, microbatched: float | None) -> tuple[list, list]:
    """(header, rows): epsilon at the report's delta from each accountant, and the tool that prints it.

    ``microbatched`` is the RDP epsilon at half the noise multiplier: TF Privacy's
    ``compute_dp_sgd_privacy_statement`` assumes microbatching by default, which doubles the sensitivity (no row
    where it is None or infinite)."""
    def up(v):
        return "∞" if v is None else upper(v, 4)

    least = "-" if report.epsilon_pld_lower is None else lower(report.epsilon_pld_lower, 4)
    rows = [["PLD (tight)", up(report.epsilon_pld), least,
             "the tight accountant's upper bound (dp_accounting's pessimistic PLD); Opacus's default accountant (PRV) prints an "
             "upper estimate of the same exact value, within its `eps_error` (for its own rate and steps: see below)"],
            ["RDP, dp_accounting's orders", up(report.epsilon_rdp), "-",
             "TF Privacy's `compute_dp_sgd_privacy_statement` with `used_microbatching=False` (its Poisson-sampling line)"],
            ["RDP, Opacus's orders", up(report.epsilon_rdp_opacus), "-",
             "Opacus with `accountant=\"rdp\"` (orders 1.1 to 63)"]]
    if microbatched is not None and microbatched < float("inf"):
        rows.append(["RDP at half the noise multiplier", up(microbatched), "-",
                     "TF Privacy's statement with its default `used_microbatching=True` (its Poisson-sampling line)"])
    return ["accountant", "ε at most", "exact ε at least", "what prints it"], rows


def see_epsilon(report, dataset_size: int, batch_size: int | None = None, epochs: float | None = None) -> str:
    """The sentences under the epsilon table: how far RDP lies above the tight value, how wide the tight value's
    interval is, whether delta is below one over the data-set size, and (given the batch size and the epochs) the
    rate and steps that Opacus's Poisson loader uses instead, where they differ."""
    out = []
    if report.epsilon_pld is None or report.epsilon_rdp is None:
        out.append("One of the accountants finds no finite ε at this δ.")
    else:
        over = (report.epsilon_rdp - report.epsilon_pld) / report.epsilon_pld
        out.append(f"The RDP accountant states an ε {100 * over:.0f} % above the tight one for this run; both are upper "
                   "bounds, and the tight one is the one to quote. The exact ε lies between the first row's two numbers")
        if report.epsilon_pld_lower is not None and report.epsilon_pld_lower < 0.95 * report.epsilon_pld:
            out[-1] += (f" ({100 * (1 - report.epsilon_pld_lower / report.epsilon_pld):.0f} % apart: the lower end comes "
                        "from an optimistic accountant whose error is first order in the steps times its spacing, so it is the loose one)")
        out[-1] += "."
    if report.delta >= 1.0 / dataset_size:
        out.append(f"δ = {report.delta:g} is not below one over the data-set size ({1.0 / dataset_size:.2g}): a "
                   "guarantee with so large a δ allows a mechanism that publishes a few records whole, so set a smaller "
                   "`delta`.")
    if batch_size is not None and epochs is not None:
        batches = math.ceil(dataset_size / batch_size)  # len(DataLoader): Opacus samples at 1 / len and counts len per epoch
        rate, steps = 1.0 / batches, math.ceil(epochs * batches)
        m = report.mechanism
        if steps != m.steps or abs(rate - m.sampling_rate) > 1e-12 * rate:
            out.append(f"Opacus's `make_private` samples at rate 1 / len(data_loader) = 1/{batches:,} = {rate:.5g} and "
                       f"takes {batches:,} steps per epoch ({steps:,} in all), where this page reads {m.sampling_rate:.5g} "
                       f"and {m.steps:,}: the ε Opacus prints for this run can differ slightly from the table's; "
                       f"`python -m fdp report --noise-multiplier {m.noise_multiplier:g} --sampling-rate {rate!r} --steps {steps} "
                       f"--delta {report.delta:g}` reads Opacus's run exactly.")
    return " ".join(out)


def run_words(run, batch_size: int, dataset_size: int, epochs) -> str:
    """The run in words: its noise, batches, epochs, and the sampling rate and steps they make."""
    return (f"noise multiplier {run.noise_multiplier:g}, expected batches of {batch_size:,} from {dataset_size:,} records "
            f"(sampling rate {run.sampling_rate:.5g}), {epochs:g} epochs, so {run.steps:,} steps")


def glance(report, names, calibrations) -> str:
    """MyST of the page's "Results at a glance" box: the run's epsilon, its membership and reconstruction bounds at
    the smallest levels, and the noise for each target, every bound rounded up (the two bounds to four significant
    digits, trailing zeros kept, as in the table)."""
    i, j = int(np.argmin(report.fpr)), int(np.argmin(report.kappa))
    eps = "no finite ε" if report.epsilon_pld is None else f"ε ≤ {upper(report.epsilon_pld, 4)}"
    rdp = "" if report.epsilon_rdp is None else f" (the RDP accountant's: {upper(report.epsilon_rdp, 4)}; the ε table says which tool prints which)"
    lines = [f"* **Privacy:** {eps} at δ = {report.delta:g}{rdp}; μ-GDP with μ = {upper(report.gdp.mu, 4)} (on error rates of "
             f"at least {report.gdp.alpha_floor:g}).",
             f"* **Membership:** at a false-positive rate of {report.fpr[i]:g}, any attack's true-positive rate is at most "
             f"{upper(report.tpr[i], 4, keep_zeros=True)}.",
             f"* **Reconstruction:** at a prior of {report.kappa[j]:g}, any attack succeeds with probability at most "
             f"{upper(report.rero.upper[j], 4, keep_zeros=True)}."]
    lines += [f"* **Noise for {name}:** {upper(c.noise_multiplier, 4)} or more." for name, c in zip(names, calibrations)]
    return ":::{admonition} Results at a glance\n:class: tip\n\n" + "\n".join(lines) + "\n:::\n"
