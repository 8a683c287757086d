"""Batch normalization and inverted dropout as plain numpy functions.

The claim tests in tests/claims/ call these; the book's ``packages`` setting names this
package, so editing a line here re-executes every claim instead of replaying it.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-5  # added to the batch variance before the square root, as frameworks do


def batch_norm(x: np.ndarray, scale=1.0, shift=0.0, eps: float = EPS) -> np.ndarray:
    """Normalize each column of ``x`` (batch, features) over the batch, then scale and shift."""
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    return scale * (x - mean) / np.sqrt(var + eps) + shift


def batch_norm_state(features: int) -> dict[str, tuple[np.ndarray, bool]]:
    """A batch-norm layer's numbers: name -> (array, trained by gradient descent?)."""
    return {
        "scale": (np.ones(features), True),
        "shift": (np.zeros(features), True),
        "running mean": (np.zeros(features), False),
        "running variance": (np.ones(features), False),
    }


def dropout(x: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """Inverted dropout: zero each entry with probability ``p``, scale the rest by 1/(1-p)."""
    keep = rng.random(x.shape) >= p
    return x * keep / (1.0 - p)


def dropout_mean_ratio(seed: int, p: float = 0.5, size: int = 20_000) -> float:
    """The mean of a layer's activations with dropout over their mean without it.

    The activations are ReLU outputs of standard normal pre-activations, drawn from the
    seed, as is the dropout mask.
    """
    rng = np.random.default_rng(seed)
    activations = np.maximum(rng.normal(size=size), 0.0)
    return float(dropout(activations, p, rng).mean() / activations.mean())
