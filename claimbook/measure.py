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
    raise TypeError(
        f"measured values must be numbers, strings or lists, got {type(value).__name__}"
    )


class Measure:
    """Records measured values of one test instance, with the printed value beside them.

    Call it as ``measure(name, value, printed=None, unit=None, x=None, seed=None)``;
    it returns ``value`` so it can wrap an expression. ``x`` gives the abscissa
    of a list-valued measure (e.g. distances), which the site plots; ``seed``
    tags a value of one seed inside a claim about all seeds at once.
    """

    def __init__(self, user_properties: list):
        self._props = user_properties

    def __call__(self, name: str, value, printed=None, unit: str | None = None, x=None, seed=None):
        entry = {"name": str(name), "value": _plain(value)}
        if printed is not None:
            entry["printed"] = _plain(printed)
        if unit:
            entry["unit"] = unit
        if x is not None:
            entry["x"] = _plain(x)
        if seed is not None:
            entry["seed"] = int(seed)
        json.dumps(entry)  # fail here, in the test, if it cannot be reported
        self._props.append((MEASURE_KEY, entry))
        return value
