"""Each code-block claim goes red when the printed code (or its printed output) is doctored.

A copy of the source text with one change is written to a temporary folder, the claim's
test function is called on it, and it must fail its assertion; the real text passes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claimbook.declare.measure import Measure

from experiments.article_code import statements, translate
from experiments.data import CorpusNotFoundError, corpus_text
from experiments.printed_code import notebook_cells
from tests.claims import test_code_blocks_ch04 as ch04
from tests.claims import test_code_blocks_dd2 as dd2
from tests.claims.sources import CH04, DD2

SOURCES = os.environ.get("CLAIMBOOK_SOURCES_DIR")
pytestmark = pytest.mark.skipif(
    not SOURCES, reason="needs the source texts (CLAIMBOOK_SOURCES_DIR)"
)

# (claim test, source, printed text, its doctored form, occurrences: printed and flattened)
MUTATIONS = [
    (
        ch04.test_printed_skeleton_is_the_reference_model,
        CH04,
        "x = x + self.mixer(self.norm1(x))",
        "x = x + self.mixer(x)",
        2,
    ),
    (
        ch04.test_printed_causal_conv_is_the_causal_sum,
        CH04,
        "(self.kernel - 1, 0)",
        "(0, self.kernel - 1)",
        2,
    ),
    (
        ch04.test_printed_reach_cell_prints_its_output,
        CH04,
        "last token sees  7 of 40",
        "last token sees  8 of 40",
        1,
    ),
    (ch04.test_printed_lstm_mixer_prints_its_counts, CH04, "int(0.56 * dim)", "int(0.5 * dim)", 2),
    (
        ch04.test_printed_recall_task_is_the_reference_task,
        CH04,
        "which = torch.randint(N_PAIRS,",
        "which = torch.randint(N_PAIRS - 1,",
        2,
    ),
    (
        ch04.test_printed_attention_is_causal_softmax_attention,
        CH04,
        "is_causal=True",
        "is_causal=False",
        2,
    ),
    (
        ch04.test_printed_attention_recall_model_size,
        CH04,
        "attention    102,464 params",
        "attention    102,400 params",
        1,
    ),
    (
        ch04.test_printed_heatmap_cell_recomputes_the_weights,
        CH04,
        "/ m.head_dim**0.5",
        "/ m.head_dim",
        2,
    ),
    (
        ch04.test_printed_lm_cell_model_sizes,
        CH04,
        "LSTM             params 204,976",
        "LSTM             params 204,967",
        1,
    ),
    (ch04.test_printed_kv_cell_prints_its_table, CH04, "return 2 * n_layers", "return n_layers", 2),
    (
        dd2.test_forward_trace_is_a_pre_norm_rope_layer,
        DD2,
        "K_h_rotated.T / √64",
        "K_h_rotated.T * √64",
        1,
    ),
    (
        dd2.test_shape_trace_runs_with_its_printed_shapes,
        DD2,
        "Shape: [1, 12, 512, 512]   ",
        "Shape: [1, 12, 512, 64]   ",
        1,
    ),
    (
        dd2.test_shape_trace_runs_with_its_printed_shapes,
        DD2,
        "Q_all = X_norm @ W_Q",
        "Q_all = X_norm @ W_K",
        1,
    ),
    (
        dd2.test_simplified_layer_is_a_gpt2_block,
        DD2,
        "x = x + self.attn(self.ln1(x))",
        "x = x + self.attn(x)",
        1,
    ),
    (
        dd2.test_kv_cache_steps_give_full_causal_attention,
        DD2,
        "Append: K_cache = [K₁, K₂], V_cache",
        "Append: K_cache = [K₂], V_cache",
        1,
    ),
    (
        dd2.test_flash_loop_is_exact_attention,
        DD2,
        "O_block = O_block * scale",
        "O_block = O_block",
        1,
    ),
    (
        dd2.test_flash_loop_is_exact_attention,
        DD2,
        "3. Compute P = softmax(S)",
        "3. Compute P = S",
        1,
    ),
    (
        dd2.test_printed_norms_are_layernorm_and_rmsnorm,
        DD2,
        "x_norm = x / rms",
        "x_norm = x * rms",
        1,
    ),
    (dd2.test_printed_norms_are_layernorm_and_rmsnorm, DD2, "σ² = var(x)", "σ² = mean(x)", 1),
    (
        dd2.test_printed_mlps_are_gpt2_and_llama_mlps,
        DD2,
        "hidden = SiLU(gate) * hidden",
        "hidden = SiLU(hidden) * gate",
        1,
    ),
]


def has_corpus() -> bool:
    try:
        corpus_text(download=False)
    except CorpusNotFoundError:
        return False
    return True


def real(source) -> str:
    return (Path(SOURCES) / source.path).read_text(encoding="utf-8")


def use_text(tmp_path, monkeypatch, source, text: str) -> None:
    (tmp_path / source.path).write_text(text, encoding="utf-8")
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(tmp_path))


@pytest.mark.parametrize(
    ("test", "source", "old", "new", "count"),
    MUTATIONS,
    ids=[f"{m[0].__name__}-{i}" for i, m in enumerate(MUTATIONS)],
)
def test_doctored_code_turns_the_claim_red(test, source, old, new, count, tmp_path, monkeypatch):
    if source is CH04 and not has_corpus():
        pytest.skip("the chapter's cells read TinyShakespeare (CLAIMBOOK_DATA_DIR)")
    text = real(source)
    assert text.count(old) == count, "the mutation no longer matches the text"
    use_text(tmp_path, monkeypatch, source, text.replace(old, new))
    with pytest.raises(AssertionError):
        test(measure=Measure([]))


@pytest.mark.parametrize(
    "test", sorted({m[0] for m in MUTATIONS}, key=lambda t: t.__name__), ids=lambda t: t.__name__
)
def test_the_printed_code_passes(test):
    if test.__module__.endswith("ch04") and not has_corpus():
        pytest.skip("the chapter's cells read TinyShakespeare (CLAIMBOOK_DATA_DIR)")
    test(measure=Measure([]))


def test_a_cell_is_its_printed_copy_not_its_flattened_one():
    cells = notebook_cells(real(CH04))
    conv = cells[3].code.splitlines()
    assert conv[0] == "class CausalConv(nn.Module):" and len(conv) > 5
    assert cells[4].after[0].startswith("1 conv layers, kernel 4: last token sees")


def test_a_cell_without_its_flattened_copy_is_refused():
    text = real(CH04)
    flattened = next(
        line for line in text.splitlines() if line.startswith("class CausalConv(nn.Module): ")
    )
    with pytest.raises(ValueError, match="In \\[3\\]"):
        notebook_cells(text.replace(flattened + "\n", ""))


def test_pseudocode_spelling_becomes_python():
    assert translate("S = Q · K.T / √d_k") == "S = Q @ K.mT / sqrt(d_k)"
    assert translate("σ² = var(x)") == "sigma_sq = var(x)"
    assert translate("rms = √(mean(x²))") == "rms = sqrt(mean(x**2))"
    assert statements(["3. Normalize:  x_norm = x / rms", "Step 2: prose", "# a comment"]) == [
        "x_norm = x / rms"
    ]
