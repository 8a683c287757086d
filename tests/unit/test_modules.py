import pytest
import torch

from experiments.lm import lr_at
from experiments.modules import (
    GQA,
    MHA,
    MQA,
    Attention,
    CausalConv,
    LSTMMixer,
    MixerLM,
    MixerSpec,
    count_params,
)
from experiments.recall import RecallConfig, recall_batch, train_recall
from experiments.seeding import deterministic


@pytest.mark.parametrize(
    "make", [lambda: CausalConv(8), lambda: LSTMMixer(8), lambda: Attention(8, 2)]
)
def test_mixers_never_read_the_future(make):
    deterministic(0)
    mixer = make()
    x = torch.randn(1, 10, 8)
    changed = x.clone()
    changed[0, 6:] += 1.0
    with torch.no_grad():
        assert torch.equal(mixer(x)[0, :6], mixer(changed)[0, :6])
        assert not torch.equal(mixer(x)[0, 6:], mixer(changed)[0, 6:])


def test_attention_weights_are_causal_rows_that_sum_to_one():
    deterministic(0)
    w = Attention(16, 4, 2).attention_weights(torch.randn(2, 7, 16))
    assert w.shape == (2, 4, 7, 7)
    assert torch.allclose(w.sum(-1), torch.ones(2, 4, 7))
    assert torch.all(w.triu(1) == 0)


def test_shared_kv_heads_shrink_only_the_kv_projection():
    sizes = [count_params(MixerLM(65, spec)) for spec in (MHA, GQA, MQA)]
    assert sizes[0] > sizes[1] > sizes[2]
    assert sizes[0] - sizes[1] == 4 * 64 * 2 * 2 * 16  # 4 layers x dim x (k, v) x 2 heads x width


def test_unknown_mixer_and_bad_head_counts_are_rejected():
    with pytest.raises(ValueError, match="unknown mixer kind"):
        MixerSpec("mamba").build(8)
    with pytest.raises(ValueError, match="n_heads % n_kv_heads"):
        Attention(12, 4, 3)


def test_recall_batch_layout():
    x, answer, which = recall_batch(5, torch.Generator().manual_seed(0))
    assert x.shape == (5, 21)
    for row, a, w in zip(x, answer, which, strict=True):
        assert row[-1] == row[2 * w]  # the query repeats the key of pair `which`
        assert a == row[2 * w + 1]  # and the answer is the value after it
        assert len(set(row[0:20:2].tolist())) == 10  # keys are distinct


def test_same_seed_same_numbers_other_seed_other_numbers():
    cfg = RecallConfig(MHA, steps=5, eval_examples=200, probe_examples=20)
    first, again, other = train_recall(cfg, 0), train_recall(cfg, 0), train_recall(cfg, 1)
    assert first == again
    assert first["final_train_loss"] != other["final_train_loss"]


def test_learning_rate_schedule():
    assert lr_at(0, 600, 1.0) == pytest.approx(1 / 60)
    assert lr_at(59, 600, 1.0) == pytest.approx(1.0)
    assert lr_at(60, 600, 1.0) == pytest.approx(1.0)
    assert lr_at(600, 600, 1.0) == pytest.approx(0.1)
