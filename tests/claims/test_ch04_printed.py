"""Chapter 4: printed quantities that exact arithmetic or a cheap deterministic check decides.

Each test is one of the chapter's printed numbers that no other claim checks, recomputed
from the chapter's own inputs (its example sentence, its set-ups, its formula, its own
table) or read off the real modules and data generator. Nothing here trains; each test
runs in well under a second.
"""

from __future__ import annotations

import itertools
import re
import statistics

import pytest
import torch
from claimbook import claim, source_text
from claimbook.declare.numbers import reproduces
from torch import nn

from experiments.kv_cache import kv_bytes_per_token, measured_kv_bytes
from experiments.lm_kv_cache import lm_kv_bytes_per_token
from experiments.modules import CONV, LSTM, MHA, LSTMMixer, MixerLM, MixerSpec, count_params
from experiments.reach import model_reach
from experiments.recall import N_PAIRS, N_SYMBOLS, distances, recall_batch
from experiments.seeding import deterministic
from tests.claims.printed_text import number, read, value
from tests.claims.sources import CH04

INTRO = "What changed, and why it works"
STEP1 = "Step 1 · Convolution"
STEP2 = "Step 2 · Recurrence"
STEP3 = "Step 3 · Self-attention"
STEP4 = "Step 4 · Cheaper attention: MQA, GQA, FlashAttention"
SEEDS = "Across three seeds"
SEED_TABLE = "the chapter's three-seed table and its sentence, read from the text at run time"
# A count or a share the chapter spells out in words, as a number.
COUNT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
SHARE_WORDS = {"half": 2, "third": 3, "quarter": 4, "fifth": 5, "sixth": 6, "eighth": 8}


def seed_losses(text: str, row: str) -> list[float]:
    """The three per-seed values (seeds 0 / 1 / 2) of ``row`` of the chapter's seed table."""
    return [value(v) for v in read(text, f"{row} {{_}} {{_}} ± {{_}} {{}} / {{}} / {{}}")]


@claim(
    id="ch04.keys-four-tokens",
    level="established",
    source=CH04,
    section=INTRO,
    at='carry "keys" across four tokens',
    printed={"tokens between 'keys' and 'are'": "four"},
    scope="the chapter's example phrase, read from the text at run time and split into words",
)
def test_keys_reaches_are_four_tokens_later(measure):
    """In the example phrase about the keys to the cabinet, the verb sits four word-tokens after
    the noun it agrees with, so the mixer must carry the noun four positions forward.
    """
    text = source_text(CH04)
    verb, noun = read(text, 'To agree "{w}" with "{w}" in')
    carried, count = read(text, 'something must carry "{w}" across {w} tokens')
    phrase = re.search(r'with "\w+" in (.+?), something must carry', text)[1]  # several words
    words = phrase.split()
    printed = COUNT_WORDS.index(count) if count in COUNT_WORDS else count
    measure("the example phrase", phrase)
    gap = measure(f"positions from '{noun}' to '{verb}'",
                  words.index(verb) - words.index(noun), printed=printed)  # fmt: skip
    assert carried == noun and gap == printed


@claim(
    id="ch04.fc-layer-billions",
    level="established",
    source=CH04,
    section=STEP1,
    at=(
        "For a 224 by 224 image that is billions of weights",
        "cuts the parameter count by orders of magnitude",
    ),
    printed={"fully connected, 224 x 224 in and out": "billions", "saving": "orders of magnitude"},
    scope="one-channel 224 x 224 image; bias-free layers counted on torch's meta device",
)
def test_fully_connected_image_layer_has_billions_of_weights(measure):
    """A fully connected layer from a 224 by 224 image to one of the same size has 224^4, about
    2.5 billion, weights; a 3 by 3 convolution doing the same map shares 9, more than eight
    orders of magnitude fewer.
    """
    pixels = 224 * 224
    with torch.device("meta"):
        dense = count_params(nn.Linear(pixels, pixels, bias=False))
        conv = count_params(nn.Conv2d(1, 1, 3, padding=1, bias=False))
    measure("fully connected weights", dense, printed="billions")
    ratio = measure("fully connected / convolution", dense / conv, printed="orders of magnitude")
    assert dense == pixels**2 and 1e9 <= dense < 1e10
    assert ratio > 1e8


