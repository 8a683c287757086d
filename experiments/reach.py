"""Reach: how many input positions can influence the last output.

The last output's gradient with respect to an input it cannot see is exactly
zero, so counting the positions with a non-zero input gradient measures the
reach (receptive field) of a stack of token mixers.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from experiments.modules import Attention, CausalConv, LSTMMixer
from experiments.seeding import deterministic


def gradient_reach(mixers: list[nn.Module], seq_len: int = 40, dim: int = 16) -> int:
    """Positions of a (1, seq_len, dim) random input that the last output depends on.

    Each mixer is applied with a residual connection, as in the real blocks.
    Returns an int in [1, seq_len].
    """
    x = torch.randn(1, seq_len, dim, requires_grad=True)
    h = x
    for mixer in mixers:
        h = h + mixer(h)
    h[0, -1].sum().backward()
    return int((x.grad[0].abs().sum(-1) > 0).sum())


MIXER_FACTORIES: dict[str, Callable[[int], nn.Module]] = {
    "conv": lambda dim: CausalConv(dim, kernel=4),
    "lstm": lambda dim: LSTMMixer(dim),
    "attention": lambda dim: Attention(dim, n_heads=4),
}


def reach_of_stack(kind: str, layers: int, seed: int, seq_len: int = 40, dim: int = 16) -> int:
    """Reach of ``layers`` freshly initialised mixers of ``kind`` (see MIXER_FACTORIES)."""
    deterministic(seed)
    return gradient_reach([MIXER_FACTORIES[kind](dim) for _ in range(layers)], seq_len, dim)


def conv_stack_reach(layers: int, kernel: int, seed: int, dilated: bool = False) -> int:
    """Reach of ``layers`` causal convolutions of ``kernel``, dilated 2**l at layer l if asked."""
    deterministic(seed)
    stack = [CausalConv(8, kernel, dilation=2**layer if dilated else 1) for layer in range(layers)]
    seq_len = 1 + (kernel - 1) * (2**layers if dilated else layers) + 8  # room to see the edge
    return gradient_reach(stack, seq_len=seq_len, dim=8)
