"""The shape of the JSON files claimbook reads back (results, shards, baselines).

A file of the right schema can still be of the wrong shape (edited by hand, cut short by
another tool, a shard doctored): reading it must stop with a message naming the file and
the first entry that is wrong, never with a KeyError deep in a merge or a comparison. A
shape is plain data: a type (or tuple of types) an entry must be, a dict of the keys an
object must have (more are allowed; a key ending in ``?`` is checked only where present),
``[shape]`` for a list of items, or ``{EACH: shape}`` for an object's every value. Plain
code: a schema library would be a new dependency for three small shapes.
"""

from __future__ import annotations

EACH = "*"  # in a dict shape: every value of the object has this shape
NUMBER = (int, float)
NONE = type(None)

_NAMES = {
    str: "text", int: "a whole number", float: "a number", bool: "true or false",
    dict: "an object", list: "a list", NONE: "null",
}  # fmt: skip


def _kind(shape) -> str:
    if isinstance(shape, dict):
        return "an object"
    if isinstance(shape, list):
        return "a list"
    kinds = shape if isinstance(shape, tuple) else (shape,)
    return " or ".join(dict.fromkeys(_NAMES[k] for k in kinds))


def _fits(value, shape) -> bool:
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
    if isinstance(shape, list):
        for i, item in enumerate(value):
            found = problem(item, shape[0], f"{where}[{i}]")
            if found:
                return found
    elif isinstance(shape, dict):
        for key, inner in shape.items():
            name = key.removesuffix("?")
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
