"""The code-comment checks of issue 36 go red when a comment in a copy of the text is wrong.

Each case writes a copy of the source texts with one comment changed (a shape reordered or
resized, a count changed, a layout or token range changed, a property the value lacks, a
checkable comment in a block the check does not run) into a temporary sources folder and
calls the claim's test function: it must raise AssertionError. The controls: the real texts
pass, a comment changed to another correct one passes, and a planted error passes once it is
declared known (the check passes exactly when the errors it finds are the known ones).
"""

from __future__ import annotations

import pytest
from claimbook.declare.measure import Measure

from tests.claims import test_code_comments as comments
from tests.unit import planted

SOURCES, CH04_FILE, DD2_FILE = planted.SOURCES, planted.CH04_FILE, planted.DD2_FILE
needs_texts = planted.needs_texts
C = comments.test_every_ch04_code_comment_matches_its_code
D = comments.test_every_dd2_code_comment_matches_its_code

# (test, file, text, what it becomes); every occurrence is replaced (the chapter's cells are
# printed twice, line by line and flattened)
WRONG = [
    (C, CH04_FILE, "# (B, heads, T, head_dim)", "# (B, T, heads, head_dim)"),
    (C, CH04_FILE, "# x: (batch, time, dim)", "# x: (batch, dim, time)"),
    (C, CH04_FILE, "on 4,000 fresh examples", "on 5,000 fresh examples"),
    (C, CH04_FILE, "LLaMA 2 70B: 80 layers", "LLaMA 2 70B: 96 layers"),
    (C, CH04_FILE, "# k v k v ... k v", "# v k v k ... v k"),
    (C, CH04_FILE, "keys are tokens 0..15", "keys are tokens 0..16"),
    (
        D,
        DD2_FILE,
        "Q_h = X_norm · W_Q_h    # Shape [3, 64]",
        "Q_h = X_norm · W_Q_h    # Shape [64, 3]",
    ),
    (D, DD2_FILE, "# Shape [3, 3] - each position attends", "# Shape [3, 3], rows sum to 1 - each"),
    (D, DD2_FILE, "# Shape [3, 512]", "# Shape [3, 64]"),
    (D, DD2_FILE, "scores: [batch, n_heads, seq, seq]", "scores: [batch, seq, n_heads, seq]"),
    (D, DD2_FILE, "# Expand: [d] → [4d]", "# Expand: [d] → [2d]"),
    (D, DD2_FILE, "# Output projection", "# Output projection with residual"),
    (D, DD2_FILE, "# Small matrix!", "# Shape [8, 8]  "),  # a block the check does not run
]
RIGHT = [
    (C, CH04_FILE, "# (heads, T)", "# (n_heads, T)"),
    (D, DD2_FILE, "# Shape [3, 3] - each position attends", "# (T, T) - each position attends"),
]


def _doctored(tmp_path, monkeypatch, file, old, new):
    planted.plant(tmp_path, monkeypatch, file, [(old, new)])


@needs_texts
@pytest.mark.parametrize(("test", "file", "old", "new"), WRONG, ids=[c[3][:28] for c in WRONG])
def test_a_wrong_comment_turns_the_check_red(test, file, old, new, tmp_path, monkeypatch):
    _doctored(tmp_path, monkeypatch, file, old, new)
    with pytest.raises(AssertionError):
        test(measure=Measure([]))


@needs_texts
@pytest.mark.parametrize(("test", "file", "old", "new"), RIGHT, ids=[c[3][:28] for c in RIGHT])
def test_a_changed_but_correct_comment_passes(test, file, old, new, tmp_path, monkeypatch):
    _doctored(tmp_path, monkeypatch, file, old, new)
    test(measure=Measure([]))


@needs_texts
@pytest.mark.parametrize("test", [C, D])
def test_the_real_texts_pass(test, monkeypatch):
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(SOURCES))
    test(measure=Measure([]))


@needs_texts
def test_a_known_error_passes_and_is_named(tmp_path, monkeypatch):
    _doctored(tmp_path, monkeypatch, DD2_FILE, "# Shape [3, 512]", "# Shape [3, 64]")
    monkeypatch.setitem(comments.DD2_KNOWN, "shape: Shape [3, 64]", "dd2.some-erratum")
    recorded = []
    D(measure=Measure(recorded))
    assert "dd2.some-erratum" in str(recorded)
