"""Measuring how work and memory grow: FLOP counts, peak tensor memory, growth exponents."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode


def count_flops(fn: Callable[[], object]) -> int:
    """Floating-point operations of the matrix products ``fn()`` dispatches.

    Uses torch's own FlopCounterMode (a multiply-add counts 2); element-wise
    work such as softmax is not counted. Works on the meta device, where shapes
    propagate without computing, so very long contexts cost nothing.
    """
    counter = FlopCounterMode(display=False)
    with counter:
        fn()
    return counter.get_total_flops()


class PeakMemory(TorchDispatchMode):
    """Peak bytes of tensor storage created inside the ``with`` block and alive at once.

    Tracks every storage an operator returns, drops it when torch frees it
    (a weak reference to the storage), and keeps the running maximum in
    ``peak`` (bytes). Inputs created before the block are not counted, so this
    is the extra memory an algorithm needs: what FlashAttention's O(n) is about.
    """

    def __init__(self):
        super().__init__()
        self.peak = 0
        self._live: dict[int, tuple[StorageWeakRef, int]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self._live = {k: v for k, v in self._live.items() if not v[0].expired()}
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                ref = StorageWeakRef(storage)
                self._live.setdefault(ref.cdata, (ref, storage.nbytes()))
        self.peak = max(self.peak, sum(size for _, size in self._live.values()))
        return out


def peak_memory(fn: Callable[[], object]) -> int:
    """Peak extra tensor bytes while running ``fn()`` (see :class:`PeakMemory`)."""
    with PeakMemory() as tracker:
        fn()
    return tracker.peak


def growth_exponent(sizes: list[float], costs: list[float]) -> float:
    """Least-squares slope of log(cost) against log(size): p in cost ~ size**p.

    Raises ValueError with fewer than two sizes or a non-positive value.
    """
    if len(sizes) < 2 or min(sizes) <= 0 or min(costs) <= 0:
        raise ValueError(f"need two or more positive sizes and costs, got {sizes}, {costs}")
    slope, _ = np.polyfit(np.log(sizes), np.log(costs), 1)
    return float(slope)


def paired_times(
    fns: dict[str, Callable[[], object]],
    repetitions: int = 15,
    calls: int = 20,
    sync: Callable[[], object] = lambda: None,
) -> dict[str, list[float]]:
    """Seconds per call of each function in every repetition, timed back to back in
    rotating order (index i of every list is repetition i: pair them by index).

    Each repetition times ``calls`` calls of every function; interleaving keeps
    slow drifts of a shared machine out of the comparison. ``sync`` runs before and
    after each timed block (on a GPU, whose work is asynchronous: its synchronisation).
    """
    names = list(fns)
    for fn in fns.values():  # warm-up
        fn()
    per_rep: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(repetitions):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            sync()
            start = time.perf_counter()
            for _ in range(calls):
                fns[name]()
            sync()
            per_rep[name].append((time.perf_counter() - start) / calls)
    return per_rep
