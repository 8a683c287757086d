"""The chapter's language-model recipe on character-level TinyShakespeare.

AdamW (lr 3e-3, betas 0.9/0.95, weight decay 0.1), 10% linear warm-up then
cosine decay to 10% of the peak, gradient norm clipped at 1.0, batches of
32 x 64 characters, 600 steps. Losses are cross-entropy in nats per character.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from experiments.data import get_batch, shakespeare
from experiments.modules import MixerLM, MixerSpec, count_params
from experiments.seeding import deterministic


@dataclass(frozen=True)
class LMConfig:
    """One language-model training run; with a seed, it fixes the result."""

    mixer: MixerSpec
    dim: int = 64  # model width
    n_layers: int = 4  # blocks
    steps: int = 600  # optimizer updates
    block_size: int = 64  # context, characters
    batch_size: int = 32  # windows per batch
    lr: float = 3e-3  # peak learning rate
    eval_every: int = 100  # steps between evaluations
    eval_batches: int = 10  # batches per split per evaluation
    norm: str = "rms"  # "rms" (the chapter) or "layer": LayerNorm
    ffn: str = "swiglu"  # "swiglu" (the chapter) or "gelu": a 4x GELU MLP

    def to_dict(self) -> dict:
        return asdict(self)


def lr_at(step: int, steps: int, peak: float) -> float:
    """Learning rate before update ``step``: linear warm-up over 10%, cosine to 10% of peak."""
    warmup = max(1, int(0.1 * steps))
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


@torch.no_grad()
def _mean_loss(model, ids, cfg: LMConfig, generator: torch.Generator) -> float:
    """Mean loss (nats) over ``cfg.eval_batches`` random batches of ``ids``."""
    model.eval()
    total = 0.0
    for _ in range(cfg.eval_batches):
        x, y = get_batch(ids, cfg.batch_size, cfg.block_size, generator)
        total += F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
    model.train()
    return total / cfg.eval_batches


@torch.no_grad()
def full_split_loss(model, ids: torch.Tensor, block_size: int, batch_size: int = 64) -> float:
    """Mean next-character loss (nats) over a whole split, in non-overlapping windows.

    ids: (N,) token ids. Each window of ``block_size`` inputs predicts its
    ``block_size`` next characters; the ragged tail is dropped. Far less noisy
    than the protocol's 10 random batches, so claims that rank models use it too.
    """
    model.eval()
    n_windows = (len(ids) - 1) // block_size
    x = ids[: n_windows * block_size].view(n_windows, block_size)
    y = ids[1 : n_windows * block_size + 1].view(n_windows, block_size)
    total = 0.0
    for start in range(0, n_windows, batch_size):
        logits = model(x[start : start + batch_size])
        targets = y[start : start + batch_size]
        total += F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="sum").item()
    model.train()
    return total / y.numel()


PROBE_SEED = 4321  # ours: the validation batch the attention probe reads, shifted by the seed
PROBE_OFFSETS = 8  # the attention probe's offset profile: weight on the token 1 .. 8 back
_OFFSETS = range(1, PROBE_OFFSETS + 1)


@torch.no_grad()
def attention_probe(model: MixerLM, ids: torch.Tensor, cfg: LMConfig, seed: int) -> dict:
    """Where each attention head of a trained model looks, on one validation batch.

    Per layer and head: ``previous_token`` (mean weight on the token just
    before the query), ``mean_distance`` (mean of query - key position under
    the weights, in tokens), ``first_position`` and ``same_position`` (mean weight
    on the window's first position and on the query's own, over the queries that
    have a choice: all but the first) and ``offsets`` (mean weight on the token k
    back, for k = 1 .. PROBE_OFFSETS). Lists are (n_layers, n_heads[, offsets]).
    """
    x, _ = get_batch(
        ids, cfg.batch_size, cfg.block_size, torch.Generator().manual_seed(PROBE_SEED + seed)
    )
    model.eval()
    h = model.embed(x)
    previous, distance, first, same, back = [], [], [], [], []
    offsets = (
        torch.arange(cfg.block_size)[:, None] - torch.arange(cfg.block_size)[None, :]
    )  # (T, T)
    for block in model.blocks:
        w = block.mixer.attention_weights(block.norm1(h))  # (B, H, T, T)
        previous.append(w.diagonal(offset=-1, dim1=-2, dim2=-1).mean((0, 2)).tolist())
        distance.append((w * offsets.clamp(min=0)).sum(-1)[:, :, 1:].mean((0, 2)).tolist())
        first.append(w[:, :, 1:, 0].mean((0, 2)).tolist())
        same.append(w.diagonal(dim1=-2, dim2=-1)[:, :, 1:].mean((0, 2)).tolist())
        by_offset = [w.diagonal(offset=-k, dim1=-2, dim2=-1).mean((0, 2)) for k in _OFFSETS]
        back.append(torch.stack(by_offset, dim=-1).tolist())  # (n_heads, offsets)
        h = block(h)
    model.train()
    return {
        "previous_token": previous,
        "mean_distance": distance,
        "first_position": first,
        "same_position": same,
        "offsets": back,
    }


def build_lm(cfg: LMConfig, seed: int) -> MixerLM:
    """A freshly initialised model for ``cfg``: ``manual_seed(seed)`` then construction."""
    deterministic(seed)
    return MixerLM(shakespeare().vocab_size, cfg.mixer, cfg.dim, cfg.n_layers, cfg.norm, cfg.ffn)


def train_lm(cfg: LMConfig, seed: int) -> dict:
    """Train one language model; return its curve as plain data.

    Seed offset ``seed`` shifts every seed of the chapter: model init and the
    training batches use ``seed``, evaluation batches ``1234 + seed``.

    Returns a dict with ``params`` (int), ``steps`` (the evaluated steps),
    ``train_loss`` and ``val_loss`` (nats, mean of the evaluation batches at
    each of those steps), ``final_val_loss`` (nats, the chapter's estimator:
    the last 10 random validation batches), ``full_val_loss`` (nats, the whole
    validation split after training) and ``train_seconds`` (training and the
    protocol's evaluations, not the full-split loss); attention models add
    ``probe`` (see :func:`attention_probe`).
    """
    corpus = shakespeare()
    model = build_lm(cfg, seed)
    torch.manual_seed(seed)  # the chapter seeds again when training starts
    train_gen = torch.Generator().manual_seed(seed)
    eval_gen = torch.Generator().manual_seed(1234 + seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.1)
    curve = {"steps": [], "train_loss": [], "val_loss": []}
    start = time.perf_counter()
    for step in range(cfg.steps + 1):
        if step % cfg.eval_every == 0 or step == cfg.steps:
            curve["steps"].append(step)
            curve["train_loss"].append(_mean_loss(model, corpus.train, cfg, eval_gen))
            curve["val_loss"].append(_mean_loss(model, corpus.val, cfg, eval_gen))
        if step == cfg.steps:
            break
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg.steps, cfg.lr)
        x, y = get_batch(corpus.train, cfg.batch_size, cfg.block_size, train_gen)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    seconds = time.perf_counter() - start
    result = {
        "params": count_params(model),
        **curve,
        "final_val_loss": curve["val_loss"][-1],
        "full_val_loss": full_split_loss(model, corpus.val, cfg.block_size),
        "train_seconds": seconds,
    }
    if cfg.mixer.kind == "attention":
        result["probe"] = attention_probe(model, corpus.val, cfg, seed)
    return result
