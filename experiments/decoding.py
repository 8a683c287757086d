"""Generating token by token, with a KV cache and by recomputing the whole prefix.

Part 8 of the article: with a cache, each new token computes only its own
query, key and value and attends to the stored keys and values, so its work
grows linearly with the context; recomputing the prefix redoes every
position, quadratically.
"""

from __future__ import annotations

import torch

from experiments.gpt2 import GPT2, GPT2Config, KVCache
from experiments.profiling import count_flops


@torch.no_grad()
def cached_logits(model: GPT2, idx: torch.Tensor) -> torch.Tensor:
    """Logits for every position of idx (B, T), feeding one token at a time through a KV cache.

    Returns (B, T, vocab): row t is computed when token t arrives.
    """
    cache = KVCache(len(model.blocks))
    return torch.cat([model(idx[:, t : t + 1], cache) for t in range(idx.shape[1])], dim=1)


@torch.no_grad()
def recomputed_logits(model: GPT2, idx: torch.Tensor) -> torch.Tensor:
    """Logits for every position of idx (B, T), each from a fresh pass over its whole prefix.

    Returns (B, T, vocab): row t is the last row of model(idx[:, : t + 1]).
    """
    return torch.cat([model(idx[:, : t + 1])[:, -1:] for t in range(idx.shape[1])], dim=1)


def decoding_flops(cfg: GPT2Config, contexts: list[int]) -> dict[str, list[int]]:
    """FLOPs to produce one new token after each context length, with and without a cache.

    Counted on the meta device (shapes only): ``cached`` is one step of one
    token against a cache of ``context`` tokens; ``recomputed`` is a pass over
    ``context + 1`` tokens. ``cfg.n_positions`` must exceed every context.
    """
    with torch.device("meta"):
        model = GPT2(cfg)
        flops = {"cached": [], "recomputed": []}
        for n in contexts:
            cache = KVCache(cfg.n_layers)
            model(torch.zeros(1, n, dtype=torch.long), cache)  # fill the cache (not counted)
            new = torch.zeros(1, 1, dtype=torch.long)
            flops["cached"].append(count_flops(lambda c=cache, t=new: model(t, c)))
            flops["recomputed"].append(
                count_flops(lambda m=n: model(torch.zeros(1, m + 1, dtype=torch.long)))
            )
    return flops
