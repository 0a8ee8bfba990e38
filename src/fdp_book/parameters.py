"""Notebook parameters as papermill passes them: ``-p name value`` gives lists as YAML strings."""

from __future__ import annotations

import numbers

import yaml

__all__ = ["as_list"]


def as_list(name: str, value) -> list:
    """Return ``value`` as a non-empty list.

    Accepts a list or tuple, a single number, or a string holding a YAML list such as
    ``"[0.5, 1.0]"`` (papermill's ``-p`` passes lists as strings).
    """
    if isinstance(value, str):
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ValueError(f"{name} must be a list, got {value!r} ({exc.__class__.__name__})") from None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or len(value) == 0:
        raise ValueError(f"{name} must be a non-empty list, got {value!r}")
    return list(value)

