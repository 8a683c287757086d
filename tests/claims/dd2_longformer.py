"""Which positions Longformer's attention reads, measured on transformers' own LongformerModel.

A one-layer LongformerModel from a small LongformerConfig (width 32, 2 heads, a window of 4:
two positions each side), random weights, float64, nothing downloaded. Every part of a layer
but attention works position by position, so output position i depends on input position j
exactly when i attends to j: the pattern is read from the gradient of each output position
(a random projection of it) with respect to the input embeddings, not from the model's own
packed layout of its attention weights.
"""

from __future__ import annotations

import torch

WINDOW, LENGTH, WIDTH = 4, 16, 32  # attention_window (both sides together), tokens, d_model


def attended(global_positions: tuple[int, ...] = (0,), seed: int = 0) -> list[list[int]]:
    """For each query position, the key positions it attends to (Jacobian non-zero)."""
    from transformers import LongformerConfig, LongformerModel  # its import takes seconds

    cfg = LongformerConfig(
        vocab_size=64, hidden_size=WIDTH, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, attention_window=[WINDOW], max_position_embeddings=LENGTH + 4,
        pad_token_id=1, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )  # fmt: skip
    torch.manual_seed(seed)
    model = LongformerModel(cfg).double().eval()
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(1, LENGTH, WIDTH, dtype=torch.float64, generator=gen, requires_grad=True)
    mask = torch.zeros(1, LENGTH, dtype=torch.long)
    mask[0, list(global_positions)] = 1
    out = model(inputs_embeds=x, global_attention_mask=mask).last_hidden_state[0]  # (T, d)
    probe = torch.randn(WIDTH, dtype=torch.float64, generator=gen)
    rows = []
    for i in range(LENGTH):  # which inputs output position i depends on
        (grad,) = torch.autograd.grad(out[i] @ probe, x, retain_graph=True)
        rows.append((grad[0].abs().amax(dim=-1) > 0).nonzero().flatten().tolist())
    return rows
