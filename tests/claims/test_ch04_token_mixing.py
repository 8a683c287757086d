"""Chapter 4, token mixing: convolution, recurrence and attention compared.

Each test is one claim of the chapter, in our words; the chapter's printed
numbers are recorded beside what our code measures.
"""

from __future__ import annotations

import math

import pytest

from claimbook import Figure, claim
from experiments.kv_cache import kv_bytes_per_token, measured_kv_bytes
from experiments.lm import LMConfig, train_lm
from experiments.modules import CONV, LSTM, MHA, MixerLM, count_params
from experiments.reach import conv_stack_reach, reach_of_stack
from experiments.recall import N_SYMBOLS, RecallConfig, train_recall
from tests.claims.sources import CH04

RECALL_SCOPE = (
    "2-block width-64 models (about 102k parameters), 1,000 AdamW steps of 64 synthetic "
    "sequences (10 pairs of 16 symbols), accuracy on 4,000 fresh sequences; one CPU thread"
)
LM_SCOPE = (
    "4-block width-64 character models (about 205k parameters), 600 AdamW steps of 32 x 64 "
    "characters of TinyShakespeare, loss on 10 random validation batches; one CPU thread. "
    "Says nothing about models or budgets orders of magnitude larger."
)
CHANCE = 1 / N_SYMBOLS
MIXER_NAMES = {"convolution": CONV, "LSTM": LSTM, "attention": MHA}

# The chapter's "across three seeds" table, seed by seed.
PRINTED_RECALL_MEAN = {
    "convolution": (0.24, 0.17, 0.20),
    "LSTM": (0.22, 0.22, 0.21),
    "attention": (1.00, 0.19, 1.00),
}
PRINTED_LM_LOSS = {
    "convolution": (1.708, 1.737, 1.721),
    "LSTM": (1.797, 1.824, 1.804),
    "attention": (1.842, 1.836, 1.838),
}


def printed_for(table: dict, name: str, seed: int):
    values = table[name]
    return values[seed] if seed < len(values) else None


# Step 1: convolution ------------------------------------------------------------------


@claim(
    id="ch04.conv-reach",
    level="established",
    source=CH04,
    section="Step 1: convolution",
    printed={"L=1": 4, "L=2": 7, "L=4": 13, "L=8": 25},
    scope="random width-16 kernel-4 convolutions with residuals on 40 positions",
)
@pytest.mark.parametrize("layers", [1, 2, 4, 8])
def test_conv_reach_grows_by_k_minus_1_per_layer(layers, seed, measure):
    """A stack of L causal convolutions of kernel 4, with residual connections, lets the last
    output depend on exactly L(k-1)+1 = 3L+1 input positions.
    """
    seen = measure("reach", reach_of_stack("conv", layers, seed), printed=3 * layers + 1)
    assert seen == 3 * layers + 1


@claim(
    id="ch04.conv-reach-quiz",
    level="established",
    source=CH04,
    section="Recap: check your understanding",
    printed={"positions": 13},
    scope="random width-8 kernel-3 convolutions with residuals",
)
def test_six_kernel3_convolutions_see_13_positions(seed, measure):
    """Six stacked causal convolutions of kernel 3 see 6 x 2 + 1 = 13 positions."""
    assert measure("reach", conv_stack_reach(6, 3, seed), printed=13) == 13


# Step 2 and 3: recurrence and attention reach -------------------------------------------


@claim(
    id="ch04.lstm-reach",
    level="established",
    source=CH04,
    section="Step 2: recurrence",
    printed={"positions": 40},
    scope="one random width-16 LSTM mixer with a residual, 40 positions",
)
def test_lstm_last_state_depends_on_every_input(seed, measure):
    """An LSTM's last output depends on every earlier input: its reach is the whole sequence."""
    assert measure("reach", reach_of_stack("lstm", 1, seed), printed=40) == 40


@claim(
    id="ch04.attention-reach",
    level="established",
    source=CH04,
    section="Step 3: self-attention",
    printed={"positions": 40},
    scope="one random width-16, 4-head causal attention layer with a residual, 40 positions",
)
def test_one_attention_layer_sees_every_earlier_position(seed, measure):
    """A single causal attention layer lets the last position read every earlier position."""
    assert measure("reach", reach_of_stack("attention", 1, seed), printed=40) == 40


# Parameter parity -----------------------------------------------------------------------

