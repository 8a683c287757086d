"""Corrections that touch one box of a source agree on every number they both state (issue 36).

Every erratum claim runs afresh (none trains) and its corrections are read as numbers by
label; two claims whose anchors fall in one drawn box of the text must not state the same
label with different values. Before issue 36 the GPT-2 shares correction (over the printed
total) and the attention-bias correction (over the total with the biases) disagreed on the
embedding total (31.7% against 31.6%) and on all MLPs (45.6% against 45.5%).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.claims.sources import CH04, DD2
from tests.unit import corrections as c

SOURCES = Path(os.environ.get("CLAIMBOOK_SOURCES_DIR", "/nonexistent"))
BIAS = (
    "With the attention biases b_Q, b_K, b_V, b_O (3,072 per layer): Attention subtotal "
    "2,363,904; Per layer total 7,087,872 (5.7%); ×12 layers 85,054,464 (68.3%); GRAND TOTAL "
    "124,439,808; Embedding total 31.6%; by type, LayerNorms apart as the box lists them: "
    "Attention (all) 28.3M (22.8%), MLP (all) 56.7M (45.5%)"
)
SHARES_BEFORE = (  # main's correction of the shares, over the printed total
    "Shares of the 124,402,944 total: token embeddings: 31.0%; embedding total: 31.7%; "
    "12 layers: 68.3%; all MLP: 45.6%"
)
GPT2_BOX = {"dd2.gpt2-percentages", "dd2.embedding-share-agrees", "dd2.bias-fact-in-param-count"}


@pytest.fixture(scope="module")
def recorded():
    if not (SOURCES / DD2.path).exists():
        pytest.skip("the source texts are not available (CLAIMBOOK_SOURCES_DIR)")
    texts = {s.id: (SOURCES / s.path).read_text(encoding="utf-8") for s in (CH04, DD2)}
    return {
        cid: (c.boxes(texts[cid.split(".")[0]], at), c.corrections_of(fn, combos))
        for cid, at, fn, combos in c.erratum_claims()
    }


def test_corrections_that_touch_one_box_agree(recorded):
    pairs = list(c.box_pairs(recorded))
    assert {one for one, *_ in pairs} | {two for _, two, *_ in pairs} >= GPT2_BOX
    bad = [(one, two, d) for one, two, x, y in pairs if (d := c.disagreements(x, y))]
    assert not bad, bad


def test_the_gpt2_corrections_share_one_box(recorded):
    (box,) = recorded["dd2.gpt2-percentages"][0]
    assert all(box in recorded[cid][0] for cid in GPT2_BOX)


def test_the_shares_correction_before_issue_36_is_caught():
    found = c.disagreements(SHARES_BEFORE, BIAS)
    assert any("embedding total" in d and "31.7" in d for d in found), found
    assert any("all mlp" in d and "45.6" in d for d in found), found


def test_numbers_are_read_by_label_unit_and_model():
    said = c.stated("LLaMA 7B: Per token: 524,288 bytes = 0.5 MiB; ×12 layers 85,054 (68.3%)")
    assert said[("LLaMA 7B", ("per", "token"), "bytes")] == {524288.0}
    assert said[("LLaMA 7B", ("layers", "n12"), "%")] == {68.3}
    assert not c.disagreements("LLaMA 7B: 32K tokens: 16 GiB", "LLaMA 70B: 32K tokens: 10 GiB")
    assert c.disagreements("32K tokens: 16 GiB", "LLaMA 70B: 32K tokens: 10 GiB")
