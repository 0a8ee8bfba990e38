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
