"""Mutation tests of the claims written for statements the coverage maps had left unanchored
(issue 26): each is broken once, in the text (a doctored copy of the chapter) or in the model
it runs, and must fail; with the real text and PyTorch's modules it passes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from claimbook.declare.measure import Measure
from torch import nn

from tests.claims import test_ch04_recurrence as recurrence
from tests.claims.sources import CH04

REAL = os.environ.get("CLAIMBOOK_SOURCES_DIR")
pytestmark = pytest.mark.skipif(
    not REAL or not (Path(REAL) / CH04.path).is_file(),
    reason="the text is not here: set CLAIMBOOK_SOURCES_DIR to the folder that holds it",
)
EQUATION_OUTPUT = r"h_t = o_t \odot \tanh(c_t)"


def doctored(monkeypatch, tmp_path, old: str, new: str) -> None:
    """Point the claims at a copy of the chapter with ``old`` (printed once) made ``new``."""
    text = (Path(REAL) / CH04.path).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    (tmp_path / CH04.path).write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(tmp_path))


def test_the_lstm_equation_claim_holds_on_the_real_text():
    recurrence.test_lstm_cell_is_the_chapters_equation(seed=0, measure=Measure([]))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (EQUATION_OUTPUT, r"h_t = o_t \odot c_t"),  # the output without its tanh
        (r"c_{t-1} + i_t \odot", r"c_{t-1} - i_t \odot"),  # the candidate subtracted
    ],
)
def test_the_lstm_equation_claim_fails_on_a_wrong_equation(monkeypatch, tmp_path, old, new):
    doctored(monkeypatch, tmp_path, old, new)
    with pytest.raises(AssertionError):
        recurrence.test_lstm_cell_is_the_chapters_equation(seed=0, measure=Measure([]))


def test_the_rnn_gradient_claim_holds_for_a_plain_rnn():
    recurrence.test_a_plain_rnns_gradient_shrinks_with_distance(seed=0, measure=Measure([]))


def test_the_rnn_gradient_claim_fails_when_the_gradient_does_not_shrink(monkeypatch):
    plain = recurrence.plain_rnn

    def keeps_gradient(seed: int) -> nn.RNN:
        """A tanh RNN whose recurrence is the identity and whose inputs are scaled down, so
        that tanh stays near its linear part: each step Jacobian is close to the identity."""
        rnn = plain(seed)
        with torch.no_grad():
            rnn.weight_hh_l0.copy_(torch.eye(recurrence.WIDTH))
            rnn.weight_ih_l0.mul_(1e-3)
            rnn.bias_hh_l0.zero_()
            rnn.bias_ih_l0.zero_()
        return rnn

    monkeypatch.setattr(recurrence, "plain_rnn", keeps_gradient)
    with pytest.raises(AssertionError):
        recurrence.test_a_plain_rnns_gradient_shrinks_with_distance(seed=0, measure=Measure([]))
