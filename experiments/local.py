"""Local (sliding-window) attention: each query sees only a window of nearby keys.

Longformer (Beltagy et al., 2020) and BigBird (Zaheer et al., 2020) combine
such windows with a few global tokens; the window alone is what bounds the
cost: n queries times W keys instead of n times n.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def window_mask(n: int, before: int, after: int = 0) -> torch.Tensor:
    """Allowed (query, key) pairs, (n, n) bool: key j is visible from query i when
    i - before <= j <= i + after. ``after=0`` is the causal window."""
    offset = torch.arange(n)[:, None] - torch.arange(n)[None, :]  # i - j
    return (offset <= before) & (offset >= -after)


def masked_local_attention(q, k, v, window: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal local attention done the expensive way: all (n, n) scores, then a window mask.

    q, k, v: (..., n, d). Returns (output (..., n, d), weights (..., n, n)).
    """
    n = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~window_mask(n, window - 1), float("-inf")).softmax(-1)
    return weights @ v, weights


def banded_local_attention(q, k, v, window: int) -> torch.Tensor:
    """Causal local attention computing only the n x W scores inside the window.

    Keys and values are unfolded into the ``window`` positions ending at each
    query (the ones before position 0 are padding and masked). q, k, v:
    (..., n, d) -> (..., n, d). Cost: 2 * n * W * d multiply-adds per head.
    """
    n, d = q.shape[-2:]
    pad = (0, 0, window - 1, 0)  # zeros before position 0
    k_win = F.pad(k, pad).unfold(-2, window, 1).transpose(-2, -1)  # (..., n, W, d)
    v_win = F.pad(v, pad).unfold(-2, window, 1).transpose(-2, -1)
    scores = (k_win @ q.unsqueeze(-1)).squeeze(-1) / math.sqrt(d)  # (..., n, W)
    before_start = torch.arange(n)[:, None] - window + 1 + torch.arange(window)[None, :] < 0
    weights = scores.masked_fill(before_start, float("-inf")).softmax(-1)
    return (weights.unsqueeze(-2) @ v_win).squeeze(-2)
