"""The shape of the JSON files claimbook reads back (results, shards, baselines).

A file of the right schema can still be of the wrong shape (edited by hand, cut short by
another tool, a shard doctored): reading it must stop with a message naming the file and
the first entry that is wrong, never with a KeyError deep in a merge or a comparison. A
shape is plain data: a type (or tuple of types) an entry must be, a dict of the keys an
object must have (more are allowed; a key ending in ``?`` is checked only where present),
``[shape]`` for a list of items, ``{EACH: shape}`` for an object's every value, ``{KEYS:
rule}`` for its every key, or a :class:`Rule` (a type and a check, such as a claim id's:
an id or a seed read back passes the rule it passed when it was declared). Plain code: a
schema library would be a new dependency for three small shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from claimbook.declare import ids

EACH = "*"  # in a dict shape: every value of the object has this shape
KEYS = "*keys"  # in a dict shape: every key of the object passes this rule
NUMBER = (int, float)
NONE = type(None)


@dataclass(frozen=True)
class Rule:
    """An entry of ``kind`` that ``problem`` finds nothing wrong with (it says why, or "")."""

    kind: type | tuple
    problem: Callable[[object], str]


CLAIM_ID = Rule(str, ids.id_problem)
SOURCE_ID = Rule(str, ids.source_id_problem)
SEED = Rule(int, ids.seed_problem)
SEED_OR_NONE = Rule((int, NONE), lambda value: "" if value is None else ids.seed_problem(value))

_NAMES = {
    str: "text", int: "a whole number", float: "a number", bool: "true or false",
    dict: "an object", list: "a list", NONE: "null",
}  # fmt: skip


def _kind(shape) -> str:
    if isinstance(shape, Rule):
        return _kind(shape.kind)
    if isinstance(shape, dict):
        return "an object"
    if isinstance(shape, list):
        return "a list"
    kinds = shape if isinstance(shape, tuple) else (shape,)
    return " or ".join(dict.fromkeys(_NAMES[k] for k in kinds))


def _fits(value, shape) -> bool:
    if isinstance(shape, Rule):
        return _fits(value, shape.kind)
    if isinstance(shape, dict):
        return isinstance(value, dict)
    if isinstance(shape, list):
        return isinstance(value, list)
    return isinstance(value, shape)


def problem(value, shape, where: str = "") -> str:
    """What is wrong with ``value`` against ``shape`` ("" when nothing): the first entry
    that is missing or of another kind, by its path (``claims[0].instances``)."""
    if not _fits(value, shape):
        return f"{where or 'the file'} should be {_kind(shape)}"
    if isinstance(shape, Rule):
        found = shape.problem(value)
        return f"{where}: {found}" if found else ""
    if isinstance(shape, list):
        for i, item in enumerate(value):
            found = problem(item, shape[0], f"{where}[{i}]")
            if found:
                return found
    elif isinstance(shape, dict):
        for key, inner in shape.items():
            name = key.removesuffix("?")
            if key == KEYS:
                found = next(filter(None, map(inner.problem, value)), "")
                if found:
                    return f"{where or 'the file'}: key {found}"
                continue
            if key == EACH:
                items = value.items()
            elif name in value:
                items = [(name, value[name])]
            elif key.endswith("?"):
                items = []
            else:
                return f"{where or 'the file'} lacks {key!r}"
            for name, item in items:
                found = problem(item, inner, f"{where}.{name}" if where else str(name))
                if found:
                    return found
    return ""


def check(data: dict, shape: dict, path, what: str, advice: str, error: type[Exception]):
    """``data`` if it has ``shape``, else ``error`` naming ``path``, the entry and the fix."""
    found = problem(data, shape)
    if found:
        raise error(f"{path} is a malformed {what}: {found}; {advice}")
    return data
