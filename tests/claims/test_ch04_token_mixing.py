"""Chapter 4, token mixing: convolution, recurrence and attention compared.

Each test is one claim of the chapter, in our words, grouped by the chapter's
steps. The chapter's printed numbers are recorded beside what our code
measures; a printed number reproduces when our value, rounded to the printed
digits, equals it. The 3-seed table is made as the chapter makes it, from the
per-seed values rounded to the printed digits. Which last digits reproduce
depends on the computer (see MACHINE_DIGITS).
"""

from __future__ import annotations

import functools
import math
import statistics
from decimal import ROUND_HALF_UP, Decimal

import pytest
import torch
import torch.nn.functional as F
from claimbook import (
    AllOf,
    Beats,
    Figure,
    Matches,
    MostSeeds,
    Ranking,
    Slower,
    Typical,
    Universal,
    claim,
    source_text,
    training,
)
from claimbook.declare.numbers import reproduces
from claimbook.timing import interleaved_times

from experiments.data import get_batch
from experiments.data import shakespeare as shakespeare_corpus
from experiments.kv_cache import kv_bytes_per_token, measured_kv_bytes
from experiments.lm import LMConfig, build_lm, train_lm
from experiments.lm_kv_cache import lm_kv_bytes_per_token
from experiments.mechanics import (
    rope_distance_matters,
    rope_shift_deviation,
    sdpa_vs_formula,
    ssm_recurrence_vs_convolution,
)
from experiments.modules import CONV, GQA, LSTM, MHA, MQA, MixerLM, MixerSpec, count_params
from experiments.reach import (
    conv2d_receptive_field,
    conv_stack_reach,
    gradient_reach,
    model_reach,
    reach_of_stack,
)
from experiments.recall import N_SYMBOLS, RecallConfig, train_recall
from experiments.seeding import deterministic
from experiments.timing import seconds_per_step
from experiments.window import SlidingWindowAttention
from tests.claims.printed_text import code_block, number, read, value
from tests.claims.sources import CH04

RECALL_SCOPE = (
    "2-block width-64 models (about 102k parameters), 1,000 AdamW steps of 64 synthetic "
    "sequences (10 pairs of 16 symbols), accuracy on 4,000 fresh sequences; one CPU thread"
)
LM_SCOPE = (
    "4-block width-64 character models (about 205k parameters), 600 AdamW steps of 32 x 64 "
    "characters of TinyShakespeare; one CPU thread. Says nothing about models or budgets "
    "orders of magnitude larger."
)
# Which per-seed digits reproduce depends on the computer: the run records it (keys.host).
THIS_HOST = "CPU family 26 model 2 stepping 1, microcode 0x1000065"
MACHINE_DIGITS = (
    "Why the computer matters: two computers with the same code and torch 2.13.0, both with a "
    "2-core 'AMD EPYC' processor, print other last digits for some seeds. The digits quoted "
    "here come from the first computer, and from the second where said; the second's exact "
    "processor was not written down. Each run now records the computer it ran on (the home "
    "page's 'machine class / host' row), and a training run read from the cache may come from "
    "either. Why the two differ was not measured. (For the record, the first computer's "
    f"processor: {THIS_HOST}; torch runs on its AVX-512 instructions.)"
)
LSTM_SEED2 = (
    "Seed 2's LSTM mean accuracy is 0.21241 on the first computer, which prints 0.21 as the "
    "chapter does; on the second it was 0.21503, which prints 0.22."
)
SHARED_KV_CONFOUND = (
    "The GQA and MQA models also have 8.0% and 12.0% fewer parameters than MHA (188,608 and "
    "180,416 against 204,992, from their smaller key-value projections; "
    "ch04.shared-kv-fewer-params), so a quality difference between these models mixes the "
    "shared kv heads with a smaller model; these runs do not separate the two."
)
FLOAT64 = 1e-9  # float64 rounding is ~1e-15 here; any real mistake is orders above 1e-9
CHANCE = 1 / N_SYMBOLS
MIXERS = {"convolution": CONV, "LSTM": LSTM, "attention": MHA}
OWN_SEEDS = (
    "The sentence reports the chapter's own runs ('Across three seeds ...'): its 'in every "
    "seed' is about those three seeds, so it is checked on the seeds the run is given (by "
    "default 0, 1, 2, the chapter's protocol) as a fact about them, not as a rule over seeds. "
)
VARIANTS = {"MHA": MHA, "GQA": GQA, "MQA": MQA}

# The chapter's "Across three seeds" table, seeds 0 / 1 / 2, then mean and sd.
PRINTED_RECALL = {
    "convolution": ("0.24", "0.17", "0.20", "0.20", "0.04"),
    "LSTM": ("0.22", "0.22", "0.21", "0.22", "0.01"),
    "attention": ("1.00", "0.19", "1.00", "0.73", "0.47"),
}
PRINTED_LOSS = {
    "convolution": ("1.708", "1.737", "1.721", "1.722", "0.015"),
    "LSTM": ("1.797", "1.824", "1.804", "1.808", "0.014"),
    "attention": ("1.842", "1.836", "1.838", "1.839", "0.003"),
    "MHA": ("1.842", "1.836", "1.838", "1.839", "0.003"),
    "GQA": ("1.830", "1.839", "1.857", "1.842", "0.014"),
    "MQA": ("1.856", "1.879", "1.854", "1.863", "0.014"),
}


def printed(table: dict, name: str, seed: int) -> str | None:
    """The chapter's value for ``name`` in ``seed`` (None for seeds it did not run)."""
    return table[name][seed] if 0 <= seed <= 2 else None


# Seed 0's recall accuracy by distance (20 tokens back down to 2), as the chapter prints it.
CONV_SEED0 = [0.06, 0.07, 0.06, 0.07, 0.05, 0.09, 0.05, 0.36, 0.58, 0.98]
LSTM_SEED0 = [0.26, 0.21, 0.23, 0.21, 0.20, 0.22, 0.20, 0.25, 0.22, 0.24]

# The training runs the claims read, one fixture each (claimbook.training).
conv_recall = training(train_recall, RecallConfig(CONV))
lstm_recall = training(train_recall, RecallConfig(LSTM))
attention_recall = training(train_recall, RecallConfig(MHA))
conv_lm = training(train_lm, LMConfig(CONV))
lstm_lm = training(train_lm, LMConfig(LSTM))
attention_lm = training(train_lm, LMConfig(MHA))
gqa_lm = training(train_lm, LMConfig(GQA))
mqa_lm = training(train_lm, LMConfig(MQA))


@pytest.fixture
def recall(conv_recall, lstm_recall, attention_recall) -> dict:
    """The three mixers' recall runs, by the names of MIXERS (in its order)."""
    return {"convolution": conv_recall, "LSTM": lstm_recall, "attention": attention_recall}


@pytest.fixture
def shakespeare(conv_lm, lstm_lm, attention_lm) -> dict:
    """The three mixers' Shakespeare language-model runs, by the names of MIXERS."""
    return {"convolution": conv_lm, "LSTM": lstm_lm, "attention": attention_lm}


# Step 1 · Convolution --------------------------------------------------------------------


@claim("ch04.conv-reach", "established", at=("1 conv layers, kernel 4: last token sees 4 of 40",
       "The reach grows by exactly k−1 = 3 positions per layer"),
       scope="random width-16 kernel-4 convolutions with residuals on 40 positions")  # fmt: skip
@pytest.mark.parametrize("layers", [1, 2, 4, 8])
def test_conv_reach_grows_by_k_minus_1_per_layer(layers, seed, measure):
    """A stack of L causal convolutions of kernel 4, with residual connections, lets the last
    output depend on exactly L(k-1)+1 = 3L+1 input positions."""
    reach = 3 * layers + 1
    assert measure("reach", reach_of_stack("conv", layers, seed), printed=reach) == reach


