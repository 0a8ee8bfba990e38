"""Trade-off curves and what a curve says: the layer every reading of a mechanism is built on.

* :mod:`fdp.curves.tradeoff` -- curves ``f = T(P, Q)``: closed forms, piecewise-linear curves, symmetrisation,
  subsampling, composition of Gaussian curves.
* :mod:`fdp.curves.mia` -- membership inference read off a curve (TPR at an FPR, advantage, Bayes success).
* :mod:`fdp.curves.rero` -- reconstruction robustness read off a curve (ReRo paper Thm. 1), Fano and RDP bounds.
* :mod:`fdp.curves.gdp` -- mu-GDP read off a curve: the tight mu* (GDP paper eq. 21), its exact regret, the
  Gaussian privacy profile, the closed forms of pure DP and Laplace.
* :mod:`fdp.curves.conversions` -- (eps, delta), privacy profiles, RDP and zCDP as curves and back.

Nothing here knows a mechanism: :mod:`fdp.accounting` builds the curves these read.
"""
