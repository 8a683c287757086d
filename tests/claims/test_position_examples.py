"""Both texts, general check: every worked example that names positions follows its rule.

An example that says which token attends to which, which window a token sees, or which
position predicts which token is read from the text at run time and held against the setting
its own section states (tests/claims/position_examples.py): causal, a position reads itself
and the positions before it and predicts the next token; bidirectional, a position reads
both sides. An example broken under every setting its section states is an error; each such
error is an erratum of its own claim, named below, so the check passes only when it finds
exactly those (a new error, or a fixed one, turns it red). Nothing trains.
"""

from __future__ import annotations

import pytest
from claimbook import WHOLE_TEXT, claim, source_text

from tests.claims import position_examples as pe
from tests.claims.sources import CH04, DD2

TEXT = "the text read at run time; each example against the setting its section states"
# the errors each check finds, each shown (with its correction) by the erratum claim named
DD2_KNOWN = {
    "previous-token head prose": "dd2.previous-token-head-reads-the-past",
    "stated-causal representations": "dd2.causal-first-token",
}
CH04_KNOWN = {"heatmap columns": "ch04.heatmap-caption-positions"}


def check(text: str, item: str, readers: dict, known: dict, measure) -> None:
    found = readers[item](text)
    wrong, reading = pe.verdicts(found)
    measure("examples that hold through one reading only", len(reading))
    measure("examples checked", len(found))
    for name, by in found:
        measure(name, ", ".join(f"{s}: {'holds' if ok else 'breaks'}" for s, ok in by.items()))
    if item in known:
        measure("error shown by", known[item])
    assert found, "the example is no longer where the reader looks"
    assert bool(wrong) == (item in known), f"broken under every stated setting: {wrong}"


@claim("dd2.position-examples-follow-their-rule", "established",
       at=("Token 50 attends to tokens 40-60 only", 'At "Potter", attend to "Harry"',
           "Attention heads can attend from \"was\" → \"cat\""),
       place=WHOLE_TEXT,
       scope=TEXT + "; the article's default is causal (decoder-only models)",
       remark="Two examples hold through one reading only. The local window (token 50 sees "
       "40-60) is centred on the token: right for the bidirectional setting its section states "
       "(its global-attention example has [CLS] attend to all tokens and all to it; Longformer "
       "and BigBird are encoders); in a decoder, as Part 8 opens, a causal window of the same "
       "reach gives 40-50 (dd2.sparse-local). The subject-verb example has attention at 'was' "
       "inform the prediction of 'was': right for a masked (bidirectional) model, off by one in "
       "a causal one, where the position of 'was' predicts the word after it; the section "
       "names both settings.")  # fmt: skip
@pytest.mark.parametrize("item", list(pe.DD2_EXAMPLES))
def test_each_dd2_position_example_follows_its_rule(item, measure):
    """Every worked example of the article that names positions (windows, strides, the
    induction circuit, the causal mask, the example weights, which position predicts which
    word) keeps the attention rule of at least one setting its section states; the ones that
    keep none are exactly the errors the named erratum claims show."""
    check(source_text(DD2), item, pe.DD2_EXAMPLES, DD2_KNOWN, measure)


@claim("ch04.position-examples-follow-their-rule", "established",
       at=("(2 tokens for the last pair, 20 for the first)",
           "layer 1 must have copied each key into the value token after it"),
       place=WHOLE_TEXT, scope=TEXT + "; the chapter's models are decoder-only")  # fmt: skip
@pytest.mark.parametrize("item", list(pe.CH04_EXAMPLES))
def test_each_ch04_position_example_follows_its_rule(item, measure):
    """Every worked example of the chapter that names positions (the recall distances, the
    convolution's window, the heatmap's columns, the induction circuit, the scored position,
    the pair numbering) keeps the causal rule of the chapter's models; the ones that break it
    are exactly the errors the named erratum claims show."""
    check(source_text(CH04), item, pe.CH04_EXAMPLES, CH04_KNOWN, measure)