@claim("ch04.conv-reach-quiz", "established", at="6 × (3 − 1) + 1 = 13 positions", scope="random "
       "width-8 kernel-3 convolutions with residuals (the recap's question)")  # fmt: skip
def test_six_kernel3_convolutions_see_13_positions(seed, measure):
    """Six stacked causal convolutions of kernel 3 see 6 x 2 + 1 = 13 positions."""
    assert measure("reach", conv_stack_reach(6, 3, seed), printed=13) == 13


def the_100_tokens_question(text: str) -> tuple[str, str, int]:
    """The distance and the layer count ("over N") of the chapter's sentence about linking two
    words, and the kernel of its convolution stack, as the text prints them."""
    apart, over = read(text, "To link two words {} tokens apart, this mixer needs over {} layers")
    return apart, over, int(number(text, "We stack L convolution layers with kernel {},"))


def fewest_layers_to_reach(needed: int, kernel: int, seed: int) -> tuple[int, int]:
    """The fewest random convolution layers of ``kernel`` whose reach is at least ``needed``
    positions (stacked one more at a time, at most ``needed`` + 1), and their reach."""
    layers, reach = 0, 1
    while reach < needed and layers <= needed:  # each layer adds at least one position
        layers += 1
        reach = conv_stack_reach(layers, kernel, seed)
    return layers, reach


@claim("ch04.conv-reach-100", "established", at="this mixer needs over 30 layers",
       printed={"layers needed": "over 30"},
       scope="the distance, kernel and layer count read from the text at run time; random width-8 "
       "convolutions with residuals, stacked one more layer at a time until the reach is "
       "measured")  # fmt: skip
def test_linking_tokens_100_apart_needs_over_30_kernel4_layers(seed, measure):
    """With kernel 4, a convolution stack needs more than 30 layers before its last output sees
    a token 100 positions back: 33 layers reach 100 positions, 34 reach 103."""
    apart, over, kernel = the_100_tokens_question(source_text(CH04))
    needed = int(value(apart)) + 1  # the last output and the word that many tokens back
    layers, reach = fewest_layers_to_reach(needed, kernel, seed)
    measure(f"reach, {layers - 1} layers", conv_stack_reach(layers - 1, kernel, seed))
    measure(f"reach, {layers} layers", reach)
    smallest = measure(f"fewest layers to see {apart} tokens back", layers, printed=f"over {over}")
    assert reach >= needed and smallest > value(over)


@claim("ch04.dilated-reach", "established",
       at="double the gap at each layer and so grow the reach exponentially",
       printed={"growth": "exponential with depth (WaveNet, ByteNet)"},
       scope="random width-8 kernel-4 convolutions, dilation 2^l at layer l, "
       "with residuals")  # fmt: skip
@pytest.mark.parametrize("layers", [1, 2, 3, 4, 5, 6])
def test_dilated_convolutions_grow_reach_exponentially(layers, seed, measure):
    """Doubling the dilation at each layer makes the reach 1 + (k-1)(2^L - 1): it doubles with
    every layer instead of growing by k-1."""
    expected = 1 + 3 * (2**layers - 1)
    assert measure("reach", conv_stack_reach(layers, 4, seed, dilated=True)) == expected


@claim("ch04.vgg-two-3x3", "established", at="two stacked 3 by 3 layers see a 5 by 5 patch",
       printed={"parameters": "fewer than one 5 by 5 layer"},
       scope="bias-free Conv2d layers with 4 channels on a 15 x 15 image")  # fmt: skip
def test_two_3x3_convolutions_see_5x5_with_fewer_parameters(seed, measure):
    """Two stacked 3 by 3 convolutions see a 5 by 5 patch, as one 5 by 5 convolution does, with
    fewer parameters (18 against 25 weights per channel pair)."""
    side_33, params_33 = conv2d_receptive_field([3, 3], 4, seed)
    side_5, params_5 = conv2d_receptive_field([5], 4, seed)
    measure("patch side, two 3x3", side_33, printed=5)
    measure("parameters, two 3x3 / one 5x5", params_33 / params_5)
    assert side_33 == side_5 == 5 and params_33 < params_5


# Step 2 · Recurrence ---------------------------------------------------------------------


@claim("ch04.lstm-reach", "established", at="The reach is unlimited, since",
       scope="one random width-16 LSTM mixer with a residual, 40 positions")  # fmt: skip
def test_lstm_last_state_depends_on_every_input(seed, measure):
    """An LSTM's last output depends on every earlier input: its reach is the whole sequence."""
    assert measure("reach", reach_of_stack("lstm", 1, seed), printed=40) == 40


def printed_lstm_mixer(text: str) -> type:
    """The chapter's LSTMMixer class, executed as printed (torch.nn as its ``nn``)."""
    namespace = {"nn": torch.nn}
    exec(code_block(text, "class LSTMMixer(nn.Module):"), namespace)
    return namespace["LSTMMixer"]


def recall_width(text: str) -> int:
    """The width (``dim``) the chapter's train_recall gives its recall models."""
    train = code_block(text, "def train_recall(make_mixer, steps=1000, seed=0):")
    return int(number(train, "MixerLM(2 * N_SYM, make_mixer, dim={}, n_layers={_})"))


