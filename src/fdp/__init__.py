"""fdp: trade-off functions, reconstruction robustness and Gaussian-DP reporting."""

__version__ = "0.1.0"
