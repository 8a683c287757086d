"""Paired GPU timings for the claims that are about GPU kernels (FlashAttention, RMSNorm).

Like :mod:`experiments.profiling`'s CPU timings, every repetition times each candidate back
to back in a rotating order, so the ratios of one repetition share the machine's state. On a
GPU the work is asynchronous: each timed block ends with a synchronisation. Never cached:
timings describe this run's device.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from experiments.profiling import paired_times
from experiments.tiled import standard_attention


def paired_device_times(fns: dict, device: str, repetitions: int = 15) -> dict[str, list[float]]:
    """:func:`experiments.profiling.paired_times` (10 calls a block) with the device
    synchronised around each timed block."""

    def sync() -> None:
        if str(device).startswith("cuda"):
            torch.cuda.synchronize()

    return paired_times(fns, repetitions, calls=10, sync=sync)


def attention_times(
    lengths: list[int],
    tokens: int = 16_384,
    heads: int = 16,
    head_dim: int = 64,
    seed: int = 0,
    repetitions: int = 15,
    device: str = "cuda",
    dtype: torch.dtype = torch.float16,
) -> dict[str, dict[int, list[float]]]:
    """Forward and backward seconds of causal attention at each sequence length, with
    ``tokens // length`` sequences per batch: torch's FlashAttention kernel against standard
    attention that materialises the score matrix. Returns kernel -> length -> seconds per
    repetition (paired by index)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gen = torch.Generator(device=device).manual_seed(seed)
    out: dict[str, dict[int, list[float]]] = {"flash": {}, "standard": {}}
    for n in lengths:
        shape = (max(1, tokens // n), heads, n, head_dim)
        q, k, v = (
            torch.randn(shape, device=device, dtype=dtype, generator=gen).requires_grad_()
            for _ in range(3)
        )
        grad = torch.randn(shape, device=device, dtype=dtype, generator=gen)

        def flash(q=q, k=k, v=v, grad=grad):
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)

        def standard(q=q, k=k, v=v, grad=grad):
            standard_attention(q, k, v, causal=True).backward(grad)

        times = paired_device_times({"flash": flash, "standard": standard}, device, repetitions)
        for name, t in times.items():
            out[name][n] = t
        del q, k, v, grad
    return out


def norm_times_device(
    dim: int = 4096,
    tokens: int = 8192,
    seed: int = 0,
    repetitions: int = 15,
    device: str = "cuda",
    dtype: torch.dtype = torch.bfloat16,
) -> dict[str, list[float]]:
    """Forward and backward seconds of torch's LayerNorm and RMSNorm kernels on a
    (tokens, dim) activation, per repetition (paired by index)."""
    gen = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(tokens, dim, device=device, dtype=dtype, generator=gen).requires_grad_()
    grad = torch.randn(tokens, dim, device=device, dtype=dtype, generator=gen)
    layer = torch.nn.LayerNorm(dim, device=device, dtype=dtype)
    rms = torch.nn.RMSNorm(dim, eps=1e-6, device=device, dtype=dtype)
    fns = {
        "LayerNorm": lambda: layer(x).backward(grad),
        "RMSNorm": lambda: rms(x).backward(grad),
    }
    return paired_device_times(fns, device, repetitions)
