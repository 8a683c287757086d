"""KV-cache sizes: the formula, and the bytes of the keys and values a model actually computes.

For L layers with n_kv key-value heads of width d_h at b bytes per number, a
cache holds 2 * L * n_kv * d_h * b bytes per token (keys and values).
"""

from __future__ import annotations

import torch

from experiments.modules import Attention


def kv_bytes_per_token(n_layers: int, n_kv_heads: int, head_dim: int, bytes_per: int = 2) -> int:
    """Bytes of KV cache per token: 2 * n_layers * n_kv_heads * head_dim * bytes_per."""
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per


def measured_kv_bytes(
    n_layers: int,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    seq_len: int,
    dtype: torch.dtype = torch.float16,
    device: str = "meta",
) -> int:
    """Bytes of the keys and values ``n_layers`` real :class:`Attention` layers compute.

    Each layer's ``keys_values`` is run on a (1, seq_len, n_heads * head_dim)
    input in ``dtype``; the returned tensors are exactly what a KV cache keeps.
    On the "meta" device no memory is allocated, so 70B-scale shapes are cheap.
    Returns bytes for the whole sequence (divide by seq_len for per token).
    """
    dim = n_heads * head_dim
    total = 0
    with torch.device(device):
        layer = Attention(dim, n_heads, n_kv_heads).to(dtype)  # layers share shapes
        x = torch.zeros(1, seq_len, dim, dtype=dtype)
        for _ in range(n_layers):
            k, v = layer.keys_values(x)
            total += k.numel() * k.element_size() + v.numel() * v.element_size()
    return total
