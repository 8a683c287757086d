"""Work to decode one token after a context, for transformers' Mamba and LLaMA, counted.

Both models are built by transformers on the meta device (shapes only, nothing
downloaded) at Mamba 130M's width, cut to a few layers so that the prefill, which
transformers' reference Mamba scan runs token by token, stays fast. Each context is
read for real (a forward pass over n tokens fills the cache: Mamba's fixed-size state,
LLaMA's keys and values), then the FLOPs of the matrix products of one more token are
counted by torch's FlopCounterMode.
"""

from __future__ import annotations

import torch

from experiments.profiling import count_flops
from experiments.real_others import MAMBA_130M

LAYERS = 2  # of Mamba 130M's 24: the work per token is per layer, the prefill costs n x layers
LLAMA_LIKE = dict(hidden_size=768, intermediate_size=2048, num_attention_heads=12,
                  num_key_value_heads=12, vocab_size=MAMBA_130M["vocab_size"])  # fmt: skip


def _decode_flops(model, contexts: list[int]) -> list[int]:
    flops = []
    for n in contexts:
        cache = model(torch.zeros(1, n, dtype=torch.long), use_cache=True).cache
        new = torch.zeros(1, 1, dtype=torch.long)
        flops.append(count_flops(lambda c=cache, t=new: model(t, cache=c, use_cache=True)))
    return flops


def _models(layers: int, context: int, small: bool = False):
    """Mamba (130M's layout) and a LLaMA of its width; ``small``: width 32, vocabulary 64."""
    import transformers  # here: its import takes seconds

    tiny = dict(hidden_size=32, vocab_size=64)
    mamba = dict(MAMBA_130M, num_hidden_layers=layers, **(tiny if small else {}))
    llama = dict(LLAMA_LIKE, num_hidden_layers=layers, max_position_embeddings=2 * context)
    if small:
        llama.update(tiny, intermediate_size=64, num_attention_heads=4, num_key_value_heads=4)
    return (
        transformers.MambaForCausalLM(transformers.MambaConfig(**mamba)).eval(),
        transformers.LlamaForCausalLM(transformers.LlamaConfig(**llama)).eval(),
    )


@torch.no_grad()
def decode_flops(contexts: list[int], layers: int = LAYERS) -> dict[str, list[int]]:
    """FLOPs to produce one token after each context: ``mamba`` and ``llama`` (same width)."""
    with torch.device("meta"):
        mamba, llama = _models(layers, max(contexts))
        return {"mamba": _decode_flops(mamba, contexts), "llama": _decode_flops(llama, contexts)}


@torch.no_grad()
def cached_step_gap(n: int = 12, seed: int = 0) -> dict[str, float]:
    """Largest |logits of one cached step - the full pass's last logits|, per model.

    The same two model classes at width 32 with random weights (float64, real numbers):
    the step whose work is counted is the model's real decoding step from its cache.
    """
    torch.manual_seed(seed)
    gaps = {}
    for name, model in zip(("mamba", "llama"), _models(LAYERS, n, small=True), strict=True):
        model = model.double()
        ids = torch.randint(64, (1, n), generator=torch.Generator().manual_seed(seed))
        full = model(ids).logits[:, -1]
        cache = model(ids[:, :-1], use_cache=True).cache
        step = model(ids[:, -1:], cache=cache, use_cache=True).logits[:, -1]
        gaps[name] = (step - full).abs().max().item()
    return gaps
