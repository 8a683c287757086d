"""Helpers of tests/claims/test_dd2_attention_deep_dive.py: the computations behind its claims
that are not what a claim states (random inputs, loops over sizes, sums of timings)."""

from __future__ import annotations

import statistics

import pytest
import torch

from experiments.gpt2 import SelfAttention
from experiments.kv_cache import measured_kv_bytes
from experiments.local import banded_local_attention
from experiments.profiling import count_flops, peak_memory
from experiments.seeding import deterministic
from experiments.tiled import standard_attention, tiled_attention

EXPONENT_TOLERANCE = 0.1  # a fitted exponent within 0.1 of 1 (or 2) is linear (or quadratic)


def near(exponent: float, target: float) -> bool:
    """Whether a fitted growth exponent is within EXPONENT_TOLERANCE of ``target``."""
    return abs(exponent - target) <= EXPONENT_TOLERANCE


def largest_gap(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest elementwise |a - b|."""
    return (a - b).abs().max().item()


def normals(seed: int, *shape: int, n: int = 1):
    """``n`` float64 standard-normal tensors of ``shape`` drawn in turn from one generator
    seeded ``seed`` (the tensor itself when n is 1)."""
    gen = torch.Generator().manual_seed(seed)
    draws = [torch.randn(*shape, generator=gen, dtype=torch.float64) for _ in range(n)]
    return draws[0] if n == 1 else draws


def token_ids(seed: int, vocab: int, length: int) -> torch.Tensor:
    """2 x ``length`` random token ids below ``vocab`` from a generator seeded ``seed``."""
    return torch.randint(vocab, (2, length), generator=torch.Generator().manual_seed(seed))


def allowed_positions(seed: int) -> list[list[int]]:
    """Whether each of 4 queries gives any weight to each key (1 or 0) in the article's
    attention layer (width 64, 4 heads), head 0, after seeding everything with ``seed``."""
    deterministic(seed)
    trace: dict = {}
    SelfAttention(64, 4)(torch.randn(1, 4, 64), trace=trace)
    return (trace["weights"][0, 0] > 0).int().tolist()


def change_before_edit(model: torch.nn.Module, idx: torch.Tensor, vocab: int) -> float:
    """The largest change of any output before position t when every token from t on is
    replaced, over t = 1 .. T-1 (model in float64, eval mode, no gradients)."""
    model = model.double().eval()
    changed = []
    with torch.no_grad():
        base = model(idx)
        for t in range(1, idx.shape[1]):
            other = idx.clone()
            other[:, t:] = (other[:, t:] + 1) % vocab
            changed.append((model(other)[:, :t] - base[:, :t]).abs().max().item())
    return max(changed)


def llama7b_kv_bytes(tokens: int) -> int:
    """LLaMA 7B's fp16 KV cache (32 layers, 32 heads of 128) over ``tokens``, in bytes,
    measured from real attention layers."""
    return measured_kv_bytes(32, 32, 32, 128, seq_len=tokens)


def mha_kv_bytes(n_layers: int, d_model: int, tokens: int) -> int:
    """The fp16 KV cache of ``n_layers`` layers whose every head (of width 128, d_model/128
    of them) keeps its keys and values, over ``tokens``, in bytes."""
    heads = d_model // 128
    return measured_kv_bytes(n_layers, heads, heads, 128, seq_len=tokens)


def attention_peaks(lengths: list[int]) -> dict[str, list[int]]:
    """Peak bytes of the tensors standard and tiled attention (blocks of 128) create for one
    float32 head of width 64, per sequence length (inputs from torch's seed 0)."""
    torch.manual_seed(0)
    peaks: dict[str, list[int]] = {"standard": [], "tiled": []}
    for n in lengths:
        q, k, v = (torch.randn(1, n, 64) for _ in range(3))
        peaks["standard"].append(peak_memory(lambda q=q, k=k, v=v: standard_attention(q, k, v)))
        peaks["tiled"].append(peak_memory(lambda q=q, k=k, v=v: tiled_attention(q, k, v, 128)))
    return peaks


def banded_flops(lengths: list[int], window: int) -> list[int]:
    """FLOPs of banded local attention of ``window`` for one head of width 64, per length,
    counted on the meta device."""
    flops = []
    for n in lengths:
        with torch.device("meta"):
            q, k, v = (torch.empty(1, n, 64) for _ in range(3))
            flops.append(count_flops(lambda q=q, k=k, v=v: banded_local_attention(q, k, v, window)))
    return flops


def speedups_per_repetition(times: dict, lengths: list[int]) -> list[float]:
    """Standard attention's time over FlashAttention's in each repetition, each kernel's
    times summed over ``lengths`` (times: kernel -> length -> one time per repetition)."""
    totals = {
        kernel: [sum(rep) for rep in zip(*(by_length[n] for n in lengths), strict=True)]
        for kernel, by_length in times.items()
    }
    return [s / f for s, f in zip(totals["standard"], totals["flash"], strict=True)]


def median_ratio(slow: list[float], fast: list[float]) -> float:
    """The median over repetitions of slow / fast."""
    return statistics.median([s / f for s, f in zip(slow, fast, strict=True)])


def per_n_w_d(flops: list[int], lengths: list[int], window: int, d: int = 64) -> list[float]:
    """Each FLOP count over n·W·d, its length n times the window W times the width d."""
    return [f / (n * window * d) for f, n in zip(flops, lengths, strict=True)]


def skip_without_cuda(why: str) -> None:
    """Skip the calling test, saying ``why``, on a machine without a CUDA GPU."""
    if not torch.cuda.is_available():
        pytest.skip(why)
