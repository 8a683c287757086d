"""Copies of the two source texts with errors planted in them, read by the claims.

A mutation test writes both texts into a temporary folder, makes its changes in one of
them, and points CLAIMBOOK_SOURCES_DIR at the copy; the claim's test function then reads
the doctored text exactly as a run reads the real one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.claims.sources import CH04, DD2

SOURCES = Path(os.environ.get("CLAIMBOOK_SOURCES_DIR", "/nonexistent"))
CH04_FILE, DD2_FILE = CH04.path, DD2.path
needs_texts = pytest.mark.skipif(
    not (SOURCES / CH04_FILE).exists(), reason="the source texts are not available"
)


def real(file: str) -> str:
    """The real text of ``file`` (skipped, with the reason, where the texts are not here)."""
    if not (SOURCES / file).exists():
        pytest.skip("the source texts are not available (CLAIMBOOK_SOURCES_DIR)")
    return (SOURCES / file).read_text(encoding="utf-8")


def plant(tmp_path: Path, monkeypatch, file: str, changes, once: bool = False) -> str:
    """Make each (old, new) of ``changes`` in the copy of ``file`` (every occurrence, or
    exactly one with ``once``) and let the claims read the copies; a second call builds on
    the first. Returns the doctored text."""
    for name in (CH04_FILE, DD2_FILE):
        if not (tmp_path / name).exists():
            (tmp_path / name).write_text(real(name), encoding="utf-8")
    path = tmp_path / file
    text = path.read_text(encoding="utf-8")
    for old, new in changes:
        found = text.count(old)
        assert found == 1 if once else found, f"{old!r} is {found} times in {file}"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(tmp_path))
    return text
