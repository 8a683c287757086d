"""The general checks of issue 26 (4 b-e) go red when the text they read is doctored.

Each case writes a copy of a source text with one thing changed (a year, a table cell, a
printed number, a shape comment) into a temporary sources folder, points
CLAIMBOOK_SOURCES_DIR at it, and calls the claim's test function on the item that reads
that thing: it must raise AssertionError. The controls run every item on the real texts
and pass. A record entry changed (not the text) must turn an attribution red as well.
"""

from __future__ import annotations

import pytest
from claimbook.declare.measure import Measure

from experiments import literature_record
from tests.claims import test_ch04_general as ch04
from tests.claims import test_ch04_general_tables as ch04t
from tests.claims import test_dd2_general as dd2
from tests.unit import planted

SOURCES, CH04_FILE, DD2_FILE = planted.SOURCES, planted.CH04_FILE, planted.DD2_FILE
needs_texts = planted.needs_texts

OUT, CITE, EX, TAB = (
    ch04.test_each_printed_output_follows_from_its_code,
    ch04.test_every_attribution_matches_the_record,
    ch04t.test_each_worked_example_follows_its_definition,
    ch04t.test_each_table_agrees_with_the_body,
)
D_TRACE, D_CITE, D_EX, D_TAB = (
    dd2.test_each_trace_comment_is_the_shape_its_step_makes,
    dd2.test_every_attribution_matches_the_record,
    dd2.test_each_worked_example_follows_its_definition,
    dd2.test_each_table_row_agrees_with_the_body,
)

