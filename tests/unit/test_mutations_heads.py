"""The head-type claims read the attention probe: a planted head of each kind is found, and an
untrained model (near-uniform weights) has none, so each claim can go either way."""

from __future__ import annotations

import os

import pytest
from claimbook.declare.measure import Measure

from experiments.lm import LMConfig, attention_probe, build_lm
from experiments.modules import MHA
from tests.claims import test_dd2_head_types as heads

pytestmark = pytest.mark.skipif(
    not os.environ.get("CLAIMBOOK_DATA_DIR"), reason="needs CLAIMBOOK_DATA_DIR (the corpus)"
)
CLAIMS = {
    "first_position": (heads.test_a_head_attends_to_the_first_position, "first-position"),
    "same_position": (heads.test_a_head_attends_to_its_own_position, "same-position"),
    "offsets": (heads.test_a_head_attends_to_a_fixed_offset, "fixed-offset"),
}


def plant(model, kind: str) -> None:
    """Force head 3 of layer 2 onto its kind's target; every other head as computed."""
    mixer, original = model.blocks[1].mixer, model.blocks[1].mixer.attention_weights

    def forced(x):
        w = original(x).clone()
        T = w.shape[-1]
        for q in range(T):
            k = {"first_position": 0, "same_position": q, "offsets": max(q - 3, 0)}[kind]
            w[:, 2, q] = 0.0
            w[:, 2, q, k] = 1.0
        return w

    mixer.attention_weights = forced


def probe_of(kind: str | None) -> dict:
    from experiments.data import shakespeare

    cfg = LMConfig(MHA)
    model = build_lm(cfg, 0)  # untrained: weights near uniform over the visible positions
    if kind:
        plant(model, kind)
    return attention_probe(model, shakespeare().val, cfg, 0)


def strongest(kind: str, probe: dict) -> float:
    function, name = CLAIMS[kind]
    props = []
    function(mha_lm={"probe": probe}, seed=0, measure=Measure(props))
    return next(v["value"] for v in props if v["name"].startswith(f"strongest {name}"))


@pytest.mark.parametrize("kind", list(CLAIMS))
def test_a_planted_head_is_found_and_an_untrained_model_has_none(kind):
    untrained = probe_of(None)
    assert strongest(kind, untrained) < 0.5  # the rule's bound: no head of the kind
    assert strongest(kind, probe_of(kind)) > 0.9  # a head of the kind: far above it
