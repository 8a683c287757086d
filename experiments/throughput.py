"""Training throughput of the chapter's mixers against the machine's matmul rate.

One thread, float32, the chapter's language model and batch (32 x 64 characters).
A step's FLOPs are counted by torch's FlopCounterMode over its forward and
backward pass (matrix products, convolutions, attention; element-wise work is
not counted; nn.LSTM's and attention's fused CPU kernels are invisible to it,
so those are counted from their shapes). Achieved FLOP/s = FLOPs per step x
steps per second; the ceiling is a large matmul's FLOP/s on the same thread.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from experiments.data import get_batch, shakespeare
from experiments.lm import LMConfig, build_lm
from experiments.modules import Attention
from experiments.profiling import count_flops
from experiments.timing import seconds_per_step


def matmul_flops_per_second(n: int = 1024, repeats: int = 7) -> float:
    """FLOP/s of an (n x n) @ (n x n) float32 product on this thread: 2 n^3 / median seconds."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times)


def uncounted_flops(model: nn.Module, batch: int, length: int) -> int:
    """Forward + backward FLOPs of the kernels FlopCounterMode does not see on a CPU.

    nn.LSTM: per position, the four gates take 2 * 4h * (input + h) FLOPs. The fused
    CPU attention kernel: per sequence and head, QK^T and the weighted sum of V take
    2 * 2 * T^2 * head_dim (all T^2 scores, as torch counts it on a GPU). Backward is
    twice the forward in both (gradients of inputs and of weights).
    """
    total = 0
    for module in model.modules():
        if isinstance(module, nn.LSTM):
            h, d = module.hidden_size, module.input_size
            total += 3 * 2 * 4 * h * (d + h) * batch * length
        elif isinstance(module, Attention):
            total += 3 * 4 * batch * module.n_heads * length**2 * module.head_dim
    return total


def step_flops(cfg: LMConfig, seed: int = 0) -> int:
    """FLOPs of one training step (forward and backward) of ``cfg``'s model on one batch."""
    model = build_lm(cfg, seed)
    gen = torch.Generator().manual_seed(seed)
    x, y = get_batch(shakespeare().train, cfg.batch_size, cfg.block_size, gen)

    def step() -> None:
        F.cross_entropy(model(x).flatten(0, 1), y.flatten()).backward()

    return count_flops(step) + uncounted_flops(model, cfg.batch_size, cfg.block_size)


def mixer_throughput(configs: dict[str, LMConfig], seed: int = 0) -> dict:
    """Steps per second and achieved FLOP/s of each config, and the matmul ceiling.

    Returns ``matmul_flops_per_s`` and, per name, ``flops_per_step``,
    ``seconds_per_step`` (median of interleaved repetitions, AdamW update included),
    ``steps_per_s``, ``flops_per_s`` and ``share_of_matmul`` (achieved / ceiling).
    """
    torch.set_num_threads(1)
    ceiling = matmul_flops_per_second()
    timed = seconds_per_step(configs, seed, repetitions=5, steps=5)["seconds"]
    mixers = {}
    for name, cfg in configs.items():
        flops = step_flops(cfg, seed)
        seconds = timed[name]
        mixers[name] = {
            "flops_per_step": flops,
            "seconds_per_step": seconds,
            "steps_per_s": 1 / seconds,
            "flops_per_s": flops / seconds,
            "share_of_matmul": flops / seconds / ceiling,
        }
    return {"matmul_flops_per_s": ceiling, "mixers": mixers}
