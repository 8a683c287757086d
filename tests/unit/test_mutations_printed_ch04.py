"""Mutation tests of the ch04 claims rewritten to read the chapter's printed numbers at run time.

Each claim reads what it checks from the chapter's text and compares it with something
independent (the recall data generator, the chapter's language model, a convolution stack, the
arithmetic of the table's own per-seed values). Here each is broken in the text (a doctored
copy of the chapter, one printed value changed) and, where it measures a model, in the model,
and must fail; with the real text and the real modules it must pass.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claimbook.declare.measure import Measure

from experiments import modules
from experiments.reach import conv_stack_reach
from tests.claims import test_ch04_printed as printed
from tests.claims import test_ch04_token_mixing as mixing
from tests.claims.sources import CH04

REAL = os.environ.get("CLAIMBOOK_SOURCES_DIR")
pytestmark = pytest.mark.skipif(
    not REAL or not (Path(REAL) / CH04.path).is_file(),
    reason="the ch04 text is not here: set CLAIMBOOK_SOURCES_DIR to the folder that holds it",
)

CLAIMS = {
    "ch04.keys-four-tokens": printed.test_keys_reaches_are_four_tokens_later,
    "ch04.recall-chance": printed.test_guessing_among_16_values_is_about_6_percent,
    "ch04.mqa-gap-range": printed.test_mqa_gap_range_matches_the_seed_table,
    "ch04.shakespeare-spreads": printed.test_shakespeare_spreads_are_under_002_and_below_the_gaps,
    "ch04.cache-shrinks-by-heads": (
        printed.test_sharing_kv_heads_shrinks_the_cache_by_heads_per_kv_head
    ),
    "ch04.seed-table-arithmetic": (
        mixing.test_the_seed_table_is_consistent_with_its_own_per_seed_values
    ),
    "ch04.conv-reach-100": mixing.test_linking_tokens_100_apart_needs_over_30_kernel4_layers,
    "ch04.kv-bytes-small": mixing.test_kv_cache_bytes_per_token_of_the_small_model,
    "ch04.gqa-half": mixing.test_gqa_with_half_the_kv_heads_halves_the_cache,
}

# Every instance of each claim (its parameters), for the controls on the real text.
INSTANCES = [
    ("ch04.keys-four-tokens", {}),
    ("ch04.recall-chance", {}),
    ("ch04.mqa-gap-range", {}),
    ("ch04.shakespeare-spreads", {}),
    *[("ch04.cache-shrinks-by-heads", {"case": c})
      for c in ("MQA, chapter", "GQA, chapter", "GQA, 70B", "MQA, 70B")],
    *[("ch04.seed-table-arithmetic", {"row": r}) for r in mixing.TABLE_ROWS],
    ("ch04.conv-reach-100", {"seed": 0}),
    *[("ch04.kv-bytes-small", {"n_kv": n}) for n in (4, 2, 1)],
    *[("ch04.gqa-half", {"seq_len": n}) for n in (1, 64)],
]  # fmt: skip

# (claim, its parameters, the printed text as it stands, the same text with one value changed)
TEXT_MUTATIONS = [
    ("ch04.keys-four-tokens", {}, "across four tokens", "across three tokens"),
    ("ch04.keys-four-tokens", {},
     "The keys to the cabinet are,", "The keys to the old cabinet are,"),
    ("ch04.keys-four-tokens", {}, 'must carry "keys"', 'must carry "cabinet"'),
    ("ch04.recall-chance", {}, "gives about 6%", "gives about 8%"),
    ("ch04.recall-chance", {}, "chance (about 0.06)", "chance (about 0.10)"),
    ("ch04.recall-chance", {}, "Guessing among the 16 values", "Guessing among the 12 values"),
    ("ch04.mqa-gap-range", {}, "by 0.014 to 0.043", "by 0.014 to 0.053"),
    ("ch04.mqa-gap-range", {}, "by 0.014 to 0.043", "by 0.024 to 0.043"),
    ("ch04.mqa-gap-range", {}, "1.856 / 1.879 / 1.854", "1.856 / 1.869 / 1.854"),
    ("ch04.mqa-gap-range", {}, "1.842 / 1.836 / 1.838", "1.842 / 1.836 / 1.858"),
    ("ch04.shakespeare-spreads", {}, "spreads under 0.02", "spreads under 0.01"),
    ("ch04.shakespeare-spreads", {}, "1.708 / 1.737 / 1.721", "1.708 / 1.787 / 1.721"),
    ("ch04.shakespeare-spreads", {}, "1.797 / 1.824 / 1.804", "1.727 / 1.744 / 1.724"),
    ("ch04.cache-shrinks-by-heads", {"case": "MQA, chapter"},
     "keeping 4 query heads", "keeping 8 query heads"),
    ("ch04.cache-shrinks-by-heads", {"case": "MQA, chapter"},
     "MQA with a quarter of the cache", "MQA with a third of the cache"),
    ("ch04.cache-shrinks-by-heads", {"case": "GQA, chapter"},
     "GQA with half the cache", "GQA with quarter the cache"),
    ("ch04.cache-shrinks-by-heads", {"case": "GQA, chapter"},
     "with 2 key-value heads (GQA)", "with 1 key-value heads (GQA)"),
    ("ch04.cache-shrinks-by-heads", {"case": "GQA, 70B"},
     "a cache 8 times smaller", "a cache 4 times smaller"),
    ("ch04.cache-shrinks-by-heads", {"case": "GQA, 70B"},
     "64 query heads and 8 key-value heads", "64 query heads and 16 key-value heads"),
    ("ch04.cache-shrinks-by-heads", {"case": "MQA, 70B"}, "and 1 (MQA)", "and 2 (MQA)"),
    ("ch04.seed-table-arithmetic", {"row": "Shakespeare, convolution"},
     "1.722 ± 0.015", "1.722 ± 0.025"),
    ("ch04.seed-table-arithmetic", {"row": "recall, convolution"},
     "0.24 / 0.17 / 0.20", "0.24 / 0.17 / 0.30"),
    ("ch04.seed-table-arithmetic", {"row": "Shakespeare, MQA"},
     "1.863 ± 0.014", "1.853 ± 0.014"),
    ("ch04.conv-reach-100", {"seed": 0}, "needs over 30 layers", "needs over 40 layers"),
    ("ch04.conv-reach-100", {"seed": 0}, "words 100 tokens apart", "words 80 tokens apart"),
    ("ch04.conv-reach-100", {"seed": 0}, "layers with kernel 4,", "layers with kernel 5,"),
    ("ch04.kv-bytes-small", {"n_kv": 4}, "4              1,024", "4              2,048"),
    ("ch04.kv-bytes-small", {"n_kv": 2}, "2                512", "2                640"),
    ("ch04.kv-bytes-small", {"n_kv": 1}, "1 kv head          1 ", "1 kv head          2 "),
    ("ch04.kv-bytes-small", {"n_kv": 4},
     "kv_bytes_per_token(4, n_kv, 16)", "kv_bytes_per_token(4, n_kv, 32)"),
    ("ch04.gqa-half", {"seq_len": 64}, "GQA with half the cache", "GQA with quarter the cache"),
    ("ch04.gqa-half", {"seq_len": 64},
     "with 2 key-value heads (GQA)", "with 1 key-value heads (GQA)"),
]  # fmt: skip


def _doctored(tmp_path: Path, monkeypatch, old: str, new: str) -> None:
    """Point the claims at a copy of the chapter with every ``old`` (a printed passage, or a line
    of code the chapter prints twice) replaced by ``new``."""
    text = (Path(REAL) / CH04.path).read_text(encoding="utf-8")
    assert old in text, f"the mutation's text {old!r} is not in the chapter"
    (tmp_path / CH04.path).write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(tmp_path))


def _id(case) -> str:
    return str(case) if not isinstance(case, dict) else ",".join(map(str, case.values())) or "-"


@pytest.mark.parametrize(("claim_id", "params"), INSTANCES, ids=_id)
def test_each_rewritten_claim_passes_on_the_real_text_and_modules(claim_id, params):
    CLAIMS[claim_id](**params, measure=Measure([]))


@pytest.mark.parametrize(("claim_id", "params", "old", "new"), TEXT_MUTATIONS, ids=_id)
def test_a_changed_printed_value_turns_the_claim_red(
    claim_id, params, old, new, tmp_path, monkeypatch
):
    _doctored(tmp_path, monkeypatch, old, new)
    with pytest.raises(AssertionError):
        CLAIMS[claim_id](**params, measure=Measure([]))


def test_every_rewritten_claim_has_a_text_mutation():
    assert {claim_id for claim_id, *_ in TEXT_MUTATIONS} == set(CLAIMS)


def _caching_every_query_head(monkeypatch) -> None:
    """Make every attention layer cache a key and value per query head (no sharing)."""
    real = modules.Attention.keys_values

    def keys_values(self, x):
        repeat = self.n_heads // self.n_kv_heads
        return tuple(t.repeat_interleave(repeat, dim=1) for t in real(self, x))

    monkeypatch.setattr(modules.Attention, "keys_values", keys_values)


# (claim, its parameters): each measures a model whose cache is broken as above
CACHE_CLAIMS = [
    *[("ch04.cache-shrinks-by-heads", {"case": c})
      for c in ("MQA, chapter", "GQA, chapter", "GQA, 70B", "MQA, 70B")],
    ("ch04.kv-bytes-small", {"n_kv": 2}),
    ("ch04.kv-bytes-small", {"n_kv": 1}),
    ("ch04.gqa-half", {"seq_len": 64}),
]  # fmt: skip


@pytest.mark.parametrize(("claim_id", "params"), CACHE_CLAIMS, ids=_id)
def test_a_model_that_caches_every_query_head_turns_the_claim_red(claim_id, params, monkeypatch):
    _caching_every_query_head(monkeypatch)
    with pytest.raises(AssertionError):
        CLAIMS[claim_id](**params, measure=Measure([]))


def test_a_convolution_stack_that_reaches_further_turns_the_reach_claim_red(monkeypatch):
    """Dilated convolutions double their reach per layer: a few layers see 100 tokens back."""
    monkeypatch.setattr(
        mixing, "conv_stack_reach", lambda L, k, seed: conv_stack_reach(L, k, seed, dilated=True)
    )
    with pytest.raises(AssertionError):
        mixing.test_linking_tokens_100_apart_needs_over_30_kernel4_layers(
            seed=0, measure=Measure([])
        )
