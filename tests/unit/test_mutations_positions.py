"""The position-example checks of issue 36 go red when the text they read is doctored.

Each case writes a copy of the source texts with the given replacements (a window turned
lopsided, a causal example turned to look forward, a prediction target moved by one, a
section's setting removed) into a temporary sources folder and calls the claim's test
function on the item that reads that place: it must raise AssertionError. The controls run
every item on the real texts and pass; the erratum claims fail on the real texts and pass
on their corrections.
"""

from __future__ import annotations

import pytest
from claimbook.declare.measure import Measure

from tests.claims import position_examples as pe
from tests.claims import test_code_blocks_ch04 as blocks_ch04
from tests.claims import test_code_blocks_dd2 as blocks_dd2
from tests.claims import test_dd2_attention_deep_dive as dd2_main
from tests.claims import test_position_examples as positions
from tests.unit import planted

SOURCES, CH04_FILE, DD2_FILE = planted.SOURCES, planted.CH04_FILE, planted.DD2_FILE
needs_texts = planted.needs_texts
D, C = (
    positions.test_each_dd2_position_example_follows_its_rule,
    (positions.test_each_ch04_position_example_follows_its_rule),
)
NO_CLS = [
    ("[CLS] attends to all tokens; all tokens attend to [CLS]", "A few marked tokens see all"),
    ("Certain tokens (like [CLS] or special markers) attend", "Certain special markers attend"),
]

# (test, parameters, file, [(text, what it becomes), ...])
CASES = [
    (D, {"item": "local windows"}, DD2_FILE, [("tokens 40-60 only", "tokens 40-61 only")]),
    (D, {"item": "local windows"}, DD2_FILE, NO_CLS),  # the section left causal: 40-60 breaks
    (
        dd2_main.test_local_attention_sees_w_positions_at_cost_n_times_w,
        {"window": 8, "seed": 0},
        DD2_FILE,
        NO_CLS,
    ),
    (D, {"item": "strided patterns"}, DD2_FILE, [("0, 10, 20, 30, ...", "0, 10, 25, 30, ...")]),
    (
        D,
        {"item": "induction circuit box"},
        DD2_FILE,
        [('At "Potter", attend to "Harry"', 'At "Harry", attend to "Potter"')],
    ),
    (D, {"item": "induction circuit box"}, DD2_FILE, [('Predict: "Potter"', 'Predict: "went"  ')]),
    (
        D,
        {"item": "previous-token head prose"},
        DD2_FILE,  # the known error fixed: no longer found
        [('When processing "Harry," it looks', 'When processing "Potter," it looks')],
    ),
    (
        D,
        {"item": "moving information"},
        DD2_FILE,
        [('the prediction that "was" (not', 'the prediction that "saw" (not')],
    ),
    (
        D,
        {"item": "causal mask matrix"},
        DD2_FILE,
        [("pos 1   [  1      1       0       0  ]", "pos 1   [  1      1       1       0  ]")],
    ),
    (
        D,
        {"item": "example weights row"},
        DD2_FILE,
        [('Example for position 2 ("sat")', 'Example for position 1 ("sat")')],
    ),
    (
        C,
        {"item": "recall key distances"},
        CH04_FILE,
        [("(2 tokens for the last pair", "(1 tokens for the last pair")],
    ),
    (
        C,
        {"item": "convolution window"},
        CH04_FILE,
        [("sees the last 7 tokens", "sees the last 8 tokens")],
    ),
    (C, {"item": "heatmap columns"}, CH04_FILE, [("over the 20 earlier", "over the 21 earlier")]),
    (
        C,
        {"item": "induction circuit prose"},
        CH04_FILE,
        [("value token after it", "value token before it")],
    ),
    (
        C,
        {"item": "scored position"},
        CH04_FILE,
        [("logits[:, -1], answer", "logits[:, -2], answer")],
    ),
    (
        C,
        {"item": "pair numbering"},
        CH04_FILE,
        [("is the eighth key-value", "is the seventh key-value")],
    ),
]


@needs_texts
@pytest.mark.parametrize(
    ("test", "params", "file", "changes"),
    CASES,
    ids=[f"{c[1].get('item', c[0].__name__[5:25])}:{c[3][0][0][:20]}" for c in CASES],
)
def test_a_doctored_example_turns_its_check_red(test, params, file, changes, tmp_path, monkeypatch):
    planted.plant(tmp_path, monkeypatch, file, changes)
    with pytest.raises(AssertionError):
        test(**params, measure=Measure([]))


@needs_texts
@pytest.mark.parametrize(
    ("test", "items"), [(D, list(pe.DD2_EXAMPLES)), (C, list(pe.CH04_EXAMPLES))]
)
def test_every_position_item_holds_on_the_real_texts(test, items, monkeypatch):
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(SOURCES))
    for item in items:
        test(item=item, measure=Measure([]))


@needs_texts
def test_the_flash_erratum_fails_as_printed_and_passes_corrected(tmp_path, monkeypatch):
    test = blocks_dd2.test_flash_loop_computes_the_boxs_masked_attention
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(SOURCES))
    with pytest.raises(AssertionError, match="later keys"):
        test(measure=Measure([]))
    text = planted.real(DD2_FILE)
    planted.plant(tmp_path, monkeypatch, DD2_FILE, [(text, blocks_dd2.corrected_flash_text(text))])
    test(measure=Measure([]))


@needs_texts
def test_the_heatmap_erratum_fails_as_printed_and_passes_corrected(tmp_path, monkeypatch):
    test = blocks_ch04.test_heatmap_caption_counts_the_plotted_positions
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(SOURCES))
    with pytest.raises(AssertionError, match="caption counts 20"):
        test(measure=Measure([]))
    fixed = [("over the 20 earlier", "over the 21 earlier")]
    planted.plant(tmp_path, monkeypatch, CH04_FILE, fixed)
    test(measure=Measure([]))