PRINTED_PARAMS = {
    "convolution": (16_384, 204_992, 102_464),
    "LSTM": (16_380, 204_976, 102_456),
    "attention": (16_384, 204_992, 102_464),
}


@claim(
    id="ch04.param-parity",
    level="established",
    source=CH04,
    section="Steps 1-3: minimal implementations",
    printed={
        f"{n} (mixer / LM / recall)": "/".join(f"{v:,}" for v in p)
        for n, p in PRINTED_PARAMS.items()
    },
    scope="parameter counts at width 64; exact arithmetic",
)
@pytest.mark.parametrize("mixer", list(MIXER_NAMES))
def test_mixers_have_nearly_equal_parameter_counts(mixer, measure):
    """At width 64 the three mixers, and the models built from them, have the chapter's parameter
    counts, equal to within 0.01%.
    """
    spec = MIXER_NAMES[mixer]
    mixer_params, lm_params, recall_params = PRINTED_PARAMS[mixer]
    counts = (
        count_params(spec.build(64)),
        count_params(MixerLM(65, spec, dim=64, n_layers=4)),
        count_params(MixerLM(32, spec, dim=64, n_layers=2)),
    )
    for label, count, printed in zip(
        ("mixer", "LM", "recall model"), counts, PRINTED_PARAMS[mixer], strict=False
    ):
        measure(f"{label} params", count, printed=printed)
    assert counts == (mixer_params, lm_params, recall_params)
    assert abs(counts[1] - PRINTED_PARAMS["attention"][1]) / counts[1] < 1e-4


# Associative recall ---------------------------------------------------------------------


def recall_run(runs, mixer: str, seed: int) -> dict:
    return runs(train_recall, RecallConfig(MIXER_NAMES[mixer]), seed)


def at_chance(accuracy: float, count: int) -> bool:
    """Within 4 binomial standard deviations of guessing among 16 values."""
    return abs(accuracy - CHANCE) <= 4 * math.sqrt(CHANCE * (1 - CHANCE) / count)


@claim(
    id="ch04.recall-conv",
    level="established",
    source=CH04,
    section="Step 2: recall experiment",
    printed={
        "seed 0 accuracy, distance 20..2": "0.06 0.07 0.06 0.07 0.05 0.09 0.05 0.36 0.58 0.98",
        "mean, seeds 0/1/2": "0.24 / 0.17 / 0.20",
    },
    scope=RECALL_SCOPE,
    erratum=(
        "near-perfect recall 2 tokens back is a seed-0 observation: seed 1 of the chapter's own "
        "protocol reaches only about 0.5 at distance 2, so the claim fails in one seed of three"
    ),
)
def test_conv_recall_is_near_perfect_at_2_and_chance_beyond_window(runs, seed, measure):
    """The 2-block kernel-4 convolution recalls the value of a key 2 tokens back almost perfectly
    (at least 0.9) and is at chance for every key beyond its 7-token window.
    """
    run = recall_run(runs, "convolution", seed)
    by_distance = dict(
        zip(run["distances"], zip(run["accuracy"], run["counts"], strict=True), strict=True)
    )
    measure("accuracy at distance 2", by_distance[2][0], printed=0.98 if seed == 0 else None)
    measure(
        "mean accuracy",
        run["mean_accuracy"],
        printed=printed_for(PRINTED_RECALL_MEAN, "convolution", seed),
    )
    assert by_distance[2][0] >= 0.9
    assert all(at_chance(a, n) for d, (a, n) in by_distance.items() if d > 7)


@claim(
    id="ch04.recall-conv-window",
    level="established",
    source=CH04,
    section="Step 2: recall experiment",
    printed={"accuracy beyond 7 tokens (seed 0)": "0.05-0.09, chance is about 0.06"},
    scope=RECALL_SCOPE,
)
def test_conv_recall_is_at_chance_beyond_its_window(runs, seed, measure):
    """Keys more than 7 tokens back lie outside the window of two kernel-4 convolutions, so the
    convolution model recalls their values only at chance (1/16, within 4 binomial standard
    deviations).
    """
    run = recall_run(runs, "convolution", seed)
    beyond = [
        (a, n)
        for d, a, n in zip(run["distances"], run["accuracy"], run["counts"], strict=False)
        if d > 7
    ]
    measure("max accuracy beyond window", max(a for a, _ in beyond))
    assert all(at_chance(a, n) for a, n in beyond)


