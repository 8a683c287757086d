"""Persisting a judged run: the one save sequence of session end and merge.

:func:`persist` writes, in order, the results file, the receipt bound to it and the staged
baseline (committed last); a write that fails commits nothing after it (a receipt already
written is removed if the baseline fails, the staged baseline is dropped) and raises
:class:`PersistError`. Only then is the run appended to the history, which never fails a
run. It stores what it is given: the judging is done before (plugin/finish.py, merge.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from claimbook.storage.baseline import StagedBaseline
from claimbook.storage.history import History
from claimbook.storage.receipts import write_bound_receipt
from claimbook.storage.results import write_results


class PersistError(Exception):
    """A write of :func:`persist` failed; ``path`` is the results file if it was written."""

    def __init__(self, why: str, path: Path | None):
        super().__init__(why)
        self.path = path


def persist(
    results: dict,
    directory: Path,
    *,
    receipt: Path | None = None,
    baseline: StagedBaseline | None = None,
    history: Path | None = None,
    say: Callable[[str], None] = print,
) -> Path:
    """Write ``results`` (``run``, ``claims``, ``comparison``) as the module docstring says;
    return the results file. ``history`` None: no history (a shard's, which the merge
    records); ``say`` reports what the history did."""
    run, path, step = results["run"], None, "the results file"
    try:
        path = write_results(directory, run, results["claims"], results.get("comparison"))
        step = "the receipt"
        if receipt:
            write_bound_receipt(Path(receipt), path, run)
        step = "the baseline"
        if baseline:
            baseline.commit()
    except (OSError, ValueError) as exc:
        if receipt and step == "the baseline":  # its results say the baseline was rewritten
            Path(receipt).unlink(missing_ok=True)
        if baseline:
            baseline.discard()
        raise PersistError(f"{step} could not be written ({exc})", path) from exc
    if history is not None:
        try:
            kept = History(history, say)
            kept.append(results, path.name)
            kept.close()
        except (OSError, sqlite3.Error) as exc:  # locked (HistoryLocked) or not: never blocks
            say(f"history not updated: {exc}")
    return path
