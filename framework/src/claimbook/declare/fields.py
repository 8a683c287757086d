"""Every field of a rule (:mod:`claimbook.declare.design`) checked against its declared type.

A rule is a frozen dataclass whose fields carry their types as written (``float | None``,
``bool``, ...). Python does not enforce them, so ``above="0"`` would reach the statistics
after training, ``margin="0.1"`` would crash collection, ``below=float("nan")`` would
decide nothing, and ``lower="no"`` would count as true. :func:`mistyped` says which field
is wrong and what it must be, so that collection fails naming the test.
"""

from __future__ import annotations

import dataclasses
import math


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _name(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _names(value) -> bool:
    return isinstance(value, tuple | list) and all(_name(v) for v in value)


def _measure(value, pair: type) -> bool:
    if isinstance(value, pair):
        return _name(value.a) and _name(value.b)
    return _name(value)


# a field's type as written in design.py -> (accepts, what it must be, in words)
KINDS = {
    "bool": (lambda v: isinstance(v, bool), "True or False"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "float": (_number, "a finite number"),
    "float | None": (lambda v: v is None or _number(v), "a finite number"),
    "str | None": (lambda v: v is None or _name(v), "a measure's name"),
    "tuple[str, ...]": (_names, "a list of measure names"),
    "tuple[Rule, ...]": (lambda v: isinstance(v, tuple | list), "a list of rules"),
}


def shown(value) -> str:
    """A value as a reader would write it: text in quotes, numbers as numbers."""
    if isinstance(value, str):
        return f'the text "{value}"'
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else f"{'-' if value < 0 else ''}infinity"
    return str(value)


def mistyped(rule, pair: type) -> str:
    """What is wrong with the first mistyped field of ``rule``, or "" when none is (``pair``:
    the type of a paired difference of two measures, design's ``Diff``)."""
    kinds = {
        **KINDS,
        "str | Diff": (lambda v: _measure(v, pair), "a measure's name or Diff(a, b) of two"),
    }
    for field in dataclasses.fields(rule):
        accepts, what = kinds[field.type]
        value = getattr(rule, field.name)
        if not accepts(value):
            return f"{type(rule).__name__} {field.name}= must be {what}, got {shown(value)}"
    return ""
