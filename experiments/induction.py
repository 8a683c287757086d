"""Induction: continue a segment that has been seen before (Olsson et al., 2022).

Each sequence holds a segment of n distinct random tokens, the same segment
again right after it, then random filler up to the context length; n varies
per sequence, so no fixed offset finds the answer. While reading the second
copy, the next token is the one that followed the current token in the first
copy. Example with n = 4 (letters stand for tokens)::

    q f k b | q f k b | x m a ...
              ^ at "f": the first "f" was followed by "k", so predict "k"

Solving it takes two steps of attention: one head writes "my previous token
was f" into each position, then a later head at the second "f" finds the
position whose previous token was "f" and copies its token. A single layer of
attention cannot compose the two.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from experiments.modules import MHA, MixerLM, count_params
from experiments.seeding import deterministic

VOCAB = 32  # token ids
CONTEXT = 32  # tokens per sequence
MIN_SEGMENT, MAX_SEGMENT = 4, 16  # segment length n, drawn per sequence
EVAL_SEED = 999  # fresh evaluation sequences, shifted by the seed offset


@dataclass(frozen=True)
class InductionConfig:
    """One training run on the induction task; with a seed, it fixes the result."""

    n_layers: int  # attention blocks (each also has its SwiGLU feed-forward)
    dim: int = 64  # model width, 4 heads of 16
    steps: int = 1500  # AdamW updates
    batch_size: int = 64  # sequences per update
    lr: float = 3e-3  # constant learning rate, weight decay 0
    eval_examples: int = 2000  # fresh sequences for accuracy and the probe

    def to_dict(self) -> dict:
        return asdict(self)


def induction_batch(batch: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``batch`` sequences from ``gen``.

    Returns (x, n): x (batch, CONTEXT) int64 tokens, n (batch,) each segment's
    length; the segment is x[:n] and its repeat x[n : 2n].
    """
    x = torch.randint(VOCAB, (batch, CONTEXT), generator=gen)
    n = torch.randint(MIN_SEGMENT, MAX_SEGMENT + 1, (batch,), generator=gen)
    for row in range(batch):
        segment = torch.randperm(VOCAB, generator=gen)[: n[row]]
        x[row, : n[row]] = segment
        x[row, n[row] : 2 * n[row]] = segment
    return x, n


def predictable(n: torch.Tensor) -> torch.Tensor:
    """Positions whose next token the first copy determines, (batch, CONTEXT - 1) bool.

    Position t (predicting token t + 1) qualifies when n <= t <= 2n - 2.
    """
    t = torch.arange(CONTEXT - 1)[None, :]
    return (t >= n[:, None]) & (t <= 2 * n[:, None] - 2)


@torch.no_grad()
def _probe(model: MixerLM, x: torch.Tensor, n: torch.Tensor) -> dict:
    """Per layer and head: mean weight on the previous token (all positions past 0), and
    at predictable positions, the mean weight on the induction target t - n + 1."""
    mask = predictable(n)  # (B, T - 1)
    rows, cols = mask.nonzero(as_tuple=True)
    h = model.embed(x)
    previous, induction = [], []
    for block in model.blocks:
        w = block.mixer.attention_weights(block.norm1(h))  # (B, H, T, T)
        previous.append(w.diagonal(offset=-1, dim1=-2, dim2=-1).mean((0, 2)).tolist())
        target = cols - n[rows] + 1
        induction.append(w[rows, :, cols, target].mean(0).tolist())
        h = block(h)
    return {"previous_token": previous, "induction_target": induction}


def train_induction(cfg: InductionConfig, seed: int) -> dict:
    """Train an attention model on the induction task; return accuracy and a probe.

    Seed offset ``seed``: model init and training batches use ``seed``, the
    evaluation sequences ``EVAL_SEED + seed``. Next-token cross-entropy over
    every position; accuracy counts only the predictable positions.

    Returns ``params``, ``accuracy`` (fraction of predictable positions whose
    argmax is right), ``chance`` (1 / VOCAB), ``final_train_loss`` (nats) and
    ``probe`` (lists (n_layers, n_heads); see ``_probe``).
    """
    deterministic(seed)
    gen = torch.Generator().manual_seed(seed)
    model = MixerLM(VOCAB, MHA, cfg.dim, cfg.n_layers)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    for _ in range(cfg.steps):
        x, _ = induction_batch(cfg.batch_size, gen)
        loss = F.cross_entropy(model(x[:, :-1]).flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    x, n = induction_batch(cfg.eval_examples, torch.Generator().manual_seed(EVAL_SEED + seed))
    with torch.no_grad():
        right = model(x[:, :-1]).argmax(-1) == x[:, 1:]  # (B, T - 1)
    mask = predictable(n)
    return {
        "params": count_params(model),
        "accuracy": right[mask].float().mean().item(),
        "chance": 1 / VOCAB,
        "final_train_loss": loss.item(),
        "probe": _probe(model, x[:, :-1], n),
    }
