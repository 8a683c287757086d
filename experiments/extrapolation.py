"""Length extrapolation: the chapter's attention model trained on 64 characters, read at 128.

Two ways to give attention positions, everything else the chapter's model and recipe
(:mod:`experiments.lm`): ``"rope"``, the chapter's attention (RoPE on queries and keys),
and ``"learned"``, GPT-2's learned absolute positions (a table of ``eval_len`` rows added
to the token embeddings; attention without rotation). Training windows are
``lm.block_size`` characters long, so the table's rows from there on are never trained,
as GPT-2's would be past its context. Both tables start as torch's embeddings do (the
chapter's token table too). The RoPE arm trains exactly as :func:`experiments.lm.train_lm`
does (same seeds, same batches, same updates), without the protocol's evaluations.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from experiments.data import get_batch, shakespeare
from experiments.lm import LMConfig, full_split_loss, lr_at
from experiments.modules import MHA, Attention, MixerLM, MixerSpec
from experiments.seeding import deterministic

POSITIONS = ("rope", "learned")
CHAPTER_LM = LMConfig(MHA)


@dataclass(frozen=True)
class ExtrapolationConfig:
    """One run: which positions, the chapter's recipe, and the length it is read at."""

    positions: str  # "rope" or "learned"
    lm: LMConfig = CHAPTER_LM  # the chapter's attention model and recipe (context 64)
    eval_len: int = 128  # characters per window when read after training

    def to_dict(self) -> dict:
        return asdict(self)


class UnrotatedAttention(Attention):
    """The chapter's attention with no rotation: position reaches it only through its input."""

    def queries(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return self.q(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)

    def keys_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, T, _ = x.shape
        k, v = self.kv(x).view(B, T, 2, self.n_kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        return k, v


@dataclass(frozen=True)
class UnrotatedSpec(MixerSpec):
    def build(self, dim: int) -> nn.Module:
        return UnrotatedAttention(dim, self.n_heads, self.n_kv_heads)


class LearnedPositionLM(MixerLM):
    """The chapter's model with a learned absolute position table added to its embeddings."""

    def __init__(self, vocab_size: int, lm: LMConfig, max_len: int):
        super().__init__(vocab_size, UnrotatedSpec("attention", n_heads=lm.mixer.n_heads),
                         lm.dim, lm.n_layers, lm.norm, lm.ffn)  # fmt: skip
        self.positions = nn.Embedding(max_len, lm.dim)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.embed(idx) + self.positions(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def build(cfg: ExtrapolationConfig, vocab_size: int, seed: int) -> MixerLM:
    """A fresh model for ``cfg``: ``deterministic(seed)`` then construction. Raises ValueError
    for an unknown ``positions``."""
    if cfg.positions not in POSITIONS:
        raise ValueError(f"positions must be one of {POSITIONS}, got {cfg.positions!r}")
    deterministic(seed)
    if cfg.positions == "rope":
        return MixerLM(
            vocab_size, cfg.lm.mixer, cfg.lm.dim, cfg.lm.n_layers, cfg.lm.norm, cfg.lm.ffn
        )
    return LearnedPositionLM(vocab_size, cfg.lm, cfg.eval_len)


@torch.no_grad()
def late_position_loss(model: nn.Module, ids: torch.Tensor, length: int, start: int) -> float:
    """Mean next-character loss (nats) at positions ``start`` .. ``length - 1`` of the
    non-overlapping windows of ``length`` characters of ``ids``: what a model predicts only
    beyond the context it was trained on when ``start`` is that context."""
    model.eval()
    n = (len(ids) - 1) // length
    x, y = ids[: n * length].view(n, length), ids[1 : n * length + 1].view(n, length)
    total = 0.0
    for first in range(0, n, 64):
        logits = model(x[first : first + 64])[:, start:]
        total += F.cross_entropy(
            logits.flatten(0, 1), y[first : first + 64, start:].flatten(), reduction="sum"
        ).item()
    model.train()
    return total / (n * (length - start))


def train_extrapolation(cfg: ExtrapolationConfig, seed: int) -> dict:
    """Train at the chapter's context, then read the whole validation split at both lengths.

    Returns ``loss_at_train_len`` and ``loss_at_eval_len`` (nats per character, windows of
    ``lm.block_size`` and of ``eval_len`` characters) and ``loss_beyond`` (nats, only the
    positions from ``lm.block_size`` on in the longer windows).
    """
    corpus, lm = shakespeare(), cfg.lm
    model = build(cfg, corpus.vocab_size, seed)
    torch.manual_seed(seed)  # as the chapter's training does
    batches = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lm.lr, betas=(0.9, 0.95), weight_decay=0.1)
    for step in range(lm.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, lm.steps, lm.lr)
        x, y = get_batch(corpus.train, lm.batch_size, lm.block_size, batches)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return {
        "loss_at_train_len": full_split_loss(model, corpus.val, lm.block_size),
        "loss_at_eval_len": full_split_loss(model, corpus.val, cfg.eval_len),
        "loss_beyond": late_position_loss(model, corpus.val, cfg.eval_len, lm.block_size),
    }
