"""Issue 36, findings 3, 4 and 6: the checks that could not fail now can, shown on doctored
copies of the article (and on a doctored model), each beside a control on the real one.

- dd2.table-agrees-with-body: LLaMA 3's vocabulary and context cells were the constant True;
  they are now read against Llama 3's (and 3.1's) configurations.
- dd2.no-biases-gains: asserted ``saved > 0``; it now reads the line's words and counts the
  saving from the article's own GPT-2 breakdown and from Llama 3 8B's configuration.
- dd2.strided-pattern: took the stride from the printed keys; the keys now come from the rule.
- dd2.global-attention: Longformer's global token, measured on transformers' LongformerModel.
- dd2.info-flow-bands: says it checks the text against itself, and the map cites the rest.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from claimbook import WHOLE_TEXT
from claimbook.declare.measure import Measure

from tests.claims import dd2_longformer
from tests.claims import test_dd2_general as general
from tests.claims import test_dd2_literature as literature
from tests.claims import test_dd2_printed_costs as costs
from tests.claims import test_real_models as real
from tests.claims.sources import DD2
from tests.unit import planted

ROOT = Path(__file__).resolve().parents[2]
TABLE = general.test_each_table_row_agrees_with_the_body
BIASES = literature.test_dropping_biases_saves_a_few_parameters_and_little_work
STRIDED = costs.test_strided_attention_keeps_every_tenth_token
GLOBAL = real.test_longformer_global_token_attends_to_all_and_all_to_it


def test_the_real_article_holds(doctored):
    for row in ("Vocab Size", "Context Length"):
        TABLE(row=row, measure=Measure([]))
    BIASES(measure=Measure([]))
    STRIDED(measure=Measure([]))


@pytest.mark.parametrize(
    "row, old, new",
    [
        ("Vocab Size", "50,257                  128,000+", "50,257                  256,000+"),
        ("Vocab Size", "50,257                  128,000+", "50,257                  32,000+ "),
        ("Vocab Size", "BPE with larger vocab", "BPE with smaller vocab"),
        ("Context Length", "1,024                   8,192", "1,024                   4,096"),
        ("Context Length", "8,192 - 128,000+", "8,192 - 1,000,000+"),
    ],
)
def test_a_wrong_llama3_cell_turns_its_row_red(doctored, row, old, new):
    doctored(DD2, old, new)
    with pytest.raises(AssertionError):
        TABLE(row=row, measure=Measure([]))


def test_n_plus_reads_as_a_little_over_n():
    assert general._at_least("128,000+", 128_256) and general._at_least("128,000+", 131_072)
    assert not general._at_least("128,000+", 127_999) and not general._at_least("100,000+", 128_256)
    assert general._at_least("8,192", 8192) and not general._at_least("8,192", 8193)


@pytest.mark.parametrize(
    "old, new",
    [
        ("No biases: Fewer params, marginally", "No biases: More params, marginally"),
        ("No biases: Fewer params, marginally", "No biases: Same params, marginally"),
        ("Fewer params, marginally faster", "Fewer params, significantly faster"),
    ],
)
def test_a_gain_the_counts_do_not_give_turns_no_biases_red(doctored, old, new):
    doctored(DD2, old, new)
    with pytest.raises(AssertionError):
        BIASES(measure=Measure([]))


def test_no_biases_needs_the_saving_to_be_the_configurations_biases(doctored, monkeypatch):
    """Counted against another model's configuration, the saving no longer matches."""
    other = literature.config_of("llama3-70b")
    monkeypatch.setattr(literature, "config_of", lambda key: other)
    with pytest.raises(AssertionError):
        BIASES(measure=Measure([]))


def test_no_biases_counts_the_biases_the_breakdown_lists(doctored):
    saved, total = literature._box_biases(planted.real(DD2.path))
    assert (saved, total) == (12 * (3072 + 768 + 2 * 768) + 768, 124_402_944)


@pytest.mark.parametrize(
    "old, new",
    [
        ("Token 100 attends to tokens 0, 10, 20, 30", "Token 100 attends to tokens 0, 10, 20, 35"),
        ("Token 100 attends to tokens 0, 10, 20, 30", "Token 105 attends to tokens 0, 10, 20, 30"),
        ("Token 100 attends to tokens 0, 10, 20, 30", "Token 100 attends to tokens 10, 20, 30, 40"),
        ("Attend to every k-th token", "Attend to a few far tokens"),
    ],
)
def test_keys_the_rule_does_not_give_turn_the_strided_example_red(doctored, old, new):
    doctored(DD2, old, new)
    with pytest.raises(AssertionError):
        STRIDED(measure=Measure([]))


def test_another_stride_that_follows_the_rule_holds(doctored):
    doctored(DD2, "tokens 0, 10, 20, 30", "tokens 0, 20, 40, 60")
    STRIDED(measure=Measure([]))


def test_longformer_control_holds():
    GLOBAL(measure=Measure([]))


@pytest.mark.parametrize("positions", [(), (0, 5)])
def test_longformer_without_one_global_token_is_red(monkeypatch, positions):
    """No global token (a plain sliding window), or a second one: the pattern is not the rule's."""
    real_attended = dd2_longformer.attended
    monkeypatch.setattr(dd2_longformer, "attended", lambda _: real_attended(positions))
    with pytest.raises(AssertionError):
        GLOBAL(measure=Measure([]))


def test_info_flow_bands_says_it_checks_the_text_against_itself():
    claim_fn = literature.test_information_flow_bands_restate_the_layer_account
    mark = next(m for m in claim_fn.pytestmark if m.name == "claim")
    assert mark.kwargs["place"] == WHOLE_TEXT and "against itself" in mark.kwargs["scope"]
    statements = tomllib.loads((ROOT / "coverage/dd2.toml").read_text())["statement"]
    bands = [s for s in statements if "dd2.info-flow-bands" in s.get("claims", [])]
    assert len(bands) == 4 and all("agrees" in s["says"] for s in bands)
    (real_models,) = [s for s in statements if s["id"] == "info-flow-real-models"]
    assert real_models["status"] == "cited"
