"""The one rule for claim ids, source ids and seeds: at collection and in every file read back.

A claim id names files (``claims/<id>.md``, ``figures/<id>.evidence.<sha256>.png``), so
an id read from a results file, a shard, the baseline or the history must pass the same
rule as one declared in a test; otherwise an edited file could lead render out of the docs
folder. The rule: ``<source id>.<kebab-case-name>`` of lowercase letters and digits, matched
in full (a trailing newline fails), at most :data:`MAX_ID` characters. Only one dot, no
slash, no control character: no id can be a path.
"""

from __future__ import annotations

import re

from claimbook.declare.seeds import SEED_LIMIT

# The longest file name render makes of an id is "<id>.evidence.<64 hex digits>.png", 78
# characters more than the id: 120 keeps it at 198 bytes, well under the 255-byte limit
# of common file systems, with room for a longer suffix.
MAX_ID = 120
SOURCE_PATTERN = re.compile(r"[a-z0-9]+")
ID_PATTERN = re.compile(r"[a-z0-9]+\.[a-z0-9]+(?:-[a-z0-9]+)*")


def id_problem(value) -> str:
    """Why ``value`` is not a claim id ("" when it is one)."""
    if isinstance(value, str) and len(value) <= MAX_ID and ID_PATTERN.fullmatch(value):
        return ""
    form = f"'source.kebab-case-name', at most {MAX_ID} characters"
    return f"{_shown(value)} is not a claim id of the form {form}"


def source_id_problem(value) -> str:
    """Why ``value`` is not a source id, a claim id's prefix ("" when it is one)."""
    if isinstance(value, str) and len(value) <= MAX_ID and SOURCE_PATTERN.fullmatch(value):
        return ""
    return f"{_shown(value)} is not a source id (lowercase letters and digits)"


def seed_problem(value) -> str:
    """Why ``value`` is not a seed, a whole number from 0 and below 2**31 ("" when it is)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < SEED_LIMIT:
        return ""
    return f"{_shown(value)} is not a seed (a whole number from 0 and below 2**31)"


def _shown(value) -> str:
    """``value`` as a message shows it: quoted, escapes visible, cut after 60 characters."""
    text = repr(value)
    size = len(value) if isinstance(value, str) else len(text)
    return text if len(text) <= 60 else f"{text[:57]}... ({size} characters)"