@claim(
    id="ch04.lstm-width-params",
    level="established",
    source=CH04,
    section=STEP2,
    at='near 4 * dim^2.""" def __init__(self, dim, hidden=None)',
    printed={"LSTM mixer parameters": "near 4 * dim^2"},
    scope="the chapter's LSTM mixer (hidden int(0.56 x dim), output projection), widths 32-1024",
)
@pytest.mark.parametrize("dim", [32, 64, 128, 256, 512, 1024])
def test_lstm_mixer_width_keeps_parameters_near_4_dim_squared(dim, measure):
    """Giving the LSTM a hidden width of 0.56 x dim plus an output projection keeps the mixer's
    parameters near 4 dim^2, the count of the convolution and attention mixers: within 0.1% at
    the chapter's width 64 and within 3% at every width from 32 to 1024.
    """
    with torch.device("meta"):
        params = count_params(LSTMMixer(dim))
    relative = measure("params / (4 dim^2)", params / (4 * dim**2), printed="near 1")
    assert abs(relative - 1) < (1e-3 if dim == 64 else 0.03)


@claim(
    id="ch04.recall-geometry",
    level="established",
    source=CH04,
    section=STEP2,
    at=(
        "(2 tokens for the last pair, 20 for the first)",
        "A 2-layer convolution with kernel 4 sees the last 7 tokens",
        "tokens 16..31 def recall_batch",
        "each head's weights over the 20 earlier tokens",
    ),
    printed={
        "distance, last / first pair": "2 / 20",
        "2-layer kernel-4 window": "7 tokens, the last three pairs",
        "keys / values": "tokens 0..15 / 16..31",
        "tokens before the query": 20,
    },
    scope="the recall data generator (seed 0, 256 sequences) and a fresh 2-block conv model",
)
def test_recall_sequence_layout_and_the_convolution_window(measure):
    """A recall sequence is 20 key and value tokens then the query: the first pair's key lies 20
    tokens before the query and the last pair's 2; keys are tokens 0-15 and values 16-31; the
    2-block kernel-4 convolution model sees the last 7 tokens, which hold the keys of exactly
    the last three pairs.
    """
    x, answer, which = recall_batch(256, torch.Generator().manual_seed(0))
    query = x.shape[1] - 1
    measure("tokens before the query", query, printed=20)
    assert query == 2 * N_PAIRS == 20
    key_positions = list(range(0, query, 2))
    assert [query - p for p in key_positions] == distances()
    assert distances()[0] == 20 and distances()[-1] == 2
    keys, values = x[:, 0:query:2], x[:, 1:query:2]
    assert keys.min() >= 0 and keys.max() <= N_SYMBOLS - 1 == 15
    assert values.min() >= N_SYMBOLS and values.max() <= 2 * N_SYMBOLS - 1 == 31
    rows = torch.arange(len(x))
    assert torch.equal(x[:, -1], keys[rows, which]) and torch.equal(answer, values[rows, which])
    deterministic(0)
    window = measure("conv model reach", model_reach(MixerLM(32, CONV, n_layers=2)), printed=7)
    pairs_seen = measure("keys inside the window", sum(d < window for d in distances()), printed=3)
    assert window == 7 and pairs_seen == 3


@claim(
    id="ch04.recall-chance",
    level="established",
    source=CH04,
    section=STEP2,
    at=(
        "Guessing among the 16 values gives about 6%",
        "chance (about 0.06) for every key more than 7 tokens back",
    ),
    printed={"chance": "about 6% (about 0.06)"},
    scope="the chapter's text, read at run time, against the values the recall data generator "
    "draws (seed 0, 256 sequences)",
)
def test_guessing_among_16_values_is_about_6_percent(measure):
    """The recall task's values come from 16 symbols, so guessing uniformly among them is right
    1/16 = 6.25% of the time, which is the chapter's "about 6%" and "about 0.06" at their
    printed digits.
    """
    text = source_text(CH04)
    n_printed, percent = read(text, "Guessing among the {} values gives about {}%")
    fraction = number(text, "chance (about {}) for every key")
    x, _, _ = recall_batch(256, torch.Generator().manual_seed(0))
    values = x[:, 1 : x.shape[1] - 1 : 2]  # key, value, key, value, ..., query
    n = measure("distinct values in the data", values.unique().numel(), printed=n_printed)
    chance = measure("1 / values", 1 / n, printed=fraction)
    measure("1 / values, percent", 100 * chance, printed=percent, unit="%")
    assert n == value(n_printed)
    assert reproduces(100 * chance, percent) and reproduces(chance, fraction)


@claim(
    id="ch04.heatmap-example",
    level="established",
    source=CH04,
    section=STEP3,
    at=("query key: ?k9 correct value: v0", "so pair 7 is the eighth key-value pair"),
    printed={"query key": "k9", "correct value": "v0", "answer's pair": 7},
    scope="the chapter's inspected example: one sequence from a generator seeded 5",
)
def test_the_inspected_recall_example(measure):
    """The single example the chapter inspects (one sequence drawn with seed 5) asks for key 9,
    whose value is v0, held in pair 7 (counted from 0).
    """
    x, answer, which = recall_batch(1, torch.Generator().manual_seed(5))
    query = measure("query key", f"k{x[0, -1].item()}", printed="k9")
    value = measure("correct value", f"v{answer.item() - N_SYMBOLS}", printed="v0")
    pair = measure("answer's pair", which.item(), printed=7)
    assert (query, value, pair) == ("k9", "v0", 7)
    assert x[0, 2 * pair].item() == 9 and x[0, 2 * pair + 1].item() == answer.item()


