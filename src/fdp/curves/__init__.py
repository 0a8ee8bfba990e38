"""Trade-off curves and what a curve says: the layer every reading of a mechanism is built on.

* :mod:`fdp.curves.tradeoff` -- curves ``f = T(P, Q)``: closed forms, piecewise-linear curves, symmetrisation,
  subsampling, composition of Gaussian curves.
* :mod:`fdp.curves.mia` -- membership inference read off a curve (TPR at an FPR, advantage, Bayes success).
* :mod:`fdp.curves.rero` -- reconstruction robustness read off a curve (ReRo paper Thm. 1), Fano and RDP bounds.

Nothing here knows a mechanism: :mod:`fdp.accounting` builds the curves these read.
"""
