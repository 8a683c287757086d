"""Mutation tests of the literature claims run at this book's scale (issue 26).

Each breaks what one claim checks (the printed text, the model, the code) and shows the
claim goes red; a control with the real text and code passes, or, for an erratum, fails
as declared. Claims are called directly, as plain functions, with a fresh Measure.
"""

from __future__ import annotations

import pytest
import torch
from claimbook.declare.measure import Measure

import experiments.decode_cost as decode_cost
import experiments.literature_checks as checks
import experiments.performer as performer
import tests.claims.test_ch04_literature as ch04
import tests.claims.test_dd2_literature as dd2
from tests.claims.sources import CH04, DD2


def run(claim_fn) -> Measure:
    claim_fn(measure=(m := Measure([])))
    return m


# ch04.performer-linear: the code -------------------------------------------------------------


def test_performer_control_holds():
    run(ch04.test_performer_attention_is_linear_in_length)


def test_performer_goes_red_without_the_kernels_correction(monkeypatch):
    # exp(w.x) alone estimates exp(q.k + |q|^2/2 + |k|^2/2): not the softmax kernel
    monkeypatch.setattr(
        performer, "positive_features", lambda x, w: torch.exp(x @ w.T) / w.shape[0] ** 0.5
    )
    with pytest.raises(AssertionError):
        run(ch04.test_performer_attention_is_linear_in_length)


def test_performer_goes_red_when_it_forms_the_n_by_n_matrix(monkeypatch):
    def quadratic(q, k, v, w):
        scale = q.shape[-1] ** -0.25
        qf, kf = (
            performer.positive_features(q * scale, w),
            performer.positive_features(k * scale, w),
        )
        weights = qf @ kf.transpose(-2, -1)  # (n, n): the order that costs n^2
        return (weights @ v) / weights.sum(-1, keepdim=True)

    monkeypatch.setattr(performer, "performer_attention", quadratic)
    with pytest.raises(AssertionError):
        run(ch04.test_performer_attention_is_linear_in_length)


# ch04.ssm-constant-compute: the model's decoding step ----------------------------------------


def test_ssm_goes_red_when_decoding_rereads_the_context(monkeypatch):
    monkeypatch.setattr(ch04, "CONTEXTS", [8, 16, 32])
    run(ch04.test_selective_ssm_decodes_each_token_with_constant_work)  # control

    def no_state(model, contexts):  # each new token recomputed over its whole context
        return [
            decode_cost.count_flops(lambda n=n: model(torch.zeros(1, n + 1, dtype=torch.long)))
            for n in contexts
        ]

    monkeypatch.setattr(decode_cost, "_decode_flops", no_state)
    with pytest.raises(AssertionError):
        run(ch04.test_selective_ssm_decodes_each_token_with_constant_work)


# ch04.context-few-thousand: a doctored configuration -----------------------------------------


def test_context_goes_red_with_a_long_context_config(monkeypatch):
    import transformers

    run(ch04.test_dense_models_of_2020_2022_read_a_few_thousand_tokens)  # control
    real = transformers.OPTConfig

    class LongOPT(real):
        __doc__ = real.__doc__

        def __init__(self, **kw):
            super().__init__(**{"max_position_embeddings": 32768, **kw})

    monkeypatch.setattr(transformers, "OPTConfig", LongOPT)
    with pytest.raises(AssertionError):
        run(ch04.test_dense_models_of_2020_2022_read_a_few_thousand_tokens)


# ch04.seq2seq-units and ch04.bahdanau-unit (errata): the text -------------------------------

SEQ2SEQ = "Seq2seq (Sutskever, Vinyals and Le, 2014; Cho et al., 2014) used one LSTM"


def test_seq2seq_erratum_fails_as_declared_and_records_a_correction(doctored):
    m = Measure(props := [])
    with pytest.raises(AssertionError, match="Cho"):
        ch04.test_seq2seq_papers_used_lstms(measure=m)
    correction = [p["value"] for p in props if p.get("correction")]
    assert correction and "Sutskever, Vinyals and Le, 2014" in correction[0]
    assert "GRU" in correction[0]


