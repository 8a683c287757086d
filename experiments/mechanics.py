"""Checks of attention's mechanics against their textbook formulas (float64, CPU)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from experiments.modules import apply_rope
from experiments.seeding import deterministic


def sdpa_vs_formula(
    seed: int, batch: int = 2, heads: int = 4, seq_len: int = 12, head_dim: int = 16
) -> float:
    """Largest absolute difference between fused causal attention and the explicit formula.

    The formula is softmax(Q K^T / sqrt(d_h) + M) V with M = -inf above the
    diagonal (Vaswani et al., 2017, eq. 1). Q, K, V: (B, H, T, d_h) in float64.
    """
    deterministic(seed)
    q, k, v = (torch.randn(batch, heads, seq_len, head_dim, dtype=torch.float64) for _ in range(3))
    fused = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    mask = torch.full((seq_len, seq_len), float("-inf"), dtype=torch.float64).triu(1)
    explicit = torch.softmax(q @ k.transpose(-2, -1) / head_dim**0.5 + mask, dim=-1) @ v
    return (fused - explicit).abs().max().item()


def rope_score(q: torch.Tensor, k: torch.Tensor, m: int, n: int) -> float:
    """Dot product of query vector q at position m with key vector k at position n, after RoPE.

    q, k: (head_dim,) float64.
    """
    seq = torch.zeros(max(m, n) + 1, 2, q.shape[0], dtype=q.dtype)  # (T, 2, d): slot 0 q, slot 1 k
    seq[m, 0], seq[n, 1] = q, k
    rotated = apply_rope(seq.transpose(0, 1))  # (2, T, d)
    return float(rotated[0, m] @ rotated[1, n])


def rope_shift_deviation(seed: int, head_dim: int = 16, shifts=(1, 7, 50, 300)) -> float:
    """Largest change of a RoPE query-key score when both positions move by the same shift.

    Zero (to rounding) means the score depends only on the distance m - n
    (Su et al., 2021, section 3.2).
    """
    deterministic(seed)
    q, k = torch.randn(head_dim, dtype=torch.float64), torch.randn(head_dim, dtype=torch.float64)
    worst = 0.0
    for m, n in [(5, 2), (9, 9), (3, 0), (20, 4)]:
        base = rope_score(q, k, m, n)
        for s in shifts:
            worst = max(worst, abs(rope_score(q, k, m + s, n + s) - base))
    return worst


def rope_distance_matters(seed: int, head_dim: int = 16) -> float:
    """How much the score changes when only the distance changes (to show it is not constant)."""
    deterministic(seed)
    q, k = torch.randn(head_dim, dtype=torch.float64), torch.randn(head_dim, dtype=torch.float64)
    return abs(rope_score(q, k, 5, 2) - rope_score(q, k, 5, 0))


def ssm_recurrence_vs_convolution(seed: int, state: int = 4, seq_len: int = 32) -> float:
    """Largest difference between a linear state-space recurrence and its convolution form.

    Recurrence h_t = A h_{t-1} + B x_t, y_t = C h_t (S4; Gu, Goel and Ré, 2021)
    equals the causal convolution y_t = sum_j (C A^j B) x_{t-j}: the parallel
    form state-space models train with. Scalar input and output, float64.
    """
    deterministic(seed)
    A = 0.9 * torch.linalg.qr(torch.randn(state, state, dtype=torch.float64))[0]  # stable
    B, C = torch.randn(state, 1, dtype=torch.float64), torch.randn(1, state, dtype=torch.float64)
    x = torch.randn(seq_len, dtype=torch.float64)
    h, recurrent = torch.zeros(state, 1, dtype=torch.float64), []
    for t in range(seq_len):
        h = A @ h + B * x[t]
        recurrent.append((C @ h).item())
    kernel, power = [], torch.eye(state, dtype=torch.float64)
    for _ in range(seq_len):
        kernel.append((C @ power @ B).item())
        power = A @ power
    k = torch.tensor(kernel, dtype=torch.float64)
    convolved = [float((k[: t + 1] * x[: t + 1].flip(0)).sum()) for t in range(seq_len)]
    return max(abs(a - b) for a, b in zip(recurrent, convolved, strict=True))
