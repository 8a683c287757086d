"""The per-test recorder of measured values.

Values travel in ``item.user_properties`` (pytest's own channel, which
pytest-xdist ships from workers to the controller), as
``("claimbook.measure", {...})`` entries.
"""

from __future__ import annotations

import json
import math
from numbers import Real

MEASURE_KEY = "claimbook.measure"


def _plain(value):
    """Convert numbers and nested lists to JSON-safe Python values (NaN kept as None)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Real):
        value = float(value) if not isinstance(value, int) else value
        return None if isinstance(value, float) and math.isnan(value) else value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return value
    if hasattr(value, "tolist"):  # numpy or torch scalars and arrays
        return _plain(value.tolist())
    raise TypeError(
        f"measured values must be numbers, strings or lists, got {type(value).__name__}"
    )


def decimals(printed) -> int:
    """Decimal places a printed number shows: 1.708 -> 3, "1.00" -> 2, 13 -> 0."""
    text = printed if isinstance(printed, str) else repr(printed)
    return len(text.split(".")[1]) if "." in text else 0


def reproduces(value, printed, tolerance=None) -> bool | None:
    """Whether a measured value reproduces the printed one.

    With ``tolerance``: ``|value - printed| <= tolerance``. Without: the value
    rounded to the printed number's decimal places equals it (its digits
    reproduce). Lists compare element by element; a printed word (e.g.
    "post-norm") reproduces when the measured word is the same. None when only
    one side is numeric, or both are text that is not a plain word.
    """
    if isinstance(value, list) and isinstance(printed, list):
        checks = [reproduces(v, p, tolerance) for v, p in zip(value, printed, strict=False)]
        return None if None in checks or len(value) != len(printed) else all(checks)
    try:
        target = float(printed)
        value = float(value)
    except (TypeError, ValueError):
        if isinstance(value, str) and isinstance(printed, str) and " " not in printed:
            return value == printed
        return None
    if tolerance is not None:
        return abs(value - target) <= tolerance
    places = decimals(printed)
    return round(value, places) == round(target, places)


class Measure:
    """Records measured values of one test instance, with the printed value beside them.

    Call it as ``measure(name, value, printed=None, unit=None, x=None, seed=None,
    tolerance=None)``; it returns ``value`` so it can wrap an expression.
    ``printed`` is the source's number (give "1.00" as a string to keep its
    digits); whether it reproduces is recorded (see :func:`reproduces`). ``x``
    gives the abscissa of a list-valued measure, which the site plots; ``seed``
    tags a value of one seed inside a claim about all seeds at once.
    """

    def __init__(self, user_properties: list):
        self._props = user_properties

    def __call__(
        self, name: str, value, printed=None, unit=None, x=None, seed=None, tolerance=None
    ):
        entry = {"name": str(name), "value": _plain(value)}
        if printed is not None:
            entry["printed"] = _plain(printed)
            entry["reproduced"] = reproduces(entry["value"], entry["printed"], tolerance)
            if tolerance is not None:
                entry["tolerance"] = float(tolerance)
        if unit:
            entry["unit"] = unit
        if x is not None:
            entry["x"] = _plain(x)
        if seed is not None:
            entry["seed"] = int(seed)
        json.dumps(entry)  # fail here, in the test, if it cannot be reported
        self._props.append((MEASURE_KEY, entry))
        return value
