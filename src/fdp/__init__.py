"""fdp: trade-off functions, reconstruction robustness and Gaussian-DP reporting.

Start from a mechanism and ask it a question::

    from fdp import Mechanism, dpsgd, risk, calibrate
    from fdp.targets import TPR
    run = dpsgd(9.4, 0.32768, 2000)        # Mechanism("gaussian", 9.4, 0.32768, 2000): noise, sampling rate, steps
    risk.report(run)                       # (eps, delta), mu-GDP, membership inference, ReRo, RTM
    calibrate.solve(TPR(0.05, fpr=1e-3), 0.32768, steps=2000)   # the noise whose TPR at FPR 1e-3 is <= 0.05

Results that carry caveats also issue them as :class:`FDPWarning`.
"""

from .accounting.privacy_loss import Mechanism, RandomizedResponse, dpsgd
from .diagnostics import FDPWarning

__version__ = "0.1.0"
__all__ = ["Mechanism", "RandomizedResponse", "dpsgd", "risk", "calibrate", "targets", "FDPWarning", "__version__"]


def __getattr__(name):
    # risk, calibrate and targets pull in the accountants (dp_accounting, mpmath): imported on first use, so that
    # `import fdp` and the command line start fast
    if name in ("risk", "calibrate", "targets"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'fdp' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