def test_seq2seq_holds_once_the_text_is_corrected(doctored):
    doctored(CH04, SEQ2SEQ, "Seq2seq (Sutskever, Vinyals and Le, 2014) used one LSTM")
    run(ch04.test_seq2seq_papers_used_lstms)


def test_seq2seq_goes_red_when_the_text_names_another_unit(doctored):
    doctored(CH04, SEQ2SEQ, SEQ2SEQ.replace("LSTM", "GRU"))  # Sutskever et al. used LSTMs
    with pytest.raises(AssertionError, match="Sutskever"):
        run(ch04.test_seq2seq_papers_used_lstms)


def test_seq2seq_without_its_sentence_is_an_error_not_the_erratum(doctored):
    doctored(CH04, SEQ2SEQ, "Seq2seq models used one LSTM")
    with pytest.raises(LookupError):
        run(ch04.test_seq2seq_papers_used_lstms)


def test_bahdanau_erratum_fails_as_declared_and_holds_once_corrected(doctored):
    with pytest.raises(AssertionError):
        run(ch04.test_bahdanau_attention_sat_on_an_lstm)
    doctored(CH04, "still bolted onto an LSTM", "still bolted onto a GRU")
    run(ch04.test_bahdanau_attention_sat_on_an_lstm)


# dd2.post-norm-formula (erratum): the text ----------------------------------------------------


def test_post_norm_erratum_fails_as_declared_and_holds_once_corrected(doctored):
    m = Measure(props := [])
    with pytest.raises(AssertionError):
        dd2.test_printed_gpt2_norm_formula_is_gpt2s(measure=m)
    correction = [p["value"] for p in props if p.get("correction")]
    assert correction and "Pre-norm, x + Attn(Norm(x))" in correction[0]
    doctored(DD2, "x + Norm(Attn(x))      ", "Norm(x + Attn(x))      ")  # classic post-norm:
    with pytest.raises(AssertionError):  # still not what GPT-2 computes
        run(dd2.test_printed_gpt2_norm_formula_is_gpt2s)
    doctored(DD2, "Norm(x + Attn(x))      ", "x + Attn(Norm(x))      ")  # GPT-2's own
    run(dd2.test_printed_gpt2_norm_formula_is_gpt2s)


def test_post_norm_without_its_row_is_an_error_not_the_erratum(doctored):
    doctored(DD2, "Norm Placement", "Norm Location")
    with pytest.raises(LookupError):
        run(dd2.test_printed_gpt2_norm_formula_is_gpt2s)


# dd2.info-flow-bands: the text ---------------------------------------------------------------


def test_info_flow_control_holds(doctored):
    run(dd2.test_information_flow_bands_restate_the_layer_account)


@pytest.mark.parametrize(
    "old, new",
    [
        ("Layers 4-10: Semantic", "Layers 6-10: Semantic"),  # a gap: layers 4 and 5
        ("Layers 1-3: Local", "Layers 1-6: Local"),  # overlap, and two layers past "early"
        ("Middle layers (5-20):", "Middle layers (5-14):"),  # the earlier account moved
    ],
)
def test_info_flow_goes_red_when_the_bands_disagree(doctored, old, new):
    doctored(DD2, old, new)
    with pytest.raises(AssertionError):
        run(dd2.test_information_flow_bands_restate_the_layer_account)


# dd2.no-biases-gains: the model ---------------------------------------------------------------


def test_no_biases_goes_red_for_a_model_that_has_them(monkeypatch):
    run(dd2.test_dropping_biases_saves_a_few_parameters_and_little_work)  # control
    real = checks.config_of

    def biased(key):
        cfg = real(key)
        cfg.attention_bias, cfg.mlp_bias = True, True  # "as published" already has biases
        return cfg

    monkeypatch.setattr(checks, "config_of", biased)
    with pytest.raises(AssertionError):
        run(dd2.test_dropping_biases_saves_a_few_parameters_and_little_work)
