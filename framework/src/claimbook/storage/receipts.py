"""A receipt bound to its run: the results file it names must be the one its run wrote.

A run draws a random run id (:func:`new_run_id`) and records it in its results file
(``run.run_id``) and in its receipt, beside the results file's path. ``python -m claimbook
gate --receipt R`` then refuses a results file that another run wrote
(:func:`receipt_mismatch`), whoever put its name in ``R``. A receipt without a run id (one
written by an older claimbook) is not checked; ``merge`` binds its receipt like a run.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from claimbook.storage.atomic import write_json
from claimbook.storage.results import RECEIPT

DECISION = "claimbook.gate/1"


def new_run_id() -> str:
    """A random id no other run has (16 hex digits)."""
    return secrets.token_hex(8)


def write_bound_receipt(receipt: Path, results: Path, run: dict) -> None:
    """Write the receipt of ``run``: the results file it wrote, and its run id."""
    data = {"schema": RECEIPT, "results": str(Path(results).resolve()), "run_id": run["run_id"]}
    write_json(Path(receipt), data)


def receipt_mismatch(receipt: Path, results_path: Path, results: dict) -> str | None:
    """Why the results file a receipt names is not its run's, or None if it is (or the
    receipt records no run id)."""
    try:
        expected = json.loads(Path(receipt).read_text()).get("run_id")
    except (OSError, ValueError, AttributeError):
        return f"the receipt {receipt} is unreadable"
    if expected is None:
        return None
    run = results.get("run") or {}
    found = run.get("run_id")
    if found != expected:
        writer = f"run {found}" if found else "a run that recorded no run id"
        return (
            f"the receipt {receipt} is of run {expected}, but the results file it names, "
            f"{results_path}, was written by {writer}: it is not this run's results"
        )
    return None


def decision_path(results_path: Path) -> Path:
    """Where the gate keeps its decision on a results file: beside it, named after it."""
    results_path = Path(results_path)
    return results_path.with_name("gate-" + results_path.name)


def write_decision(results_path: Path, results: dict, failed: bool, reasons: list[str]) -> None:
    """Record the gate's decision on ``results_path`` (bound to its run id), for the site:
    the site shows what the gate decided, never a decision of its own."""
    run_id = (results.get("run") or {}).get("run_id")
    data = {"schema": DECISION, "run_id": run_id, "failed": failed, "reasons": list(reasons)}
    write_json(decision_path(results_path), data)


def read_decision(results_path: Path, results: dict) -> dict | None:
    """The gate's decision on ``results_path``, or None where the gate has not judged this
    run (no file, another run's, or unreadable)."""
    try:
        data = json.loads(decision_path(results_path).read_text())
    except (OSError, ValueError):
        return None
    run_id = (results.get("run") or {}).get("run_id")
    if not isinstance(data, dict) or data.get("schema") != DECISION:
        return None
    if run_id is None or data.get("run_id") != run_id:
        return None
    reasons = data.get("reasons")
    if not isinstance(data.get("failed"), bool) or not isinstance(reasons, list):
        return None
    return {"failed": data["failed"], "reasons": [str(r) for r in reasons]}
