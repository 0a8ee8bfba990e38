"""Test configuration: hypothesis draws the same examples on every run, so CI results are reproducible."""

from hypothesis import settings

settings.register_profile("reproducible", derandomize=True)
settings.load_profile("reproducible")
