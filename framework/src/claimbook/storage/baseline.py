"""The committed baseline file, ``reports/baseline.json`` (schema ``claimbook.baseline/3``).

Only an accepted, complete run writes it (``--claimbook-update-baseline``); its content is
:func:`claimbook.judge.baseline.summarize` of that run, with the commit, seeds and
machine class it was recorded on.
"""

from __future__ import annotations

from pathlib import Path

from claimbook.judge.baseline import summarize
from claimbook.storage.atomic import read_json, write_json

SCHEMA = "claimbook.baseline/3"


class BaselineError(ValueError):
    """The baseline file is unreadable or of another schema."""


def baseline_of(results: dict) -> dict:
    run = results["run"]
    return {
        "schema": SCHEMA,
        "commit": run.get("git_commit"),
        "machine": run.get("machine"),
        "seeds": run["seeds"],
        "claims": summarize(results),
    }


def write_baseline(path: Path, results: dict) -> None:
    """Write the baseline of ``results`` to ``path`` atomically."""
    write_json(Path(path), baseline_of(results))


def load_baseline(path: Path) -> dict | None:
    """The baseline at ``path``, or None if there is none.

    Raises:
        BaselineError: if the file exists but cannot be read or is of another schema.
    """
    path = Path(path)
    if not path.exists():
        return None
    advice = "rewrite it from a complete run with --claimbook-update-baseline"
    return read_json(path, SCHEMA, "baseline", advice, BaselineError)
