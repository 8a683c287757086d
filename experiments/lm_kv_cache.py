"""The KV cache a whole language model keeps: the bytes of the keys and values its blocks compute.

:func:`experiments.kv_cache.measured_kv_bytes` builds bare attention layers from sizes it is
given; this measures a :class:`~experiments.modules.MixerLM` as built (its own layer count,
width and heads), so a claim can set the chapter's printed cache sizes against what the
chapter's model actually stores.
"""

from __future__ import annotations

import torch

from experiments.modules import MixerLM, MixerSpec


def lm_kv_bytes_per_token(
    spec: MixerSpec, seq_len: int = 64, vocab_size: int = 65, dtype: torch.dtype = torch.float16
) -> float:
    """Bytes per token of the keys and values every block of ``MixerLM(vocab_size, spec)``
    computes for a ``seq_len``-token input in ``dtype`` (its KV cache per token)."""
    model = MixerLM(vocab_size, spec).to(dtype)
    x = torch.zeros(1, seq_len, model.embed.embedding_dim, dtype=dtype)
    total = 0
    with torch.no_grad():
        for block in model.blocks:
            for tensor in block.mixer.keys_values(x):
                total += tensor.numel() * tensor.element_size()
    return total / seq_len
