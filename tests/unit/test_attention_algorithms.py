"""The deep dive's building blocks: each one checked where it could plausibly go wrong."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from experiments.decoding import cached_logits, decoding_flops
from experiments.gpt2 import GPT2, GPT2Config, KVCache
from experiments.induction import induction_batch, predictable
from experiments.local import banded_local_attention, masked_local_attention, window_mask
from experiments.modules import GELUMLP, MHA, MixerLM, SwiGLU, count_params
from experiments.profiling import count_flops, growth_exponent, peak_memory
from experiments.reference import norm_placement
from experiments.tiled import online_normaliser, standard_attention, tiled_attention

TINY = GPT2Config(vocab_size=32, n_positions=32, d_model=16, n_heads=2, n_layers=2, d_ff=32)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("n", [1, 50, 64, 130])  # shorter than, equal to and past a block
def test_tiled_attention_matches_the_formula_at_ragged_lengths(causal, n):
    gen = torch.Generator().manual_seed(n)
    q, k, v = (torch.randn(2, n, 8, generator=gen, dtype=torch.float64) for _ in range(3))
    assert torch.allclose(tiled_attention(q, k, v, 64, causal), standard_attention(q, k, v, causal))


def test_online_normaliser_survives_scores_that_overflow_a_plain_exp():
    scores = torch.tensor([[1000.0, 999.0, -5.0, 1001.0]], dtype=torch.float64)
    m, total = online_normaliser(scores, chunk=1)
    assert m.item() == 1001.0
    assert torch.allclose(m + total.log(), scores.logsumexp(-1))


def test_local_attention_band_equals_the_masked_full_computation():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(3, 20, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    masked, weights = masked_local_attention(q, k, v, 5)
    assert torch.allclose(banded_local_attention(q, k, v, 5), masked)
    assert (weights > 0).sum(-1).tolist()[0] == [1, 2, 3, 4] + [5] * 16
    assert window_mask(5, 1, 1).int().tolist()[2] == [0, 1, 1, 1, 0]


def test_peak_memory_counts_live_tensors_and_forgets_freed_ones():
    def two_at_once():
        a = torch.empty(1000)
        b = torch.empty(1000)
        return a + b  # 3 x 4,000 bytes alive at the peak

    def one_at_a_time():
        for _ in range(5):
            torch.empty(1000)  # each freed before the next

    assert peak_memory(two_at_once) == 12_000
    assert peak_memory(one_at_a_time) == 4_000


def test_flops_of_a_matrix_product_and_growth_exponents():
    a, b = torch.empty(8, 16, device="meta"), torch.empty(16, 4, device="meta")
    assert count_flops(lambda: a @ b) == 2 * 8 * 16 * 4
    sizes = [1, 2, 4, 8]
    assert growth_exponent(sizes, [3 * s**2 for s in sizes]) == pytest.approx(2)
    with pytest.raises(ValueError, match="positive"):
        growth_exponent([1, 2], [0, 1])


def test_kv_cache_decoding_matches_a_full_pass_and_grows_by_one_token_per_step():
    torch.manual_seed(0)
    model = GPT2(TINY).double().eval()
    idx = torch.randint(32, (1, 10))
    with torch.no_grad():
        assert torch.allclose(cached_logits(model, idx), model(idx))
        cache = KVCache(TINY.n_layers)
        model(idx[:, :4], cache)
        model(idx[:, 4:5], cache)
    assert len(cache) == 5
    assert cache.nbytes() == 2 * TINY.n_layers * 5 * TINY.d_model * 8  # float64 k and v


def test_a_sequence_past_the_position_table_is_refused():
    with pytest.raises(ValueError, match="exceed n_positions=32"):
        GPT2(TINY)(torch.zeros(1, 33, dtype=torch.long))


def test_decoding_flops_grow_with_the_context():
    flops = decoding_flops(TINY, [4, 8, 16])
    assert flops["cached"][0] < flops["cached"][1] < flops["cached"][2]
    assert all(r > c for r, c in zip(flops["recomputed"], flops["cached"], strict=True))


class PostNormBlock(nn.Module):
    """The original Transformer's layout: normalise after the residual sum."""

    def __init__(self):
        super().__init__()
        self.attn, self.norm = nn.Linear(4, 4), nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(x + self.attn(x))


class PreNormBlock(PostNormBlock):
    def forward(self, x):
        return x + self.attn(self.norm(x))


def test_norm_placement_tells_pre_from_post_norm():
    x = torch.randn(1, 3, 4)
    post, pre = PostNormBlock(), PreNormBlock()
    assert norm_placement(post, post.norm, post.attn, x) == "post-norm"
    assert norm_placement(pre, pre.norm, pre.attn, x) == "pre-norm"


def test_induction_sequences_repeat_a_segment_of_distinct_tokens():
    x, n = induction_batch(50, torch.Generator().manual_seed(0))
    mask = predictable(n)
    for row, length in zip(x, n.tolist(), strict=True):
        segment = row[:length]
        assert len(set(segment.tolist())) == length
        assert torch.equal(row[length : 2 * length], segment)
    assert mask.sum(1).tolist() == (n - 1).tolist()  # n - 1 determined next tokens per row


def test_gelu_mlp_and_swiglu_have_8d2_parameters_and_the_lm_takes_either():
    assert count_params(GELUMLP(96)) == count_params(SwiGLU(96)) == 8 * 96 * 96
    lm = MixerLM(10, MHA, dim=12, n_layers=1, norm="layer", ffn="gelu")
    assert isinstance(lm.norm, nn.LayerNorm) and isinstance(lm.blocks[0].ffn, GELUMLP)
    assert lm(torch.zeros(2, 5, dtype=torch.long)).shape == (2, 5, 10)
