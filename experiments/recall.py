"""Associative recall: find the value paired with a queried key.

A sequence holds 10 key-value pairs then a query key, and the model must
output the queried key's value (Ba et al., 2016; Arora et al., 2023). Keys are
tokens 0-15, values 16-31, and no key repeats within a sequence. Example with
keys written kN and values vN::

    k7 v3  k2 v9  k5 v1  ...  k4 v6 | k2   ->  v9

The query sits at position 20; the key of pair i (counted from 0) at 2i, so
it lies 20 - 2i tokens back: 20 for the first pair, 2 for the last.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from experiments.modules import MixerLM, MixerSpec, count_params
from experiments.seeding import deterministic

N_PAIRS = 10  # key-value pairs per sequence
N_SYMBOLS = 16  # distinct keys, and distinct values
EVAL_SEED = 99  # fresh evaluation examples, shifted by the seed offset
HEATMAP_SEED = 5  # the chapter's single inspected example, shifted likewise
PROBE_SEED = 7  # ours: fresh sequences for the layer-2 attention probe, shifted likewise


@dataclass(frozen=True)
class RecallConfig:
    """One recall training run of the chapter; with a seed, it fixes the result."""

    mixer: MixerSpec
    dim: int = 64  # model width
    n_layers: int = 2  # blocks
    steps: int = 1000  # AdamW updates
    batch_size: int = 64  # sequences per update
    lr: float = 3e-3  # constant learning rate, weight decay 0
    eval_examples: int = 4000  # fresh sequences for accuracy by distance
    probe_examples: int = 1000  # fresh sequences for the layer-2 attention probe

    def to_dict(self) -> dict:
        return asdict(self)


def distances() -> list[int]:
    """Tokens between the query and the key of each pair: [20, 18, ..., 2]."""
    return [2 * (N_PAIRS - i) for i in range(N_PAIRS)]


def recall_batch(batch: int, gen: torch.Generator):
    """Draw ``batch`` recall sequences from ``gen``.

    Returns (x, answer, which): x (batch, 21) int64 tokens, answer (batch,) the
    queried value's token, which (batch,) the queried pair's index 0-9.
    Draw order (per-row key permutations, values, queried pair) is the chapter's.
    """
    keys = torch.stack([torch.randperm(N_SYMBOLS, generator=gen)[:N_PAIRS] for _ in range(batch)])
    values = torch.randint(N_SYMBOLS, (batch, N_PAIRS), generator=gen) + N_SYMBOLS
    which = torch.randint(N_PAIRS, (batch,), generator=gen)
    rows = torch.arange(batch)
    pairs = torch.stack([keys, values], dim=2).flatten(1)  # (batch, 20): k v k v ...
    x = torch.cat([pairs, keys[rows, which, None]], dim=1)  # (batch, 21)
    return x, values[rows, which], which


def _accuracy_by_pair(model, x, answer, which) -> tuple[list[float], list[int]]:
    with torch.no_grad():
        pred = model(x)[:, -1].argmax(-1)
    accuracy, counts = [], []
    for i in range(N_PAIRS):
        asked = which == i
        counts.append(int(asked.sum()))
        accuracy.append((pred[asked] == answer[asked]).float().mean().item())
    return accuracy, counts


def _layer2_attention_at_query(model: MixerLM, x: torch.Tensor) -> torch.Tensor:
    """Attention weights of the last block at the query position, (B, heads, T)."""
    captured = {}
    mixer = model.blocks[-1].mixer
    handle = mixer.register_forward_hook(lambda m, inp, out: captured.update(h=inp[0]))
    with torch.no_grad():
        model(x)
        weights = mixer.attention_weights(captured["h"])  # (B, H, T, T)
    handle.remove()
    return weights[:, :, -1, :]


def _induction_probe(model: MixerLM, cfg: RecallConfig, seed: int) -> dict:
    """Where layer 2 looks from the query: the chapter's example and many fresh ones.

    The correct target is the value token right after the matching key, at
    position 2 * which + 1.
    """
    x, _, which = recall_batch(1, torch.Generator().manual_seed(HEATMAP_SEED + seed))
    example = _layer2_attention_at_query(model, x)[0]  # (H, T)
    probe_gen = torch.Generator().manual_seed(PROBE_SEED + seed)
    xs, _, whichs = recall_batch(cfg.probe_examples, probe_gen)
    weights = _layer2_attention_at_query(model, xs)  # (N, H, T)
    target = 2 * whichs + 1
    hits = weights.argmax(-1) == target[:, None]  # (N, H)
    return {
        "example_tokens": x[0].tolist(),
        "example_pair": int(which),
        "example_weights": example.tolist(),
        "example_argmax_is_value": (example.argmax(-1) == 2 * which + 1).tolist(),
        "fraction_argmax_on_value": hits.float().mean(0).tolist(),  # per head
        "mean_weight_on_value": weights.gather(
            2, target[:, None, None].expand(-1, weights.shape[1], 1)
        )
        .mean((0, 2))
        .tolist(),
    }


def train_recall(cfg: RecallConfig, seed: int) -> dict:
    """Train a recall model and measure its accuracy by distance, as plain data.

    Seed offset ``seed``: model init and training batches use ``seed``, the
    4,000 evaluation sequences ``99 + seed``.

    Returns ``params``, ``distances`` (tokens), ``accuracy`` (per distance, the
    same order), ``counts`` (evaluation sequences per distance), ``mean_accuracy``,
    ``final_train_loss`` (nats) and, for attention models, ``probe`` (layer-2
    attention at the query position; see ``_induction_probe``).
    """
    deterministic(seed)
    gen = torch.Generator().manual_seed(seed)
    model = MixerLM(2 * N_SYMBOLS, cfg.mixer, cfg.dim, cfg.n_layers)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    for _ in range(cfg.steps):
        x, answer, _ = recall_batch(cfg.batch_size, gen)
        loss = F.cross_entropy(model(x)[:, -1], answer)  # only the query's prediction counts
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    x, answer, which = recall_batch(
        cfg.eval_examples, torch.Generator().manual_seed(EVAL_SEED + seed)
    )
    accuracy, counts = _accuracy_by_pair(model, x, answer, which)
    result = {
        "params": count_params(model),
        "distances": distances(),
        "accuracy": accuracy,
        "counts": counts,
        "mean_accuracy": sum(accuracy) / len(accuracy),
        "final_train_loss": loss.item(),
    }
    if cfg.mixer.kind == "attention":
        result["probe"] = _induction_probe(model, cfg, seed)
    return result
