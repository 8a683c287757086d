"""Training runs of the chapter's step 5 and its forks: the SSM and hybrid stacks.

The SSM runs are the chapter's recall and language-model protocols unchanged
(:func:`experiments.recall.train_recall`, :func:`experiments.lm.train_lm`) with the
mixer of :mod:`experiments.ssm`. They go through the thin wrappers below because a
run's cache key covers the code of the module that defines its function and what that
module imports: a wrapper here imports :mod:`experiments.ssm`, so editing the mixer
retrains its runs, while the attention and convolution runs stay cached.

A hybrid has a different mixer per block (e.g. an SSM block, then an attention block),
which :class:`experiments.modules.MixerLM` cannot express; :class:`LayeredLM` is that
model, and :func:`train_recall_layers` the recall protocol for it, step for step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from experiments.lm import LMConfig, train_lm
from experiments.modules import NORMS, MixerBlock, MixerLM, MixerSpec, count_params
from experiments.recall import (
    EVAL_SEED,
    N_SYMBOLS,
    RecallConfig,
    _accuracy_by_pair,
    distances,
    recall_batch,
    train_recall,
)
from experiments.seeding import deterministic
from experiments.ssm import SSMSpec


def train_recall_ssm(cfg: RecallConfig, seed: int) -> dict:
    """:func:`experiments.recall.train_recall` for a config whose mixer is an :class:`SSMSpec`."""
    return train_recall(cfg, seed)


def train_lm_ssm(cfg: LMConfig, seed: int) -> dict:
    """:func:`experiments.lm.train_lm` for a config whose mixer is an :class:`SSMSpec`."""
    return train_lm(cfg, seed)


@dataclass(frozen=True)
class HybridSpec:
    """One mixer spec per block, bottom first, e.g. ``(SSMSpec(), MHA)``."""

    layers: tuple[MixerSpec | SSMSpec, ...]
    kind: str = "hybrid"

    def to_dict(self) -> dict:
        return asdict(self)


class LayeredLM(MixerLM):
    """:class:`MixerLM` with block i's mixer built from ``spec.layers[i]``.

    Parameters are created in MixerLM's order (embedding, blocks, norm, head), so with
    every layer the same spec it is the same model, weight for weight.
    """

    def __init__(self, vocab_size: int, spec: HybridSpec, dim: int = 64, norm: str = "rms"):
        nn.Module.__init__(self)
        self.embed = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList(MixerBlock(dim, s.build(dim), norm) for s in spec.layers)
        self.norm = NORMS[norm](dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)


def train_recall_layers(cfg: RecallConfig, seed: int) -> dict:
    """The recall protocol of :func:`experiments.recall.train_recall` for a :class:`LayeredLM`.

    ``cfg.mixer`` is a :class:`HybridSpec` with ``cfg.n_layers`` layers. Returns the
    same keys as ``train_recall`` without the attention probe.

    Raises:
        ValueError: if the spec's layer count differs from ``cfg.n_layers``.
    """
    if len(cfg.mixer.layers) != cfg.n_layers:
        raise ValueError(f"{len(cfg.mixer.layers)} layer specs for {cfg.n_layers} layers")
    deterministic(seed)
    gen = torch.Generator().manual_seed(seed)
    model = LayeredLM(2 * N_SYMBOLS, cfg.mixer, cfg.dim)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    for _ in range(cfg.steps):
        x, answer, _ = recall_batch(cfg.batch_size, gen)
        loss = F.cross_entropy(model(x)[:, -1], answer)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    eval_gen = torch.Generator().manual_seed(EVAL_SEED + seed)
    accuracy, counts = _accuracy_by_pair(model, *recall_batch(cfg.eval_examples, eval_gen))
    return {
        "params": count_params(model),
        "distances": distances(),
        "accuracy": accuracy,
        "counts": counts,
        "mean_accuracy": sum(accuracy) / len(accuracy),
        "final_train_loss": loss.item(),
    }
