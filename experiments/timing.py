"""Per-step training time of the three mixers, measured as paired ratios on one thread.

Wall-clock times on a shared machine drift; what is stable is how the mixers
compare when timed back to back. Each repetition times a few steps of every
mixer in a rotated order, then the ratios of that repetition are taken; the
median over repetitions is reported. Never cached: timings describe this run.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F

from experiments.data import get_batch, shakespeare
from experiments.lm import LMConfig, build_lm


def seconds_per_step(
    configs: dict[str, LMConfig], seed: int, repetitions: int = 7, steps: int = 5, device="cpu"
) -> dict:
    """Time training steps of each config, interleaved, on one CPU thread or a GPU.

    Returns ``seconds`` (name -> median seconds per step) and ``ratios``
    (``"a/b"`` -> median over repetitions of a's time over b's, same repetition).
    A step is a forward, backward and AdamW update on one 32 x 64 batch.
    """
    corpus = shakespeare()
    models = {name: build_lm(cfg, seed).to(device) for name, cfg in configs.items()}
    opts = {name: torch.optim.AdamW(m.parameters(), lr=3e-3) for name, m in models.items()}
    cfg = next(iter(configs.values()))
    gen = torch.Generator().manual_seed(seed)
    x, y = (t.to(device) for t in get_batch(corpus.train, cfg.batch_size, cfg.block_size, gen))
    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    names = list(configs)

    def step(name: str) -> None:
        loss = F.cross_entropy(models[name](x).flatten(0, 1), y.flatten())
        opts[name].zero_grad(set_to_none=True)
        loss.backward()
        opts[name].step()

    for name in names:  # warm-up: allocator and kernel selection
        step(name)
    per_rep: list[dict[str, float]] = []
    for rep in range(repetitions):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        times = {}
        for name in order:
            sync()
            start = time.perf_counter()
            for _ in range(steps):
                step(name)
            sync()  # GPU work is asynchronous: wait for it before reading the clock
            times[name] = (time.perf_counter() - start) / steps
        per_rep.append(times)
    seconds = {n: statistics.median(t[n] for t in per_rep) for n in names}
    ratios = {
        f"{a}/{b}": statistics.median(t[a] / t[b] for t in per_rep)
        for a in names
        for b in names
        if a != b
    }
    return {
        "seconds": seconds, "ratios": ratios, "repetitions": repetitions, "steps": steps,
        "times": {n: [t[n] for t in per_rep] for n in names},  # per repetition, paired by index
    }  # fmt: skip
