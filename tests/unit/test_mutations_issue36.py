"""Mutation tests of three general checks of issue 36 (1): each plants an error of its kind in a
copy of a source text and sees it caught, and shows the corrected text passing.

- ch04.parts-credited-to-their-papers: a part of a model credited to a work older than it;
- ch04.tables-agree-with-body, "lineage rows against their steps": a lineage row that says a
  method is exact or lossy, or serves training or inference, against its step;
- dd2.head-catalog-labels: a catalogue label that does not fit the grammar of its example.
"""

from __future__ import annotations

import pytest
from claimbook.declare.measure import Measure

from tests.claims import example_grammar, record_checks, row_statements
from tests.claims import test_ch04_general_tables as tables
from tests.claims import test_ch04_literature as ch04
from tests.claims import test_dd2_literature as dd2
from tests.claims.sources import CH04, DD2
from tests.unit import planted

# The corrections, as an author would paste them into the texts
LSTM_OLD = "under the control of gates. When the forget gate is near 1"
LSTM_NEW = (
    "under the control of input and output gates. A forget gate (Gers, Schmidhuber and "
    "Cummins, 2000) was added later; when the forget gate is near 1"
)
ROW_OLD = "T² score matrix\tcheaper inference at nearly the same quality"
ROW_NEW = (
    "T² score matrix\tcheaper inference (MQA, GQA, MLA: a smaller cache, nearly the same quality) "
    "and long contexts in training (FlashAttention: exact)"
)
ARROW_OLD = "↑─────┘" + " " * 10  # "gave" to "him"
ARROW_NEW = "↑───────────────┘"  # "gave" to "book", the line's width kept


def run(claim_fn, **params) -> Measure:
    claim_fn(measure=(m := Measure([])), **params)
    return m


# ch04.parts-credited-to-their-papers ---------------------------------------------------------


def test_the_real_chapter_credits_the_forget_gate_to_1997_and_nothing_else():
    bad = record_checks.parts_against_record(planted.real(CH04.path), Measure([]))
    assert [(c.line, c.part, c.cited_year, c.by.authors[0]) for c in bad] == [
        (304, "forget gate", 1997, "Gers")
    ]
    with pytest.raises(AssertionError, match="1997 credited with the forget gate"):
        run(ch04.test_each_part_is_credited_to_the_paper_that_introduced_it)


def test_the_corrected_paragraph_passes(doctored):
    doctored(CH04, LSTM_OLD, LSTM_NEW)
    run(ch04.test_each_part_is_credited_to_the_paper_that_introduced_it)


@pytest.mark.parametrize(
    ("old", "new", "part"),
    [
        (
            "The Transformer (Vaswani et al., 2017) asked",
            "The Transformer (Vaswani et al., 2017), with rotary position embeddings, asked",
            "rotary position embedding",
        ),
        (
            "keeps many query heads but only one key-value head that all of them share",
            "keeps many query heads, and groups of query heads share a key-value head",
            "grouped key-value heads",
        ),
        (
            "are recurrences with a linear state update",
            "are recurrences with a selective state update",
            "selective state update",
        ),
        (
            "fixed most of this with a separate cell state",
            "fixed most of this with peephole connections and a separate cell state",
            "peephole connections",
        ),
    ],
)
def test_a_part_credited_to_an_older_work_is_caught(doctored, old, new, part):
    doctored(CH04, LSTM_OLD, LSTM_NEW)  # on the corrected text: only the planted credit fails
    doctored(CH04, old, new)
    with pytest.raises(AssertionError, match=part):
        run(ch04.test_each_part_is_credited_to_the_paper_that_introduced_it)


# ch04.tables-agree-with-body: lineage rows against their steps -----------------------------

ROWS = {"item": "lineage rows against their steps"}


def test_the_real_rows_disagree_only_where_the_declared_reading_saves_them():
    found = row_statements.disagreements(
        text := planted.real(CH04.path),
        row_statements.post_mortem_rows(text) + row_statements.evolution_rows(text),
    )
    assert {(d["row"], d["method"], d["facet"]) for d in found} == set(tables.ROW_READINGS)
    run(tables.test_each_table_agrees_with_the_body, **ROWS)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "exact attention with less memory traffic",
            "approximate attention with less memory traffic",
        ),
        ("to shrink the inference cache", "to speed up training"),
    ],
)
def test_a_row_against_its_step_is_caught(doctored, old, new):
    doctored(CH04, old, new)
    with pytest.raises(AssertionError, match="disagrees with the body"):
        run(tables.test_each_table_agrees_with_the_body, **ROWS)


def test_the_stem_check_passed_over_a_row_the_new_check_catches(doctored):
    # a row that calls FlashAttention approximate keeps the six letters "memory" the old check read
    doctored(CH04, "exact attention with less memory traffic", "approximate attention, less memory")
    run(tables.test_each_table_agrees_with_the_body, item="lineage post-mortem")
    with pytest.raises(AssertionError):
        run(tables.test_each_table_agrees_with_the_body, **ROWS)


def test_the_corrected_row_leaves_the_declared_reading_unneeded(doctored):
    doctored(CH04, ROW_OLD, ROW_NEW)
    with pytest.raises(AssertionError, match="no longer needed"):
        run(tables.test_each_table_agrees_with_the_body, **ROWS)


# dd2.head-catalog-labels ---------------------------------------------------------------------


def test_the_real_catalogue_mislabels_only_the_direct_object_entry():
    bad = [
        e["label"]
        for e in example_grammar.entries(planted.real(DD2.path))
        if example_grammar.check(e)[1]
    ]
    assert bad == ["DIRECT OBJECT"]
    with pytest.raises(AssertionError, match="DIRECT OBJECT"):
        run(dd2.test_each_head_label_fits_the_grammar_of_its_example)


def test_the_corrected_arrow_passes(doctored):
    doctored(DD2, ARROW_OLD, ARROW_NEW)
    run(dd2.test_each_head_label_fits_the_grammar_of_its_example)


@pytest.mark.parametrize(
    ("old", "new", "caught"),
    [
        ("SUBJECT-VERB HEADS", "DIRECT OBJECT HEADS", "DIRECT OBJECT"),
        ("COREFERENCE HEADS", "RARE/REFLEXIVE HEADS", "RARE/REFLEXIVE"),
        ("DETERMINER-NOUN HEADS", "SUBJECT-VERB HEADS", "SUBJECT-VERB"),
    ],
)
def test_a_swapped_label_is_caught(doctored, old, new, caught):
    doctored(DD2, ARROW_OLD, ARROW_NEW)  # on the corrected text: only the planted label fails
    doctored(DD2, old, new)
    with pytest.raises(AssertionError, match=caught):
        run(dd2.test_each_head_label_fits_the_grammar_of_its_example)


def test_an_example_without_a_reading_is_an_error_never_a_pass(doctored):
    doctored(DD2, '"the big red [ball]"', '"the big red [kite]"')
    with pytest.raises(LookupError, match="no grammatical reading"):
        run(dd2.test_each_head_label_fits_the_grammar_of_its_example)
