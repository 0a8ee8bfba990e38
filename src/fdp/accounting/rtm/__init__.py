"""Relaxed-threat-model (RTM) trade-off curves (Kaissis, Kolek, Ziller, Riess, Rueckert 2023).

In the RTM the adversary knows D but not the target record x*, so it cannot evaluate q(D') and
tests the magnitude of the (centred) release instead of the likelihood ratio (Lemmas 2-5).
For each mechanism this module returns

* ``j = T(H0, H1)``: H0 = the magnitude statistic under M(D) (target absent), H1 = under
  M(D u {x*}) at the dominating shift ||q(D') - q(D)|| = Delta ("add" direction, :mod:`fdp.accounting.privacy_loss`);
* ``j.inverse`` = ``j^{-1}`` = T(H1, H0), the swapped test;
* ``J = C(j, j^{-1})`` = :func:`fdp.curves.tradeoff.symmetrise` (j), the curve used for lambda-DR (Def. 3).

Every curve is a :class:`fdp.curves.tradeoff.TradeOffCurve`, vectorised over the level alpha.  The functions of the
submodules are also names of this package (``rtm.tensor_composition`` is
``rtm.composition.tensor_composition``); the reference lists them under their submodule.
Effect sizes: ``mu = Delta_1 / b`` (Laplace), ``mu = Delta_2 / sigma`` (Gaussian).

Composition of subsampled mechanisms (Sec. 4: "direct composition of the test statistics as
described in [Dong et al.], Definition 3.1"; App. 7.3: "the product distributions of the test
statistics") has two readings, both implemented: (a) :func:`~fdp.accounting.rtm.composition.tensor_composition`, the f-DP tensor
product of the N one-step curves (each release tested by its magnitude, the N magnitudes combined
optimally); (b) :func:`~fdp.accounting.rtm.composition.sum_composition`, one statistic of all releases as in the proof of Lemma 8
(the norm of their sum, a binomial mixture under H1).  :func:`~fdp.accounting.rtm.composition.composed_subsampled_gaussian` gives
J for either; the noise calibration of App. 7.3 is :func:`fdp.calibrate.sandwich_noise`.

Errata found while implementing (see the docstrings for details):
eq. 3 prints the branch point ``1/2 - exp(-mu)/2``; the correct one is ``1/2 - exp(-2 mu)/2``
(as in the folded-Laplace quantile of the proof). Lemma 8's statement lacks parentheses; from
eqs. 42-46 ``kappa_c = (Delta_a + Delta_b)^2 / (sigma_a^2 + sigma_b^2)``. In eq. 7 (and eq. 56)
the shift ``sqrt(2) N mu^2 / (2 d)`` should be ``N mu^2 / sqrt(2 d)``, and the right-hand side
``N sqrt(mu / (2 d))`` should be ``N mu^2 / sqrt(2 d)`` (eq. 59).
"""

from .closed_forms import (
    ASYMPTOTIC_FORMS,
    WEIGHTINGS,
    asymptotic,
    asymptotic_gap,
    composition_noncentrality,
    gaussian,
    gaussian_1d,
    gaussian_composition,
    laplace,
    laplace_branch_error,
)
from .composition import (
    DEFAULT_TAIL,
    OPTIMISTIC_REFINEMENT,
    READINGS,
    SUM_STATISTICS,
    composed_curve,
    composed_subsampled_gaussian,
    sum_composition,
    tensor_bracket,
    tensor_composition,
    tensor_optimistic_curve,
)
from .release import RELEASES, DRResult, ReleaseCurves, detection_resilience, powers, release_curves
from .statistics import Exponential, FoldedLaplace, from_test_statistic
from .subsampling import subsampled_gaussian, subsampled_laplace

__all__ = [
    "ReleaseCurves",
    "release_curves",
    "RELEASES",
    "Exponential",
    "FoldedLaplace",
    "from_test_statistic",
    "laplace",
    "laplace_branch_error",
    "gaussian",
    "gaussian_1d",
    "composition_noncentrality",
    "gaussian_composition",
    "ASYMPTOTIC_FORMS",
    "DEFAULT_TAIL",
    "asymptotic",
    "asymptotic_gap",
    "subsampled_gaussian",
    "powers",
    "subsampled_laplace",
    "tensor_composition",
    "tensor_bracket",
    "tensor_optimistic_curve",
    "sum_composition",
    "SUM_STATISTICS",
    "READINGS",
    "composed_subsampled_gaussian",
    "composed_curve",
    "DRResult",
    "detection_resilience",
    "WEIGHTINGS",
    "OPTIMISTIC_REFINEMENT",
]
