"""The committed baseline file, ``reports/baseline.json`` (schema ``claimbook.baseline/3``).

Only an accepted, complete run writes it (``--claimbook-update-baseline``); its content is
:func:`claimbook.judge.baseline.baseline_of` that run (what its claims judged, with the
commit, seeds and machine class it was recorded on), passed in judged.
"""

from __future__ import annotations

import os
from pathlib import Path

from claimbook.storage import shape
from claimbook.storage.atomic import read_json, temporary_beside, write_json

SCHEMA = "claimbook.baseline/3"
_INSTANCE = {"seed": shape.SEED_OR_NONE, "params": dict, "outcome": (str, shape.NONE)}
_RECORD = {
    "level": str, "verdict": str, "erratum": bool, "instances": [_INSTANCE],
    "printed": {shape.EACH: dict}, "values": {shape.EACH: dict}, "source?": shape.SOURCE_ID,
}  # fmt: skip
SHAPE = {  # what the comparison reads; ids and seeds pass the rules they were declared by
    "seeds": [shape.SEED], "claims": {shape.KEYS: shape.CLAIM_ID, shape.EACH: _RECORD},
}  # fmt: skip


class BaselineError(ValueError):
    """The baseline file is unreadable or of another schema."""


class StagedBaseline:
    """A new baseline written in full beside the old one, which it replaces only on
    :meth:`commit`: a run writes it first (a full disk fails before anything is committed),
    then its results file, and commits last, so a run that fails keeps the old baseline.

    Raises (on creation):
        OSError, ValueError: as :func:`claimbook.storage.atomic.write_json`; nothing is
            left behind.
    """

    def __init__(self, path: Path, baseline: dict):
        self.path = Path(path)
        self._staged = temporary_beside(self.path)
        try:
            write_json(self._staged, {"schema": SCHEMA, **baseline})
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        """Put the staged baseline in place (one rename)."""
        os.replace(self._staged, self.path)

    def discard(self) -> None:
        """Drop the staged baseline: the old one stays."""
        self._staged.unlink(missing_ok=True)


def load_baseline(path: Path) -> dict | None:
    """The baseline at ``path``, or None if there is none.

    Raises:
        BaselineError: if the file exists but cannot be read, is of another schema, or
            lacks an entry the comparison reads (named, with its path in the file).
    """
    path = Path(path)
    if not path.exists():
        return None
    advice = "rewrite it from a complete run with --claimbook-update-baseline"
    data = read_json(path, SCHEMA, "baseline", advice, BaselineError)
    return shape.check(data, SHAPE, path, "baseline", advice, BaselineError)
