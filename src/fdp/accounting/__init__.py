"""Accounting: from a :class:`fdp.Mechanism` to its privacy-loss distribution, curve and guarantees.

* :mod:`fdp.accounting.privacy_loss` -- the mechanisms (:class:`~fdp.accounting.privacy_loss.Mechanism`,
  :class:`~fdp.accounting.privacy_loss.RandomizedResponse`) and their one
  privacy loss; every accountant here takes a ``Mechanism`` first.
* :mod:`fdp.accounting.onestep`, :mod:`fdp.accounting.lattice` -- the certified one-step measures and the float64
  composition on a loss lattice; :mod:`fdp.accounting.ground_truth` -- the certified ground truth in exact arithmetic.
* :mod:`fdp.accounting.pld` -- dp_accounting's PLDs as curves, the certified bracket and lower curve.
* :mod:`fdp.accounting.edgeworth`, :mod:`fdp.accounting.montecarlo` -- the Edgeworth/CLT approximations and Hayes et
  al.'s Algorithm 1.
* :mod:`fdp.accounting.accountants` -- (eps, delta) from the PLD and RDP accountants.
* :mod:`fdp.accounting.rdp` -- the Renyi DP of a mechanism (Laplace, subsampled Gaussian).
* :mod:`fdp.accounting.mechanism_gdp` -- mu* and regret of a mechanism (DP-SGD on its certified curve, the full
  batch's bound, the closed forms of mechanisms calibrated to (eps, delta)); the readings of any curve are in
  :mod:`fdp.curves.gdp`.
* :mod:`fdp.accounting.rtm` -- the relaxed threat model's curves of a mechanism (its magnitude statistic) and their
  composition.

Above this layer: :mod:`fdp.risk` (one entry point per question) and :mod:`fdp.calibrate`.
"""
