"""Accounting: from a :class:`fdp.Mechanism` to its privacy-loss distribution, curve and guarantees.

* :mod:`fdp.accounting.privacy_loss` -- the mechanisms (:class:`Mechanism`, :class:`RandomizedResponse`) and their one
  privacy loss; every accountant here takes a ``Mechanism`` first.
* :mod:`fdp.accounting.onestep`, :mod:`fdp.accounting.lattice` -- the certified one-step measures, the mpmath ground
  truth and the float64 composition on a loss lattice.
* :mod:`fdp.accounting.pld` -- dp_accounting's PLDs as curves, the certified bracket and lower curve.
* :mod:`fdp.accounting.edgeworth`, :mod:`fdp.accounting.montecarlo` -- the Edgeworth/CLT approximations and Hayes et
  al.'s Algorithm 1.
* :mod:`fdp.accounting.accountants` -- (eps, delta) from the PLD and RDP accountants.
* :mod:`fdp.accounting.conversions`, :mod:`fdp.accounting.gdp`, :mod:`fdp.accounting.rtm` -- (eps, delta), RDP and
  zCDP as curves; mu-GDP (mu* and its regret); the relaxed threat model's curves.  These three also hold readings of a
  curve, which belong to :mod:`fdp.curves`: the next step of the layering splits them.

Above this layer: :mod:`fdp.risk` (one entry point per question) and :mod:`fdp.calibrate`.
"""
