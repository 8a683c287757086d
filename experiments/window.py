"""Sliding-window attention: each token attends to itself and the W - 1 tokens before it.

Used by Longformer (Beltagy et al., 2020) and Mistral 7B (2023). Stacked, the
windows relay information further back: L layers reach L(W - 1) + 1 positions.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from experiments.modules import Attention


def window_mask(seq_len: int, window: int) -> torch.Tensor:
    """(T, T) bool mask, True where query t may attend to key s: t - window < s <= t."""
    t = torch.arange(seq_len)
    offset = t[:, None] - t[None, :]
    return (offset >= 0) & (offset < window)


class SlidingWindowAttention(Attention):
    """:class:`Attention` limited to a window of ``window`` positions; in and out (B, T, dim)."""

    def __init__(self, dim: int, n_heads: int = 4, window: int = 4):
        super().__init__(dim, n_heads)
        self.window = window

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, (k, v) = self.queries(x), self.keys_values(x)  # (B, H, T, head_dim)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=window_mask(T, self.window))
        return self.out(y.transpose(1, 2).reshape(B, T, C))
