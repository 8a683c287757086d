"""One model for measured numbers: JSON-safe, finite-aware, compared as a reader compares them.

A non-finite float is never stored as ``null`` or as a bare ``NaN``/``Infinity`` token
(neither is standard JSON): it becomes ``{"nonfinite": "NaN"}`` (or ``"Infinity"``,
``"-Infinity"``), which every reader of a results file can tell from a number or a word.

A printed number reproduces when the measured value, rounded half up in decimal to the
printed text's own last digit (its exponent), equals it: ``1.7075`` reproduces ``"1.708"``,
``0.4`` does not reproduce ``1e-05``.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from numbers import Real

_NAMES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_EXACT = Context(prec=200)  # wide enough that no quantize of a float loses digits


class NonFiniteValueError(ValueError):
    """A measured value is NaN or infinite: the instance is an ``error``, never a pass."""


def nonfinite(value: float) -> dict:
    """The explicit record of a non-finite float: ``{"nonfinite": "NaN"}``."""
    return {"nonfinite": _NAMES[repr(float(value)).lower()]}


def is_nonfinite(value) -> bool:
    return isinstance(value, dict) and set(value) == {"nonfinite"}


def plain(value):
    """``value`` as JSON-safe data: numbers, words, nested lists; non-finite floats explicit.

    Raises:
        TypeError: for anything else (a dict, a tensor of objects, ...).
    """
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, Real):
        value = float(value)
        return value if math.isfinite(value) else nonfinite(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy or torch scalars and arrays
        return plain(value.tolist())
    raise TypeError(
        f"measured values must be numbers, strings or lists, got {type(value).__name__}"
    )


def nonfinite_in(value) -> list[str]:
    """The non-finite entries of a plain value (e.g. ``["NaN"]``), empty if it is finite."""
    if is_nonfinite(value):
        return [value["nonfinite"]]
    if isinstance(value, list):
        return [kind for v in value for kind in nonfinite_in(v)]
    return []


def is_number(value) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _decimal(value) -> Decimal | None:
    """The decimal a reader sees: a float by its shortest repr, a text by its own digits."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = Decimal(value.strip().replace(",", ""))
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def reproduces(value, printed, tolerance=None) -> bool | None:
    """Whether a measured value reproduces the printed one.

    With ``tolerance``: ``|value - printed| <= tolerance``. Without: ``value`` rounded half
    up to the printed text's last digit equals it. Lists compare element by element; a
    printed word (e.g. "post-norm") reproduces when the measured word is the same; a
    non-finite value never reproduces. None when the two cannot be compared (a number
    against a phrase, one side a list).
    """
    if isinstance(value, list) and isinstance(printed, list):
        checks = [reproduces(v, p, tolerance) for v, p in zip(value, printed, strict=False)]
        return None if None in checks or len(value) != len(printed) else all(checks)
    target = _decimal(printed)
    if target is None:
        if isinstance(value, str) and isinstance(printed, str) and " " not in printed:
            return value == printed
        return None
    if nonfinite_in(value) or (isinstance(value, float) and not math.isfinite(value)):
        return False
    measured = _decimal(value)
    if measured is None:
        return None
    if tolerance is not None:
        return abs(measured - target) <= _decimal(float(tolerance))
    step = Decimal(1).scaleb(target.as_tuple().exponent)
    return measured.quantize(step, rounding=ROUND_HALF_UP, context=_EXACT) == target


def fmt(value, printed=None) -> str:
    """A compact number: 4 significant digits for floats, thousands separators for ints.

    Beside a number printed as text (``printed="0.99997"``: its digits are the text's), a
    float keeps at least the printed decimals, so that a reader sees what was compared
    (0.99997 against a printed 0.99997, never "1")."""
    if isinstance(printed, str) and isinstance(value, float) and math.isfinite(value):
        target = _decimal(printed)
        places = -target.as_tuple().exponent if target is not None else 0
        text = fmt(value)
        if isinstance(places, int) and places > len(text.partition(".")[2]) and "e" not in text:
            return f"{value:,.{places}f}"
    if isinstance(value, bool) or value is None:
        return str(value)
    if is_nonfinite(value):
        return value["nonfinite"]
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, list):
        return (
            "[" + " ".join(fmt(v) for v in value[:12]) + (" ..." if len(value) > 12 else "") + "]"
        )
    return str(value)


_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def encode(data):
    """Any nest of dicts, lists and scalars with each non-finite float made explicit."""
    if isinstance(data, float) and not math.isfinite(data):
        return nonfinite(data)
    if isinstance(data, dict):
        return {k: encode(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [encode(v) for v in data]
    return data


def decode(data):
    """The inverse of :func:`encode`: explicit non-finite records become floats again."""
    if is_nonfinite(data):
        return _FLOATS[data["nonfinite"]]
    if isinstance(data, dict):
        return {k: decode(v) for k, v in data.items()}
    if isinstance(data, list):
        return [decode(v) for v in data]
    return data
