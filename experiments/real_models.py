"""Named language models checked against their reference configurations in transformers.

Each checkpoint below is written out with the sizes of its published config.json
(the model card's checkpoint, named), built by transformers' own model class on
the meta device (shapes only, no memory, nothing downloaded), and read back from
the built modules rather than from the config's fields where a module can say
it (heads from projection widths, the MLP width from its gate, the KV cache from
what k_proj and v_proj output). Mechanisms that need real numbers (which
positions a sliding-window layer attends to) run the same model class at a tiny
width with random weights and the checkpoint's own attention settings.
"""

from __future__ import annotations

import functools

import torch

from experiments.modules import count_params
from experiments.reference import LLAMA_7B, LLAMA_7B_NAME, decoder_kv_bytes, describe

_LLAMA2_70B = dict(
    hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64,
    num_key_value_heads=8, vocab_size=32000, max_position_embeddings=4096, rms_norm_eps=1e-5,
    hidden_act="silu", rope_theta=10000.0,
)  # fmt: skip
_LLAMA3_8B = dict(
    hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
    num_key_value_heads=8, vocab_size=128256, max_position_embeddings=8192, rms_norm_eps=1e-5,
    hidden_act="silu", rope_theta=500000.0,
)  # fmt: skip
_LLAMA3_70B = dict(_LLAMA3_8B, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                   num_attention_heads=64)  # fmt: skip
_LLAMA31_8B = dict(
    _LLAMA3_8B, max_position_embeddings=131072,
    rope_parameters=dict(rope_type="llama3", rope_theta=500000.0, factor=8.0,
                         low_freq_factor=1.0, high_freq_factor=4.0,
                         original_max_position_embeddings=8192),
)  # fmt: skip
_MISTRAL_7B = dict(
    hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
    num_key_value_heads=8, vocab_size=32000, max_position_embeddings=32768, rms_norm_eps=1e-5,
    hidden_act="silu", sliding_window=4096, rope_theta=10000.0,
)  # fmt: skip
_GEMMA2_9B = dict(
    hidden_size=3584, intermediate_size=14336, num_hidden_layers=42, num_attention_heads=16,
    num_key_value_heads=8, head_dim=256, vocab_size=256000, max_position_embeddings=8192,
    sliding_window=4096, query_pre_attn_scalar=256, attn_logit_softcapping=50.0,
    final_logit_softcapping=30.0, hidden_activation="gelu_pytorch_tanh", rms_norm_eps=1e-6,
)  # fmt: skip

# key -> (checkpoint, transformers family, sizes of its config.json)
CHECKPOINTS = {
    "llama-7b": (LLAMA_7B_NAME, "llama", LLAMA_7B),
    "llama2-70b": ("meta-llama/Llama-2-70b-hf (LLaMA 2, 70B)", "llama", _LLAMA2_70B),
    "llama3-8b": ("meta-llama/Meta-Llama-3-8B (Llama 3, 8B)", "llama", _LLAMA3_8B),
    "llama3-70b": ("meta-llama/Meta-Llama-3-70B (Llama 3, 70B)", "llama", _LLAMA3_70B),
    "llama3.1-8b": ("meta-llama/Llama-3.1-8B (Llama 3.1, 8B)", "llama", _LLAMA31_8B),
    "mistral-7b": ("mistralai/Mistral-7B-v0.1 (Mistral 7B, 2023)", "mistral", _MISTRAL_7B),
    "gemma2-9b": ("google/gemma-2-9b (Gemma 2, 9B)", "gemma2", _GEMMA2_9B),
}


def _classes(family: str):
    import transformers  # here: its import takes seconds

    name = {"llama": "Llama", "mistral": "Mistral", "gemma2": "Gemma2"}[family]
    return getattr(transformers, f"{name}Config"), getattr(transformers, f"{name}ForCausalLM")


def config_of(key: str):
    """The transformers configuration of checkpoint ``key``, sizes written out."""
    _, family, sizes = CHECKPOINTS[key]
    return _classes(family)[0](**sizes)


def named(key: str) -> str:
    """The page's name of the configuration: checkpoint and every size set."""
    name, _, sizes = CHECKPOINTS[key]
    return describe(name, sizes)


