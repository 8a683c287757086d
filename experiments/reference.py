"""Real models' architectures, read from Hugging Face transformers' reference implementations.

The models are built from their configurations with random weights (on the
meta device where only shapes matter); no weights are downloaded. Each model's
configuration is written out with the sizes of its published checkpoint (never a
class's defaults standing in for a model): GPT-2 small is the checkpoint
openai-community/gpt2 (Radford et al., 2019), LLaMA 7B is the first LLaMA's 7B
checkpoint as converted to transformers, huggyllama/llama-7b (Touvron et al., 2023).
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from experiments.modules import count_params

# openai-community/gpt2 config.json: 12 layers, 12 heads, width 768, 1,024 positions,
# 50,257 tokens, MLP 4 x 768 (n_inner null), activation gelu_new, tied head.
GPT2_SMALL = dict(
    n_layer=12, n_head=12, n_embd=768, n_positions=1024, vocab_size=50257, n_inner=None,
    activation_function="gelu_new", tie_word_embeddings=True,
)  # fmt: skip
GPT2_SMALL_NAME = "openai-community/gpt2 (GPT-2 small)"
# huggyllama/llama-7b config.json (LLaMA 1, 7B): 32 layers, 32 heads of 128 (no GQA), width
# 4,096, SwiGLU MLP 11,008, 32,000 tokens, 2,048 positions, RMSNorm eps 1e-6, untied head.
LLAMA_7B = dict(
    hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
    num_key_value_heads=32, vocab_size=32000, max_position_embeddings=2048, rms_norm_eps=1e-6,
    hidden_act="silu", rope_theta=10000.0, tie_word_embeddings=False,
)  # fmt: skip
LLAMA_7B_NAME = "huggyllama/llama-7b (LLaMA 1, 7B)"


def describe(name: str, sizes: dict) -> str:
    """The configuration a claim used, for its page: checkpoint name and every size set."""
    return f"{name} config in transformers: " + ", ".join(f"{k} {v}" for k, v in sizes.items())


def _has_bias(module: nn.Module) -> bool:
    return any(name.endswith("bias") for name, _ in module.named_parameters())


def norm_placement(block: nn.Module, norm: nn.Module, attn: nn.Module, x: torch.Tensor) -> str:
    """ "pre-norm" if ``attn`` reads ``norm``'s output of the block's own input, else "post-norm".

    Runs ``block`` on x (B, T, d) with forward hooks on the norm and the attention.
    """
    seen: dict = {}

    def on_norm(module, args, out):
        seen.setdefault("norm", (args[0], out))

    def on_attn(module, args, kwargs):
        seen.setdefault("attn", args[0] if args else kwargs["hidden_states"])

    hooks = [
        norm.register_forward_hook(on_norm),
        attn.register_forward_pre_hook(on_attn, with_kwargs=True),
    ]
    with torch.no_grad():
        block(x)
    for hook in hooks:
        hook.remove()
    norm_in, norm_out = seen["norm"]
    reads_norm = seen["attn"] is norm_out or torch.equal(seen["attn"], norm_out)
    return "pre-norm" if reads_norm and torch.equal(norm_in, x) else "post-norm"


def decoder_kv_bytes(model: nn.Module, hidden_size: int) -> int:
    """Bytes of the fp16 keys and values every layer's k_proj and v_proj of a transformers
    decoder output for one token (call it inside ``torch.device("meta")``: nothing is
    allocated)."""
    x = torch.zeros(1, 1, hidden_size, dtype=torch.float16)
    total = 0
    for layer in model.model.layers:
        for proj in (layer.self_attn.k_proj, layer.self_attn.v_proj):
            out = proj(x)
            total += out.numel() * out.element_size()
    return total


@functools.cache
def gpt2_small() -> dict:
    """GPT-2 small (``GPT2_SMALL``) as transformers builds it: sizes, parameters, layer order.

    Built once per process (cached); treat the returned dict as read-only.

    Returns n_layers, d_model, n_heads, vocab_size, context, d_ff (the MLP's
    hidden width), position_table (shape of the learned position embeddings),
    params (total, tied head counted once), attention_params (one layer's
    attention with its LayerNorm), attention_biases (bias scalars in one
    layer's attention), biases (in attention, MLP, LayerNorm), norm_placement.
    """
    from transformers import GPT2Config, GPT2LMHeadModel  # here: its import takes seconds

    cfg = GPT2Config(**GPT2_SMALL)
    with torch.device("meta"):
        model = GPT2LMHeadModel(cfg)
    block = model.transformer.h[0]
    tiny_cfg = GPT2Config(n_layer=1, n_embd=32, n_head=2, n_positions=8)
    tiny = GPT2LMHeadModel(tiny_cfg).eval().transformer.h[0]
    x = torch.randn(1, 8, 32, generator=torch.Generator().manual_seed(0))
    return {
        "config": describe(GPT2_SMALL_NAME, GPT2_SMALL),
        "n_layers": cfg.n_layer,
        "d_model": cfg.n_embd,
        "n_heads": cfg.n_head,
        "vocab_size": cfg.vocab_size,
        "context": cfg.n_positions,
        "d_ff": block.mlp.c_fc.nf,
        "position_table": list(model.transformer.wpe.weight.shape),
        "params": count_params(model),
        "attention_params": count_params(block.ln_1) + count_params(block.attn),
        "attention_biases": block.attn.c_attn.bias.numel() + block.attn.c_proj.bias.numel(),
        "biases": {
            "attention": _has_bias(block.attn),
            "MLP": _has_bias(block.mlp),
            "LayerNorm": _has_bias(block.ln_1),
        },
        "norm_placement": norm_placement(tiny, tiny.ln_1, tiny.attn, x),
    }


@functools.cache
def llama_7b() -> dict:
    """LLaMA 7B (``LLAMA_7B``, written out) as transformers builds it, on the meta device.

    Built once per process (cached); treat the returned dict as read-only.

    Returns n_layers, d_model, n_heads, n_kv_heads, head_dim, d_ff, params,
    kv_bytes_per_token (fp16 keys and values that every layer's k_proj and
    v_proj output for one token), norm_params (parameter tensors of one RMSNorm),
    position_params (parameters of the rotary embedding), biases (any in the
    attention or MLP) and norm_placement (on a one-layer model of the same kind).
    """
    from transformers import LlamaConfig, LlamaForCausalLM  # here: its import takes seconds

    cfg = LlamaConfig(**LLAMA_7B)
    with torch.device("meta"):
        model = LlamaForCausalLM(cfg).to(torch.float16)
        kv_bytes = decoder_kv_bytes(model, cfg.hidden_size)
    layer = model.model.layers[0]
    tiny_cfg = LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2
    )
    tiny = LlamaForCausalLM(tiny_cfg).eval().model
    h = torch.randn(1, 8, 32, generator=torch.Generator().manual_seed(0))
    position_embeddings = tiny.rotary_emb(h, torch.arange(8)[None])
    tiny_layer = tiny.layers[0]

    def run_layer(hidden):
        return tiny_layer(hidden, position_embeddings=position_embeddings)

    wrapper = _Callable(run_layer)
    return {
        "config": describe(LLAMA_7B_NAME, LLAMA_7B),
        "n_layers": cfg.num_hidden_layers,
        "d_model": cfg.hidden_size,
        "n_heads": cfg.num_attention_heads,
        "n_kv_heads": cfg.num_key_value_heads,
        "head_dim": cfg.hidden_size // cfg.num_attention_heads,
        "d_ff": layer.mlp.gate_proj.out_features,
        "params": count_params(model),
        "kv_bytes_per_token": kv_bytes,
        "norm_params": len(list(layer.input_layernorm.parameters())),
        "position_params": count_params(model.model.rotary_emb),
        "biases": _has_bias(layer.self_attn) or _has_bias(layer.mlp),
        "norm_placement": norm_placement(
            wrapper, tiny_layer.input_layernorm, tiny_layer.self_attn, h
        ),
    }


class _Callable(nn.Module):
    """Wraps a function as a module, so :func:`norm_placement` can call it like a block."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def first_token_sensitivity(n_layers: int = 24, seed: int = 0) -> list[float]:
    """How much the first position's hidden state moves when every later token changes.

    A causal GPT-2 (transformers, random weights, width 64, ``n_layers``
    layers) reads two 3-token inputs that share only their first token.
    Returns, per hidden state (embeddings, then after each layer), the largest
    absolute difference at position 0; zero means no information flowed back.
    """
    from transformers import GPT2Config, GPT2LMHeadModel  # here: its import takes seconds

    torch.manual_seed(seed)
    model = GPT2LMHeadModel(GPT2Config(n_layer=n_layers, n_embd=64, n_head=4)).eval()
    gen = torch.Generator().manual_seed(seed)
    a = torch.randint(50257, (1, 3), generator=gen)
    b = torch.cat([a[:, :1], (a[:, 1:] + 1) % 50257], dim=1)  # same first token, others differ
    with torch.no_grad():
        ha = model(a, output_hidden_states=True).hidden_states
        hb = model(b, output_hidden_states=True).hidden_states
    return [(x[0, 0] - y[0, 0]).abs().max().item() for x, y in zip(ha, hb, strict=True)]
