"""Standard attention, and the tiled attention with an online softmax that FlashAttention uses.

FlashAttention (Dao et al., 2022) never forms the (n, n) score matrix: it walks
over blocks of keys, keeping per query a running maximum ``m``, a running
normaliser ``l`` and an unnormalised output, rescaled by exp(m_old - m_new)
whenever a larger score appears. The result is exactly softmax(QK^T/sqrt(d))V.
All tensors are (..., n, d); the mask, when causal, hides keys after the query.
"""

from __future__ import annotations

import math

import torch


def standard_attention(q, k, v, causal: bool = True) -> torch.Tensor:
    """softmax(q k^T / sqrt(d) + mask) v, materialising the (..., n, n) scores."""
    n = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return scores.softmax(-1) @ v


def online_normaliser(scores: torch.Tensor, chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The softmax normaliser of each row of ``scores`` (..., n), read ``chunk`` columns at a time.

    Returns (m, l): the row maximum and sum(exp(scores - m)), as the running-max
    rescaling computes them without ever holding a whole row's exponentials.
    """
    m = torch.full(scores.shape[:-1], float("-inf"), dtype=scores.dtype)
    total = torch.zeros(scores.shape[:-1], dtype=scores.dtype)
    for start in range(0, scores.shape[-1], chunk):
        block = scores[..., start : start + chunk]
        new_m = torch.maximum(m, block.amax(-1))
        total = total * torch.exp(m - new_m) + torch.exp(block - new_m[..., None]).sum(-1)
        m = new_m
    return m, total


def tiled_attention(q, k, v, block: int = 128, causal: bool = True) -> torch.Tensor:
    """Attention computed block by block with an online softmax; same result as the standard one.

    Extra memory: one (block, block) score tile and per-query accumulators of
    (n, d), i.e. O(n) for a fixed block size, against the standard O(n**2).
    """
    n, scale = q.shape[-2], 1 / math.sqrt(q.shape[-1])
    outputs = []
    for i in range(0, n, block):
        q_i = q[..., i : i + block, :]
        rows = q_i.shape[-2]
        m = torch.full((*q_i.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
        total = torch.zeros_like(m)
        acc = torch.zeros_like(q_i)
        for j in range(0, i + rows if causal else n, block):  # causal: skip tiles in the future
            s = q_i @ k[..., j : j + block, :].transpose(-2, -1) * scale
            if causal and j + block > i:  # the diagonal tile: hide keys after each query
                cols = s.shape[-1]
                future = torch.arange(j, j + cols)[None, :] > torch.arange(i, i + rows)[:, None]
                s = s.masked_fill(future, float("-inf"))
            new_m = torch.maximum(m, s.amax(-1, keepdim=True))
            rescale, p = torch.exp(m - new_m), torch.exp(s - new_m)
            acc = acc * rescale + p @ v[..., j : j + block, :]
            total = total * rescale + p.sum(-1, keepdim=True)
            m = new_m
        outputs.append(acc / total)
    return torch.cat(outputs, dim=-2)
