"""Reach: how many input positions can influence the last output.

The last output's gradient with respect to an input it cannot see is exactly
zero, so counting the positions with a non-zero input gradient measures the
reach (receptive field) of a stack of token mixers.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from experiments.modules import Attention, CausalConv, LSTMMixer, MixerLM
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


def model_reach(model: MixerLM, seq_len: int = 40) -> int:
    """Reach of a whole language model: input positions whose embeddings move the last logits.

    Runs ``model``'s blocks, final norm and head on random embeddings of shape
    (1, seq_len, dim) and counts positions with a non-zero gradient.
    """
    x = torch.randn(1, seq_len, model.embed.embedding_dim, requires_grad=True)
    h = x
    for block in model.blocks:
        h = block(h)
    model.head(model.norm(h))[0, -1].sum().backward()
    return int((x.grad[0].abs().sum(-1) > 0).sum())


def conv2d_receptive_field(kernels: list[int], channels: int, seed: int) -> tuple[int, int]:
    """Side of the patch one output pixel of stacked 2-D convolutions sees, and their parameters.

    Measured like the 1-D reach: non-zero input gradients of the centre output
    of bias-free ``Conv2d`` layers (``channels`` in and out) on a 15 x 15 image.
    """
    deterministic(seed)
    layers = [nn.Conv2d(channels, channels, k, padding=k // 2, bias=False) for k in kernels]
    x = torch.randn(1, channels, 15, 15, requires_grad=True)
    h = x
    for layer in layers:
        h = torch.tanh(layer(h))  # a nonlinearity between, as in VGG; tanh keeps gradients
    h[0, :, 7, 7].sum().backward()
    seen = x.grad[0].abs().sum(0) > 0  # (15, 15)
    rows = seen.any(1).nonzero()
    return int(rows.max() - rows.min() + 1), sum(
        p.numel() for layer in layers for p in layer.parameters()
    )
