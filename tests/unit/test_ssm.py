import dataclasses

import pytest
import torch

from experiments.lineage import HybridSpec, LayeredLM, train_recall_layers
from experiments.modules import MHA, MixerLM, count_params
from experiments.recall import RecallConfig, train_recall
from experiments.seeding import deterministic
from experiments.ssm import SelectiveSSM, SSMSpec, scan


def test_ssm_keeps_the_shape_and_never_reads_the_future():
    deterministic(0)
    mixer = SelectiveSSM(16, state=4, n_heads=2)
    x = torch.randn(2, 12, 16)
    changed = x.clone()
    changed[:, 7:] += 1.0
    with torch.no_grad():
        y, y_changed = mixer(x), mixer(changed)
    assert y.shape == (2, 12, 16)
    assert torch.equal(y[:, :7], y_changed[:, :7])
    assert not torch.allclose(y[:, 7:], y_changed[:, 7:])


def test_parallel_form_equals_the_step_by_step_recurrence():
    deterministic(0)
    mixer = SelectiveSSM(16, state=3, n_heads=4).double()
    inputs = mixer.inputs(torch.randn(2, 30, 16, dtype=torch.float64))[:5]
    assert (mixer.mix(*inputs) - scan(*inputs)).abs().max() < 1e-12


def test_decays_depend_on_the_token_and_lie_in_0_1():
    deterministic(0)
    _, log_a, dt, *_ = SelectiveSSM(16, state=4).inputs(torch.randn(1, 9, 16))
    assert torch.all(log_a < 0) and torch.all(dt > 0)
    assert log_a.std(1).min() > 0  # selective: the decay changes from token to token


def test_spec_builds_into_the_chapter_skeleton_and_state_size_counts():
    small, large = MixerLM(32, SSMSpec(state=2), n_layers=2), MixerLM(32, SSMSpec(), n_layers=2)
    assert count_params(large) - count_params(small) == 2 * 2 * 64 * (16 - 2)  # B and C
    assert small(torch.zeros(3, 21, dtype=torch.long)).shape == (3, 21, 32)
    with pytest.raises(ValueError, match="divisible"):
        SelectiveSSM(10, n_heads=4)


def test_layered_model_with_equal_layers_is_the_mixer_model():
    deterministic(0)
    plain = MixerLM(32, SSMSpec(), n_layers=2)
    deterministic(0)
    layered = LayeredLM(32, HybridSpec((SSMSpec(), SSMSpec())))
    for (name, a), (_, b) in zip(
        plain.state_dict().items(), layered.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name


def test_layered_recall_training_follows_the_recall_protocol():
    cfg = RecallConfig(MHA, steps=3, eval_examples=50, probe_examples=5)
    plain = train_recall(cfg, 0)
    layered = train_recall_layers(dataclasses.replace(cfg, mixer=HybridSpec((MHA, MHA))), 0)
    assert layered == {k: v for k, v in plain.items() if k != "probe"}
    with pytest.raises(ValueError, match="layer specs"):
        train_recall_layers(dataclasses.replace(cfg, mixer=HybridSpec((MHA,))), 0)
