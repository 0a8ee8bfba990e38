"""Test configuration: in CI hypothesis draws the same examples on every run (reproducible results);
on a developer's machine it draws new ones each run, so that more of the input space gets tried."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("dev", derandomize=False)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
