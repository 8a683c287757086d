"""The recorded training seconds of every run, by label: the book's ``durations`` file.

Committed with the book, so a cold run and a cold CI split are balanced before any entry
is cached. A session updates it with the runs it trained: a run new to the file, or whose
seconds moved by more than a quarter (timings here are noisy; a smaller change would only
churn the file). A training leg does not: every leg of a round must plan from the same
file. Standard JSON, written atomically, sorted by label.
"""

from __future__ import annotations

import json
from pathlib import Path

from claimbook.storage.atomic import write_json

SCHEMA = "claimbook.durations/1"
MOVED = 0.25  # a recorded duration is replaced when a new one differs by more than this share


def load(path: Path) -> dict[str, float]:
    """Label -> seconds; {} when the file is missing. A malformed file raises ValueError."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}
    seconds = data.get("seconds") if isinstance(data, dict) else None
    if (
        data.get("schema") != SCHEMA
        or not isinstance(seconds, dict)
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in seconds.values())
    ):
        raise ValueError(f"{path}: not a durations file of schema {SCHEMA} (label -> seconds)")
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
