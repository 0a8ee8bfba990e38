"""Tests of fdp.presentation."""
from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from fdp import formatting, presentation, risk
from fdp.accounting.privacy_loss import RandomizedResponse

# --- from test_edges_surfaces, round 2 and later break reviews (the report, calibrate and gdp surfaces) ------


def test_markdown_rounds_upper_bounds_up_and_lower_bounds_down():
    r = risk.report(RandomizedResponse(1.0), fpr=[1e-3, 1e-20], prior=[0.5])
    text = presentation.markdown(r)
    assert "| 0.001 | 0.002719 |" in text and "| 1e-20 | 2.719e-20 |" in text
    assert f"mu* = **{formatting.upper(r.gdp.mu, 5)}**" in text and "1.2321" in text
    assert "at most 0.4622" in text  # the advantage tanh(1/2) = 0.46211...
    assert "| 0.001 | [0.00271828, 0.00271829] |" in text  # exact e/1000 = 0.0027182818...


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(min_value=1, max_value=8))
@settings(max_examples=300, deadline=None)
def test_outward_rounding_never_crosses_the_value(x, digits):
    up, low = formatting.upper(x, digits), formatting.lower(x, digits)
    assert Decimal(low) <= Decimal(x) <= Decimal(up)
    assert len(up.split("e")[0].replace(".", "").lstrip("0")) <= digits + 1


def test_plain_words_state_the_reports_bounds_rounded_up_and_name_the_baselines():
    """The report's first section reads the same numbers as its tables, as percentages rounded up; it names what a
    blind guess achieves, and writes priors as candidates only where 1 / kappa is a whole number."""
    from fdp.accounting.privacy_loss import dpsgd

    r = risk.report(dpsgd(1.1, 256 / 60000, 7032), fpr=[1e-3, 0.1], kappa=[1e-3, 0.1], prior=[0.5],
                    discretization=1e-3, rero_discretization=1e-3, rtm_discretization=1e-3)
    words = "\n".join(presentation.plain_words(r))
    tpr, gamma, rtm = (formatting.upper(100 * v * formatting.ULPS_UP, 3) for v in (r.tpr[0], r.rero.upper[1], r.rtm.tpr[1]))
    assert "accuse at most 0.1 % or 10 %" in words and f"catches at most {tpr} % or" in words
    assert Decimal(tpr) >= Decimal(100 * r.tpr[0]) and f"or {gamma} %." in words and f"or {rtm} % of members" in words
    assert "one of 1,000 or 10 equally likely candidates" in words and "accusing at random catches as many" in words
    assert f"ε at most {formatting.upper(r.epsilon_pld, 4)} at δ = 1e-05" in words and "every noisy step" in words
    assert presentation.markdown(r).index("## In plain words") < presentation.markdown(r).index("## (epsilon, delta)")
    odd = "\n".join(presentation.plain_words(risk.report(RandomizedResponse(1.0), kappa=[0.003], prior=[0.5])))
    assert "candidates" not in odd and "blind guess of a record is right with chance 0.3 %" in odd
    assert "this mechanism released" in odd and "Without the target record" not in odd
    assert "assume Poisson sampling" in words and "Poisson" not in odd  # issue 53's reader: fixed-size batches differ


def test_the_epsilon_rows_name_the_training_libraries_for_dp_sgd_only():
    from fdp import Mechanism
    from fdp.accounting.privacy_loss import dpsgd

    small = dict(discretization=1e-3, rero_discretization=1e-3, rtm_discretization=1e-3, fpr=[1e-3], kappa=[1e-3], prior=[0.5])
    laplace = presentation.markdown(risk.report(Mechanism("laplace", 2.0, 1.0, 3), **small))
    assert "| PLD (tight) |" in laplace and "| RDP |" in laplace and "Opacus" not in laplace and "TF Privacy" not in laplace
    sgd = presentation.markdown(risk.report(dpsgd(1.0, 0.01, 100), **small))
    assert "Opacus's default PRV" in sgd and "TF Privacy without microbatching" in sgd