# (test, its parameters, file, text to change, what it becomes)
CASES = [
    (
        OUT,
        {"item": "reach printout"},
        CH04_FILE,
        "(formula L(k-1)+1 = 13)",
        "(formula L(k-1)+1 = 14)",
    ),
    (
        OUT,
        {"item": "mixer parameter printout"},
        CH04_FILE,
        "16,380 parameters",
        "16,388 parameters",
    ),
    (
        OUT,
        {"item": "recall printouts"},
        CH04_FILE,
        "mean accuracy 0.22  (25s)",
        "mean accuracy 0.32  (25s)",
    ),
    (
        OUT,
        {"item": "recall printouts"},
        CH04_FILE,
        "pair, 20 for the first)",
        "pair, 22 for the first)",
    ),
    (
        OUT,
        {"item": "reach printout"},
        CH04_FILE,
        "kernel 4, feed in 40 random",
        "kernel 4, feed in 30 random",
    ),
    (
        OUT,
        {"item": "recall prose against its printout"},
        CH04_FILE,
        "flat, at about 0.22",
        "flat, at about 0.32",
    ),
    (
        OUT,
        {"item": "recall prose against its printout"},
        CH04_FILE,
        "0.58 at 4 and",
        "0.68 at 4 and",
    ),
    (
        OUT,
        {"item": "attention-weights heatmap"},
        CH04_FILE,
        "over the 20 earlier",
        "over the 21 earlier",
    ),
    (
        OUT,
        {"item": "attention-weights heatmap"},
        CH04_FILE,
        "all four heads put",
        "all three heads put",
    ),
    (
        OUT,
        {"item": "language-model set-up and printout"},
        CH04_FILE,
        "about 205,000 parameters",
        "about 250,000 parameters",
    ),
    (
        OUT,
        {"item": "language-model set-up and printout"},
        CH04_FILE,
        "with context 64 and",
        "with context 128 and",
    ),
    (OUT, {"item": "KV-cache printout"}, CH04_FILE, "512     1.830", "612     1.830"),
    (OUT, {"item": "KV-cache printout"}, CH04_FILE, ": 10.74 GB", ": 10.47 GB"),
    (CITE, {"kind": "who and when"}, CH04_FILE, "(MQA; Shazeer, 2019)", "(MQA; Shazeer, 2018)"),
    (
        CITE,
        {"kind": "who and when"},
        CH04_FILE,
        "Sutskever, Vinyals and Le, 2014;",
        "Sutskever, Vinyals and Bengio, 2014;",
    ),
    (CITE, {"kind": "who and when"}, CH04_FILE, "(Longformer, 2020;", "(Longformer, 2019;"),
    (CITE, {"kind": "who and when"}, CH04_FILE, "Gu and Dao, 2023)", "Gu and Dao et al., 2023)"),
    (
        CITE,
        {"kind": "what each work introduced"},
        CH04_FILE,
        "(MQA; Shazeer, 2019)",
        "(GQA; Shazeer, 2019)",
    ),
    (CITE, {"kind": "what each work introduced"}, CH04_FILE, "Inception (Szegedy", "VGG (Szegedy"),
    (
        CITE,
        {"kind": "reading-list titles"},
        CH04_FILE,
        "1997, Long Short-Term Memory.",
        "1997, Long Short-Range Memory.",
    ),
    (
        EX,
        {"item": "KV-cache code against the key equation"},
        CH04_FILE,
        "return 2 * n_layers",
        "return 4 * n_layers",
    ),
    (EX, {"item": "reach code against the key equation"}, CH04_FILE, "{L * 3 + 1}", "{L * 4 + 1}"),
    (
        EX,
        {"item": "recall input example against the generator's rules"},
        CH04_FILE,
        "| k2 -> v9",
        "| k2 -> v3",
    ),
    (
        EX,
        {"item": "recall input example against the generator's rules"},
        CH04_FILE,
        "k5 v1 ... k4",
        "k5 v1 ... k7",
    ),
    (
        EX,
        {"item": "LLaMA 2 70B cache ratio"},
        CH04_FILE,
        "a cache 8 times smaller",
        "a cache 4 times smaller",
    ),
    (
        TAB,
        {"item": "evolution path: years"},
        CH04_FILE,
        "2019-2024\tMQA, GQA, MLA",
        "2018-2024\tMQA, GQA, MLA",
    ),
    (TAB, {"item": "evolution path: years"}, CH04_FILE, "2017\tTransformer", "2016\tTransformer"),
    (TAB, {"item": "evolution path: levels"}, CH04_FILE, "Step 4 (minor)", "Step 4 (major)"),
    (
        TAB,
        {"item": "lineage post-mortem"},
        CH04_FILE,
        "locality, then reach, then",
        "reach, then locality, then",
    ),
    (
        TAB,
        {"item": "diverged branches: dates"},
        CH04_FILE,
        "Fork 2 · 2020-2022",
        "Fork 2 · 2021-2022",
    ),
    (
        TAB,
        {"item": "three-seed table: this page's column"},
        CH04_FILE,
        "Shakespeare, LSTM\t1.797",
        "Shakespeare, LSTM\t1.798",
    ),
    (
        D_TRACE,
        {"trace": "'The cat sat' trace"},
        DD2_FILE,
        "W_V_h    # Shape [3, 64]",
        "W_V_h    # Shape [3, 32]",
    ),
    (
        D_TRACE,
        {"trace": "'The cat sat' trace"},
        DD2_FILE,
        "# Shape [3, 3], rows sum to 1",
        "# Shape [3, 4], rows sum to 1",
    ),
    (
        D_TRACE,
        {"trace": "GPT-2 small shape trace"},
        DD2_FILE,
        "n_heads=12, d_head=64)",
        "n_heads=16, d_head=48)",
    ),
    (
        D_TRACE,
        {"trace": "GPT-2 small shape trace"},
        DD2_FILE,
        "K.transpose(-2, -1) / √64",
        "K.transpose(-2, -1) / √768",
    ),
    (
        OUT,
        {"item": "language-model set-up and printout"},
        CH04_FILE,
        "params 204,976",
        "params 204,176",
    ),
    (D_CITE, {}, DD2_FILE, "Su et al. (2021)", "Su et al. (2019)"),
    (D_CITE, {}, DD2_FILE, "GPT-2 (2019)", "GPT-2 (2018)"),
    (D_CITE, {}, DD2_FILE, '"RoFormer: Enhanced', '"RoBERTa: Enhanced'),
    (D_EX, {"item": "example weights row"}, DD2_FILE, "[0.2, 0.5, 0.3]", "[0.2, 0.5, 0.4]"),
    (
        D_EX,
        {"item": "causal mask"},
        DD2_FILE,
        "pos 2   [  1      1       1       0  ]",
        "pos 2   [  1      1       1       1  ]",
    ),
    (
        D_EX,
        {"item": "KV-cache steps"},
        DD2_FILE,
        "K_cache = [K₁, K₂, K₃], etc.",
        "K_cache = [K₁, K₃], etc.",
    ),
    (D_EX, {"item": "attention variants box"}, DD2_FILE, "(8× reduction!)", "(4× reduction!)"),
    (D_EX, {"item": "printed products and sums"}, DD2_FILE, "= 38,597,376", "= 38,597,367"),
    (
        D_EX,
        {"item": "printed products and sums"},
        DD2_FILE,
        "0.5 × 131072 =   64 GB",
        "0.5 × 131072 =   32 GB",
    ),
    (
        D_EX,
        {"item": "shape-trace matrix products"},
        DD2_FILE,
        "[1, 12, 64, 512] → [1, 12, 512, 512]",
        "[1, 12, 64, 512] → [1, 12, 512, 64]",
    ),
    (D_EX, {"item": "KV-cache examples against the formula"}, DD2_FILE, "0.5 × 8192", "0.5 × 8000"),
    (
        D_TAB,
        {"row": "Position Encoding"},
        DD2_FILE,
        "Position embeddings:  1024",
        "Position embeddings:  2048",
    ),
    (D_TAB, {"row": "Normalization"}, DD2_FILE, "σ² = var(x)", "σ² = E(x)"),
    (
        D_TAB,
        {"row": "Attention"},
        DD2_FILE,
        "USED IN: LLaMA 2 70B, LLaMA 3,",
        "USED IN: LLaMA 2 70B,",
    ),
    (D_TAB, {"row": "MLP Activation"}, DD2_FILE, "hidden = GELU(hidden)", "hidden = ReLU(hidden)"),
    (
        D_TAB,
        {"row": "MLP Ratio"},
        DD2_FILE,
        "W_fc1 [768, 3072] + b_fc1",
        "W_fc1 [768, 2048] + b_fc1",
    ),
    (
        D_TAB,
        {"row": "Attention Impl."},
        DD2_FILE,
        "Flash Attention Memory: O(n)",
        "Flash Attention Memory: O(n log n)",
    ),
    (D_TAB, {"row": "Attention"}, DD2_FILE, "n_kv = n_heads", "n_kv < n_heads"),
    (
        D_TAB,
        {"row": "Attention Impl."},
        DD2_FILE,
        "O(n²) memory            O(n) memory",
        "O(n) memory             O(n) memory",
    ),
    (D_TAB, {"row": "Vocab Size"}, DD2_FILE, "50257 × 768", "50304 × 768"),
    (
        D_TAB,
        {"row": "Context Length"},
        DD2_FILE,
        "Position embeddings:  1024",
        "Position embeddings:  2048",
    ),
]