def lstm_states(mixer: type, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The hidden state h and cell state c (one sequence's) that ``mixer(dim)``'s nn.LSTM
    carries after 5 steps of zeros."""
    with torch.no_grad():
        _, (h, c) = mixer(dim).lstm(torch.zeros(1, 5, dim))
    return h[0, 0], c[0, 0]


@claim("ch04.lstm-state-size", "established", at="its state of 35 numbers must hold all 10 pairs",
       scope="the chapter's text, read at run time: its LSTMMixer class executed as printed, at "
       "the width its recall models use (dim in its train_recall), run by torch's nn.LSTM over 5 "
       "steps",
       remark="An LSTM carries two vectors from step to step, the hidden state h and the cell "
       "state c, each 35 wide here: 70 numbers in all (measured below). The chapter calls h the "
       "hidden state (h_t = f(h_(t-1), x_t)) and gives the mixer 'a narrower hidden state', so its "
       "35 is h's width; read as everything the model carries forward, the state is twice that. "
       "Either way it is a fixed size, the chapter's point, so this is a remark, not an "
       "erratum.")  # fmt: skip
def test_lstm_mixer_state_holds_35_numbers(measure):
    """The chapter's LSTM mixer, at the width of its recall models, carries a hidden state of 35
    numbers from step to step (its hidden width, int(0.56 x 64)), a fixed size that must hold
    all ten key-value pairs of the recall task at once."""
    text = source_text(CH04)
    dim, printed = recall_width(text), number(text, "its state of {} numbers")
    h, c = lstm_states(printed_lstm_mixer(text), dim)
    hidden = measure("hidden state h carried from step to step", h.numel(), printed=printed)
    measure("with the cell state c (h and c)", h.numel() + c.numel())
    measure("recall models' width (dim)", dim)
    assert h.shape[-1] == c.shape[-1] == hidden and reproduces(hidden, printed)


PRINTED_PARAMS = {
    "convolution": (16_384, 204_992, 102_464),
    "LSTM": (16_380, 204_976, 102_456),
    "attention": (16_384, 204_992, 102_464),
}


def param_counts(spec) -> tuple[int, int, int]:
    """Parameters at width 64 of the mixer, its 4-block language model (65 characters) and its
    2-block recall model (32 symbols)."""
    return (
        count_params(spec.build(64)),
        count_params(MixerLM(65, spec, dim=64, n_layers=4)),
        count_params(MixerLM(32, spec, dim=64, n_layers=2)),
    )


@claim("ch04.param-parity", "established", at=("CausalConv, kernel 4 16,384 parameters at dim 64",
       "LSTMMixer 16,380 parameters at dim 64", "Attention, 4 heads 16,384 parameters at dim 64",
       "All three models have about 205,000 parameters"),
       scope="parameter counts at width 64; exact arithmetic")  # fmt: skip
@pytest.mark.parametrize("mixer", list(MIXERS))
def test_mixers_have_nearly_equal_parameter_counts(mixer, measure):
    """At width 64 the three mixers, and the models built from them, have the chapter's
    parameter counts, equal to within 0.01%."""
    counts, book = param_counts(MIXERS[mixer]), PRINTED_PARAMS[mixer]
    for label, count, digits in zip(("mixer", "LM", "recall model"), counts, book, strict=True):
        measure(f"{label} params", count, printed=digits)
    assert counts == book
    assert abs(counts[1] - PRINTED_PARAMS["attention"][1]) / counts[1] < 1e-4


def chance_distance(accuracy: float, count: int) -> float:
    """How many binomial standard deviations ``accuracy`` lies from guessing among 16 values."""
    return abs(accuracy - CHANCE) / math.sqrt(CHANCE * (1 - CHANCE) / count)


def by_distance(run: dict) -> dict[int, float]:
    """A recall run's accuracy by distance (tokens from the query back to its key)."""
    return dict(zip(run["distances"], run["accuracy"], strict=True))


@claim("ch04.recall-conv", "established",
       at=("It scores 0.98 when the key is 2 tokens back", "6:0.36 4:0.58 2:0.98"),
       printed={"beyond 7 tokens": "chance (about 0.06)"}, scope=RECALL_SCOPE,
       remark="The per-distance digits are seed 0's and are recorded, not asserted: on the first "
       "computer seed 0 reproduces 9 of the 10 (distance 10 gives 0.0848, printed 0.09; "
       "distance 6 gives 0.363, printed 0.36); on the second distance 6 gave 0.369. The "
       "sentence explains the chapter's own run ('which is why accuracy already drops at 4 and "
       "6'), so the drop is checked on the run's seeds (by default the chapter's 0, 1, 2) as a "
       "fact about them. Read as 'in every seed' it does not hold: seed 4, trained for other "
       "claims, scores 0.33 two tokens back and 0.56 at four. The sentence does not say which "
       "reading it means, so that is a remark, not an erratum; the tendency it supports, a drop "
       "on average, is ch04.recall-conv-drops-on-average's rule, and chance beyond the window, "
       "which no seed can escape, is ch04.recall-conv-window's. " + MACHINE_DIGITS)  # fmt: skip
def test_conv_recall_drops_inside_its_window_and_is_chance_beyond(conv_recall, seed, measure):
    """In each of the chapter's seeds the 2-block kernel-4 convolution does what its 7-token
    window predicts: beyond 7 tokens it recalls only at chance (within 4 binomial standard
    deviations of 1/16 at every such distance), and inside the window its accuracy already
    drops from 2 tokens back to 4 and 6 (accuracy at 2 above the better of 4 and 6)."""
    run, acc, seed0 = conv_recall, by_distance(conv_recall), seed == 0
    measure("accuracy by distance 20..2", run["accuracy"], printed=CONV_SEED0 if seed0 else None)
    for d, digits in ((2, "0.98"), (4, "0.58"), (6, "0.36")):
        measure(f"accuracy {d} tokens back", acc[d], printed=digits if seed0 else None)
    book = printed(PRINTED_RECALL, "convolution", seed)
    measure("mean accuracy", run["mean_accuracy"], printed=book)
    far = measure("largest distance from chance beyond the window", beyond_window(run),
                  unit="binomial sd")  # fmt: skip
    assert far < 4
    assert measure("drop from distance 2 to the better of 4 and 6", window_drop(run)) > 0


def beyond_window(run: dict) -> float:
    """The largest distance from chance, in binomial sd, at any distance over 7 tokens."""
    return max(
        chance_distance(a, n)
        for d, a, n in zip(run["distances"], run["accuracy"], run["counts"], strict=True)
        if d > 7
    )


def window_drop(run: dict) -> float:
    """Accuracy 2 tokens back minus the better of the accuracies 4 and 6 tokens back."""
    acc = by_distance(run)
    return acc[2] - max(acc[4], acc[6])


@claim("ch04.recall-conv-drops-on-average", "established",
       at="which is why accuracy already drops at 4 and 6 tokens",
       printed={"seed 0 accuracy at distance 2 / 4 / 6": "0.98 / 0.58 / 0.36"}, scope=RECALL_SCOPE,
       remark="The general tendency of ch04.recall-conv's sentence, read from its words: "
       "accuracy at 2 tokens above the better of 4 and 6, on average over seeds. Declared after "
       "seeds of these runs were seen, so judged on fresh seeds alone.",
       rule=Typical(
           "drop from distance 2 to the better of 4 and 6", above=0, fresh=1000,
           seen="seeds 0-11 of the convolution's recall runs, seed 4's drop negative among them "
           "(-0.227), when ch04.recall-conv was re-read as a fact about the chapter's "
           "seeds"))  # fmt: skip
def test_conv_recall_drops_inside_its_window_on_average(conv_recall, seed, measure):
    """On average over seeds, the convolution's accuracy 2 tokens back is above the better of
    its accuracies 4 and 6 tokens back: inside the window it still has to learn the pattern."""
    measure("drop from distance 2 to the better of 4 and 6", window_drop(conv_recall))


@claim("ch04.recall-conv-window", "established",
       at=("chance (about 0.06) for every key more than 7 tokens back", "chance beyond seven"),
       place="chance (about 0.06) for every key more than 7 tokens back",
       printed={"accuracy beyond 7 tokens (seed 0)": "0.05 to 0.09; chance is about 0.06"},
       scope=RECALL_SCOPE,
       rule=Universal("largest distance from chance beyond the window", below=4))  # fmt: skip
def test_conv_recall_is_at_chance_beyond_its_window(conv_recall, seed, measure):
    """Keys more than 7 tokens back lie outside the window of two kernel-4 convolutions, so in
    every seed the convolution model recalls their values only at chance: 1/16, within 4
    binomial standard deviations at every such distance."""
    far = [a for d, a in by_distance(conv_recall).items() if d > 7]
    measure("max accuracy beyond window", max(far))
    measure("largest distance from chance beyond the window", beyond_window(conv_recall),
            unit="binomial sd")  # fmt: skip


def fitted_change(distances: list, accuracy: list) -> float:
    """How much a least-squares line through accuracy against distance changes from the
    smallest distance to the largest."""
    d_mean, a_mean = statistics.mean(distances), statistics.mean(accuracy)
    slope = sum(
        (x - d_mean) * (y - a_mean) for x, y in zip(distances, accuracy, strict=True)
    ) / sum((x - d_mean) ** 2 for x in distances)
    return slope * (max(distances) - min(distances))


@claim("ch04.recall-lstm-flat", "likely",
       at=("The LSTM's accuracy is flat, at about 0.22 at every distance",
           "by distance 20:0.26 18:0.21"),
       printed={"3 seeds": "0.22 ± 0.01"}, scope=RECALL_SCOPE,
       remark="Seed 0's accuracy by distance is recorded, not asserted: on the first computer "
       "it matches the printed digits at 3 of 10 distances (0.28 0.19 0.25 0.21 0.19 "
       "0.22 0.17 0.24 0.22 0.23), on the second it differed at 7 of 10, with other digits. "
       + LSTM_SEED2 + " " + MACHINE_DIGITS,
       # "flat, at about 0.22": no trend (fitted change under 0.10 from 2 to 20 tokens) and a
       # level within 0.03 of 0.22 (three times the chapter's printed 3-seed sd, 0.01)
       rule=AllOf((
           Typical("absolute fitted change from 2 to 20 tokens", below=0.10),
           Matches("mean accuracy", value=0.22, margin=0.03),
       ), fresh=1000, seen="seeds 0-2 of the LSTM's recall runs: the level's margin, 0.03, was "
          "set after them (at 0.01 the rule would not decide)"))  # fmt: skip
def test_lstm_recall_is_flat_in_distance(lstm_recall, seed, measure):
    """The LSTM's recall accuracy is flat in distance at about 0.22: typically, a least-squares
    line through accuracy against distance changes by less than 0.10 from 2 to 20 tokens back,
    and the mean accuracy over seeds matches 0.22 within ±0.03."""
    d, a = lstm_recall["distances"], lstm_recall["accuracy"]
    if seed == 0:
        measure("accuracy by distance 20..2", a, printed=LSTM_SEED0)
    change = measure("fitted change from 2 to 20 tokens", fitted_change(d, a))
    measure("absolute fitted change from 2 to 20 tokens", abs(change))
    measure("mean accuracy", statistics.mean(a), printed=printed(PRINTED_RECALL, "LSTM", seed))


@claim("ch04.recall-lstm-below-perfect", "likely",
       at="the LSTM stayed far below perfect at every distance",
       printed={"claim": "the LSTM stayed far below perfect at every distance"},
       scope=RECALL_SCOPE, rule=Typical("best accuracy over distances", below=0.5))  # fmt: skip
def test_lstm_recall_stays_far_below_perfect(lstm_recall, seed, measure):
    """The LSTM's recall stays far below perfect at every distance: typically, even its best
    distance is recalled with accuracy below 0.5."""
    measure("best accuracy over distances", max(lstm_recall["accuracy"]))


# Step 3 · Self-attention -----------------------------------------------------------------


@claim("ch04.attention-reach", "established", at=(
       "A single attention layer can read any earlier position",
       "fetch exactly the earlier token it needs, at any distance"),
       scope="one random width-16, 4-head causal attention layer with a residual, "
       "40 positions")  # fmt: skip
def test_one_attention_layer_sees_every_earlier_position(seed, measure):
    """A single causal attention layer lets the last position read every earlier position."""
    assert measure("reach", reach_of_stack("attention", 1, seed), printed=40) == 40


@claim("ch04.sdpa-equals-formula", "established", at="above the diagonal. The",
       printed={"formula": "softmax(QK^T / sqrt(d_h) + M) V"},
       scope="random float64 Q, K, V of shape (2, 4, 12, 16) on the CPU")  # fmt: skip
def test_fused_attention_equals_the_formula(seed, measure):
    """PyTorch's fused causal scaled dot-product attention equals softmax(QK^T / sqrt(d_h) + M) V
    with M = -inf above the diagonal (to float64 rounding, below 1e-9)."""
    assert measure("max abs difference", sdpa_vs_formula(seed)) < FLOAT64


@claim("ch04.rope-relative", "established", at="through the rotation (chapter 3) share",
       printed={"property": "the score depends only on the distance between positions"},
       scope="random float64 query and key vectors of width 16, positions up to 320")  # fmt: skip
def test_rope_scores_depend_only_on_relative_position(seed, measure):
    """With rotary position encoding, a query-key score is unchanged when both positions move by
    the same amount, and changes when only their distance does."""
    assert measure("max change under a common shift", rope_shift_deviation(seed)) < FLOAT64
    assert measure("change when the distance changes", rope_distance_matters(seed)) > 1e-3


@claim("ch04.recall-attention", "likely", at=(
       "Attention scores 1.00 at every distance, from 2 tokens to 20",
       "recall 1.00 at every distance in two seeds of three"),
       place="Attention scores 1.00 at every distance, from 2 tokens to 20",
       printed={"3 seeds": "0.73 ± 0.47"}, scope=RECALL_SCOPE,
       rule=MostSeeds("worst distance accuracy", above=0.995, look20=True))  # fmt: skip
def test_attention_recalls_perfectly_at_every_distance(attention_recall, seed, measure):
    """In most seeds, the 2-block attention model recalls the queried value perfectly (1.00 to
    two decimals) at every distance from 2 to 20 tokens; the metric is bimodal, so each seed
    counts as a success or a failure."""
    book = printed(PRINTED_RECALL, "attention", seed)
    measure("mean accuracy", attention_recall["mean_accuracy"], printed=book)
    measure("worst distance accuracy", min(attention_recall["accuracy"]))


@claim("ch04.recall-ranking", "established",
       at="attention solves associative recall easily while attention-free", scope=RECALL_SCOPE,
       remark="Judged at the chapter's own tag, [established] (alpha 0.01), which it gives citing "
       "Arora et al. (2023); the chapter's own seed 1 (attention 0.19) bears on it. " + LSTM_SEED2,
       figure=Figure(title="Associative recall accuracy by distance, per mixer and seed",
                     xlabel="distance from the query back to its key (tokens)", ylabel="accuracy",
                     hlines={"chance (1/16)": CHANCE}, invert_x=True),
       rule=Beats("attention mean", "best of convolution and LSTM", lower=False, bimodal=True,
                  look20=True))  # fmt: skip
def test_attention_recall_beats_conv_and_lstm(recall, seed, measure):
    """Attention's mean recall accuracy beats both the convolution's and the LSTM's in most
    seeds (recall is bimodal, so each seed is a win or a loss)."""
    means = {}
    for name, run in recall.items():
        measure(f"accuracy by distance: {name}", run["accuracy"], x=run["distances"])
        book = printed(PRINTED_RECALL, name, seed)
        means[name] = measure(f"{name} mean", run["mean_accuracy"], printed=book)
    measure("best of convolution and LSTM", max(means["convolution"], means["LSTM"]))


@claim("ch04.recall-others-below-024", "likely",
       at="the convolution and the LSTM never exceeded 0.24",
       printed={"claim": "the convolution and the LSTM never exceeded 0.24", "seeds": "0, 1, 2"},
       scope=RECALL_SCOPE + "; the chapter's seeds 0, 1, 2",
       remark=OWN_SEEDS + "As a statement about every seed it does not generalise: seed 6, read "
       "for other claims, gave a convolution mean of 0.249, above 0.245. The tendency it "
       "supports, both staying low on average, is that claim's rule.")  # fmt: skip
def test_conv_and_lstm_recall_stay_at_or_below_024_in_the_chapters_seeds(
    conv_recall, lstm_recall, seed, measure
):
    """In each of the chapter's three seeds neither the convolution's nor the LSTM's mean
    recall accuracy exceeds 0.24 (0.245 before rounding)."""
    best = max(conv_recall["mean_accuracy"], lstm_recall["mean_accuracy"])
    assert measure("best of convolution and LSTM", best) < 0.245


@claim("ch04.recall-others-low-on-average", "likely",
       at="the convolution and the LSTM never exceeded 0.24",
       printed={"claim": "the convolution and the LSTM never exceeded 0.24"}, scope=RECALL_SCOPE,
       remark="The general tendency ch04.recall-others-below-024's sentence supports, with the "
       "sentence's own number (0.24, i.e. below 0.245 before rounding). Declared after seeds of "
       "these runs were seen, so judged on fresh seeds alone.",
       rule=Typical(
           "best of convolution and LSTM", below=0.245, fresh=1000,
           seen="seeds 0-11 of the convolution's and 0-4 of the LSTM's recall runs, seed 6's "
           "convolution mean (0.249) above 0.245 among them"))  # fmt: skip
def test_conv_and_lstm_recall_stay_below_024_on_average(conv_recall, lstm_recall, seed, measure):
    """On average over seeds, the better of the convolution's and the LSTM's mean recall
    accuracy stays below 0.24 (0.245 before rounding)."""
    best = max(conv_recall["mean_accuracy"], lstm_recall["mean_accuracy"])
    measure("best of convolution and LSTM", best)


def token_labels(tokens: list[int]) -> list[str]:
    """The example's tokens as the heatmap labels them: keys k0.., values v0.., the query ?."""
    return [f"k{t}" if t < N_SYMBOLS else f"v{t - N_SYMBOLS}" for t in tokens[:-1]] + ["?"]


def weights_on_value(probe: dict) -> list[float]:
    """Each layer-2 head's weight, in the example, on the value after the matching key."""
    target = 2 * probe["example_pair"] + 1
    return [h[target] for h in probe["example_weights"]]


@claim("ch04.induction-circuit", "likely",
       at=("all four heads put nearly all their weight", "most-attended token per head: ['v0'"),
       printed={"most-attended token per head, the chapter's example": "v0, v0, v0, v0 (correct)"},
       scope=RECALL_SCOPE + "; layer-2 attention at the query, the chapter's example, seed 0",
       figure=Figure(kind="heatmap", xlabel="earlier token", ylabel="head",
                     title="Layer-2 attention from the query, the chapter's example (lowest seed)"),
       remark="The chapter tags this [likely] 'since we inspected one example': the sentence "
       "describes its heatmap, one example in one run, so it is checked on that example (seed 0, "
       "the chapter's protocol) as a fact about it. Read over seeds it does not hold: the rule "
       "first declared here ('in most seeds, every layer-2 head's mean weight on the value over "
       "1,000 sequences is at least 0.9') was refuted once the planned looks ran to 12 seeds "
       "(2 of 12 seeds pass; lowest head's mean weights 0.93, 0.09, 0.58, 0.74, 0.87, 0.89, 0.96, "
       "0.36, 0.83, 0.65, 0.57, 0.35 for seeds 0-11 on another computer, CPU family 25 model 1), "
       "while attention recalls perfectly in 10 of those 12 (ch04.recall-attention): where the "
       "circuit forms, often one head carries less. The sentence does not claim more than its "
       "example, so this is a remark, not an erratum; this reading was chosen after those seeds "
       "were seen, and says so.")  # fmt: skip
def test_layer2_heads_attend_to_the_value_after_the_matching_key(attention_recall, seeds, measure):
    """In the chapter's inspected example (seed 0's trained attention recall model), all four
    layer-2 heads put nearly all their weight, at the query position, on the value token that
    follows the matching key: it is each head's most-attended token and gets at least 0.9 of
    its weight (an induction-head circuit, Olsson et al., 2022)."""
    if seeds[0] != 0:
        pytest.skip(f"the chapter's example is seed 0's; this run has {seeds}")
    probe = attention_recall[0]["probe"]
    for head, weight in enumerate(probe["mean_weight_on_value"]):
        measure(f"head {head}: mean weight on the value (1,000 sequences)", weight)
    example_ok = measure("heads on the value, the chapter's example",
                         sum(probe["example_argmax_is_value"]), printed=4)  # fmt: skip
    labels = token_labels(probe["example_tokens"])
    measure("layer-2 attention: example", probe["example_weights"], x=labels)
    on_value = measure("example: weight on the value, per head", weights_on_value(probe))
    assert example_ok == 4 and min(on_value) >= 0.9


def per_repetition(times: dict, ratio) -> list[float]:
    """``ratio(attention, convolution, LSTM)`` of each interleaved repetition's times."""
    mixers = zip(times["attention"], times["convolution"], times["LSTM"], strict=True)
    return [ratio(a, c, lstm) for a, c, lstm in mixers]


def training_steps(configs: dict[str, LMConfig], seed: int) -> dict:
    """One training step of each config's model, as a function to time: forward, backward and
    AdamW update on one 32 x 64 batch, the same batch for every model."""
    models = {name: build_lm(cfg, seed) for name, cfg in configs.items()}
    opts = {name: torch.optim.AdamW(m.parameters(), lr=3e-3) for name, m in models.items()}
    cfg = next(iter(configs.values()))
    gen = torch.Generator().manual_seed(seed)
    x, y = get_batch(shakespeare_corpus().train, cfg.batch_size, cfg.block_size, gen)

    def step(name: str) -> None:
        loss = F.cross_entropy(models[name](x).flatten(0, 1), y.flatten())
        opts[name].zero_grad(set_to_none=True)
        loss.backward()
        opts[name].step()

    return {name: functools.partial(step, name) for name in configs}


SAME_STEP = "attention / attention timed again, per repetition"


@claim("ch04.attention-slowest-cpu", "likely",
       at="Attention was also the slowest on one CPU thread",
       printed={"seconds for 600 steps (their laptop)": "45 conv, 46 LSTM, 65 attention"},
       scope="the three 205k-parameter Shakespeare models (seed 0), 32 x 64 batches, one CPU "
       "thread of this machine; 15 repetitions of 5 rounds, each round one step of every model "
       "in turn (attention's twice, the second as a control for the machine's noise), timed in "
       "this run",
       rule=Slower("attention / slower of the others, per repetition", factor=1.0,
                   noise=SAME_STEP))  # fmt: skip
def test_attention_is_the_slowest_mixer_per_step_on_one_cpu_thread(measure):
    """On one CPU thread a training step of the attention model takes longer than one of the
    convolution model and one of the LSTM model: the median over interleaved repetitions of
    attention's time over the slower other mixer's is above 1."""
    steps = training_steps({n: LMConfig(s) for n, s in MIXERS.items()}, 0)
    times = interleaved_times(steps, repetitions=15, calls=5, again="attention")
    for name in MIXERS:
        measure(f"seconds per step: {name}", statistics.median(times[name]), unit="s")
    # their laptop's seconds do not compare with this machine's: only the order is claimed
    per_rep = per_repetition(times, lambda a, c, lstm: a / max(c, lstm))
    measure("attention / slower of the others, per repetition", per_rep, unit="time ratio")
    same = [a / b for a, b in zip(times["attention"], times["attention (again)"], strict=True)]
    measure(SAME_STEP, same, unit="time ratio")
    over_conv = per_repetition(times, lambda a, c, lstm: a / c)
    measure("attention / convolution", statistics.median(over_conv), unit="time ratio")
    over_lstm = per_repetition(times, lambda a, c, lstm: a / lstm)
    measure("attention / LSTM", statistics.median(over_lstm), unit="time ratio")


@claim("ch04.attention-fastest-gpu", "likely", at="but on a GPU it is the fastest to train",
       printed={"claim": "on a GPU attention is the fastest to train"},
       scope="the three 205k-parameter Shakespeare models (seed 0) on one CUDA GPU, 32 x 64 "
       "batches; 15 interleaved repetitions of 5 training steps each, timed in this run",
       rule=Slower("faster of convolution and LSTM / attention, per repetition",
                   factor=1.0))  # fmt: skip
def test_attention_is_the_fastest_mixer_to_train_on_a_gpu(measure):
    """On a GPU a training step of the attention model is faster than one of the convolution
    model and one of the LSTM model: the median over interleaved repetitions of the faster other
    mixer's time over attention's is above 1."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU: the claim is about GPU training; this machine has none, "
                    "and a CPU timing (ch04.attention-slowest-cpu) says the opposite "
                    "order")  # fmt: skip
    configs = {n: LMConfig(s) for n, s in MIXERS.items()}
    timing = seconds_per_step(configs, 0, repetitions=15, device="cuda")
    for name, seconds in timing["seconds"].items():
        measure(f"seconds per step: {name}", seconds, unit="s")
    per_rep = per_repetition(timing["times"], lambda a, c, lstm: min(c, lstm) / a)
    measure("faster of convolution and LSTM / attention, per repetition", per_rep,
            unit="time ratio")  # fmt: skip
    measure("convolution / attention", timing["ratios"]["convolution/attention"], unit="time ratio")
    measure("LSTM / attention", timing["ratios"]["LSTM/attention"], unit="time ratio")


# Shakespeare language models (Step 3's experiment) -----------------------------------------


@claim("ch04.lm-conv-reach", "established", at="a convolution stack (reach 13 here)", scope="the "
       "chapter's 4-block, width-64 convolution language model, freshly initialised")  # fmt: skip
def test_the_convolution_language_model_sees_13_characters(seed, measure):
    """The 4-block convolution language model of the Shakespeare experiment predicts each
    character from the last 13 only (its reach), while the attention and LSTM models see every
    earlier character."""
    deterministic(seed)
    reach = {name: model_reach(MixerLM(65, spec)) for name, spec in MIXERS.items()}
    measure("reach, convolution LM", reach["convolution"], printed=13)
    assert reach == {"convolution": 13, "LSTM": 40, "attention": 40}


@claim("ch04.shakespeare-ranking", "likely",
       at=("The convolution wins clearly (1.708)", "came out the same every time"),
       scope=LM_SCOPE + " Estimators: the chapter's 10 random validation batches, and the whole "
       "validation split.",
       # the runs are deterministic: a mean that moves by 0.01 nats means the training changed
       drift={f"{name} val loss": 0.01 for name in MIXERS},
       figure=Figure(kind="band", xlabel="training step",
                     ylabel="validation loss (nats per character)", title="TinyShakespeare "
                     "validation loss during training (mean and ±1 sd over seeds)"),
       rule=Ranking(("convolution val loss", "LSTM val loss", "attention val loss"),
                    lower=True))  # fmt: skip
def test_shakespeare_loss_ranks_conv_then_lstm_then_attention(shakespeare, seed, measure):
    """After 600 steps on character-level TinyShakespeare, validation loss under the chapter's
    estimator (10 random batches) ranks convolution < LSTM < attention: each model's loss is
    below the next one's on average over seeds, paired by seed."""
    for name, run in shakespeare.items():
        book = printed(PRINTED_LOSS, name, seed)
        measure(f"{name} val loss", run["final_val_loss"], printed=book, unit="nats")
        measure(f"{name} full-split loss", run["full_val_loss"], unit="nats")
        measure(f"val curve: {name}", run["val_loss"], x=run["steps"], unit="nats")


@claim("ch04.shakespeare-gap", "likely", at="The convolution beats it by 0.13 nats",
       printed={"larger than": "the seed spread (under 0.02)"},
       scope=LM_SCOPE + " Paired by seed; the chapter's estimator and the whole validation split.",
       rule=Matches("gap attention - convolution", value=0.13, margin=0.05))  # fmt: skip
def test_convolution_beats_attention_by_about_013_nats(conv_lm, attention_lm, seed, measure):
    """The convolution model's validation loss is below attention's by about 0.13 nats: the
    mean over seeds of the paired gap (chapter's estimator) lies within 0.05 nats of 0.13."""
    gap = attention_lm["final_val_loss"] - conv_lm["final_val_loss"]
    measure("gap attention - convolution", gap, unit="nats", printed="0.13" if seed == 0 else None)
    full = attention_lm["full_val_loss"] - conv_lm["full_val_loss"]
    measure("gap, full split", full, unit="nats")


# Step 4 · Cheaper attention -----------------------------------------------------------------


KV_ROWS = {4: "attention (MHA)", 2: "GQA, 2 kv heads", 1: "MQA, 1 kv head"}  # the table's rows
SHARE_WORDS = {"half": 1 / 2, "third": 1 / 3, "quarter": 1 / 4}  # a share the text spells out


def kv_table_sizes(text: str) -> tuple[int, int, int]:
    """The query heads of the chapter's retraining code, and the layers and head width its
    table's code passes to kv_bytes_per_token, as the text prints them."""
    retrain = code_block(text, 'for name, n_kv in [("GQA, 2 kv heads", 2), ("MQA, 1 kv head", 1)]:')
    heads = int(number(retrain, "Attention(d, n_heads={}, n_kv_heads=n)"))
    table = code_block(text, "for name, n_kv in rows:")
    layers, head_dim = (int(v) for v in read(table, "kv_bytes_per_token({}, n_kv, {})"))
    return heads, layers, head_dim


@claim("ch04.kv-bytes-small", "established",
       at=("attention (MHA) 4 1,024", "GQA, 2 kv heads 2 512", "MQA, 1 kv head 1 256"),
       scope="the table's rows and the sizes its code passes, read from the text at run time, "
       "against the keys and values the chapter's language model (MixerLM: 4 blocks of width 64) "
       "computes in 16 bits on the CPU for 64 tokens")  # fmt: skip
@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_kv_cache_bytes_per_token_of_the_small_model(n_kv, measure):
    """The 4-layer model with head width 16 keeps 2 x 4 x n_kv x 16 x 2 bytes of 16-bit KV
    cache per token: 1,024 for MHA, 512 for GQA with 2 kv heads, 256 for MQA; the keys and
    values its layers compute have exactly that size."""
    text = source_text(CH04)
    kv_printed, book = read(text, f"{KV_ROWS[n_kv]} {{}} {{}} {{_}}")
    heads, layers, head_dim = kv_table_sizes(text)
    spec = MixerSpec("attention", n_heads=heads, n_kv_heads=int(kv_printed))
    model = MixerLM(65, spec)
    built = (len(model.blocks), model.blocks[0].mixer.head_dim)
    measure("layers (printed in the table's code)", built[0], printed=layers)
    measure("head width (printed in the table's code)", built[1], printed=head_dim)
    stored = measure("stored bytes/token", lm_kv_bytes_per_token(spec, 64), printed=book)
    assert built == (layers, head_dim) and stored == value(book)


def gqa_as_printed(text: str) -> tuple[str, int, int]:
    """The share of the cache the text gives GQA (a word), and its query and GQA kv heads."""
    (share,) = read(text, "GQA with {w} the cache reached")
    heads = int(number(text, "keeping {} query heads"))
    (gqa_kv,) = read(text, "with {} key-value heads (GQA) and {_} (MQA)")
    return share, heads, int(gqa_kv)


@claim("ch04.gqa-half", "established", at="GQA with half the cache reached 1.830",
       scope="the share and the heads read from the text at run time, against the keys and values "
       "the chapter's language model (MixerLM, 16-bit, on the CPU) computes with MHA and with GQA, "
       "at any length")  # fmt: skip
@pytest.mark.parametrize("seq_len", [1, 64, 1000])
def test_gqa_with_half_the_kv_heads_halves_the_cache(seq_len, measure):
    """Grouped-query attention with half as many kv heads as query heads keeps exactly half the
    KV cache of multi-head attention."""
    share, heads, gqa_kv = gqa_as_printed(source_text(CH04))
    mha = lm_kv_bytes_per_token(MixerSpec("attention", heads, n_kv_heads=heads), seq_len)
    gqa = lm_kv_bytes_per_token(MixerSpec("attention", heads, n_kv_heads=gqa_kv), seq_len)
    book = SHARE_WORDS.get(share)
    assert measure("GQA / MHA bytes", gqa / mha, printed=book) == book


@claim("ch04.kv-70b", "established", at=("70B-scale MHA (64 kv heads) : 10.74 GB",
       "70B-scale GQA (8 kv heads) : 1.34 GB", "70B-scale MQA (1 kv head) : 0.17 GB"),
       scope="LLaMA-2-70B-like shapes: 80 layers, 64 query heads of width 128, 16-bit, "
       "4,096 tokens; shapes on torch's meta device")  # fmt: skip
@pytest.mark.parametrize("n_kv", [64, 8, 1])
def test_kv_cache_of_a_70b_model_for_one_4096_token_sequence(n_kv, measure):
    """At 70B scale one 4,096-token sequence needs 10.74 GB of 16-bit KV cache with 64 kv heads,
    1.34 GB with 8 and 0.17 GB with one (GB = 10^9 bytes)."""
    book = {64: "10.74", 8: "1.34", 1: "0.17"}[n_kv]
    formula_gb = kv_bytes_per_token(80, n_kv, 128) * 4096 / 1e9
    real = measured_kv_bytes(80, 64, n_kv, 128, 4096) / 1e9
    real_gb = measure("GB", real, printed=book, unit="GB")
    assert real_gb == formula_gb and f"{real_gb:.2f}" == book


@claim("ch04.kv-quiz", "established", at=("131,072 bytes, or 128 KiB per token",
       "4 times larger, 512 KiB per token"), scope="32 layers, 32 query heads of width 128, "
       "16-bit; shapes on torch's meta device")  # fmt: skip
def test_kv_cache_quiz_32_layers_8_kv_heads(measure):
    """With 32 layers and 8 kv heads of width 128 in 16 bits, the KV cache takes 131,072 bytes
    (128 KiB) per token, and 4 times that (512 KiB) with 32 kv heads."""
    gqa = measure("bytes/token, 8 kv heads", measured_kv_bytes(32, 32, 8, 128, 1), printed=131_072)
    mha = measure("bytes/token, 32 kv heads", measured_kv_bytes(32, 32, 32, 128, 1),
                  printed=524_288)  # fmt: skip
    assert gqa == kv_bytes_per_token(32, 8, 128) == 131_072 == 128 * 1024
    assert mha == 4 * gqa == 512 * 1024


@claim("ch04.shared-kv-fewer-params", "established",
       at="The GQA and MQA models also have slightly fewer parameters",
       printed={"claim": "GQA and MQA models have slightly fewer parameters"},
       scope="the 4-block width-64 Shakespeare models with 4 query heads",
       remark="How much is 'slightly': 8.0% (GQA) and 12.0% (MQA) fewer parameters, the shares "
       "measured here. The chapter gives the word no bound and none was declared before these "
       "counts were known, so the word is shown, not judged; the exact counts are asserted. The "
       "difference confounds the quality comparisons of ch04.gqa-matches-mha and ch04.mqa-behind "
       "(smaller models, not only shared heads).")  # fmt: skip
def test_shared_kv_heads_mean_slightly_fewer_parameters(measure):
    """The GQA (2 kv heads) and MQA (1 kv head) language models have fewer parameters than the
    MHA one, and the whole difference is their smaller key-value projections: 4 layers x 64 x
    2 x (4 - n_kv) x 16 weights; the shares are recorded."""
    params = {n: count_params(MixerLM(65, s)) for n, s in VARIANTS.items()}
    for name, spec in VARIANTS.items():
        measure(f"{name} params", params[name], printed=204_992 if name == "MHA" else None)
        measure(f"{name} fewer than MHA (%)", 100 * (1 - params[name] / params["MHA"]))
        assert params["MHA"] - params[name] == 4 * 64 * 2 * (4 - spec.n_kv_heads) * 16
    assert params["MHA"] > params["GQA"] > params["MQA"]


@claim("ch04.gqa-matches-mha", "established",
       at="Across three seeds GQA matched multi-head attention",
       printed={"3 seeds": "1.842 ± 0.014 vs 1.839 ± 0.003"},
       scope=LM_SCOPE + " Paired by seed; the chapter's estimator and the whole validation split.",
       figure=Figure(kind="scatter", xlabel="KV-cache bytes per token (16-bit)",
                     title="KV-cache bytes per token against validation loss (each point one seed)",
                     ylabel="validation loss (nats per character)"),
       remark="Judged at the chapter's tag, [established] (alpha 0.01). The tag is on Ainslie et "
       "al.'s (2023) result at scale, which a 205k-parameter run does not test: this is its echo "
       "at the chapter's scale. Looks stop at 12 seeds (no look at 20): the seeds a look at 20 "
       "would need cost more training than this suite spends on one claim. MQA, which the rule "
       "does not read, is not trained for it (ch04.mqa-behind shows it). " + SHARED_KV_CONFOUND,
       # "within the seed spread": the chapter's printed 3-seed sd of GQA, 0.014 nats
       rule=Matches("GQA val loss", "MHA val loss", margin=0.014))  # fmt: skip
def test_gqa_matches_mha_within_the_seed_spread(attention_lm, gqa_lm, seed, measure):
    """Grouped-query attention with 2 kv heads matches MHA's validation loss within the seed
    spread: the mean paired difference (chapter's estimator) lies within ±0.014 nats, the
    chapter's printed seed sd."""
    for name, spec, run in (("MHA", MHA, attention_lm), ("GQA", GQA, gqa_lm)):
        book = printed(PRINTED_LOSS, name, seed)
        measure(f"{name} val loss", run["final_val_loss"], printed=book, unit="nats")
        measure(f"{name} full-split loss", run["full_val_loss"], unit="nats")
        bytes_per_token = kv_bytes_per_token(4, spec.n_kv_heads, 16)
        measure(f"loss by cache: {name}", run["final_val_loss"], x=bytes_per_token)


@claim("ch04.mqa-behind", "likely", at="MQA was behind in every seed, by 0.014 to 0.043",
       printed={"MQA - MHA per seed": "0.014 to 0.043", "MQA 3 seeds": "1.863 ± 0.014"},
       scope=LM_SCOPE + " Paired by seed; the chapter's estimator; the chapter's seeds 0, 1, 2.",
       remark=OWN_SEEDS + "As a statement about every seed it does not generalise: seed 7, read "
       "for other claims, gave a negative gap (-0.0216). The tendency the sentence supports, MQA "
       "behind MHA on average, is that claim's rule. " + SHARED_KV_CONFOUND)  # fmt: skip
def test_mqa_is_behind_mha_in_each_of_the_chapters_seeds(mqa_lm, attention_lm, seed, measure):
    """In each of the chapter's three seeds multi-query attention (one kv head) ends with a
    higher validation loss than MHA (chapter's estimator); the chapter printed 0.014 to 0.043."""
    book = {0: "0.014", 1: "0.043", 2: "0.016"}.get(seed)
    gap = mqa_lm["final_val_loss"] - attention_lm["final_val_loss"]
    assert measure("MQA - MHA", gap, unit="nats", printed=book) > 0


@claim("ch04.mqa-behind-on-average", "likely",
       at="MQA was behind in every seed, by 0.014 to 0.043",
       printed={"MQA - MHA per seed": "0.014 to 0.043"},
       scope=LM_SCOPE + " Paired by seed; the chapter's estimator and the whole validation split.",
       remark="The general tendency ch04.mqa-behind's sentence supports, in the sentence's "
       "direction (margin 0, the chapter's estimator). Declared after seeds of these runs were "
       "seen, so judged on fresh seeds alone. " + SHARED_KV_CONFOUND,
       rule=Beats(
           "MHA val loss", "MQA val loss", fresh=1000,
           seen="seeds 0-11 of the MQA runs and 0-7 of the MHA runs, seed 7's gap negative "
           "(-0.0216) among them"))  # fmt: skip
def test_mqa_is_behind_mha_on_average(mqa_lm, attention_lm, seed, measure):
    """Multi-query attention (one kv head) ends with a higher validation loss than MHA on
    average over seeds (the mean paired difference, chapter's estimator, is positive)."""
    mqa = measure("MQA val loss", mqa_lm["final_val_loss"], unit="nats")
    mha = measure("MHA val loss", attention_lm["final_val_loss"], unit="nats")
    measure("MQA - MHA", mqa - mha, unit="nats")


@claim("ch04.sliding-window-reach", "established",
       at="stacked layers still relay information further back",
       printed={"reach": "stacked windows relay information further back"},
       scope="random width-16, 4-head sliding-window attention with residuals, window 4, "
       "40 positions")  # fmt: skip
@pytest.mark.parametrize("layers", [1, 2, 3, 4])
def test_stacked_sliding_windows_relay_further_back(layers, seed, measure):
    """Attention limited to a window of W = 4 tokens, stacked L times, lets the last output see
    L(W-1)+1 positions: each layer relays information W-1 positions further."""
    deterministic(seed)
    stack = [SlidingWindowAttention(16, 4, window=4) for _ in range(layers)]
    assert measure("reach", gradient_reach(stack, 40, 16)) == 3 * layers + 1


# Step 5 · State-space models -------------------------------------------------------------


@claim("ch04.ssm-recurrence-is-convolution", "established",
       at="the whole sequence can also be computed as one long convolution",
       printed={"claim": "a linear recurrence can also be computed as one long convolution"},
       scope="a random stable 4-dimensional linear state-space model on 32 steps, "
       "float64")  # fmt: skip
def test_linear_recurrence_equals_a_long_convolution(seed, measure):
    """Because the state update h_t = A h_(t-1) + B x_t is linear, running it step by step gives
    the same outputs as one causal convolution with kernel C A^j B (to float64 rounding)."""
    assert measure("max abs difference", ssm_recurrence_vs_convolution(seed)) < FLOAT64


# Across three seeds ----------------------------------------------------------------------


def rounded_like(value, like: str) -> Decimal:
    """``value`` rounded half up, in decimal from its shortest repr, to the last digit of the
    printed text ``like`` ("0.20" -> two decimals)."""
    step = Decimal(1).scaleb(Decimal(like).as_tuple().exponent)
    return Decimal(repr(value) if isinstance(value, float) else value).quantize(
        step, rounding=ROUND_HALF_UP
    )


def our_table(recall: dict, lms: dict) -> dict[str, tuple[tuple[str, ...], list[float]]]:
    """Each row of the chapter's table: its printed values (seeds 0, 1, 2, mean, sd) and our
    values for seeds 0, 1, 2 (recall: mean accuracy; Shakespeare: validation loss)."""
    rows = {
        f"recall, {n}": (PRINTED_RECALL[n], [recall[n][s]["mean_accuracy"] for s in (0, 1, 2)])
        for n in MIXERS
    }
    return rows | {
        f"Shakespeare, {n}": (PRINTED_LOSS[n], [lms[n][s]["final_val_loss"] for s in (0, 1, 2)])
        for n in ("convolution", "LSTM", "attention", "GQA", "MQA")
    }


def made_like_the_chapter(values: list[float], book: tuple[str, ...]):
    """The row's mean and sd made as the chapter makes them (from the per-seed values rounded
    to the printed digits, then rounded to the printed mean's and sd's digits), or None when a
    per-seed value does not print the chapter's digits."""
    rounded = [rounded_like(v, book[s]) for s, v in enumerate(values)]
    if [str(r) for r in rounded] != list(book[:3]):
        return None
    mean = rounded_like(statistics.mean(rounded), book[3])
    return mean, rounded_like(statistics.stdev(rounded), book[4])


TABLE_ROWS = {
    **{f"recall, {n}": PRINTED_RECALL[n] for n in MIXERS},
    **{f"Shakespeare, {n}": PRINTED_LOSS[n] for n in ("convolution", "LSTM", "attention")},
    "Shakespeare, GQA": PRINTED_LOSS["GQA"],
    "Shakespeare, MQA": PRINTED_LOSS["MQA"],
}
TEXT_ROWS = {  # each row's label as the chapter's table prints it
    **{f"recall, {n}": f"recall accuracy, {n}" for n in MIXERS},
    **{f"Shakespeare, {n}": f"Shakespeare, {n}" for n in ("convolution", "LSTM")},
    "Shakespeare, attention": "Shakespeare, attention (MHA)",
    "Shakespeare, GQA": "GQA, 2 kv heads",
    "Shakespeare, MQA": "MQA, 1 kv head",
}


@claim("ch04.seed-table", "likely",
       at=("Mean ± sd, 3 seeds", "We reran the whole notebook twice more"),
       scope=RECALL_SCOPE + "; " + LM_SCOPE,
       # the table as printed, row by row: shown on every host, also where a row's digits differ
       printed={row: f"{v[3]} ± {v[4]} ({' / '.join(v[:3])})" for row, v in TABLE_ROWS.items()},
       remark="The chapter's table is made from its rounded per-seed values; so is ours, so a row "
       "reproduces exactly or not at all (the unrounded 3-seed mean is recorded beside: the "
       "LSTM's Shakespeare 1.8085 would print 1.809). ch04.seed-table-arithmetic checks the "
       "chapter's own rows against its printed per-seed values; this claim checks ours. On the "
       "first computer every per-seed value prints the chapter's digits; on the second, seed "
       "2's LSTM recall prints 0.22, which makes that row 0.22 ± 0.00 against the printed "
       "0.22 ± 0.01 (so does a third computer, CPU family 25 model 1); such a row is listed "
       "and its digit recorded, not asserted. " + LSTM_SEED2 + " " + MACHINE_DIGITS)  # fmt: skip
def test_the_three_seed_table_reproduces(recall, shakespeare, gqa_lm, mqa_lm, seeds, measure):
    """The chapter's table over seeds 0, 1 and 2 reproduces exactly when it is made the way the
    chapter makes it: each of our per-seed values rounded to the printed digits, then the mean
    and sample standard deviation of those three rounded values, rounded to the printed digits,
    equal the printed mean and sd in every row whose per-seed values print the chapter's
    digits. Rounding is half up, in decimal, from a value's shortest repr (the chapter's Python
    formatting differs only at exact ties). A per-seed digit that differs is the host's last
    digit: it is recorded as a printed number that does not reproduce (gated by the baseline on
    its own machine class), and its row is listed, not asserted."""
    if seeds[:3] != [0, 1, 2]:
        pytest.skip(f"the chapter's table is over seeds 0, 1, 2; this run has {seeds}")
    table = our_table(recall, {**shakespeare, "GQA": gqa_lm, "MQA": mqa_lm})
    differ, host_digits = [], []
    for row, (book, values) in table.items():
        for s, v in enumerate(values):
            measure(row, v, printed=book[s], seed=s)
        if (made := made_like_the_chapter(values, book)) is None:
            host_digits.append(row)
            continue
        mean, sd = made
        measure(f"{row}: mean of the rounded seeds", float(mean), printed=book[3])
        measure(f"{row}: sd of the rounded seeds", float(sd), printed=book[4])
        measure(f"{row}: mean of the unrounded seeds", statistics.mean(values))
        differ += [f"{row} mean {mean} (printed {book[3]})"] * (str(mean) != book[3])
        differ += [f"{row} sd {sd} (printed {book[4]})"] * (str(sd) != book[4])
    measure("rows whose per-seed digits differ on this host", ", ".join(host_digits) or "none")
    assert len(host_digits) < len(table), "no row's per-seed digits reproduce: nothing to check"
    assert not differ, "; ".join(differ)


def printed_row(row: str) -> tuple[str, str, list[float]]:
    """The printed mean, sd and per-seed values of a row of the chapter's table."""
    pattern = f"{TEXT_ROWS[row]} {{_}} {{}} ± {{}} {{}} / {{}} / {{}}"
    mean, sd, *per_seed = read(source_text(CH04), pattern)
    return mean, sd, [value(v) for v in per_seed]


@claim("ch04.seed-table-arithmetic", "established",
       at=("Mean ± sd, 3 seeds", "its average is 0.73 with a large spread"), scope="the chapter's "
       "own printed numbers, read from its table at run time: no experiment runs")  # fmt: skip
@pytest.mark.parametrize("row", list(TABLE_ROWS))
def test_the_seed_table_is_consistent_with_its_own_per_seed_values(row, measure):
    """Each row of the chapter's three-seed table is consistent with itself: the printed mean
    and standard deviation are the mean and sample standard deviation of the row's three
    printed per-seed values, rounded half up to the printed digits."""
    mean, sd, values = printed_row(row)
    measure("printed per-seed values", values)
    ours_mean = measure("mean of the printed seeds", statistics.mean(values), printed=mean)
    ours_sd = measure("sd of the printed seeds", statistics.stdev(values), printed=sd)
    assert reproduces(ours_mean, mean) and reproduces(ours_sd, sd)
