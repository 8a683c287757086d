"""Inside Hugging Face transformers' own layers: what their attention computes, recorded.

transformers lets a model name the attention function it calls. ``RECORDED`` is each model's
own eager attention (``eager_attention_forward`` of its modeling module), unchanged and
wrapped to keep what goes in and comes out: the heads' queries and keys (rotated, for
LLaMA), values, weights after the mask and softmax, and the weighted sums of the values.
Models are built from configurations with random weights; nothing is downloaded. The
article's ``X @ W`` is transformers' GPT-2 ``Conv1D`` as stored (weight ``[in, out]``).
"""

from __future__ import annotations

import contextlib
import functools
import sys

import torch
from torch import nn

RECORDED = "claimbook-recorded"
_records: list[dict] | None = None


def _recorded(module, query, key, value, attention_mask, **kwargs):
    eager = sys.modules[type(module).__module__].eager_attention_forward
    out, weights = eager(module, query, key, value, attention_mask, **kwargs)
    if _records is not None:
        _records.append({
            "query": query, "key": key, "value": value, "key_t": key.transpose(-1, -2),
            "weights": weights, "weighted_sum": out.transpose(1, 2),  # eager returns (B, T, H, d)
        })  # fmt: skip
    return out, weights


@functools.cache
def _register() -> None:
    """Register ``RECORDED`` with transformers (imported here: its import takes seconds)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(RECORDED, _recorded)
    AttentionMaskInterface.register(RECORDED, eager_mask)


@contextlib.contextmanager
def recording():
    """Collect one record per attention call of ``RECORDED`` models run inside the block."""
    global _records
    outer, _records = _records, []
    try:
        yield _records
    finally:
        _records = outer


def gpt2(**sizes) -> nn.Module:
    """transformers' GPT2Model with its default configuration (GPT-2 small) but ``sizes``."""
    _register()
    from transformers import GPT2Config, GPT2Model

    return GPT2Model(GPT2Config(**sizes, attn_implementation=RECORDED)).eval()


def gpt2_lm_meta(**sizes) -> nn.Module:
    """transformers' GPT2LMHeadModel (default configuration but ``sizes``) on the meta device."""
    from transformers import GPT2Config, GPT2LMHeadModel

    with torch.device("meta"):
        return GPT2LMHeadModel(GPT2Config(**sizes))


def llama(**sizes) -> nn.Module:
    """transformers' LlamaModel (RoPE, RMSNorm, SwiGLU) with ``sizes``."""
    _register()
    from transformers import LlamaConfig, LlamaModel

    return LlamaModel(LlamaConfig(**sizes, attn_implementation=RECORDED)).eval()


def _shape(t: torch.Tensor) -> list[int]:
    return list(t.shape)


def gpt2_block_shapes(batch: int, seq: int, **sizes) -> dict[str, list]:
    """Every intermediate shape of the first block of transformers' GPT-2 (``sizes`` over
    GPT-2 small's defaults) on a random (batch, seq, width) input, run for real in float32.

    Keys: ln_1, ln_2, GELU ([in, out]); Q, K, V, W_O, fc1, fc2 ([in, weight, out]; c_attn's
    output split in three as GPT2Attention splits it); heads (Q, K, V after the reshape);
    scores ([Q, K transposed, weights]); weights; weighted sum ([weights, V, sum]);
    residual 1 (after attention) and output (after the MLP).
    """
    model = gpt2(n_layer=1, **sizes)
    block, seen = model.h[0], {}
    parts = {"ln_1": block.ln_1, "c_attn": block.attn.c_attn, "W_O": block.attn.c_proj,
             "ln_2": block.ln_2, "fc1": block.mlp.c_fc, "GELU": block.mlp.act,
             "fc2": block.mlp.c_proj, "block": block}  # fmt: skip

    def hook(name):
        def keep(module, args, out):  # returns None: the output is left as it is
            seen.setdefault(name, (args[0], out))

        return keep

    handles = [module.register_forward_hook(hook(name)) for name, module in parts.items()]
    x = torch.randn(batch, seq, model.config.n_embd, generator=torch.Generator().manual_seed(0))
    with torch.no_grad(), recording() as calls:
        model(inputs_embeds=x)
    for handle in handles:
        handle.remove()
    rec, split = calls[0], block.attn.split_size
    qkv_in, qkv_out = seen["c_attn"]
    weight = block.attn.c_attn.weight
    got = {
        name: [_shape(seen[name][0]), _shape(seen[name][1])] for name in ("ln_1", "ln_2", "GELU")
    }
    for i, name in enumerate("QKV"):
        part = weight[:, i * split : (i + 1) * split]
        got[name] = [_shape(qkv_in), _shape(part), _shape(qkv_out.split(split, dim=2)[i])]
    for name, module in (
        ("W_O", block.attn.c_proj),
        ("fc1", block.mlp.c_fc),
        ("fc2", block.mlp.c_proj),
    ):
        got[name] = [_shape(seen[name][0]), _shape(module.weight), _shape(seen[name][1])]
    got["heads"] = [_shape(rec["query"]), _shape(rec["key"]), _shape(rec["value"])]
    got["scores"] = [_shape(rec["query"]), _shape(rec["key_t"]), _shape(rec["weights"])]
    got["weights"] = _shape(rec["weights"])
    got["weighted sum"] = [
        _shape(rec["weights"]),
        _shape(rec["value"]),
        _shape(rec["weighted_sum"]),
    ]
    got["residual 1"] = _shape(seen["ln_2"][0])
    got["output"] = _shape(seen["block"][1])
    return got  # fmt: skip