def _doctored(tmp_path, monkeypatch, file, old, new):
    planted.plant(tmp_path, monkeypatch, file, [(old, new)])


@needs_texts
@pytest.mark.parametrize(
    ("test", "params", "file", "old", "new"),
    CASES,
    ids=[f"{c[0].__name__[5:30]}:{c[3][:24]}" for c in CASES],
)
def test_a_doctored_text_turns_the_check_red(test, params, file, old, new, tmp_path, monkeypatch):
    _doctored(tmp_path, monkeypatch, file, old, new)
    with pytest.raises(AssertionError):
        test(**params, measure=Measure([]))


CONTROLS = [
    (OUT, "item", list(ch04.OUTPUTS)),
    (CITE, "kind", list(ch04.ATTRIBUTIONS)),
    (EX, "item", list(ch04t.EXAMPLES)),
    (TAB, "item", list(ch04t.TABLES)),
    (D_EX, "item", list(dd2.EXAMPLES)),
    (D_TAB, "row", list(dd2.ROWS)),
    (D_TRACE, "trace", list(dd2.TRACES)),
    (D_CITE, None, [None]),
]


@needs_texts
@pytest.mark.parametrize(
    ("test", "key", "values"),
    CONTROLS,
    ids=[c[0].__module__[-12:] + c[0].__name__[4:28] for c in CONTROLS],
)
def test_every_item_holds_on_the_real_texts(test, key, values, monkeypatch):
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(SOURCES))
    for value in values:
        test(**({key: value} if key else {}), measure=Measure([]))


@needs_texts
def test_a_wrong_record_turns_an_attribution_red(monkeypatch):
    """The record is independent data: dating LSTM 1998 there makes the chapter's 1997 wrong."""
    lstm = literature_record.WORKS["hochreiter1997"]
    monkeypatch.setitem(
        literature_record.WORKS,
        "hochreiter1997",
        type(lstm)(**{**lstm.__dict__, "year": 1998, "venue_year": 1998}),
    )
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(SOURCES))
    with pytest.raises(AssertionError):
        CITE(kind="who and when", measure=Measure([]))
