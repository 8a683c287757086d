"""A small selective state-space mixer (the chapter's step 5), in the Mamba style.

The state update is the chapter's linear recurrence ``h_t = A_t h_(t-1) + B_t x_t``
where, as in Mamba (Gu and Dao, 2023), ``A_t`` and ``B_t`` depend on the current
token, so the model chooses what to write into its state and what to forget.
This version is diagonal in the simplest way, the one Mamba-2 (Dao and Gu, 2024)
uses: per head, ``A_t = a_t * I`` with a token-dependent decay ``a_t`` in (0, 1).

Per head (width P = dim / n_heads) the state is a P x N matrix, N = ``state``:

    a_t = exp(-softplus(dt_t) * exp(A_log))       decay, from the token
    h_t = a_t h_(t-1) + softplus(dt_t) x_t B_t^T   write x_t under the key B_t (N wide)
    y_t = h_t C_t + D x_t                          read with the query C_t (N wide)

so the whole layer keeps dim x N numbers however long the sequence is. Before it,
a short causal depthwise convolution (kernel 4) lets each token see its neighbours,
and its output is gated by ``silu(z)``, as in a Mamba block. Training uses the
equivalent parallel form (a causal, decay-weighted ``C B^T`` matrix, exact and
stable because only decays between s <= t are exponentiated); :func:`scan` is the
step-by-step recurrence, which the unit tests check it against.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


class SelectiveSSM(nn.Module):
    """Selective diagonal state-space mixer. Input and output (B, T, dim).

    Args:
        dim: model width; must be divisible by ``n_heads``.
        state: N, the width of each head's keys B_t and queries C_t (state per layer dim x N).
        n_heads: heads, each with its own decay.
        kernel: width of the causal depthwise convolution before the recurrence.

    Raises:
        ValueError: if dim is not divisible by n_heads.
    """

    def __init__(self, dim: int, state: int = 16, n_heads: int = 4, kernel: int = 4):
        super().__init__()
        if dim % n_heads:
            raise ValueError(f"dim {dim} is not divisible by n_heads {n_heads}")
        self.state, self.n_heads, self.head_dim = state, n_heads, dim // n_heads
        self.pad = kernel - 1
        self.x_proj = nn.Linear(dim, dim, bias=False)
        self.z_proj = nn.Linear(dim, dim, bias=False)  # the gate
        self.conv = nn.Conv1d(dim, dim, kernel, groups=dim, bias=False)  # depthwise, causal
        self.b_proj = nn.Linear(dim, state, bias=False)  # what to write under (shared by heads)
        self.c_proj = nn.Linear(dim, state, bias=False)  # what to read with
        self.dt_proj = nn.Linear(dim, n_heads, bias=False)  # how much to write and to forget
        # Mamba's initialisation, made deterministic: step sizes softplus(dt_bias) spread
        # geometrically over [0.001, 0.1], decay rates exp(A_log) = 1 .. n_heads
        steps = torch.logspace(math.log10(1e-3), math.log10(1e-1), n_heads)
        self.dt_bias = nn.Parameter(steps + torch.log(-torch.expm1(-steps)))  # softplus^-1
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n_heads + 1, dtype=torch.float32)))
        self.D = nn.Parameter(torch.ones(n_heads))  # skip connection per head
        self.out = nn.Linear(dim, dim, bias=False)

    def inputs(self, u: torch.Tensor):
        """The recurrence's inputs from u (B, T, dim).

        Returns (x, log_a, dt, Bk, Cq, z): x (B, T, H, P); log_a and dt (B, T, H), the log
        decay (< 0) and step size; Bk, Cq (B, T, N); z (B, T, dim), the gate's input.
        """
        Bsz, T, _ = u.shape
        x = F.pad(self.x_proj(u).transpose(1, 2), (self.pad, 0))  # (B, dim, T + pad)
        x = F.silu(self.conv(x).transpose(1, 2))  # (B, T, dim): sees tokens t-3 .. t
        dt = F.softplus(self.dt_proj(x) + self.dt_bias)  # (B, T, H), > 0
        log_a = -dt * self.A_log.exp()  # (B, T, H)
        heads = x.view(Bsz, T, self.n_heads, self.head_dim)
        return heads, log_a, dt, self.b_proj(x), self.c_proj(x), self.z_proj(u)

    def mix(self, x, log_a, dt, Bk, Cq) -> torch.Tensor:
        """Parallel form: y_t = sum_(s<=t) exp(L_t - L_s) (C_t . B_s) dt_s x_s, L = cumsum(log a).

        Shapes as returned by :meth:`inputs`; returns (B, T, H, P), without the skip term.
        """
        T = x.shape[1]
        L = log_a.cumsum(1).transpose(1, 2)  # (B, H, T)
        past = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # s <= t
        gap = (L[..., :, None] - L[..., None, :]).masked_fill(~past, float("-inf"))
        weights = gap.exp() * (Cq @ Bk.transpose(1, 2))[:, None]  # (B, H, T, T)
        values = (x * dt[..., None]).transpose(1, 2)  # (B, H, T, P)
        return (weights @ values).transpose(1, 2)  # (B, T, H, P)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        x, log_a, dt, Bk, Cq, z = self.inputs(u)
        y = self.mix(x, log_a, dt, Bk, Cq) + self.D[:, None] * x  # (B, T, H, P)
        return self.out(y.flatten(2) * F.silu(z))


def scan(x, log_a, dt, Bk, Cq) -> torch.Tensor:
    """The same mixing step by step: ``h_t = a_t h_(t-1) + dt_t x_t B_t^T``, ``y_t = h_t C_t``.

    Shapes as :meth:`SelectiveSSM.inputs` returns them; returns (B, T, H, P). The state
    h is (B, H, P, N) at every step: fixed, whatever T is.
    """
    Bsz, T, H, P = x.shape
    h = x.new_zeros(Bsz, H, P, Bk.shape[-1])
    ys = []
    for t in range(T):
        a = log_a[:, t].exp()[:, :, None, None]  # (B, H, 1, 1)
        write = (dt[:, t, :, None] * x[:, t])[..., None] * Bk[:, t, None, None, :]
        h = a * h + write  # (B, H, P, N)
        ys.append(h @ Cq[:, t, None, :, None])  # (B, H, P, 1)
    return torch.stack(ys, 1).squeeze(-1)


@dataclass(frozen=True)
class SSMSpec:
    """The selective SSM as a mixer spec (plain data, part of a run's cache key).

    Usable wherever a :class:`experiments.modules.MixerSpec` is: ``build(dim)`` gives a
    fresh mixer, so ``MixerLM(vocab, SSMSpec(state=16))`` is the chapter's skeleton
    with this mixer in every block.
    """

    state: int = 16
    n_heads: int = 4
    kernel: int = 4

    @property
    def kind(self) -> str:
        """The mixer's name in run labels; it names the state size, which tells runs apart."""
        return f"ssm, state {self.state}"

    def build(self, dim: int) -> nn.Module:
        return SelectiveSSM(dim, self.state, self.n_heads, self.kernel)

    def to_dict(self) -> dict:
        return asdict(self)
