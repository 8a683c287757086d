"""LayerNorm (Ba et al., 2016) against RMSNorm (Zhang and Sennrich, 2019): statistics and speed."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from experiments.modules import RMSNorm
from experiments.profiling import paired_times


def layernorm_statistics(x: torch.Tensor, eps: float = 1e-5) -> dict:
    """Per-position mean and variance of LayerNorm's output before its affine part.

    x: (..., d). Returns the largest |mean|, the largest |variance - 1|
    (biased variance, as LayerNorm uses) and the bound eps / min variance of
    x that epsilon alone can cause.
    """
    y = nn.LayerNorm(x.shape[-1], eps=eps, elementwise_affine=False, dtype=x.dtype)(x)
    variance_in = x.var(-1, unbiased=False)
    return {
        "max_abs_mean": y.mean(-1).abs().max().item(),
        "max_abs_variance_minus_1": (y.var(-1, unbiased=False) - 1).abs().max().item(),
        "epsilon_bound": eps / variance_in.min().item(),
    }


def norm_seconds(dim: int, tokens: int, seed: int, repetitions: int = 15) -> dict[str, float]:
    """Median seconds of a forward and backward pass of each norm (see :func:`norm_times`)."""
    return {n: float(np.median(t)) for n, t in norm_times(dim, tokens, seed, repetitions).items()}


def norm_times(dim: int, tokens: int, seed: int, repetitions: int = 15) -> dict[str, list[float]]:
    """Seconds of a forward and backward pass of each norm on (tokens, dim) float32, per
    repetition (paired by index).

    Timed back to back on one thread: torch's ``nn.LayerNorm`` and ``nn.RMSNorm``
    (both fused kernels) and the chapter's three-operation RMSNorm. Returns
    name -> seconds per repetition.
    """
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    x = torch.randn(tokens, dim, requires_grad=True)
    grad = torch.randn(tokens, dim)
    norms = {
        "LayerNorm": nn.LayerNorm(dim),
        "RMSNorm": nn.RMSNorm(dim, eps=1e-6),
        "RMSNorm (chapter)": RMSNorm(dim),
    }

    def step(norm):
        return lambda: norm(x).backward(grad)

    return paired_times({name: step(n) for name, n in norms.items()}, repetitions)