@claim(
    id="ch04.lm-params-about-205k",
    level="established",
    source=CH04,
    section=STEP3,
    at=(
        "All three models have about 205,000 parameters",
        "600 steps on a 205,000-parameter model",
    ),
    printed={"parameters, each of the three LMs": "about 205,000"},
    scope="the 4-block width-64 Shakespeare models on the 65-character vocabulary",
)
@pytest.mark.parametrize("spec", [CONV, LSTM, MHA], ids=["convolution", "LSTM", "attention"])
def test_each_language_model_has_about_205000_parameters(spec, measure):
    """Each of the three Shakespeare language models has 205,000 parameters to the three
    significant figures the chapter prints (204,976 to 204,992).
    """
    params = measure("parameters", count_params(MixerLM(65, spec)), printed="about 205,000")
    assert round(params, -3) == 205_000


@claim(
    id="ch04.cache-shrinks-by-heads",
    level="established",
    source=CH04,
    section=STEP4,
    at=(
        "The cache shrinks by the number of heads",
        "a cache 8 times smaller than full multi-head attention",
        "MQA with a quarter of the cache",
    ),
    printed={
        "MQA vs MHA": "smaller by the number of heads",
        "LLaMA 2 70B, 8 kv heads vs 64": "8 times smaller",
        "4-head model: GQA (2) / MQA (1)": "half / a quarter",
    },
    scope="the heads and cache shares printed in the text, read at run time, against the keys "
    "and values the chapter's language model (MixerLM, 16-bit, 64 tokens) and, at LLaMA 2 70B's "
    "heads, two real attention layers of width-128 heads on torch's meta device actually compute",
)
@pytest.mark.parametrize("case", ["MQA, chapter", "GQA, chapter", "GQA, 70B", "MQA, 70B"])
def test_sharing_kv_heads_shrinks_the_cache_by_heads_per_kv_head(case, measure):
    """Sharing each key-value head among several query heads shrinks the KV cache by that many:
    MQA by the number of heads (4 in the chapter's model, a quarter of the cache; 64 with
    LLaMA 2 70B's heads), GQA with 2 of 4 kv heads to a half, and LLaMA 2 70B's 8 kv heads for
    64 query heads to an eighth.
    """
    text = source_text(CH04)
    heads = int(number(text, "keeping {} query heads"))
    gqa_kv, mqa_kv = (int(v) for v in read(text, "with {} key-value heads (GQA) and {} (MQA)"))
    big_heads, big_kv, times = (int(value(v)) for v in read(
        text, "uses {} query heads and {} key-value heads, a cache {} times smaller"))  # fmt: skip
    (gqa_share,) = read(text, "GQA with {w} the cache")
    (mqa_share,) = read(text, "MQA with a {w} of the cache")
    n_heads, n_kv, printed = {  # query heads, kv heads, {the text's words: its shrink factor}
        "MQA, chapter": (
            heads,
            mqa_kv,
            {"the number of heads": heads, f"a {mqa_share}": SHARE_WORDS.get(mqa_share)},
        ),
        "GQA, chapter": (heads, gqa_kv, {gqa_share: SHARE_WORDS.get(gqa_share)}),
        "GQA, 70B": (big_heads, big_kv, {f"{times} times smaller": times}),
        "MQA, 70B": (big_heads, mqa_kv, {"the number of heads": big_heads}),
    }[case]
    if "chapter" in case:
        full = lm_kv_bytes_per_token(MixerSpec("attention", n_heads=n_heads, n_kv_heads=n_heads))
        shared = lm_kv_bytes_per_token(MixerSpec("attention", n_heads=n_heads, n_kv_heads=n_kv))
    else:
        full = measured_kv_bytes(2, n_heads, n_heads, 128, 64)
        shared = measured_kv_bytes(2, n_heads, n_kv, 128, 64)
    for words, factor in printed.items():
        measure(f"MHA cache / shared cache (printed as {words})", full / shared, printed=factor)
    assert all(full / shared == factor for factor in printed.values())