@claim(
    id="ch04.recall-lstm-flat",
    level="likely",
    source=CH04,
    section="Step 2: recall experiment",
    printed={"accuracy": "about 0.22 at every distance", "3 seeds": "0.22 ± 0.01"},
    scope=RECALL_SCOPE,
)
def test_lstm_recall_is_flat_in_distance_and_far_from_perfect(runs, seed, measure):
    """The LSTM's recall accuracy shows no trend with distance (a least-squares line changes by at
    most 0.10 from 2 to 20 tokens back) and stays far below perfect (at most 0.5 at every
    distance).
    """
    run = recall_run(runs, "LSTM", seed)
    d, a = run["distances"], run["accuracy"]
    d_mean, a_mean = sum(d) / len(d), sum(a) / len(a)
    slope = sum((x - d_mean) * (y - a_mean) for x, y in zip(d, a, strict=False)) / sum(
        (x - d_mean) ** 2 for x in d
    )
    change = measure("fitted change from 2 to 20 tokens", slope * (max(d) - min(d)))
    measure("mean accuracy", a_mean, printed=printed_for(PRINTED_RECALL_MEAN, "LSTM", seed))
    assert abs(change) <= 0.10
    assert max(a) <= 0.5


@claim(
    id="ch04.recall-attention",
    level="likely",
    source=CH04,
    section="Step 3: recall with attention",
    printed={"seeds 0/1/2": "1.00 / 0.19 / 1.00", "3 seeds": "0.73 ± 0.47"},
    scope=RECALL_SCOPE,
)
def test_attention_recalls_perfectly_at_every_distance(runs, seed, measure):
    """The 2-block attention model recalls the queried value perfectly (1.00 to two decimals) at
    every distance from 2 to 20 tokens.
    """
    run = recall_run(runs, "attention", seed)
    measure(
        "mean accuracy",
        run["mean_accuracy"],
        printed=printed_for(PRINTED_RECALL_MEAN, "attention", seed),
    )
    assert measure("worst distance accuracy", min(run["accuracy"])) >= 0.995


@claim(
    id="ch04.recall-ranking",
    level="likely",
    source=CH04,
    section="Step 3: post-mortem",
    printed={"conv / LSTM / attention, seed 0": "0.24 / 0.22 / 1.00"},
    scope=RECALL_SCOPE,
    figure=Figure(
        title="Associative recall accuracy by distance, per mixer and seed",
        xlabel="distance from the query back to its key (tokens)",
        ylabel="accuracy",
        hlines={"chance (1/16)": CHANCE},
        invert_x=True,
    ),
)
def test_attention_recall_beats_conv_and_lstm(runs, seed, measure):
    """Attention's mean recall accuracy beats both the convolution's and the LSTM's, and neither of
    those two exceeds about 0.24 (0.245).
    """
    means = {}
    for name in MIXER_NAMES:
        run = recall_run(runs, name, seed)
        measure(f"accuracy by distance: {name}", run["accuracy"], x=run["distances"])
        means[name] = measure(
            f"{name} mean",
            run["mean_accuracy"],
            printed=printed_for(PRINTED_RECALL_MEAN, name, seed),
        )
    assert means["attention"] > max(means["convolution"], means["LSTM"])
    assert max(means["convolution"], means["LSTM"]) <= 0.245


# Language models on TinyShakespeare ------------------------------------------------------


@claim(
    id="ch04.shakespeare-ranking",
    level="likely",
    source=CH04,
    section="Step 3: a real language model",
    printed={
        f"{n}, seeds 0/1/2": " / ".join(f"{v:.3f}" for v in p) for n, p in PRINTED_LM_LOSS.items()
    },
    scope=LM_SCOPE,
    figure=Figure(
        title="TinyShakespeare validation loss during training, per mixer and seed",
        xlabel="training step",
        ylabel="validation loss (nats per character)",
    ),
)
def test_shakespeare_loss_ranks_conv_then_lstm_then_attention(runs, seeds, measure):
    """After 600 steps on character-level TinyShakespeare, the validation loss ranks convolution <
    LSTM < attention, in every seed.
    """
    ranked_every_seed = True
    for seed in seeds:
        loss = {}
        for name, spec in MIXER_NAMES.items():
            run = runs(train_lm, LMConfig(spec), seed)
            printed = printed_for(PRINTED_LM_LOSS, name, seed)
            loss[name] = measure(
                f"{name} val loss", run["final_val_loss"], printed=printed, unit="nats", seed=seed
            )
            measure(f"val curve: {name}", run["val_loss"], x=run["steps"], unit="nats", seed=seed)
        ranked_every_seed &= loss["convolution"] < loss["LSTM"] < loss["attention"]
    assert ranked_every_seed


