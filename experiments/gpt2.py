"""The GPT-2 small the article describes, built as modules so that its numbers can be counted.

The article's layer (part 7, "Complete layer-by-layer shape trace"): pre-norm
blocks; Q, K, V and O projections without biases; an MLP of 4 * d_model with
biases and GELU; learned position embeddings; a final LayerNorm; the LM head
tied to the token embeddings. Standard (materialised) causal attention, with
an optional KV cache for decoding (part 8, "KV-cache for efficient inference").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class GPT2Config:
    """Sizes of the article's GPT-2; the defaults are GPT-2 small."""

    vocab_size: int = 50257
    n_positions: int = 1024
    d_model: int = 768
    n_heads: int = 12
    n_layers: int = 12
    d_ff: int = 3072


class KVCache:
    """Keys and values of every layer for the tokens decoded so far.

    Per layer, keys and values are (B, n_heads, T, d_head); ``append`` grows T.
    """

    def __init__(self, n_layers: int):
        self.layers: list[tuple[torch.Tensor, torch.Tensor] | None] = [None] * n_layers

    def __len__(self) -> int:
        first = self.layers[0]
        return 0 if first is None else first[0].shape[-2]

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Store this step's k, v (B, H, T_new, d_head); return all of the layer's so far."""
        past = self.layers[layer]
        if past is not None:
            k, v = torch.cat([past[0], k], dim=-2), torch.cat([past[1], v], dim=-2)
        self.layers[layer] = (k, v)
        return k, v

    def nbytes(self) -> int:
        """Bytes the cache holds now."""
        return sum(t.numel() * t.element_size() for kv in self.layers if kv for t in kv)


class SelfAttention(nn.Module):
    """Causal multi-head attention written out: scores, mask, softmax, weighted sum.

    forward(x, cache, layer, trace): x (B, T, d_model) -> (B, T, d_model). With a
    cache, x holds only the new tokens and attends to the cached ones too.
    ``trace`` (a dict) receives the shapes of Q, K, V, the scores and the output,
    and the attention weights themselves (B, H, T, past + T).
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_head).transpose(1, 2)  # (B, H, T, d_head)

    def forward(self, x, cache: KVCache | None = None, layer: int = 0, trace: dict | None = None):
        B, T, C = x.shape
        q, k, v = self._heads(self.W_Q(x)), self._heads(self.W_K(x)), self._heads(self.W_V(x))
        if cache is not None:
            k, v = cache.append(layer, k, v)
        past = k.shape[-2] - T  # cached positions before these queries
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, H, T, past + T)
        future = torch.ones(T, past + T, dtype=torch.bool, device=x.device).triu(past + 1)
        weights = scores.masked_fill(future, float("-inf")).softmax(-1)
        out = self.W_O((weights @ v).transpose(1, 2).reshape(B, T, C))
        if trace is not None:
            trace.update(Q=q.shape, K=k.shape, V=v.shape, scores=scores.shape, output=out.shape)
            trace["weights"] = weights.detach()
        return out


class Block(nn.Module):
    """Pre-norm block: ``x + attn(ln_1(x))`` then ``x + mlp(ln_2(x))``."""

    def __init__(self, cfg: GPT2Config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg.d_model, cfg.n_heads)
        self.ln_2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model)
        )

    def forward(self, x, cache=None, layer=0, trace=None):
        x = x + self.attn(self.ln_1(x), cache, layer, trace)
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """The article's GPT-2: token and position embeddings, blocks, final LayerNorm, tied head.

    forward(idx, cache): idx (B, T) int64 -> logits (B, T, vocab_size). With a
    :class:`KVCache`, idx holds only the new tokens, placed after the cached ones.

    Raises:
        ValueError: if the sequence would pass ``n_positions``.
    """

    def __init__(self, cfg: GPT2Config = GPT2Config()):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.n_positions, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)

    def forward(self, idx: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        start = len(cache) if cache is not None else 0
        T = idx.shape[1]
        if start + T > self.cfg.n_positions:
            raise ValueError(f"{start + T} positions exceed n_positions={self.cfg.n_positions}")
        x = self.wte(idx) + self.wpe(torch.arange(start, start + T, device=idx.device))
        for i, block in enumerate(self.blocks):
            x = block(x, cache, i)
        return F.linear(self.ln_f(x), self.wte.weight)  # the head shares the token embeddings


def parameter_breakdown(cfg: GPT2Config = GPT2Config()) -> dict[str, int]:
    """Parameters of each part of the article's GPT-2, counted on real modules.

    Built on the meta device (shapes only, no memory). Keys: token_embeddings,
    position_embeddings, embeddings, attention (one layer's attention and its
    LayerNorm), mlp (one layer's MLP and its LayerNorm), layer, layers (all),
    final_norm, total (each tensor once; the tied head adds nothing).
    """
    with torch.device("meta"):
        model = GPT2(cfg)

    def count(*modules: nn.Module) -> int:
        return sum(p.numel() for m in modules for p in m.parameters())

    block = model.blocks[0]
    return {
        "token_embeddings": count(model.wte),
        "position_embeddings": count(model.wpe),
        "embeddings": count(model.wte, model.wpe),
        "attention": count(block.ln_1, block.attn),
        "mlp": count(block.ln_2, block.mlp),
        "layer": count(block),
        "layers": count(*model.blocks),
        "final_norm": count(model.ln_f),
        "total": count(model),
    }


def layer_trace(cfg: GPT2Config = GPT2Config(), seq_len: int = 512, seed: int = 0) -> dict:
    """Shapes through one real block of ``cfg`` on a (1, seq_len, d_model) random input.

    Returns lists for Q, K, V (1, n_heads, seq_len, d_head), scores
    (1, n_heads, seq_len, seq_len), attention output and block output (1, seq_len, d_model).
    """
    gen = torch.Generator().manual_seed(seed)
    block = Block(cfg)
    trace: dict = {}
    with torch.no_grad():
        out = block(torch.randn(1, seq_len, cfg.d_model, generator=gen), trace=trace)
    shapes = {k: list(v) for k, v in trace.items() if k != "weights"}
    return {**shapes, "block_output": list(out.shape)}
