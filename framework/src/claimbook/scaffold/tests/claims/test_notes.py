"""The claims of notes.md: one test each, judged by claimbook over seeds.

A claim is a test marked @claim(id, level, at=...): the id's prefix names its source
(declared in pyproject.toml), `at` quotes the line it tests, the docstring is the claim.
"""

import math

import numpy as np
from claimbook import Matches, claim


def softmax(logits: np.ndarray) -> np.ndarray:
    exps = np.exp(logits - logits.max())
    return exps / exps.sum()


@claim("notes.softmax-shift", "established", at="Softmax is unchanged when the same constant")
def test_softmax_ignores_a_shift(measure):
    """Adding one constant to every logit leaves the softmax unchanged."""
    logits = np.array([2.0, -1.0, 0.5, 3.0])
    gap = measure("largest change", float(np.abs(softmax(logits) - softmax(logits + 7.5)).max()))
    assert gap < 1e-12


@claim("notes.dense-params", "established", at="A dense layer from 512 to 2,048 units")
def test_dense_layer_parameters(measure):
    """A dense layer from 512 to 2,048 units has as many parameters as the note prints,
    counting its bias."""
    measure.reproduces("parameters", 512 * 2048 + 2048, printed=1_050_624)


# "about 1": the mean over seeds within 0.1 of 1, declared before any run
@claim("notes.xavier-variance", "likely", at="the outputs have a variance of about 1",
       scope="a 256 x 256 layer, 2,000 standard normal inputs per seed",
       rule=Matches("output variance", value=1.0, margin=0.1))  # fmt: skip
def test_xavier_keeps_the_variance(seed, measure):
    """A square layer with Xavier-normal weights maps inputs of variance 1 to outputs of
    variance about 1."""
    rng = np.random.default_rng(seed)
    weights = rng.normal(0.0, math.sqrt(2.0 / (256 + 256)), size=(256, 256))
    measure("output variance", float((rng.normal(size=(2000, 256)) @ weights.T).var()))
