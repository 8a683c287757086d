"""Performer's attention (FAVOR+, Choromanski et al. 2020): softmax replaced by a kernel.

softmax(q . k / sqrt(d)) is, up to a row normaliser, the kernel exp(q . k / sqrt(d)).
FAVOR+ writes that kernel as an expectation over random features: with w drawn from
N(0, I) and phi(x) = exp(w . x - |x|^2 / 2) / sqrt(m) (x scaled by d^(-1/4)),
E[phi(q) . phi(k)] = exp(q . k / sqrt(d)). Attention then becomes
D^-1 phi(Q) (phi(K)^T V), computed right to left, which never forms the n x n matrix:
its work grows as n m d instead of n^2 d. The m features are drawn in orthogonal blocks
of d (the paper's "+"), each row rescaled to a chi-distributed norm.
"""

from __future__ import annotations

import torch

from experiments.profiling import count_flops


def orthogonal_features(m: int, d: int, generator: torch.Generator) -> torch.Tensor:
    """m random feature directions (m, d): orthogonal in blocks of d, norms as N(0, I)'s."""
    blocks, left = [], m
    while left > 0:
        q, _ = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=torch.float64))
        blocks.append(q.T[: min(left, d)])
        left -= d
    norms = torch.randn(m, d, generator=generator, dtype=torch.float64).norm(dim=1)
    return torch.cat(blocks) * norms[:, None]


def positive_features(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """phi(x) (..., n, m): positive random features of the softmax kernel (x already scaled)."""
    return torch.exp(x @ w.T - (x * x).sum(-1, keepdim=True) / 2) / w.shape[0] ** 0.5


def performer_attention(q, k, v, w: torch.Tensor) -> torch.Tensor:
    """FAVOR+ attention (bidirectional) of q, k, v (..., n, d) with features w (m, d)."""
    scale = q.shape[-1] ** -0.25
    qf, kf = positive_features(q * scale, w), positive_features(k * scale, w)
    kv = kf.transpose(-2, -1) @ v  # (m, d): the keys and values summed once
    normaliser = qf @ kf.sum(-2, keepdim=True).transpose(-2, -1)  # (n, 1)
    return (qf @ kv) / normaliser


def softmax_attention(q, k, v) -> torch.Tensor:
    """Exact (bidirectional) softmax attention: the n x n weights, then their average of v."""
    weights = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
    return weights @ v


def attention_flops(lengths: list[int], d: int = 64, m: int = 256) -> dict[str, list[int]]:
    """Matrix-product FLOPs of one head of each attention at every length (meta device)."""
    flops = {"softmax": [], "performer": []}
    with torch.device("meta"):
        w = torch.empty(m, d)
        for n in lengths:
            qkv = [torch.empty(1, n, d) for _ in range(3)]
            flops["softmax"].append(count_flops(lambda x=qkv: softmax_attention(*x)))
            flops["performer"].append(count_flops(lambda x=qkv: performer_attention(*x, w)))
    return flops


def approximation_error(m: int, n: int = 128, d: int = 16, draws: int = 4) -> float:
    """Relative error |Performer - softmax| / |softmax| (Frobenius) of one attention's outputs.

    q and k are N(0, 1/4) draws and v N(0, 1) draws of n tokens of width d (float64, fixed
    seed 0), the mean over ``draws`` independent draws of the m features (seeds 1, 2, ...):
    an error that falls as m grows says the features estimate the softmax kernel.
    """
    g = torch.Generator().manual_seed(0)
    q, k, v = (s * torch.randn(n, d, generator=g, dtype=torch.float64) for s in (0.5, 0.5, 1))
    exact = softmax_attention(q, k, v)
    errors = []
    for draw in range(1, draws + 1):
        w = orthogonal_features(m, d, torch.Generator().manual_seed(draw))
        errors.append(((performer_attention(q, k, v, w) - exact).norm() / exact.norm()).item())
    return sum(errors) / draws
