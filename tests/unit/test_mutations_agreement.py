"""Mutation tests of the rewritten agreement and real-model claims (issue 26).

Each claim reads what it checks from the texts at run time (tests/claims/printed_text.py)
and compares it with something independent: another printed copy, the breakdown's own
lines, code executed as printed, transformers' modules. Here each is broken once, in the
text (a doctored copy, one printed value changed) or in what it measures (a doctored model),
and must fail; with the real texts and modules it passes, or, for an erratum, fails as
declared and holds once the text is corrected.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import torch
from claimbook.declare.measure import Measure

from experiments import mamba_selective, modules
from tests.claims import test_ch04_token_mixing as ch04
from tests.claims import test_dd2_attention_deep_dive as deep
from tests.claims import test_real_models as real
from tests.claims import test_source_agreement as agree
from tests.claims.sources import CH04, DD2

REAL = os.environ.get("CLAIMBOOK_SOURCES_DIR")
pytestmark = pytest.mark.skipif(
    not REAL or not all((Path(REAL) / s.path).is_file() for s in (CH04, DD2)),
    reason="the texts are not here: set CLAIMBOOK_SOURCES_DIR to the folder that holds them",
)

CLAIMS = {  # id -> (the claim's test function, its parameters)
    "ch04.printed-twice-agree": (agree.test_the_chapters_repeated_numbers_agree, {}),
    "dd2.printed-twice-agree": (agree.test_the_articles_repeated_numbers_agree, {}),
    "dd2.by-type-sums-to-total": (agree.test_the_by_type_breakdown_sums_to_the_total, {}),
    "ch04.block-agrees-with-dd2": (agree.test_the_chapters_block_is_the_articles_modern_block, {}),
    "ch04.lstm-state-size": (ch04.test_lstm_mixer_state_holds_35_numbers, {}),
    "dd2.kv-llama70b": (deep.test_llama70b_kv_cache_sizes, {}),
    "dd2.llama-sizes": (real.test_the_articles_llama_sizes_are_the_real_ones, {}),
    "ch04.mamba-selective": (real.test_mamba_computes_its_recurrence_from_the_token, {}),
}
ERRATA = {
    "dd2.norm-placement-agrees": agree.test_the_article_places_gpt2s_norm_the_same_way_twice,
    "dd2.embedding-share-agrees": agree.test_the_embedding_share_is_printed_the_same_twice,
    "dd2.bias-fact-in-param-count": agree.test_gpt2_biases_in_attention_enter_the_parameter_count,
    "dd2.gqa-fact-in-kv-arithmetic": agree.test_the_articles_70b_cache_applies_its_own_gqa_fact,
    "dd2.kv-70b-agrees-with-ch04": agree.test_the_articles_70b_cache_agrees_with_the_chapters,
    "dd2.kv-llama70b-reference": real.test_llama70b_kv_cache_of_the_real_model,
}

# (claim, parameters, source, the printed text as it stands, the same with one value changed)
TEXT_MUTATIONS = [
    ("ch04.printed-twice-agree", {"quantity": "conv recall 2 tokens back"}, CH04,
     "It scores 0.98 when the key", "It scores 0.97 when the key"),
    ("ch04.printed-twice-agree", {"quantity": "attention Shakespeare loss"}, CH04,
     "attention (MHA)         4              1,024     1.842",
     "attention (MHA)         4              1,024     1.843"),
    ("ch04.printed-twice-agree", {"quantity": "70B GQA cache (GB)"}, CH04,
     "1.3 GB with 8 key-value heads", "1.4 GB with 8 key-value heads"),
    ("dd2.printed-twice-agree", {"quantity": "GPT-2 vocabulary"}, DD2,
     "Vocab Size         50,257", "Vocab Size         50,258"),
    ("dd2.printed-twice-agree", {"quantity": "fc1 with bias"}, DD2,
     "b_fc1:             3072              =      3,072",
     "b_fc1:             3072              =      3,027"),
    ("dd2.printed-twice-agree", {"quantity": "SwiGLU width (x d)"}, DD2,
     "~2.7× (8/3)", "~3.5× (8/3)"),
    ("dd2.by-type-sums-to-total", {}, DD2, "Attention (all):   28.3M", "Attention (all):   29.3M"),
    ("dd2.by-type-sums-to-total", {}, DD2, "124,402,944              │",
     "124,402,945              │"),
    ("ch04.block-agrees-with-dd2", {}, DD2, "~2.7× (8/3)", "~3.5× (7/2)"),
    ("ch04.block-agrees-with-dd2", {}, DD2, "Post-norm               Pre-norm",
     "Post-norm               Post-norm"),
    ("ch04.lstm-state-size", {}, CH04, "its state of 35 numbers", "its state of 36 numbers"),
    ("ch04.lstm-state-size", {}, CH04, "        hidden = hidden or int(0.56 * dim)\n",
     "        hidden = hidden or int(0.6 * dim)\n"),
    ("ch04.lstm-state-size", {}, CH04, "dim=64, n_layers=2)\n", "dim=128, n_layers=2)\n"),
    ("dd2.kv-llama70b", {}, DD2, "2.6 × 32768 = 85 GB", "2.6 × 32768 = 86 GB"),
    ("dd2.kv-llama70b", {}, DD2, "8192 × 2 bytes = 2.6 MB", "8192 × 2 bytes = 2.7 MB"),
    ("dd2.llama-sizes", {"model": "LLaMA 7B"}, DD2, "n_layers = 32, n_heads",
     "n_layers = 40, n_heads"),
    ("dd2.llama-sizes", {"model": "LLaMA 70B"}, DD2, "n_layers = 80, d_model = 8192",
     "n_layers = 80, d_model = 9216"),
]  # fmt: skip
CONTROLS = sorted(
    {(c, tuple(p.items())) for c, p, *_ in TEXT_MUTATIONS} | {("ch04.mamba-selective", ())}
)

# (erratum, the printed error, the text corrected): the claim fails as declared, then holds
CORRECTIONS = [
    ("dd2.norm-placement-agrees", "Norm Placement     Post-norm", "Norm Placement     Pre-norm"),
    ("dd2.embedding-share-agrees", "39,383,808   (31.8%)", "39,383,808   (31.7%)"),
    ("dd2.bias-fact-in-param-count", "Attention subtotal:                      2,360,832",
     "Attention subtotal:                      2,363,904"),
    ("dd2.gqa-fact-in-kv-arithmetic", "8192 × 2 bytes = 2.6 MB", "8192 × 2 bytes = 1.3 MB"),
    ("dd2.kv-70b-agrees-with-ch04", "8192 × 2 bytes = 2.6 MB", "8192 × 2 bytes = 0.33 MB"),
]  # fmt: skip


def use_texts(tmp_path: Path, monkeypatch, source=None, old: str = "", new: str = "") -> None:
    """Point the claims at copies of both texts, ``old`` replaced by ``new`` once in ``source``."""
    for s in (CH04, DD2):
        shutil.copy(Path(REAL) / s.path, tmp_path / s.path)
    if source is not None:
        path = tmp_path / source.path
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} is not printed exactly once in {source.id}"
        path.write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(tmp_path))


def run(claim_id: str, **params) -> Measure:
    test, defaults = CLAIMS.get(claim_id, (ERRATA.get(claim_id), {}))
    measure = Measure([])
    test(**{**defaults, **params}, measure=measure)
    return measure


@pytest.mark.parametrize("claim_id, params", CONTROLS)
def test_the_claim_holds_on_the_real_texts(claim_id, params, tmp_path, monkeypatch):
    use_texts(tmp_path, monkeypatch)
    run(claim_id, **dict(params))


@pytest.mark.parametrize("claim_id, params, source, old, new", TEXT_MUTATIONS)
def test_a_changed_printed_value_turns_the_claim_red(
    claim_id, params, source, old, new, tmp_path, monkeypatch
):
    use_texts(tmp_path, monkeypatch, source, old, new)
    with pytest.raises(AssertionError):
        run(claim_id, **params)


def test_a_block_with_layernorm_turns_the_block_claim_red(tmp_path, monkeypatch):
    use_texts(tmp_path, monkeypatch)
    monkeypatch.setitem(modules.NORMS, "rms", torch.nn.LayerNorm)
    with pytest.raises(AssertionError):
        run("ch04.block-agrees-with-dd2")


def test_a_mamba_whose_scan_ignores_the_token_turns_the_selective_claim_red(tmp_path, monkeypatch):
    """x_proj zeroed: B and the step no longer depend on the token, so neither does A_t."""
    use_texts(tmp_path, monkeypatch)
    build = mamba_selective.build_mixer

    def blind(seed: int = 0):
        mixer = build(seed)
        with torch.no_grad():
            mixer.x_proj.weight.zero_()
        return mixer

    monkeypatch.setattr(mamba_selective, "build_mixer", blind)
    with pytest.raises(AssertionError):
        run("ch04.mamba-selective")


def test_a_published_config_off_its_name_turns_the_sizes_claim_red(tmp_path, monkeypatch):
    """The independent check: a model built with the printed sizes must have its name's size."""
    use_texts(tmp_path, monkeypatch)
    monkeypatch.setitem(real.LLAMA_SIZES, "LLaMA 7B", (*real.LLAMA_SIZES["LLaMA 7B"][:2], 13))
    with pytest.raises(AssertionError):
        run("dd2.llama-sizes", model="LLaMA 7B")


@pytest.mark.parametrize("claim_id, old, new", CORRECTIONS)
def test_an_erratum_fails_on_the_text_and_holds_once_corrected(
    claim_id, old, new, tmp_path, monkeypatch
):
    use_texts(tmp_path, monkeypatch)
    with pytest.raises(AssertionError):
        run(claim_id)
    use_texts(tmp_path, monkeypatch, DD2, old, new)
    run(claim_id)


def test_every_erratum_records_its_correction(tmp_path, monkeypatch):
    """measure.correct is called before the failing assertion, so the page has a correction."""
    use_texts(tmp_path, monkeypatch)
    for claim_id, test in ERRATA.items():
        measure = Measure([])
        with pytest.raises(AssertionError):
            test(measure=measure)
        corrections = [p for p in measure.measures if p.get("correction")]
        assert len(corrections) == 1 and corrections[0]["value"], claim_id