# Step 4: the KV cache --------------------------------------------------------------------


@claim(
    id="ch04.kv-bytes-small",
    level="established",
    source=CH04,
    section="Step 4: KV cache against loss",
    printed={"MHA (4 kv heads)": 1024, "GQA (2)": 512, "MQA (1)": 256},
    scope="4 layers, 4 query heads of width 16, 16-bit; keys and values of real layers on the CPU",
)
@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_kv_cache_bytes_per_token_of_the_small_model(n_kv, measure):
    """The 4-layer model with head width 16 keeps 2 x 4 x n_kv x 16 x 2 bytes of 16-bit KV cache
    per token: 1,024 for MHA, 512 for GQA with 2 kv heads, 256 for MQA; the keys and values its
    layers compute have exactly that size.
    """
    printed = {4: 1024, 2: 512, 1: 256}[n_kv]
    formula = measure("formula bytes/token", kv_bytes_per_token(4, n_kv, 16), printed=printed)
    seq_len = 64
    real = measured_kv_bytes(4, 4, n_kv, 16, seq_len, device="cpu") / seq_len
    measure("measured bytes/token", real, printed=printed)
    assert formula == real == printed


@claim(
    id="ch04.gqa-half",
    level="established",
    source=CH04,
    section="Step 4: KV cache against loss",
    printed={"GQA / MHA": 0.5},
    scope="keys and values of real 16-bit attention layers, any length",
)
@pytest.mark.parametrize("seq_len", [1, 64, 1000])
def test_gqa_with_half_the_kv_heads_halves_the_cache(seq_len, measure):
    """Grouped-query attention with half as many kv heads as query heads keeps exactly half the KV
    cache of multi-head attention.
    """
    mha = measured_kv_bytes(4, 4, 4, 16, seq_len, device="cpu")
    gqa = measured_kv_bytes(4, 4, 2, 16, seq_len, device="cpu")
    assert measure("GQA / MHA bytes", gqa / mha, printed=0.5) == 0.5


@claim(
    id="ch04.kv-70b",
    level="established",
    source=CH04,
    section="Step 4: KV cache against loss",
    printed={"MHA (64 kv heads)": "10.74 GB", "GQA (8)": "1.34 GB", "MQA (1)": "0.17 GB"},
    scope=(
        "LLaMA-2-70B-like shapes: 80 layers, 64 query heads of width 128, 16-bit, "
        "4,096 tokens; shapes on torch's meta device"
    ),
)
@pytest.mark.parametrize("n_kv", [64, 8, 1])
def test_kv_cache_of_a_70b_model_for_one_4096_token_sequence(n_kv, measure):
    """At 70B scale one 4,096-token sequence needs 10.74 GB of 16-bit KV cache with 64 kv heads,
    1.34 GB with 8 and 0.17 GB with one (GB = 10^9 bytes).
    """
    printed_gb = {64: 10.74, 8: 1.34, 1: 0.17}[n_kv]
    formula_gb = kv_bytes_per_token(80, n_kv, 128) * 4096 / 1e9
    real_gb = measured_kv_bytes(80, 64, n_kv, 128, 4096) / 1e9
    measure("GB", real_gb, printed=printed_gb, unit="GB")
    assert real_gb == formula_gb
    assert round(real_gb, 2) == printed_gb


@claim(
    id="ch04.kv-quiz",
    level="established",
    source=CH04,
    section="Recap: check your understanding",
    printed={"8 kv heads": "131,072 bytes (128 KiB)", "32 kv heads": "512 KiB"},
    scope="32 layers, 32 query heads of width 128, 16-bit; shapes on torch's meta device",
)
def test_kv_cache_quiz_32_layers_8_kv_heads(measure):
    """With 32 layers and 8 kv heads of width 128 in 16 bits, the KV cache takes 131,072 bytes (128
    KiB) per token, and 4 times that (512 KiB) with 32 kv heads.
    """
    gqa = measure("bytes/token, 8 kv heads", measured_kv_bytes(32, 32, 8, 128, 1), printed=131_072)
    mha = measure(
        "bytes/token, 32 kv heads", measured_kv_bytes(32, 32, 32, 128, 1), printed=512 * 1024
    )
    assert gqa == kv_bytes_per_token(32, 8, 128) == 131_072 == 128 * 1024
    assert mha == 4 * gqa == 512 * 1024
