"""The deep dive's printed sizes of real models, read off the reference implementations.

GPT-2 small and LLaMA 7B as experiments.reference builds them with transformers (meta device,
nothing downloaded); each printed size is asserted against the built model's configuration.
"""

from __future__ import annotations

import torch

from claimbook import claim
from experiments.kv_cache import measured_kv_bytes
from experiments.reference import gpt2_small, llama_7b
from tests.claims.sources import DD2

PART7 = "Part 7 · Putting it all together"
KV_COSTS = "Part 8 · KV-cache memory costs"

GPT2_SIZES = {"n_layers": 12, "d_model": 768, "n_heads": 12, "d_head": 64}
LLAMA7B_SIZES = {"n_layers": 32, "n_heads": 32, "d_head": 128, "d_model": 4096}


@claim(
    id="dd2.gpt2-small-sizes",
    at=("n_heads=12, d_head=64", "PER LAYER (×12 layers)"),
    level="established",
    source=DD2,
    section=PART7,
    printed=GPT2_SIZES,
    scope="GPT-2 small as experiments.reference builds it with transformers (meta device)",
)
def test_gpt2_small_has_12_layers_of_12_heads_of_64(measure):
    """GPT-2 small has 12 layers of width 768, each with 12 heads of width 64."""
    ref = gpt2_small()
    got = {
        "n_layers": ref["n_layers"],
        "d_model": ref["d_model"],
        "n_heads": ref["n_heads"],
        "d_head": ref["d_model"] // ref["n_heads"],
    }
    for name, printed in GPT2_SIZES.items():
        measure(name, got[name], printed=printed)
    assert got == GPT2_SIZES


@claim(
    id="dd2.llama7b-sizes",
    at="n_layers = 32, n_heads = 32, d_head = 128, d_model = 4096",
    level="established",
    source=DD2,
    section=KV_COSTS,
    printed=LLAMA7B_SIZES,
    scope="LLaMA 7B as experiments.reference builds it with transformers (meta device)",
)
def test_llama7b_has_32_layers_of_32_heads_of_128(measure):
    """LLaMA 7B has 32 layers of width 4,096, each with 32 heads of width 128."""
    ref = llama_7b()
    got = {
        "n_layers": ref["n_layers"],
        "n_heads": ref["n_heads"],
        "d_head": ref["head_dim"],
        "d_model": ref["d_model"],
    }
    for name, printed in LLAMA7B_SIZES.items():
        measure(name, got[name], printed=printed)
    assert got == LLAMA7B_SIZES


def _tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM  # here: its import takes seconds

    cfg = LlamaConfig(  # the LLaMA architecture at toy width; hidden_act stays its "silu"
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2,
    )  # fmt: skip
    return LlamaForCausalLM(cfg).double().eval()


def _tiny_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2)
    return GPT2LMHeadModel(cfg).double().eval()


@claim(
    id="dd2.llama-swiglu-mlp",
    at=("Modern LLMs replace GELU with SwiGLU", "SWIGLU MLP (LLaMA, etc.):", "GELU SwiGLU"),
    level="established",
    source=DD2,
    section="Part 8 · SwiGLU",
    printed={"LLaMA's MLP": "SiLU(x W_gate) * (x W_up), then W_down"},
    scope="transformers' LlamaMLP (the LLaMA architecture at width 32, its default SiLU "
    "activation as in the released LLaMA configurations), random weights, float64",
)
def test_llama_mlp_is_a_swiglu(measure):
    """LLaMA's MLP is a SwiGLU: three bias-free matrices, and its output is
    down(SiLU(gate(x)) * up(x)) exactly."""
    torch.manual_seed(0)
    mlp = _tiny_llama().model.layers[0].mlp
    x = torch.randn(2, 5, 32, dtype=torch.float64)
    with torch.no_grad():
        swiglu = mlp.down_proj(torch.nn.functional.silu(mlp.gate_proj(x)) * mlp.up_proj(x))
        gap = measure("largest |LlamaMLP - SwiGLU formula|", (mlp(x) - swiglu).abs().max().item())
    names = measure("parameters", sorted(n for n, _ in mlp.named_parameters()))
    assert names == ["down_proj.weight", "gate_proj.weight", "up_proj.weight"]
    assert gap <= 1e-12


@claim(
    id="dd2.decoder-only-causal",
    at="Modern LLMs like GPT and LLaMA are decoder-only models",
    level="established",
    source=DD2,
    section="Part 8 · Causal masking and the KV cache",
    printed={"GPT, LLaMA": "decoder-only, each position predicts from earlier tokens only"},
    scope="transformers' GPT2LMHeadModel and LlamaForCausalLM at width 32 (2 layers), random "
    "weights, float64, 2 x 16 tokens; each later suffix changed in turn",
)
def test_gpt2_and_llama_are_causal_decoders(measure):
    """GPT-2 and LLaMA are causal decoders: changing the tokens from position t on leaves the
    logits at every earlier position exactly unchanged, for every t."""
    torch.manual_seed(0)
    idx = torch.randint(64, (2, 16), generator=torch.Generator().manual_seed(0))
    moved = {}
    for name, model in (("GPT-2", _tiny_gpt2()), ("LLaMA", _tiny_llama())):
        with torch.no_grad():
            base, changes = model(idx).logits, []
            for t in range(1, 16):
                other = idx.clone()
                other[:, t:] = (other[:, t:] + 1) % 64
                changes.append((model(other).logits[:, :t] - base[:, :t]).abs().max().item())
        moved[name] = measure(f"largest change before the edited position ({name})", max(changes))
    assert all(v == 0 for v in moved.values())


@claim(
    id="dd2.kv-llama70b-real",
    at=("EXAMPLE: LLaMA 70B", "USED IN: LLaMA 2 70B"),
    level="established",
    source=DD2,
    section=KV_COSTS,
    printed={"per token": "2.6 MB", "32K tokens": "85 GB"},
    scope="the real LLaMA 2 70B's cache: 80 layers, 64 query heads of 128 sharing 8 key-value "
    "heads (Touvron et al. 2023), fp16, keys and values of real attention layers on the meta "
    "device; MB and GB are 10^6 and 10^9 bytes",
    erratum="LLaMA 2 70B uses grouped-query attention with 8 key-value heads (Touvron et al. "
    "2023; the article's own GQA box lists it, and the chapter gives 64 query and 8 kv heads): "
    "its fp16 cache takes 327,680 B = 0.33 MB per token and 10.7 GB at 32K tokens, 8 times less "
    "than the printed 2.6 MB and 85 GB, which assume a key and value per query head",
)
def test_llama70b_real_cache_sizes(measure):
    """The real LLaMA 70B's fp16 KV cache takes the printed 2.6 MB per token and 85 GB for a
    32K-token context."""
    per_token = measured_kv_bytes(80, 64, 8, 128, seq_len=1)
    at_32k = measured_kv_bytes(80, 64, 8, 128, seq_len=32768)
    mb = measure("per token (MB)", per_token / 1e6, printed="2.6")
    gb = measure("32K tokens (GB)", at_32k / 1e9, printed="85")
    measure("as if 64 kv heads / real", measured_kv_bytes(80, 64, 64, 128, 1) / per_token)
    assert round(mb, 1) == 2.6
    assert round(gb) == 85
