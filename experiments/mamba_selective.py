"""Which parts of Mamba's recurrence the current token sets, read from transformers' MambaMixer.

The mixer runs for real (a tiny width, random weights, Mamba 130M's layout: state 16,
kernel 4, expand 2) on two inputs that differ only in their last token. A spy on the
selective scan transformers calls records what the mixer hands it: the step before its
softplus, the continuous A (from A_log) and B and C per token. The scan's own
discretisation, exp(softplus(step) * A) for A and softplus(step) * B for B, gives the
discrete A and B of the recurrence h_t = A_t h_(t-1) + B_t x_t.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

SIZES = dict(hidden_size=32, state_size=16, num_hidden_layers=1, conv_kernel=4, expand=2,
             vocab_size=64, time_step_rank="auto", use_conv_bias=True)  # fmt: skip


def build_mixer(seed: int = 0):
    """One MambaMixer of the tiny Mamba, random weights, in float64."""
    from transformers import MambaConfig
    from transformers.models.mamba.modeling_mamba import MambaMixer

    torch.manual_seed(seed)
    return MambaMixer(MambaConfig(**SIZES), layer_idx=0).double().eval()


def _scan_inputs(mixer, x: torch.Tensor) -> dict:
    """What the mixer hands its selective scan for input x (1, T, d), discretised as it does."""
    from transformers.models.mamba import modeling_mamba

    seen, real = {}, modeling_mamba.mamba_selective_scan

    def spy(hidden_states, dt, A, B, C, *args, delta_bias=None, **kwargs):
        seen.update(dt=dt, A=A, B=B, C=C, delta_bias=delta_bias)
        return real(hidden_states, dt, A, B, C, *args, delta_bias=delta_bias, **kwargs)

    modeling_mamba.mamba_selective_scan = spy
    try:
        with torch.no_grad():
            mixer(x)
    finally:
        modeling_mamba.mamba_selective_scan = real
    step = F.softplus(seen["dt"] + seen["delta_bias"][..., None])  # (1, d_inner, T)
    A = seen["A"]  # (d_inner, N): no batch or time axis
    return {
        "A": A,
        "discrete A": torch.exp(A[None, :, None, :] * step[..., None]),  # (1, d_inner, T, N)
        "B": seen["B"],  # (1, N, T)
        "discrete B": step[..., None] * seen["B"][:, None].transpose(-1, -2),
        "C": seen["C"],
        "step": step,
    }


def token_dependence(seed: int = 0, seq_len: int = 6) -> dict:
    """How much each part of the recurrence at the last position moves when only the last
    token changes (largest absolute change), and at the first position (causality: 0)."""
    mixer = build_mixer(seed)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(1, seq_len, SIZES["hidden_size"], generator=gen, dtype=torch.float64)
    y = x.clone()
    y[0, -1] = torch.randn(SIZES["hidden_size"], generator=gen, dtype=torch.float64)
    a, b = _scan_inputs(mixer, x), _scan_inputs(mixer, y)

    def change(part: str, t: int) -> float:
        """Largest change of ``part`` at position t (the time axis is -2 once discretised)."""
        at = (..., t, slice(None)) if part.startswith("discrete") else (..., t)
        return (a[part][at] - b[part][at]).abs().max().item()

    parts = ("discrete A", "discrete B", "B", "C", "step")
    return {
        "A shape": list(a["A"].shape),
        "A changes": (a["A"] - b["A"]).abs().max().item(),
        **{f"{part} changes at the last token": change(part, -1) for part in parts},
        "discrete A changes at the first token": change("discrete A", 0),
    }
