"""The claims of notes.md: one test each, judged by claimbook over seeds."""

import math

import numpy as np
from claimbook import Matches, claim, source

NOTES = source("notes")  # declared in pyproject.toml


@claim(
    id="notes.softmax-shift",
    at="Softmax is unchanged when the same constant",
    level="established",
    source=NOTES,
    section="Notes",
)
def test_softmax_ignores_a_shift(measure):
    """Adding one constant to every logit leaves the softmax unchanged."""
    logits = [2.0, -1.0, 0.5, 3.0]

    def softmax(xs):
        top = max(xs)
        exps = [math.exp(x - top) for x in xs]
        return [e / sum(exps) for e in exps]

    shifted = softmax([x + 7.5 for x in logits])
    gap = max(abs(a - b) for a, b in zip(softmax(logits), shifted, strict=True))
    measure("largest change", gap)
    assert gap < 1e-12


@claim(
    id="notes.dense-params",
    at="A dense layer from 512 to 2,048 units",
    level="established",
    source=NOTES,
    section="Notes",
    printed={"parameters": 1_050_624},
)
def test_dense_layer_parameters(measure):
    """A dense layer from 512 to 2,048 units has 1,050,624 parameters with its bias."""
    count = 512 * 2048 + 2048
    measure("parameters", count, printed=1_050_624)
    assert count == 1_050_624


@claim(
    id="notes.xavier-variance",
    at="for inputs of variance 1 the outputs have a variance of about 1",
    level="likely",
    source=NOTES,
    section="Notes",
    scope="a 256 x 256 layer, 2,000 standard normal inputs per seed",
    # "about 1": the mean over seeds within 0.1 of 1, declared before any run
    rule=Matches("output variance", value=1.0, margin=0.1),
)
def test_xavier_keeps_the_variance(seed, measure):
    """A square layer with Xavier-normal weights maps inputs of variance 1 to outputs of
    variance about 1."""
    rng = np.random.default_rng(seed)
    width = 256
    weights = rng.normal(0.0, math.sqrt(2.0 / (width + width)), size=(width, width))
    inputs = rng.normal(size=(2000, width))
    measure("output variance", float((inputs @ weights.T).var()))
