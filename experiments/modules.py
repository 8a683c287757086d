"""The chapter's model skeleton and its three token mixers.

Every linear layer is bias-free and keeps PyTorch's default initialisation;
parameters are created in the order the chapter's protocol fixes (embedding;
per block norm, mixer, norm, feed-forward; final norm; head), because that
order decides which random numbers each weight receives.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    """Root-mean-square normalisation with a learned gain (Zhang and Sennrich, 2019).

    ``y = weight * x * rsqrt(mean(x**2) + eps)`` over the last dimension;
    input and output (..., dim).
    """

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class SwiGLU(nn.Module):
    """Gated feed-forward layer (Shazeer, 2020): ``down(silu(gate(x)) * up(x))``.

    Hidden width int(8 * dim / 3) gives the parameters of a 4x plain MLP.
    Input and output (..., dim).
    """

    def __init__(self, dim: int):
        super().__init__()
        hidden = int(8 * dim / 3)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class GELUMLP(nn.Module):
    """GPT-2's feed-forward layer without biases: ``fc2(gelu(fc1(x)))``, hidden width 4 * dim.

    2 * 4 * dim**2 parameters, the count SwiGLU's 8/3 width is chosen to match.
    Input and output (..., dim).
    """

    def __init__(self, dim: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim, bias=False)
        self.fc2 = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


# Normalisation and feed-forward choices of a block, by name (a run's config holds the name).
NORMS = {"rms": RMSNorm, "layer": nn.LayerNorm}
FEED_FORWARDS = {"swiglu": SwiGLU, "gelu": GELUMLP}


def apply_rope(x: torch.Tensor) -> torch.Tensor:
    """Rotary position encoding (Su et al., 2021), half-split layout.

    x: (..., T, head_dim) with head_dim even; position t rotates channel pair
    (i, i + half) by the angle t * 10000**(-i / half). Returns the same shape.
    """
    seq, dim = x.shape[-2], x.shape[-1]
    half = dim // 2
    # angles in float32 at least (float64 for float64 inputs); 16-bit angles would be wrong
    angle_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    idx = torch.arange(half, device=x.device, dtype=angle_dtype)
    freqs = 10000 ** (-idx / half)
    angles = torch.arange(seq, device=x.device, dtype=angle_dtype)[:, None] * freqs[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, half), x's dtype
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class CausalConv(nn.Module):
    """Causal 1-D convolution: output t mixes inputs t-k+1 .. t with shared weights.

    Input and output (B, T, dim). ``dilation`` spaces the taps (WaveNet, 2016);
    the left padding of (k-1)*dilation zeros keeps every output blind to the future.
    """

    def __init__(self, dim: int, kernel: int = 4, dilation: int = 1):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.conv = nn.Conv1d(dim, dim, kernel, dilation=dilation, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.pad(x.transpose(1, 2), (self.pad, 0))  # (B, dim, T + pad)
        return self.conv(x).transpose(1, 2)  # (B, T, dim)


class LSTMMixer(nn.Module):
    """LSTM (Hochreiter and Schmidhuber, 1997) of width int(0.56 * dim), projected back to dim.

    The narrow state keeps the parameter count near a kernel-4 convolution's
    4 * dim**2. Input and output (B, T, dim).
    """

    def __init__(self, dim: int):
        super().__init__()
        hidden = int(0.56 * dim)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        states, _ = self.lstm(x)  # (B, T, hidden), computed left to right
        return self.out(states)


class Attention(nn.Module):
    """Causal multi-head self-attention with RoPE and ``n_kv_heads`` key-value heads.

    ``n_kv_heads == n_heads`` is MHA (Vaswani et al., 2017), ``1`` is MQA
    (Shazeer, 2019), anything between is GQA (Ainslie et al., 2023): each kv
    head serves n_heads / n_kv_heads consecutive query heads. Input and output
    (B, T, dim).

    Raises:
        ValueError: if dim is not divisible by n_heads or n_heads by n_kv_heads.
    """

    def __init__(self, dim: int, n_heads: int = 4, n_kv_heads: int | None = None):
        super().__init__()
        n_kv_heads = n_kv_heads or n_heads
        if dim % n_heads or n_heads % n_kv_heads:
            raise ValueError(
                f"need dim % n_heads == 0 and n_heads % n_kv_heads == 0, got "
                f"dim={dim}, n_heads={n_heads}, n_kv_heads={n_kv_heads}"
            )
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * n_kv_heads * self.head_dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def queries(self, x: torch.Tensor) -> torch.Tensor:
        """Rotated queries, (B, n_heads, T, head_dim)."""
        B, T, _ = x.shape
        return apply_rope(self.q(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2))

    def keys_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotated keys and values, each (B, n_kv_heads, T, head_dim): what a KV cache stores."""
        B, T, _ = x.shape
        kv = self.kv(x).view(B, T, 2, self.n_kv_heads, self.head_dim)
        k, v = kv.permute(2, 0, 3, 1, 4)  # each (B, n_kv, T, head_dim); keys first
        return apply_rope(k), v

    def attention_weights(self, x: torch.Tensor) -> torch.Tensor:
        """Causal softmax weights, (B, n_heads, T, T); rows sum to 1."""
        q, (k, _) = self.queries(x), self.keys_values(x)
        k = k.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1)
        scores = q @ k.transpose(-2, -1) / self.head_dim**0.5  # (B, H, T, T)
        T = x.shape[1]
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        return scores.masked_fill(future, float("-inf")).softmax(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, (k, v) = self.queries(x), self.keys_values(x)
        share = self.n_heads // self.n_kv_heads
        k, v = k.repeat_interleave(share, dim=1), v.repeat_interleave(share, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, head_dim)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


@dataclass(frozen=True)
class MixerSpec:
    """Which token mixer a model uses, as plain data (part of a run's cache key).

    kind: "conv", "lstm" or "attention"; kernel/dilation apply to "conv",
    n_heads/n_kv_heads to "attention" (n_kv_heads None means n_heads, i.e. MHA).
    """

    kind: str
    kernel: int = 4
    n_heads: int = 4
    n_kv_heads: int | None = None

    def build(self, dim: int) -> nn.Module:
        """A fresh mixer of width ``dim``. Raises ValueError for an unknown kind."""
        if self.kind == "conv":
            return CausalConv(dim, self.kernel)
        if self.kind == "lstm":
            return LSTMMixer(dim)
        if self.kind == "attention":
            return Attention(dim, self.n_heads, self.n_kv_heads)
        raise ValueError(f"unknown mixer kind {self.kind!r}; expected conv, lstm or attention")

    def to_dict(self) -> dict:
        return asdict(self)


CONV = MixerSpec("conv")
LSTM = MixerSpec("lstm")
MHA = MixerSpec("attention", n_heads=4, n_kv_heads=4)
GQA = MixerSpec("attention", n_heads=4, n_kv_heads=2)
MQA = MixerSpec("attention", n_heads=4, n_kv_heads=1)
MIXERS = {"convolution": CONV, "LSTM": LSTM, "attention": MHA}


class MixerBlock(nn.Module):
    """Pre-norm residual block: ``x + mixer(norm(x))`` then ``x + ffn(norm(x))``.

    ``norm`` is a key of :data:`NORMS` (default RMSNorm), ``ffn`` one of
    :data:`FEED_FORWARDS` (default SwiGLU); the defaults are the chapter's block.
    """

    def __init__(self, dim: int, mixer: nn.Module, norm: str = "rms", ffn: str = "swiglu"):
        super().__init__()
        self.norm1 = NORMS[norm](dim)
        self.mixer = mixer
        self.norm2 = NORMS[norm](dim)
        self.ffn = FEED_FORWARDS[ffn](dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.mixer(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class MixerLM(nn.Module):
    """Decoder-only language model whose blocks differ only in their token mixer.

    forward(idx): idx (B, T) int64 token ids -> logits (B, T, vocab_size).
    ``norm`` and ``ffn`` choose every block's layers (see :class:`MixerBlock`).
    """

    def __init__(
        self,
        vocab_size: int,
        mixer: MixerSpec,
        dim: int = 64,
        n_layers: int = 4,
        norm: str = "rms",
        ffn: str = "swiglu",
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList(
            MixerBlock(dim, mixer.build(dim), norm, ffn) for _ in range(n_layers)
        )
        self.norm = NORMS[norm](dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.embed(idx)  # (B, T, dim)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))  # (B, T, vocab)


def count_params(module: nn.Module) -> int:
    """Number of scalar parameters in ``module``."""
    return sum(p.numel() for p in module.parameters())
