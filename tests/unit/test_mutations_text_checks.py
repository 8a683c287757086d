"""The dd2 text checks (tests/claims/test_dd2_text_checks.py) follow the text they read.

Each case writes a copy of the deep dive with one thing changed into a temporary sources
folder, points CLAIMBOOK_SOURCES_DIR at it, and calls the claim's test function directly.
A doctored sentence turns the trace check red; the erratum, red on the real text as
declared, passes once the sentence is corrected (the verdict a fixed text would get).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claimbook.declare.measure import Measure

from tests.claims import test_dd2_text_checks as checks

SOURCES = Path(os.environ.get("CLAIMBOOK_SOURCES_DIR", "/nonexistent"))
DD2_FILE = "001_4c9decde5873da15.txt"
pytestmark = pytest.mark.skipif(
    not (SOURCES / DD2_FILE).exists(), reason="the source texts are not available"
)
HARRY = checks.test_previous_token_head_writes_only_what_its_position_can_see
POSITIONS = checks.test_positions_enter_a_rope_layer_only_at_q_and_k


def _doctored(tmp_path, monkeypatch, old: str, new: str) -> None:
    text = (SOURCES / DD2_FILE).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the text no longer holds {old!r} once"
    (tmp_path / DD2_FILE).write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(tmp_path))


def test_erratum_fails_on_the_real_text_with_its_correction():
    props: list = []
    with pytest.raises(AssertionError, match="cannot depend on the later"):
        HARRY(measure=Measure(props))
    corrections = [entry["value"] for entry in props if entry.get("correction")]
    assert corrections and 'When processing "Potter,"' in corrections[0]


def test_erratum_passes_once_the_sentence_is_corrected(tmp_path, monkeypatch):
    _doctored(tmp_path, monkeypatch, 'When processing "Harry," it looks at "Harry"',
              'When processing "Potter," it looks at "Harry"')  # fmt: skip
    HARRY(measure=Measure([]))


def test_erratum_reads_the_boxs_context(tmp_path, monkeypatch):
    """With Potter written before Harry in the box, the first Harry can see Potter."""
    _doctored(tmp_path, monkeypatch, 'Context: "Harry Potter went to... Harry [???]"',
              'Context: "Potter Harry went to... Harry [???]"')  # fmt: skip
    HARRY(measure=Measure([]))


def test_positions_check_holds_on_the_real_text():
    POSITIONS(measure=Measure([]))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Add RoPE rotation (or add positional embeddings)", "Add RoPE rotation"),
        ("Step 3: Apply RoPE to Q and K", "Step 3: Scale Q and K"),
        ("K_h_rotated = apply_rope(K_h, positions)", "K_h_rotated = K_h"),
    ],
    ids=["rope-only-at-input", "step-3-without-rope", "keys-not-rotated"],
)
def test_positions_check_goes_red_on_a_doctored_trace(tmp_path, monkeypatch, old, new):
    _doctored(tmp_path, monkeypatch, old, new)
    with pytest.raises(AssertionError):
        POSITIONS(measure=Measure([]))
