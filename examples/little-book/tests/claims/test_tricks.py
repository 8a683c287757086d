"""The claims of text/tricks.md: a formula, a count with its printed values, and a
stochastic claim judged over seeds by a rule declared here."""

import numpy as np
import pytest
from claimbook import Matches, claim

from littlebook.layers import batch_norm, batch_norm_state, dropout_mean_ratio


@claim("tricks.batchnorm-standardizes", "established",
       at="every normalized feature comes out with",
       scope="features of standard deviation 0.5 to 10,000; epsilon 1e-5 added to the "
       "variance")  # fmt: skip
@pytest.mark.parametrize("scale", [0.5, 1.0, 30.0, 1e4])
def test_batch_norm_gives_mean_zero_and_variance_one(scale, measure):
    """Batch normalization leaves every feature with mean 0 and variance 1 over the batch,
    whatever scale it came in at."""
    x = np.random.default_rng(7).normal(3.0, scale, size=(64, 16))
    out = batch_norm(x)
    mean_gap = float(np.abs(out.mean(axis=0)).max())
    var_gap = float(np.abs(out.var(axis=0) - 1.0).max())
    measure("largest |mean|", mean_gap)
    measure("largest |variance - 1|", var_gap)
    assert mean_gap < 1e-9
    assert var_gap < 1e-3  # the epsilon's share of a variance of 0.25 is 4e-5


@claim("tricks.batchnorm-count", "established",
       at="Over 256 features a batch-norm layer holds 1,024 numbers")  # fmt: skip
def test_batch_norm_layer_holds_1024_numbers(measure):
    """A batch-norm layer over 256 features holds 1,024 numbers, 512 of them trained."""
    state = batch_norm_state(256)
    measure.reproduces("numbers", sum(array.size for array, _ in state.values()), printed=1_024)
    trained = sum(array.size for array, learned in state.values() if learned)
    measure.reproduces("trained", trained, printed=512)


# "about the same": the ratio of the means within 0.05 of 1, fixed before any run
@claim("tricks.dropout-mean", "likely", at="the mean activation stays about the same",
       scope="20,000 ReLU activations of standard normal inputs per seed, p = 0.5",
       rule=Matches("mean ratio", value=1.0, margin=0.05))  # fmt: skip
def test_dropout_keeps_the_mean_activation(seed, measure):
    """Inverted dropout with p = 0.5 keeps the mean activation about the same as without it."""
    measure("mean ratio", dropout_mean_ratio(seed, p=0.5))