@claim(
    id="ch04.kv-70b-prose",
    level="established",
    source=CH04,
    section=STEP4,
    at="10.7 GB of cache per 4,096-token sequence",
    printed={"MHA": "10.7 GB", "8 kv heads": "1.3 GB", "1 kv head": "0.17 GB"},
    scope="80 layers, kv heads of width 128, 16-bit, 4,096 tokens; GB = 10^9 bytes",
)
@pytest.mark.parametrize(("n_kv", "book"), [(64, "10.7"), (8, "1.3"), (1, "0.17")])
def test_the_70b_cache_sizes_in_the_prose(n_kv, book, measure):
    """The prose's cache sizes for one 4,096-token sequence at 70B scale, 10.7 GB with 64 kv
    heads, 1.3 GB with 8 and 0.17 GB with one, are the formula's values at the digits printed.
    """
    gb = measure("GB", kv_bytes_per_token(80, n_kv, 128) * 4096 / 1e9, printed=book, unit="GB")
    digits = len(book.split(".")[1])
    assert f"{gb:.{digits}f}" == book


@claim(
    id="ch04.mqa-gap-range",
    level="established",
    source=CH04,
    section=STEP4,
    at="MQA was behind in every seed, by 0.014 to 0.043",
    printed={"MQA - MHA, per seed": "0.014 to 0.043"},
    scope=SEED_TABLE + "; no experiment runs",
)
def test_mqa_gap_range_matches_the_seed_table(measure):
    """The range of MQA's per-seed deficit to MHA stated in the prose, 0.014 to 0.043 nats, is
    what the chapter's own per-seed table gives (0.014, 0.043 and 0.016), and every deficit is
    positive.
    """
    text = source_text(CH04)
    low, high = read(text, "MQA was behind in every seed, by {} to {}")
    mqa = seed_losses(text, "MQA, 1 kv head")
    mha = seed_losses(text, "Shakespeare, attention (MHA)")
    gaps = measure("MQA - MHA by seed", [round(m - a, 3) for m, a in zip(mqa, mha, strict=True)])
    measure("smallest deficit", min(gaps), printed=low, unit="nats")
    measure("largest deficit", max(gaps), printed=high, unit="nats")
    assert all(g > 0 for g in gaps)
    assert reproduces(min(gaps), low) and reproduces(max(gaps), high)


@claim(
    id="ch04.shakespeare-spreads",
    level="established",
    source=CH04,
    section=SEEDS,
    at="with spreads under 0.02, so those gaps are real",
    printed={"seed spreads": "under 0.02", "gaps": "larger than the spreads"},
    scope=SEED_TABLE + "; no experiment runs",
)
def test_shakespeare_spreads_are_under_002_and_below_the_gaps(measure):
    """In the chapter's three-seed table the Shakespeare losses of the convolution, the LSTM and
    attention each spread (sample sd) less than 0.02 nats across seeds, and each gap between
    neighbours in the ranking is larger than either model's spread.
    """
    text = source_text(CH04)
    bound = number(text, "with spreads under {}, so those gaps")
    order = ("convolution", "LSTM", "attention (MHA)")
    losses = {n: seed_losses(text, f"Shakespeare, {n}") for n in order}
    sd = {n: statistics.stdev(losses[n]) for n in order}
    mean = {n: statistics.mean(losses[n]) for n in order}
    for name in order:
        measure(f"sd: {name}", sd[name], printed=f"under {bound}", unit="nats")
    assert max(sd.values()) < value(bound)
    for better, worse in itertools.pairwise(order):
        gap = measure(f"gap {worse} - {better}", mean[worse] - mean[better], unit="nats")
        assert gap > max(sd[better], sd[worse])


@claim(
    id="ch04.lstm-cell-copies",
    level="established",
    source=CH04,
    section=STEP2,
    at="When the forget gate is near 1 and the input gate near 0",
    printed={"forget gate": "near 1", "input gate": "near 0", "gradient": "almost unchanged"},
    scope="one random width-16 torch LSTM, gate biases set to +-30, 100 steps, float64",
)
def test_lstm_cell_copies_itself_when_forget_is_1_and_input_0(measure):
    """With its forget gate saturated near 1 and its input gate near 0, an LSTM cell carries its
    state forward unchanged, and the gradient of the last cell state with respect to the first
    passes through 100 steps almost unchanged (within 1e-6 of 1).
    """
    deterministic(0)
    lstm = nn.LSTM(16, 16, batch_first=True).double()
    with torch.no_grad():  # PyTorch's gate order in the biases: input, forget, cell, output
        lstm.bias_ih_l0[:16] = -30.0
        lstm.bias_ih_l0[16:32] = 30.0
    c0 = torch.randn(1, 1, 16, dtype=torch.float64, requires_grad=True)
    h0 = torch.zeros(1, 1, 16, dtype=torch.float64)
    _, (_, c_last) = lstm(torch.randn(1, 100, 16, dtype=torch.float64), (h0, c0))
    c_last.sum().backward()
    drift = measure("max |c_100 - c_0|", (c_last - c0).abs().max().item())
    grad = measure("max |dc_100/dc_0 - 1|", (c0.grad - 1).abs().max().item())
    assert drift < 1e-6 and grad < 1e-6
