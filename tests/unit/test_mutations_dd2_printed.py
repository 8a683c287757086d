"""Mutation tests of the rewritten dd2 claims of test_dd2_printed*.py (issue 26).

Each claim reads what it checks from the article's text at run time and compares it with
something independent (transformers' own modules, torch's decompositions, the definition the
example illustrates). Here each is broken once in the text (a doctored copy of the article,
one printed value changed) and once in what it measures (a doctored model or module), and
must fail; with the real text and the real modules it must pass.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from claimbook.declare.measure import Measure

from experiments import reference_trace
from tests.claims import test_dd2_printed as printed
from tests.claims import test_dd2_printed_costs as costs
from tests.claims import test_dd2_printed_models as models
from tests.claims.sources import DD2

REAL = os.environ.get("CLAIMBOOK_SOURCES_DIR")
pytestmark = pytest.mark.skipif(
    not REAL or not (Path(REAL) / DD2.path).is_file(),
    reason="the dd2 text is not here: set CLAIMBOOK_SOURCES_DIR to the folder that holds it",
)

CLAIMS = {
    "dd2.trace-small-heads": printed.test_three_token_trace_heads_and_projection,
    "dd2.score-scale": printed.test_scores_are_divided_by_the_root_of_the_head_width,
    "dd2.example-weights-row": printed.test_example_row_is_a_valid_causal_attention_row,
    "dd2.gpt2-block-params": printed.test_gpt2_block_line_items,
    "dd2.gpt2-summary-shares": printed.test_gpt2_summary_rows,
    "dd2.gpt2-trace-shapes": printed.test_gpt2_block_every_intermediate_shape,
    "dd2.strided-pattern": costs.test_strided_attention_keeps_every_tenth_token,
    "dd2.norm-reductions": costs.test_layernorm_reduces_twice_rmsnorm_once,
    "dd2.swiglu-gate": costs.test_swiglu_gate_blocks_at_0_and_passes_at_1,
    "dd2.five-years": costs.test_table_years_are_five_apart,
    "dd2.gpt2-small-sizes": models.test_gpt2_small_has_12_layers_of_12_heads_of_64,
}

# (claim, the printed text as it stands, the same text with one value changed)
TEXT_MUTATIONS = [
    ("dd2.trace-small-heads", "weights_h · V_h\n    # Shape [3, 64]",
     "weights_h · V_h\n    # Shape [3, 32]"),
    ("dd2.trace-small-heads", "3 vectors of dim 512", "3 vectors of dim 256"),
    ("dd2.score-scale", "K.transpose(-2, -1) / √64", "K.transpose(-2, -1) / √32"),
    ("dd2.score-scale", "K_h_rotated.T / √64", "K_h_rotated.T / √128"),
    ("dd2.example-weights-row", "[0.2, 0.5, 0.3]", "[0.2, 0.5, 0.4]"),
    ("dd2.example-weights-row", '30% to "sat"', '35% to "sat"'),
    ("dd2.example-weights-row", 'position 2 ("sat")', 'position 1 ("cat")'),
    ("dd2.gpt2-block-params", "W_K [768, 768] = 589,824", "W_K [768, 768] = 598,824"),
    ("dd2.gpt2-block-params", "b_fc1 [3072] = 2,362,368", "b_fc1 [3072] = 2,362,386"),
    ("dd2.gpt2-block-params", "b_fc2:             768 ", "b_fc2:             786 "),
    ("dd2.gpt2-summary-shares", "Embeddings:        39.4M", "Embeddings:        38.6M"),
    ("dd2.gpt2-summary-shares", "LayerNorms:         0.04M", "LayerNorms:         0.4M"),
    ("dd2.gpt2-summary-shares", "(shares token embeddings)        (  0  )",
     "(shares token embeddings)        ( 38597376 )"),
    ("dd2.gpt2-trace-shapes", "@ [1, 12, 512, 64] → [1, 12, 512, 64]",
     "@ [1, 12, 512, 64] → [1, 12, 512, 32]"),
    ("dd2.gpt2-trace-shapes", "[1, 512, 3072] (unchanged)", "[1, 512, 768] (unchanged)"),
    ("dd2.strided-pattern", "Token 100 attends to", "Token 105 attends to"),
    ("dd2.strided-pattern", "tokens 0, 10, 20, 30", "tokens 0, 10, 25, 30"),
    ("dd2.norm-reductions", "RMSNorm:    1 reduction", "RMSNorm:    2 reduction"),
    ("dd2.norm-reductions", "LayerNorm:  2 reductions", "LayerNorm:  1 reductions"),
    ("dd2.swiglu-gate", "gate ≈ 0 → block", "gate ≈ 0.5 → block"),
    ("dd2.swiglu-gate", "gate ≈ 1 → pass", "gate ≈ -1 → pass"),
    ("dd2.five-years", "over 5 years of research", "over 6 years of research"),
    ("dd2.five-years", "GPT-2 (2019)", "GPT-2 (2018)"),
    ("dd2.gpt2-small-sizes", "n_heads=12, d_head=64", "n_heads=16, d_head=64"),
    ("dd2.gpt2-small-sizes", "PER LAYER (×12 layers)", "PER LAYER (×24 layers)"),
]  # fmt: skip


def _doctored(tmp_path: Path, monkeypatch, old: str, new: str) -> None:
    text = (Path(REAL) / DD2.path).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the mutation's text {old!r} is not once in the article"
    (tmp_path / DD2.path).write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(tmp_path))


@pytest.mark.parametrize("claim_id", list(CLAIMS))
def test_each_rewritten_claim_passes_on_the_real_text_and_modules(claim_id):
    CLAIMS[claim_id](measure=Measure([]))


@pytest.mark.parametrize(("claim_id", "old", "new"), TEXT_MUTATIONS)
def test_a_changed_printed_value_turns_the_claim_red(claim_id, old, new, tmp_path, monkeypatch):
    _doctored(tmp_path, monkeypatch, old, new)
    with pytest.raises(AssertionError):
        CLAIMS[claim_id](measure=Measure([]))


def test_every_rewritten_claim_has_a_text_mutation():
    assert {claim_id for claim_id, _, _ in TEXT_MUTATIONS} == set(CLAIMS)


def _with(module, name: str, monkeypatch, **sizes) -> None:
    """Make ``module.name`` (a model builder) build with ``sizes`` changed."""
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda **kw: real(**(kw | sizes)))


def _gpt2_sizes(**sizes):
    return lambda batch, seq, **kw: reference_trace.gpt2_block_shapes(batch, seq, **(kw | sizes))


# (claim, how its model is broken)
MODEL_MUTATIONS = {
    "trace-small-heads: heads of 32": lambda mp: _with(printed, "llama", mp, head_dim=32),
    "score-scale: GPT-2 unscaled": lambda mp: _with(printed, "gpt2", mp, scale_attn_weights=False),
    "block-params: MLP of 2,048": lambda mp: _with(printed, "gpt2_lm_meta", mp, n_inner=2048),
    "summary-shares: untied head": lambda mp: _with(
        printed, "gpt2_lm_meta", mp, tie_word_embeddings=False
    ),
    "trace-shapes: 8 heads": lambda mp: mp.setattr(
        printed, "gpt2_block_shapes", _gpt2_sizes(n_head=8)
    ),
    "small-sizes: 24 layers": lambda mp: _with(models, "gpt2_lm_meta", mp, n_layer=24),
    "norm-reductions: an RMSNorm that centres": lambda mp: mp.setitem(
        costs.NORM_MODULES, "RMSNorm", ("reduction (sum of squares)", torch.nn.LayerNorm)
    ),
}
MODEL_CLAIMS = {
    "trace-small-heads": "dd2.trace-small-heads", "score-scale": "dd2.score-scale",
    "block-params": "dd2.gpt2-block-params", "summary-shares": "dd2.gpt2-summary-shares",
    "trace-shapes": "dd2.gpt2-trace-shapes", "small-sizes": "dd2.gpt2-small-sizes",
    "norm-reductions": "dd2.norm-reductions",
}  # fmt: skip


@pytest.mark.parametrize("mutation", list(MODEL_MUTATIONS))
def test_a_changed_model_turns_the_claim_red(mutation, monkeypatch):
    MODEL_MUTATIONS[mutation](monkeypatch)
    with pytest.raises(AssertionError):
        CLAIMS[MODEL_CLAIMS[mutation.split(":")[0]]](measure=Measure([]))


def _sigmoid_gate_mlp():
    """A gated MLP whose gate is a sigmoid (GLU), not SiLU: its gate of 0 lets half through."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaMLP

    cfg = LlamaConfig(hidden_size=16, intermediate_size=32, num_attention_heads=2,
                      hidden_act="sigmoid")  # fmt: skip
    return LlamaMLP(cfg).double()


def test_a_gate_that_does_not_block_at_0_turns_the_swiglu_claim_red(monkeypatch):
    monkeypatch.setattr(costs, "_swiglu_mlp", _sigmoid_gate_mlp)
    with pytest.raises(AssertionError):
        costs.test_swiglu_gate_blocks_at_0_and_passes_at_1(measure=Measure([]))