@functools.cache
def decoder_facts(key: str) -> dict:
    """Checkpoint ``key`` built by its transformers class on the meta device, read back.

    Built once per process (cached); treat the returned dict as read-only.

    Returns config (its name and sizes), n_layers, d_model, n_heads and n_kv_heads
    (projection widths over head_dim), head_dim, d_ff (the gate's width), gated
    (the MLP has gate, up and down projections), activation, params, biases (any
    in attention or MLP), position_params (parameters of position encodings),
    norm (the class of a layer's first norm), kv_bytes_per_token (fp16 keys and
    values every layer's k_proj and v_proj output for one token), vocab_size,
    context (max positions), sliding_window and layer_types (or None).
    """
    cfg = config_of(key)
    _, model_class = _classes(CHECKPOINTS[key][1])
    with torch.device("meta"):
        model = model_class(cfg).to(torch.float16)
        kv_bytes = decoder_kv_bytes(model, cfg.hidden_size)
    layer = model.model.layers[0]
    attn, mlp = layer.self_attn, layer.mlp
    head_dim = attn.head_dim
    act = getattr(cfg, "hidden_activation", None) or cfg.hidden_act
    return {
        "config": named(key),
        "n_layers": len(model.model.layers),
        "d_model": model.model.embed_tokens.embedding_dim,
        "n_heads": attn.q_proj.out_features // head_dim,
        "n_kv_heads": attn.k_proj.out_features // head_dim,
        "head_dim": head_dim,
        "d_ff": mlp.gate_proj.out_features,
        "gated": all(hasattr(mlp, p) for p in ("gate_proj", "up_proj", "down_proj")),
        "activation": act,
        "params": count_params(model),
        "biases": any(n.endswith("bias") for n, _ in layer.named_parameters()),
        "position_params": sum(
            p.numel() for n, p in model.named_parameters() if "rotary" in n or "position" in n
        ),
        "norm": type(layer.input_layernorm).__name__,
        "kv_bytes_per_token": kv_bytes,
        "vocab_size": model.model.embed_tokens.num_embeddings,
        "context": cfg.max_position_embeddings,
        "sliding_window": getattr(cfg, "sliding_window", None),
        "layer_types": list(getattr(cfg, "layer_types", None) or []) or None,
    }


def attended_positions(key: str, window: int = 4, seq_len: int = 12, seed: int = 0) -> list:
    """How many positions each query attends to, per layer, in checkpoint ``key``'s class.

    The model class of ``key`` at a tiny width (4 layers of width 32, 4 heads, 2 kv
    heads, random weights seeded by ``seed``), keeping the checkpoint's attention
    settings (layer types, softcapping) but with ``sliding_window`` shrunk to
    ``window`` so a 12-token input shows it; eager attention, so the weights are
    returned. Returns, per layer, the number of non-zero weights in each query row
    of head 0 (a full causal layer gives 1, 2, ..., seq_len).
    """
    _, family, sizes = CHECKPOINTS[key]
    config_class, model_class = _classes(family)
    tiny = dict(sizes, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                num_attention_heads=4, num_key_value_heads=2, vocab_size=64,
                sliding_window=window, attn_implementation="eager")  # fmt: skip
    if "head_dim" in sizes:
        tiny.update(head_dim=8, query_pre_attn_scalar=8)
    torch.manual_seed(seed)
    model = model_class(config_class(**tiny)).eval()
    ids = torch.randint(64, (1, seq_len), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        weights = model(ids, output_attentions=True).attentions
    return [(w[0, 0] > 0).sum(-1).tolist() for w in weights]


def first_position_moves(key: str, seed: int = 0) -> float:
    """Largest change of position 0's logits when every later token changes, in ``key``'s class.

    The model class of ``key`` at width 32 (2 layers, random weights seeded by
    ``seed``) reads two 6-token inputs sharing only their first token; 0.0 means
    nothing after position 0 reached it (a causal decoder).
    """
    _, family, sizes = CHECKPOINTS[key]
    config_class, model_class = _classes(family)
    tiny = dict(sizes, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, vocab_size=64)  # fmt: skip
    torch.manual_seed(seed)
    model = model_class(config_class(**tiny)).eval()
    a = torch.randint(64, (1, 6), generator=torch.Generator().manual_seed(seed))
    b = torch.cat([a[:, :1], (a[:, 1:] + 1) % 64], dim=1)
    with torch.no_grad():
        return (model(a).logits[0, 0] - model(b).logits[0, 0]).abs().max().item()
