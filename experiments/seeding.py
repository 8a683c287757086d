"""One place that makes an experiment process deterministic."""

from __future__ import annotations

import random

import numpy as np
import torch


def deterministic(seed: int) -> None:
    """Seed every RNG from ``seed`` and pin torch to one deterministic thread.

    One intra-op thread keeps reductions in a fixed order, so the same seed on
    the same machine and torch gives bit-identical numbers (and matches the
    chapter, whose runs use ``torch.set_num_threads(1)``).
    """
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
