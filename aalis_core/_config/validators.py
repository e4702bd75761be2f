"""attrs validators for the numeric settings of plugin ``Config`` classes.

The converter already turns a TOML value into the field's type; what it cannot know is that
a count must be positive or a timeout above zero. Every plugin needs those two rules, worded
the same way in every ``ConfigError``, so they live here instead of in each plugin's
``config.py`` (docs/plugins/writing.md, "Settings"). A rule with a wording of its own stays
with its plugin.
"""

from __future__ import annotations

from typing import Any

import attrs

# No docstrings on the validators: the generated configuration reference shows a
# validator's name, and its docstring beside it when it has one.


def positive_int(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # A whole number above zero (True is not one).
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{attribute.name} must be a positive int, got {value!r}")


def positive_seconds(inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # A duration in seconds above zero, int or float (True is not one).
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{attribute.name} must be a positive number of seconds, got {value!r}")


__all__ = ["positive_int", "positive_seconds"]
