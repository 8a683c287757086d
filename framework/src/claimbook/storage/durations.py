"""The recorded training seconds of every run, by label: the book's ``durations`` file.

Committed with the book, so a cold run and a cold CI split are balanced before any entry
is cached, and the planned looks' budget is counted in the same seconds on every machine.
No run rewrites it (a run must leave the checkout clean, and its timings move with the
machine's load): ``python -m claimbook durations`` records the cache's measured seconds,
a run new to the file or one whose seconds moved by more than a quarter. Standard JSON,
written atomically, sorted by label.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from claimbook.storage.atomic import write_json

SCHEMA = "claimbook.durations/1"
MOVED = 0.25  # a recorded duration is replaced when a new one differs by more than this share


def _seconds(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < math.inf


def load(path: Path) -> dict[str, float]:
    """Label -> seconds; {} when the file is missing. A malformed file raises ValueError."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}
    except ValueError as exc:  # not JSON at all
        raise ValueError(f"{path}: not a durations file: {exc}") from None
    seconds = data.get("seconds") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("schema") != SCHEMA
        or not isinstance(seconds, dict)
        or not all(_seconds(v) for v in seconds.values())
    ):
        raise ValueError(
            f"{path}: not a durations file of schema {SCHEMA} (label -> seconds, each a "
            "finite number >= 0)"
        )
    return {str(k): float(v) for k, v in seconds.items()}


def update(path: Path, measured: dict[str, float]) -> int:
    """Record ``measured`` (label -> seconds) in the file; returns how many labels changed."""
    recorded = load(path)
    changed = {
        label: round(seconds, 1)
        for label, seconds in measured.items()
        if label not in recorded or abs(seconds - recorded[label]) > MOVED * recorded[label]
    }
    if changed:
        seconds = dict(sorted({**recorded, **changed}.items()))
        write_json(Path(path), {"schema": SCHEMA, "seconds": seconds})
    return len(changed)


def seconds_of(paths) -> dict[str, float]:
    """Label -> seconds of the intact run entries among ``paths`` (the longest where a label
    has entries of several code versions, whatever the file order)."""
    found: dict[str, float] = {}
    for path in paths:
        try:
            entry = json.loads(Path(path).read_text())
            label, seconds = entry["label"], float(entry["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        found[label] = max(seconds, found.get(label, 0.0))
    return found


def from_cache(directory: Path) -> dict[str, float]:
    """Label -> seconds of every intact run entry in a run cache folder."""
    return seconds_of(sorted(Path(directory).glob("*/*.json")))
