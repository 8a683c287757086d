"""The attention deep dive, part 2: patterns, a full layer, and the modern optimisations.

Each test is one claim of the article, in our words, grouped by the article's
parts. Arithmetic is read off real modules (parameter counts, cache tensors);
mechanisms are checked on real computations; growth claims are judged by the
exponent fitted over several sizes; training claims use small CPU set-ups
stated on each claim. Where the article prints something false, the test still
asserts the printed value and the claim is marked an erratum.
"""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest
import torch
from claimbook import AllOf, Beats, Figure, Matches, Slower, Typical, claim, source_text, training
from claimbook.declare.numbers import reproduces

from experiments.decoding import cached_logits, decoding_flops, recomputed_logits
from experiments.extrapolation import ExtrapolationConfig, train_extrapolation
from experiments.gpt2 import GPT2, GPT2Config, layer_trace, parameter_breakdown
from experiments.induction import VOCAB, InductionConfig, train_induction
from experiments.kv_cache import measured_kv_bytes
from experiments.lm import LMConfig, train_lm
from experiments.local import banded_local_attention, masked_local_attention, window_mask
from experiments.modules import (
    GELUMLP,
    GQA,
    MHA,
    MQA,
    Attention,
    MixerLM,
    RMSNorm,
    SwiGLU,
    count_params,
)
from experiments.norms import layernorm_statistics
from experiments.profiling import growth_exponent
from experiments.reference import first_token_sensitivity, gpt2_small, llama_7b
from experiments.seeding import deterministic
from experiments.tiled import online_normaliser, standard_attention, tiled_attention
from tests.claims import errata
from tests.claims.dd2_experiments import (
    allowed_positions,
    attention_peaks,
    banded_flops,
    change_before_edit,
    largest_gap,
    llama7b_kv_bytes,
    median_ratio,
    mha_kv_bytes,
    near,
    normals,
    per_n_w_d,
    skip_without_cuda,
    speedups_per_repetition,
    token_ids,
)
from tests.claims.position_examples import BIDIRECTIONAL, settings
from tests.claims.printed_text import read
from tests.claims.sources import DD2

FLOAT64 = 1e-9  # float64 rounding is ~1e-15 here; any real mistake is orders above 1e-9
LINEAR, QUADRATIC = 1.0, 2.0
GIB = 2**30  # the article's "GB" for LLaMA 7B: 524,288 B x 2,048 = exactly 1 GiB

INDUCTION_SCOPE = (
    f"attention models of width 64 (4 heads, RoPE, SwiGLU), 1 or 2 blocks; 1,500 AdamW steps of "
    f"64 sequences of 32 tokens over a {VOCAB}-token vocabulary: a segment of 4-16 distinct "
    f"tokens, its repeat, then random filler; accuracy on 2,000 fresh sequences, counting only "
    f"the positions the repeat determines; one CPU thread"
)
LM_SCOPE = (
    "4-block width-64 attention models of the chapter (about 205k parameters), 600 AdamW steps "
    "of 32 x 64 characters of TinyShakespeare, the chapter's recipe; one CPU thread. Says "
    "nothing about models orders of magnitude larger."
)
TINY_GPT2 = GPT2Config(
    vocab_size=128, n_positions=64, d_model=64, n_heads=4, n_layers=2, d_ff=256
)  # the article's layer at a width where float64 checks are instant


# A model deep enough for the article's layer numbering (early 1-4, middle 5-20, late 21+):
# 24 blocks of width 32 (4 heads of 8), 300 steps of the chapter's recipe; about 300k
# parameters, under a minute of training on one thread.
DEEP = {"dim": 32, "n_layers": 24, "steps": 300}
EARLY, MIDDLE, LATE = range(1, 5), range(5, 21), range(21, 25)  # the article's layers, from 1
DEEP_SCOPE = (
    "24-block width-32 attention models (4 heads of 8; about 300k parameters), 300 AdamW steps "
    "of 32 x 64 characters of TinyShakespeare, the chapter's recipe otherwise; one CPU thread. "
    "Deep enough that the article's early (1-4), middle (5-20) and late (21+) layers all exist; "
    "says nothing about models orders of magnitude wider or longer trained."
)


PROTOCOL_ESTIMATOR = (
    "Judged on the book's protocol estimator, the mean loss of the last 10 validation batches, "
    "fixed before any run; the whole split's loss is measured beside it. An earlier version "
    "judged the whole split, a switch made after 3 seeds had been seen. "
)
SHARED_KV_CONFOUND = (
    "The chapter's GQA and MQA models also have 8.0% and 12.0% fewer parameters than its MHA "
    "model (188,608 and 180,416 against 204,992, from their smaller key-value projections; "
    "ch04.shared-kv-fewer-params), so a quality difference between them mixes the shared kv "
    "heads with a smaller model; these runs do not separate the two."
)

# The training runs the claims read, one fixture each (claimbook.training): the chapter's
# Shakespeare recipe with its variants, and the induction task at 2 and 1 layers.
mha_lm = training(train_lm, LMConfig(MHA))
mqa_lm = training(train_lm, LMConfig(MQA))
gqa_lm = training(train_lm, LMConfig(GQA))
layernorm_lm = training(train_lm, LMConfig(MHA, norm="layer"))
gelu_lm = training(train_lm, LMConfig(MHA, ffn="gelu"))
deep_lm = training(train_lm, LMConfig(MHA, **DEEP))
induction_2_layers = training(train_induction, InductionConfig(n_layers=2))
induction_1_layer = training(train_induction, InductionConfig(n_layers=1))
rope_at_64 = training(train_extrapolation, ExtrapolationConfig("rope"))
learned_at_64 = training(train_extrapolation, ExtrapolationConfig("learned"))


def mean_over(means: list[float], layers: range) -> float:
    """The mean of per-layer values (a list from layer 1) over the layers counted from 1."""
    return statistics.mean(means[i - 1] for i in layers)


# Part 6 · Attention patterns -----------------------------------------------------------------


@claim("dd2.induction-needs-two-layers", "likely",
       at="Induction heads typically require two attention heads", scope=INDUCTION_SCOPE,
       printed={"claim": "an induction head needs two attention layers working together"},
       rule=AllOf((Typical("accuracy, 2 layers", above=0.9),
                   Typical("accuracy, 1 layer", below=0.5))))  # fmt: skip
def test_two_attention_layers_solve_induction_and_one_does_not(
    induction_2_layers, induction_1_layer, seed, measure
):
    """Continuing a repeated segment is solved by a two-layer attention model and not by a
    one-layer one trained the same way: typically over 90% of the determined tokens right with
    two layers, under 50% with one."""
    measure("accuracy, 2 layers", induction_2_layers["accuracy"])
    measure("accuracy, 1 layer", induction_1_layer["accuracy"])
    measure("chance", 1 / VOCAB)


@claim("dd2.induction-two-heads", "likely",
       at=("Previous token head (in an earlier layer)", "Induction head (in a later layer)"),
       printed={"circuit": "a previous-token head in an earlier layer, an induction head later"},
       scope=INDUCTION_SCOPE + ". Weights read on the same 2,000 fresh sequences.",
       rule=AllOf((Typical("strongest layer-1 previous-token head", above=0.5),
                   Typical("strongest layer-2 induction head", above=0.5))))  # fmt: skip
def test_induction_circuit_is_previous_token_head_then_induction_head(
    induction_2_layers, seed, measure
):
    """In the trained two-layer model, typically some first-layer head puts most of its weight
    (over half) on the previous token, and some second-layer head, at the repeat, puts most of
    its weight on the token that followed the current token's first occurrence."""
    probe = induction_2_layers["probe"]
    previous, target = probe["previous_token"], probe["induction_target"]
    strongest_previous = max(measure("layer 1 previous-token weight, per head", previous[0]))
    strongest_target = max(measure("layer 2 weight on the induction target, per head", target[1]))
    measure("layer 1 weight on the induction target, per head", target[0])
    measure("strongest layer-1 previous-token head", strongest_previous)
    measure("strongest layer-2 induction head", strongest_target)


@claim("dd2.previous-token-heads", "likely", at="simply attend to the immediately preceding token",
       printed={"claim": "some heads attend mostly to the immediately preceding token"},
       scope=LM_SCOPE + " Weights read on one validation batch of 32 x 64 characters.",
       remark="What this claim tests is that such heads exist in a trained model. The article's "
       "'in an earlier layer' is relative to the induction head it feeds: dd2.induction-two-heads "
       "tests that order (layer 1 before layer 2). Its 'early layers (1-4)' numbering of large "
       "models is dd2.layer-locality's, on a 24-layer model.",
       rule=Typical(
           "strongest previous-token head", above=0.5, fresh=1000,
           seen="first declared on the 24-layer model, which failed it; moved to this 4-layer "
           "model after, whose seeds 0-7 had been trained for other claims (its lower bound then "
           "0.5001 against 0.5)",
       ))  # fmt: skip
def test_trained_lm_has_a_previous_token_head(mha_lm, seed, measure):
    """The chapter's trained Shakespeare attention model typically has a head that puts most of
    its weight (over half, averaged over positions) on the previous character."""
    per_layer = mha_lm["probe"]["previous_token"]
    for layer, heads in enumerate(per_layer, start=1):
        measure(f"previous-token weight, layer {layer}", heads)
    measure("strongest previous-token head", max(max(h) for h in per_layer))


@claim("dd2.layer-locality", "speculative",
       at=("Research has shown a rough progression", "Early layers (1-4):"),
       printed={"early layers (1-4)": "local patterns, previous token relationships",
                "middle layers (5-20)": "semantic grouping, entity tracking, induction patterns"},
       scope=DEEP_SCOPE + " Mean attention distance on one validation batch.",
       stand_in="the article summarises trained LLMs; these deep, narrow character models are "
       "undertrained (their validation loss, on this page, stays well above the 4-layer model's "
       "1.84 nats after 300 steps): a verdict here is about them, not about those LLMs.",
       remark="Uniform causal attention over the 64-character window looks about 16 characters "
       "back on average.",
       figure=Figure(title="Mean attention distance by layer, 24-layer Shakespeare attention model",
                     xlabel="layer", ylabel="mean query-key distance (characters)"),
       # declared before running: "local patterns" early and longer-range structure (grouping,
       # entity tracking, induction) in the middle, read as attention distance: the early
       # layers' mean query-key distance is below the middle layers', paired by seed
       rule=Beats("early layers' mean distance", "middle layers' mean distance", lower=True),
)  # fmt: skip
def test_early_layers_attend_more_locally(deep_lm, seed, measure):
    """In a trained 24-layer Shakespeare attention model, the article's early layers (1-4) look
    less far back than its middle layers (5-20): the mean query-key distance under the weights,
    averaged over the heads of those layers, is lower, on average over seeds, paired by seed."""
    measure("validation loss after 300 steps", deep_lm["final_val_loss"], unit="nats")
    means = [statistics.mean(heads) for heads in deep_lm["probe"]["mean_distance"]]
    measure("mean attention distance by layer", means, unit="characters", x=list(range(1, 25)))
    for name, layers in (("early", EARLY), ("middle", MIDDLE), ("late", LATE)):
        measure(f"{name} layers' mean distance", mean_over(means, layers), unit="characters")


# Part 7 · Putting it all together -------------------------------------------------------------


@claim("dd2.layer-trace-small", "established",
       at=("Q_h = X_norm · W_Q_h", "# Shape [3, 3] - each position", "# Shape [3, 512]"),
       scope="the article's layer at d_model 512 with 8 heads, on 3 tokens")  # fmt: skip
def test_three_token_trace_shapes(measure):
    """Three tokens through one layer of width 512 with 8 heads: each head's Q, K and V are 3 x
    64, its scores 3 x 3, and the layer's output 3 x 512."""
    deterministic(0)
    trace = layer_trace(GPT2Config(d_model=512, n_heads=8), seq_len=3)
    for name in "QKV":
        measure.reproduces(f"{name} per head", trace[name][2:], [3, 64])
    measure.reproduces("scores per head", trace["scores"][2:], [3, 3])
    measure.reproduces("output", trace["block_output"][1:], [3, 512])


@claim("dd2.layernorm-stats", "established", at="to have zero mean and unit variance",
       printed={"mean": 0, "variance": 1},
       scope="torch.nn.LayerNorm (eps 1e-5, no affine part) on 64 x 768 float64 inputs of mean "
       "1, sd 3")  # fmt: skip
def test_layernorm_gives_zero_mean_unit_variance(seed, measure):
    """Before its scale and shift, LayerNorm leaves every position with mean 0 and variance 1,
    up to the epsilon in its denominator (variance 1 - eps / var(x), no further)."""
    stats = layernorm_statistics(normals(seed, 64, 768) * 3 + 1)
    mean = measure("largest |mean|", stats["max_abs_mean"])
    var = measure("largest |variance - 1|", stats["max_abs_variance_minus_1"])
    bound = measure("epsilon's bound on |variance - 1|", stats["epsilon_bound"])
    assert mean <= FLOAT64
    assert var <= bound + FLOAT64


@claim("dd2.softmax-rows", "established", at="# Shape [3, 3], rows sum to 1",
       printed={"rows sum to": 1},
       scope="a random causal attention layer (width 64, 4 heads, RoPE) in float64 on 2 x 50 "
       "inputs")  # fmt: skip
def test_attention_weights_are_non_negative_rows_summing_to_one(seed, measure):
    """Causal attention weights are non-negative, each query's row sums to 1, and every weight
    on a future position is exactly 0."""
    deterministic(seed)
    w = Attention(64, 4).double().attention_weights(torch.randn(2, 50, 64, dtype=torch.float64))
    smallest = measure("smallest weight", w.min().item())  # w: (B, H, T, T)
    row_error = measure("largest |row sum - 1|", (w.sum(-1) - 1).abs().max().item(), printed=0)
    future = measure("largest weight on a future position", w.triu(1).abs().max().item())
    assert smallest >= 0 and row_error <= FLOAT64 and future == 0


@claim("dd2.gpt2-shapes", "established",
       at=("[1, 512, 768] → [1, 12, 512, 64]", "→ [1, 12, 512, 512]", "OUTPUT: X [1, 512, 768]"),
       scope="one block of the article's GPT-2 small (d_model 768, 12 heads) on a random 1 x 512 "
       "input, run for real")  # fmt: skip
def test_gpt2_small_layer_shapes(measure):
    """Through one GPT-2 small layer on 512 tokens, Q, K and V are (1, 12, 512, 64), the scores
    (1, 12, 512, 512), and the attention and block outputs (1, 512, 768)."""
    deterministic(0)
    trace = layer_trace(GPT2Config(), seq_len=512)
    for name in ("Q", "K", "V"):
        measure.reproduces(name, trace[name], [1, 12, 512, 64])
    measure.reproduces("scores", trace["scores"], [1, 12, 512, 512])
    measure.reproduces("attention output", trace["output"], [1, 512, 768])
    measure.reproduces("block output", trace["block_output"], [1, 512, 768])


GPT2_PRINTED = {
    "token_embeddings": 38_597_376,
    "position_embeddings": 786_432,
    "embeddings": 39_383_808,
    "attention": 2_360_832,
    "mlp": 4_723_968,
    "layer": 7_084_800,
    "layers": 85_017_600,
    "final_norm": 1_536,
    "total": 124_402_944,
}


@claim("dd2.gpt2-params", "established",
       at=("GRAND TOTAL:", "Per layer total:", "Embedding total:"),
       scope="the GPT-2 small the article describes (12 pre-norm layers, d_model 768, bias-free "
       "Q/K/V/O, MLP 3,072 with biases, learned positions, tied head), built on the meta device "
       "and its parameters counted")  # fmt: skip
def test_article_gpt2_parameter_breakdown(measure):
    """The GPT-2 small the article describes, built as modules, has exactly the article's
    parameter counts for every part, and 124,402,944 in all."""
    counts = parameter_breakdown()
    for part, printed in GPT2_PRINTED.items():
        measure(part.replace("_", " "), counts[part], printed=printed)
    assert counts == GPT2_PRINTED


def percent(part: int, total: int) -> float:
    return 100 * part / total


GPT2_PERCENT_PRINTED = {
    "token embeddings (%)": ("token_embeddings", "31.1"),
    "position embeddings (%)": ("position_embeddings", "0.6"),
    "embedding total (%)": ("embeddings", "31.8"),
    "embeddings, summary (%)": ("embeddings", "31.7"),
    "one layer (%)": ("layer", "5.7"),
    "12 layers (%)": ("layers", "68.5"),
    "one layer's attention (%)": ("attention", "1.9"),
    "one layer's MLP (%)": ("mlp", "3.8"),
}
GPT2_BY_TYPE_PRINTED = {  # the totals by type: name -> (part, millions, share)
    "all attention": ("attention", "28.3", "22.8"),
    "all MLP": ("mlp", "56.7", "45.5"),
}


def gpt2_counts(counts: dict[str, int]) -> dict[str, int]:
    """The count behind each printed share, by name: the parts, and the totals by type over
    the layers, each layer's LayerNorms apart (the box lists them as a type of their own)."""
    layers, norm = counts["layers"] // counts["layer"], counts["final_norm"]
    out = {name.removesuffix(" (%)"): counts[p] for name, (p, _) in GPT2_PERCENT_PRINTED.items()}
    for name, (part, _, _) in GPT2_BY_TYPE_PRINTED.items():
        out[name] = layers * (counts[part] - norm)
    return out


def with_attention_biases(counts: dict[str, int]) -> dict:
    """The box's counts with a bias for each of W_Q, W_K, W_V and W_O (d_model each)."""
    cfg = GPT2Config()
    per_layer, every = 4 * cfg.d_model, 4 * cfg.d_model * cfg.n_layers
    extra = {"attention": per_layer, "layer": per_layer, "layers": every, "total": every}
    return {part: n + extra.get(part, 0) for part, n in counts.items()}


def gpt2_shares(counts: dict[str, int]):
    """Each printed share (and each printed by-type total in millions) beside the value the
    counts give: (measure name, value, printed, the count's name or None), in the order the
    article prints them."""
    total, parts = counts["total"], gpt2_counts(counts)
    for name, (_, printed) in GPT2_PERCENT_PRINTED.items():
        part = name.removesuffix(" (%)")
        yield name, percent(parts[part], total), printed, part
    for name, (_, millions, share) in GPT2_BY_TYPE_PRINTED.items():
        yield f"{name} (M)", parts[name] / 1e6, millions, None
        yield f"{name} (%)", percent(parts[name], total), share, name


@claim("dd2.gpt2-percentages", "established",
       at=("(31.1%)", "(31.8%)", "(68.5%)", "MLP (all):"),  # the four misprinted shares
       scope="shares of the article's own total, 124,402,944, from the same built model; the "
       "totals by type with each layer's LayerNorms apart, as the box lists them",
       erratum="four of the printed shares do not follow from the printed counts: token "
       "embeddings are 31.0% (printed 31.1%), the embedding total 31.7% (31.8%), the 12 layers "
       "68.3% (68.5%) and all MLPs 45.6% (45.5%). The correction gives the shares over the "
       "total with the attention biases the box also leaves out (dd2.bias-fact-in-param-count), "
       "124,439,808, as that correction does: there the MLPs' 45.5% holds and both embedding "
       "shares read 31.6%", error=errata.GPT2_SHARES)  # fmt: skip
def test_article_gpt2_percentages(measure):
    """Each share the article prints beside its GPT-2 small counts is that count over the
    124,402,944 total, rounded to the printed digit; so are the totals by type (all attention
    28.3M, 22.8%; all MLP 56.7M, 45.5%)."""
    counts, ok = parameter_breakdown(), []
    biased = with_attention_biases(counts)
    right, wrong = gpt2_counts(biased), []
    for name, value, printed, part in gpt2_shares(counts):
        ok.append(round(measure(name, value, printed=printed), 1) == float(printed))
        if part is not None and not reproduces(percent(right[part], biased["total"]), printed):
            wrong.append((part.replace(", summary", " by type"), right[part]))
    if not all(ok):
        added = biased["total"] - counts["total"]
        measure.correct(errata.gpt2_shares_correction(wrong, biased["total"], added))
    assert all(ok)


@claim("dd2.gpt2-reference-total", "established",
       at=("GRAND TOTAL:", "Attention subtotal:"),  # the counts without the attention biases
       scope="GPT-2 small as Hugging Face transformers builds it from its default GPT2Config "
       "(meta device, no weights downloaded)",
       erratum="the real GPT-2 small has 124,439,808 parameters: its Q/K/V and output "
       "projections carry biases (3,072 per layer, 36,864 in all) that the article's breakdown "
       "leaves out", error=errata.GPT2_ATTENTION_BIASES)  # fmt: skip
def test_gpt2_small_reference_has_the_article_total(measure):
    """GPT-2 small, as the reference implementation builds it, has the article's 124,402,944
    parameters and 2,360,832 per layer in attention (with its LayerNorm)."""
    ref = gpt2_small()
    total = measure("total", ref["params"], printed=124_402_944)
    attention = measure("per-layer attention", ref["attention_params"], printed=2_360_832)
    biases = measure("attention biases per layer", ref["attention_biases"])
    measure("rounded (millions)", round(ref["params"] / 1e6), printed=124)
    measure.correct(
        f"GPT-2 small has {total:,} parameters: its attention subtotal is {attention:,} per "
        f"layer with the {biases:,} biases of W_Q, W_K, W_V and W_O"
    )
    assert (total, attention) == (124_402_944, 2_360_832)


FIRST_TOKEN_CORRECTION = (
    "In causal models each position reads only itself and the positions before it, so "
    'the representation of "The" holds nothing about "cat" and "sat" at any layer; '
    "later tokens write to the residual streams after them, and only bidirectional "
    "models update early tokens from later ones."
)


@claim("dd2.causal-first-token", "established", at='the representation of "The" at layer 20',
       printed={"claim": "in causal models, an early token's deep representation holds "
                "information about the tokens after it"},
       scope="a 24-layer causal GPT-2 (transformers, random weights, width 64); two 3-token "
       "inputs sharing only the first token",
       erratum="in a causal model no position ever reads a later one: the first token's hidden "
       "state is identical (difference exactly 0) in every one of 24 layers whatever follows it",
       error="causal-first-token-sees-later")  # fmt: skip
def test_first_token_representation_carries_later_tokens(seed, measure):
    """In a causal decoder, the first token's representation at deep layers changes when the
    tokens after it change (information from later tokens reaches it through the residual
    stream)."""
    moved = measure("largest change at position 0, per layer", first_token_sensitivity(24, seed))
    reaches = "yes" if max(moved[1:]) > 0 else "no"
    measure("later tokens reach the first position", reaches, printed="yes")
    if max(moved[1:]) == 0:  # measured: no later token ever reached the first position
        measure.correct(FIRST_TOKEN_CORRECTION)
    assert reaches == "yes"


# Part 8 · Causal masking and the KV cache -----------------------------------------------------


MASK_4 = [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]


@claim("dd2.causal-mask", "established",
       at=("Attention Mask (for sequence length 4):", "can only attend to positions ≤ i"),
       scope="the article's layer (2 layers, width 64, 4 heads) and the chapter's 4-block "
       "attention language model (RoPE, fused causal attention), random weights, float64, 2 x 24 "
       "tokens")  # fmt: skip
def test_causal_mask_keeps_earlier_outputs_blind_to_later_tokens(seed, measure):
    """Under the causal mask, position i attends exactly to positions 0..i (the article's 4 x 4
    pattern), so changing any later token leaves every earlier position's output unchanged, in
    the article's layer and in the chapter's attention model alike."""
    allowed = measure("allowed positions, 4 tokens", allowed_positions(seed), printed=MASK_4)
    models = {"article's GPT-2 layer": GPT2(TINY_GPT2),  # built after the mask's layer, in turn
              "chapter's attention LM": MixerLM(TINY_GPT2.vocab_size, MHA)}  # fmt: skip
    idx = token_ids(seed, TINY_GPT2.vocab_size, 24)
    moved = [measure(f"largest change before the edited position ({name})",
                     change_before_edit(model, idx, TINY_GPT2.vocab_size))
             for name, model in models.items()]  # fmt: skip
    assert allowed == MASK_4
    assert all(change == 0 for change in moved)


@claim("dd2.kv-cache-equivalence", "established", at="KV-cache stores the K and V vectors",
       printed={"claim": "decoding with a KV cache gives the logits of full recomputation"},
       scope="the article's layer (2 layers, width 64, 4 heads) with random weights, float64, "
       "2 x 40 tokens")  # fmt: skip
def test_kv_cache_decoding_equals_recomputation(seed, measure):
    """Feeding tokens one at a time through a KV cache gives the same logits, at every position,
    as recomputing each prefix from scratch (and as one full pass)."""
    deterministic(seed)
    model, idx = GPT2(TINY_GPT2).double().eval(), token_ids(seed, TINY_GPT2.vocab_size, 40)
    cached, fresh = cached_logits(model, idx), recomputed_logits(model, idx)
    with torch.no_grad():
        full = model(idx)
    gap = measure("largest |cached - recomputed|", largest_gap(cached, fresh))
    gap_full = measure("largest |cached - one full pass|", largest_gap(cached, full))
    assert gap <= FLOAT64 and gap_full <= FLOAT64


CONTEXTS = [4096, 8192, 16384, 32768, 65536]


@claim("dd2.kv-cache-linear", "established", at="from O(n²) to O(n) in computation per token",
       printed={"with a cache": "O(n) per token", "without": "O(n²) per token"},
       scope="FLOPs of the matrix products torch dispatches (FlopCounterMode) to produce one "
       "token after 4K-64K tokens of context, the article's layer at 2 layers, width 64, 4 heads, "
       "counted on the meta device",
       figure=Figure(title="Work to produce one token, with and without a KV cache",
                     xlabel="context (tokens)", ylabel="FLOPs per new token", log=True),
)  # fmt: skip
def test_kv_cache_makes_per_token_work_linear(measure):
    """The work to produce the next token grows linearly with the context when keys and values
    are cached (fitted exponent within 0.1 of 1) and quadratically when the prefix is recomputed
    (within 0.1 of 2)."""
    flops = decoding_flops(replace(TINY_GPT2, n_positions=CONTEXTS[-1] + 1), CONTEXTS)
    cached = measure("FLOPs per token: cached", flops["cached"], x=CONTEXTS)
    fresh = measure("FLOPs per token: recomputed", flops["recomputed"], x=CONTEXTS)
    p_cached = measure("growth exponent, cached", growth_exponent(CONTEXTS, cached), printed=1)
    p_fresh = measure("growth exponent, recomputed", growth_exponent(CONTEXTS, fresh), printed=2)
    assert near(p_cached, LINEAR) and near(p_fresh, QUADRATIC)


# Part 8 · KV-cache memory costs ---------------------------------------------------------------

LLAMA7B_PRINTED_GB = {"2K": (2048, 1), "8K": (8192, 4), "32K": (32768, 16), "128K": (131072, 64)}


@claim("dd2.kv-llama7b", "established",
       at=("= 524,288 bytes = 0.5 MB", "128K tokens: 0.5 × 131072"),
       scope="LLaMA 7B in fp16 (32 layers, 32 heads of 128): keys and values that real attention "
       "layers compute, ours and transformers' LlamaAttention, on the meta device. The article's "
       "GB here are GiB (2^30 bytes)")  # fmt: skip
def test_llama7b_kv_cache_sizes(measure):
    """LLaMA 7B's fp16 KV cache takes 524,288 bytes per token, so 1, 4, 16 and 64 GiB at 2K, 8K,
    32K and 128K tokens; our attention layers and the reference LLaMA agree on it."""
    ours, reference = llama7b_kv_bytes(1), llama_7b()
    measure("bytes per token (ours)", ours, printed=524_288)
    theirs = reference["kv_bytes_per_token"]
    measure("bytes per token (transformers LLaMA)", theirs, printed=524_288)
    measure("LLaMA 7B parameters (billions)", reference["params"] / 1e9, printed=7)
    sizes = [measure(f"{name} tokens (GiB)", llama7b_kv_bytes(tokens) / GIB, printed=gb)
             for name, (tokens, gb) in LLAMA7B_PRINTED_GB.items()]  # fmt: skip
    assert ours == theirs == 524_288
    assert sizes == [gb for _, gb in LLAMA7B_PRINTED_GB.values()]


@claim("dd2.kv-llama70b", "established",
       at=("2 × 80 × 8192 × 2 bytes = 2.6 MB", "2.6 × 32768 = 85 GB"),
       scope="LLaMA 70B's sizes as the article prints them (80 layers, d_model 8192 = 64 heads of "
       "128, fp16), read from its text at run time, as if every head kept its keys and values, "
       "measured from real attention layers on the meta device; MB and GB are 10^6 and 10^9 "
       "bytes. The 32K line is checked as printed: its rounded per-token operand times 32,768.",
       remark="The box's arithmetic holds on its printed operand: 2.6 MB x 32,768 = 85.2 GB, "
       "printed 85 (the exact bytes give 85.9 GB, 80 GiB). What is wrong is the operand: the real "
       "LLaMA 70B (LLaMA 2 70B) uses GQA with 8 kv heads, 0.33 MB per token and 10.7 GB at 32K, "
       "an erratum shown by dd2.gqa-fact-in-kv-arithmetic, dd2.kv-70b-agrees-with-ch04 and "
       "dd2.kv-llama70b-reference.")  # fmt: skip
def test_llama70b_kv_cache_sizes(measure):
    """At LLaMA 70B's sizes with a key and value per head, the fp16 cache takes 2.6 MB per token,
    and the printed 2.6 MB times 32,768 tokens is 85 GB."""
    text = source_text(DD2)
    layers, d_model, per_mb = read(text, "Per token: 2 × {} × {} × 2 bytes = {} MB")
    operand, tokens, at_32k = read(text, "For 32K context: {} × {} = {} GB")
    exact = mha_kv_bytes(int(layers), int(d_model), int(tokens)) / 1e9
    measure.reproduces("per token (MB)", mha_kv_bytes(int(layers), int(d_model), 1) / 1e6, per_mb)
    measure.reproduces(f"{operand} MB x {tokens} (GB)", float(operand) * int(tokens) / 1e3, at_32k)
    measure("32K tokens from the exact bytes (GB)", exact)
    measure("32K tokens from the exact bytes (GiB)", exact * 1e9 / GIB)


@claim("dd2.attention-matrix-100k", "established", at="10 billion elements per head",
       scope="the score tensor standard attention forms for one head of width 64 over 100,000 "
       "tokens, on the meta device")  # fmt: skip
def test_100k_tokens_give_10_billion_scores_per_head(measure):
    """For 100,000 tokens the attention matrix of one head holds 10^10 scores."""
    with torch.device("meta"):
        q = torch.empty(1, 100_000, 64)
        scores = q @ q.transpose(-2, -1)
    n = measure("score elements (billions)", scores.numel() / 1e9, printed=10)
    assert n == 10


# Part 8 · FlashAttention ---------------------------------------------------------------------


@claim("dd2.flash-equivalence", "established",
       at="Is mathematically equivalent to standard attention",
       printed={"claim": "tiled attention is mathematically equal to standard attention"},
       scope="our tiled attention (blocks of 64, online softmax) against the standard formula "
       "and torch's fused attention, float64, 2 x 3 heads x 300 tokens x 16, causal and not",
)  # fmt: skip
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
def test_tiled_attention_equals_standard_attention(causal, seed, measure):
    """Attention computed over 64 x 64 tiles with a running maximum and normaliser gives the same
    output as softmax(QK^T / sqrt(d))V computed whole, and as torch's fused kernel."""
    q, k, v = normals(seed, 2, 3, 300, 16, n=3)
    tiled = tiled_attention(q, k, v, block=64, causal=causal)
    fused = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    standard = standard_attention(q, k, v, causal)
    gap = measure("largest |tiled - standard|", largest_gap(tiled, standard))
    gap_fused = measure("largest |tiled - fused|", largest_gap(tiled, fused))
    assert gap <= FLOAT64 and gap_fused <= FLOAT64


@claim("dd2.online-softmax", "established", at="The online softmax trick is crucial",
       printed={"claim": "running-max rescaling yields the exact softmax normaliser"},
       scope="rows of 1,000 float64 scores with sd 10, read in chunks of 64")  # fmt: skip
def test_online_softmax_gives_the_exact_normaliser(seed, measure):
    """Reading a row of scores chunk by chunk, rescaling the running sum by exp(old max - new
    max), gives the row's maximum and its normaliser sum(exp(s - max)) exactly: the log-sum-exp
    matches torch.logsumexp."""
    scores = normals(seed, 8, 1000) * 10
    m, total = online_normaliser(scores, chunk=64)
    gap = measure("largest |log-sum-exp gap|", largest_gap(m + total.log(), scores.logsumexp(-1)))
    assert torch.equal(m, scores.amax(-1))
    assert gap <= FLOAT64


FLASH_LENGTHS = [1024, 2048, 4096, 8192]


@claim("dd2.flash-memory", "established",
       at=("Standard Attention Memory: O(n²)", "Flash Attention Memory: O(n)"),
       printed={"standard": "O(n²) memory", "tiled": "O(n) memory"},
       scope="peak bytes of tensors each algorithm creates (tracked at every torch operator), one "
       "head of width 64 in float32, 1K-8K tokens, blocks of 128; run for real on the CPU",
       figure=Figure(title="Peak extra memory of standard and tiled attention",
                     xlabel="sequence length (tokens)", ylabel="peak tensor bytes", log=True),
)  # fmt: skip
def test_tiled_attention_memory_grows_linearly(measure):
    """The extra memory of standard attention grows quadratically with sequence length (fitted
    exponent within 0.1 of 2); that of tiled attention linearly (within 0.1 of 1)."""
    peaks = attention_peaks(FLASH_LENGTHS)
    for name, values in peaks.items():
        measure(f"peak bytes: {name}", values, x=FLASH_LENGTHS, unit="bytes")
    p = {name: growth_exponent(FLASH_LENGTHS, values) for name, values in peaks.items()}
    measure("growth exponent, standard", p["standard"], printed=2)
    measure("growth exponent, tiled", p["tiled"], printed=1)
    measure("standard / tiled at 8K", peaks["standard"][-1] / peaks["tiled"][-1])
    assert near(p["standard"], QUADRATIC) and near(p["tiled"], LINEAR)


NO_GPU_FLASH = (
    "needs a CUDA GPU: FlashAttention's speed-up is a GPU-kernel claim (it comes from keeping "
    "tiles in on-chip SRAM); this machine has none"
)


@claim("dd2.flash-speedup", "likely", at="Flash Attention achieves 2-4x speedup",
       printed={"speed-up": "2-4x"},
       scope="needs a CUDA GPU. The article names no setting (GPU, sequence length, precision, "
       "pass); this one: forward and backward of causal attention, fp16, 16 heads of width 64, "
       "16,384 tokens per batch at lengths 512, 1,024, 2,048 and 4,096, torch's FlashAttention "
       "kernel against attention that materialises the score matrix; 15 interleaved repetitions. "
       "A result is about the GPU it ran on, not the article's unstated one.",
       # declared: "achieves 2-4x" read as at least the band's lower end, 2x, in total time over
       # the four lengths; a larger speed-up does not contradict it (recorded, not a ceiling)
       rule=Slower("standard / flash, per repetition", factor=2.0))  # fmt: skip
def test_flash_attention_is_2_to_4_times_faster(seed, measure):
    """On a GPU, FlashAttention trains attention at least twice as fast as standard attention
    that materialises the score matrix: the median over interleaved repetitions of standard
    attention's forward-and-backward time over FlashAttention's, summed over sequence lengths
    512 to 4,096, is above 2."""
    skip_without_cuda(NO_GPU_FLASH)
    from experiments.gpu_timing import attention_times

    lengths = [512, 1024, 2048, 4096]
    times = attention_times(lengths, seed=seed, repetitions=15)
    per_rep = speedups_per_repetition(times, lengths)
    measure("standard / flash, per repetition", per_rep, unit="time ratio")
    measure("standard / flash", statistics.median(per_rep), printed="2-4x", unit="time ratio")
    for n in lengths:
        ratio = median_ratio(times["standard"][n], times["flash"][n])
        measure(f"standard / flash at {n} tokens", ratio, unit="time ratio")


# Part 8 · Sparse attention ---------------------------------------------------------------------

SPARSE_LENGTHS = [1024, 2048, 4096, 8192, 16384]


@claim("dd2.sparse-local", "established", at="Token 50 attends to tokens 40-60 only",
       printed={"cost": "n·W"},
       scope="the example: the window its section states, centred on the token (bidirectional: "
       "the section's global attention has [CLS] attend to all tokens and all to it), against "
       "the causal window a decoder would use; the cost: causal local attention of window W "
       "computed as a band (keys unfolded per query), against full attention with a window "
       "mask; float64 equality on 2 x 100 tokens; FLOPs counted on the meta device for 1K-16K "
       "tokens, width 64",
       remark="Not an erratum: the section is bidirectional (its [CLS] example, Longformer and "
       "BigBird), and there token 50 sees 40-60. Read in the decoder-only setting that opens "
       "Part 8, the example is wrong: a causal window of the same reach of 10 lets token 50 see "
       "40-50 (recorded), never a later token. The check of every such example against its "
       "section's setting is dd2.position-examples-follow-their-rule.")  # fmt: skip
@pytest.mark.parametrize("window", [8, 32])
def test_local_attention_sees_w_positions_at_cost_n_times_w(window, seed, measure):
    """With a window of W, each query attends to at most W positions (in the section's
    bidirectional setting a +-10 window lets token 50 see exactly tokens 40-60; a decoder's
    causal window of reach 10 would give 40-50), and computing only the band costs 4·n·W·d
    FLOPs: linear in n (fitted exponent within 0.1 of 1), against quadratic for full
    attention."""
    text = source_text(DD2)
    bidirectional = BIDIRECTIONAL in settings(text, text.index("Token 50 attends to tokens"))
    span = window_mask(100, 10, 10)[50].nonzero().flatten().tolist()
    measure("keys visible from token 50 (window +-10)", [span[0], span[-1]], printed=[40, 60])
    causal_span = window_mask(100, 10)[50].nonzero().flatten().tolist()
    measure("keys visible from token 50 (causal, reach 10)", [causal_span[0], causal_span[-1]])
    q, k, v = normals(seed, 2, 100, 16, n=3)
    masked, weights = masked_local_attention(q, k, v, window)
    most = measure("most positions attended", int((weights > 0).sum(-1).max()), printed=window)
    banded = banded_local_attention(q, k, v, window)
    gap = measure("largest |banded - masked|", largest_gap(banded, masked))
    flops = banded_flops(SPARSE_LENGTHS, window)
    measure(f"FLOPs: window {window}", flops, x=SPARSE_LENGTHS)
    p = measure("growth exponent in n", growth_exponent(SPARSE_LENGTHS, flops), printed=1)
    per_nw = measure("FLOPs / (n·W·d)", per_n_w_d(flops, SPARSE_LENGTHS, window))
    assert bidirectional, "the section no longer states a bidirectional setting"
    assert span == list(range(40, 61)) and causal_span == list(range(40, 51))
    assert most == window and gap <= FLOAT64
    assert near(p, LINEAR) and set(per_nw) == {4.0}


# Part 8 · Grouped-query attention -------------------------------------------------------------


@claim("dd2.gqa-reduction", "established",
       at=("= 16 vectors per layer", "(8× reduction!)", "(2× reduction)"),
       scope="keys and values real attention layers compute for one token: 8 query heads of "
       "128, fp16, 32 layers, on the meta device")  # fmt: skip
def test_gqa_halves_and_mqa_divides_the_cache_by_8(measure):
    """With 8 query heads, sharing keys and values among pairs of heads (4 kv heads) halves the
    KV cache, and one shared kv head (MQA) makes it 8 times smaller: 16, 8 and 2 vectors per
    layer per token."""
    size = {n_kv: measured_kv_bytes(32, 8, n_kv, 128, seq_len=1) for n_kv in (8, 4, 1)}
    vectors = [size[n_kv] // (32 * 128 * 2) for n_kv in (8, 4, 1)]
    measure.reproduces("vectors per layer: MHA, GQA, MQA", vectors, [16, 8, 2])
    gqa = measure("MHA / GQA cache", size[8] / size[4], printed=2)
    mqa = measure("MHA / MQA cache", size[8] / size[1], printed=8)
    assert gqa == 2 and mqa == 8


@claim("dd2.mqa-quality-loss", "likely", at="Downside: Some quality loss",
       printed={"claim": "MQA: some quality loss from sharing one key-value head"},
       scope=LM_SCOPE + " The chapter's MHA and MQA runs, paired by seed; both estimators.",
       remark=PROTOCOL_ESTIMATOR + SHARED_KV_CONFOUND,
       rule=Beats("MHA val loss", "MQA val loss", lower=True))  # fmt: skip
def test_mqa_loses_some_quality(mha_lm, mqa_lm, seed, measure):
    """Multi-query attention ends with a higher validation loss than MHA (the book's protocol
    estimator), on average over seeds, paired by seed."""
    for name, run in (("MHA", mha_lm), ("MQA", mqa_lm)):
        measure(f"{name} val loss", run["final_val_loss"], unit="nats")
        measure(f"{name} full-split loss", run["full_val_loss"], unit="nats")


@claim("dd2.gqa-beats-mqa", "likely", at="Better quality than MQA",
       printed={"claim": "GQA: better quality than MQA"},
       scope=LM_SCOPE + " The chapter's GQA (2 kv heads) and MQA runs, paired by seed; both "
       "estimators.",
       remark=PROTOCOL_ESTIMATOR + SHARED_KV_CONFOUND,
       rule=Beats("GQA val loss", "MQA val loss", lower=True))  # fmt: skip
def test_gqa_has_better_quality_than_mqa(gqa_lm, mqa_lm, seed, measure):
    """Grouped-query attention (2 kv heads for 4 query heads) ends with a lower validation loss
    than multi-query attention (the book's protocol estimator), on average over seeds, paired
    by seed."""
    for name, run in (("GQA", gqa_lm), ("MQA", mqa_lm)):
        measure(f"{name} val loss", run["final_val_loss"], unit="nats")
        measure(f"{name} full-split loss", run["full_val_loss"], unit="nats")


# Part 8 · RMSNorm ---------------------------------------------------------------------------


def parameter_sizes(module: torch.nn.Module) -> list[int]:
    """The number of entries of each parameter tensor of ``module``."""
    return [p.numel() for p in module.parameters()]


@claim("dd2.rmsnorm-params", "established",
       at=("β (shift) - both [d_model]", "Parameters: γ (scale) only"),
       printed={"LayerNorm": "γ and β, both [d_model]", "RMSNorm": "γ only"},
       scope="torch.nn.LayerNorm, torch.nn.RMSNorm, the chapter's RMSNorm and transformers' "
       "LlamaRMSNorm (LLaMA 7B), d_model 4096")  # fmt: skip
def test_rmsnorm_has_one_parameter_vector_layernorm_two(measure):
    """RMSNorm learns one vector of d_model gains; LayerNorm learns two (gain and shift)."""
    d = 4096
    norms = (torch.nn.LayerNorm(d), torch.nn.RMSNorm(d), RMSNorm(d))
    layer, rms, ours = (parameter_sizes(norm) for norm in norms)
    measure("LayerNorm parameter vectors", len(layer), printed=2)
    measure("RMSNorm parameter vectors", len(rms), printed=1)
    llama = measure("LLaMA's RMSNorm parameter vectors", llama_7b()["norm_params"], printed=1)
    assert layer == [d, d] and rms == ours == [d]
    assert llama == 1


NO_GPU_NORMS = (
    "needs a CUDA GPU: the ~15% is a claim about GPU kernels; a CPU timing of torch's fused "
    "LayerNorm against its partly unfused RMSNorm compares implementations and cannot decide it"
)


@claim("dd2.rmsnorm-faster", "likely", at="RMSNorm: ~15% faster than LayerNorm",
       printed={"speed-up": "about 15%"},
       scope="needs a CUDA GPU: forward and backward of torch's LayerNorm and RMSNorm kernels on "
       "an 8,192 x 4,096 bfloat16 activation (LLaMA 7B's width), 15 interleaved repetitions of 10 "
       "calls, timed in this run. The article names no setting; its figure is in a list of LLM "
       "efficiency gains, which are GPU training and inference figures.",
       remark="Not judged on a CPU. On this CPU torch's LayerNorm runs one fused kernel forward "
       "and backward (native_layer_norm, native_layer_norm_backward), while torch.nn.RMSNorm has a "
       "fused forward (_fused_rms_norm) and a backward composed of elementwise operations and a "
       "mean (profiled with torch 2.13.0): a CPU timing compares those two implementations, not "
       "the operation counts the article's reason names, so it cannot decide the claim. An "
       "earlier version called the claim an erratum from such a timing.",
       # "about 15% faster": LayerNorm's time over RMSNorm's between 1.10 and 1.20
       rule=Slower("LayerNorm / RMSNorm time, per repetition", factor=1.10, at_most=1.20),
)  # fmt: skip
def test_rmsnorm_is_about_15_percent_faster(measure):
    """RMSNorm runs about 15% faster than LayerNorm on a GPU: the median over interleaved
    repetitions of LayerNorm's time over RMSNorm's, forward and backward, lies between 1.10 and
    1.20."""
    skip_without_cuda(NO_GPU_NORMS)
    from experiments.gpu_timing import norm_times_device

    times = norm_times_device(4096, 8192, 0, repetitions=15)
    for name, t in times.items():
        measure(f"{name} seconds per call", statistics.median(t), unit="s")
    per_rep = [a / b for a, b in zip(times["LayerNorm"], times["RMSNorm"], strict=True)]
    measure("LayerNorm / RMSNorm time, per repetition", per_rep, unit="time ratio")
    measure("LayerNorm / RMSNorm time", statistics.median(per_rep), printed=1.15, tolerance=0.05,
            unit="time ratio")  # fmt: skip


@claim("dd2.rmsnorm-as-good", "likely", at="Empirically: works just as well for LLMs",
       printed={"claim": "RMSNorm works just as well as LayerNorm for LLMs"},
       scope=LM_SCOPE + " The chapter's attention model with RMSNorm, and the same model with "
       "torch.nn.LayerNorm in all 9 norms; paired by seed; both estimators.",
       remark="Decided by two one-sided tests on the paired difference against a margin of "
       "0.014 nats. The margin was fixed after an earlier version had called this an erratum on "
       "seeds 0-2 (comparing the seed-mean gap with the unpaired seed sds of 3 seeds, which is "
       "not a test of equivalence), so the rule is judged on fresh seeds alone. "
       + PROTOCOL_ESTIMATOR,
       figure=Figure(
           kind="band",
           title="Validation loss with RMSNorm and with LayerNorm (mean and ±1 sd over seeds)",
           xlabel="training step", ylabel="validation loss (nats per character)"),
       # "just as well": within 0.014 nats, the seed sd the token-mixing chapter prints for its
       # attention-variant models of this size (the article gives no spread of its own)
       rule=Matches("RMSNorm val loss", "LayerNorm val loss", margin=0.014, look20=True,
                    fresh=1000, seen="seeds 0-7 of these runs: the margin was fixed after an "
                    "erratum on seeds 0-2 (an earlier version's unpaired comparison)"))  # fmt: skip
def test_rmsnorm_trains_as_well_as_layernorm(mha_lm, layernorm_lm, seed, measure):
    """A language model with RMSNorm reaches LayerNorm's validation loss: the mean paired
    difference (the book's protocol estimator) lies within ±0.014 nats."""
    for name, run in (("RMSNorm", mha_lm), ("LayerNorm", layernorm_lm)):
        measure(f"{name} val loss", run["final_val_loss"], unit="nats")
        measure(f"{name} full-split loss", run["full_val_loss"], unit="nats")
        measure(f"val curve: {name}", run["val_loss"], x=run["steps"], unit="nats")


# Part 8 · SwiGLU ------------------------------------------------------------------------------


@claim("dd2.swiglu-params", "established", at="(actually uses 8/3 × d to match param count)",
       printed={"SwiGLU hidden": "8/3 · d", "matches": "a 4·d GELU MLP's parameters"},
       scope="bias-free SwiGLU (hidden int(8d/3)) and GELU MLP (hidden 4d) modules")  # fmt: skip
@pytest.mark.parametrize("d", [64, 768, 4096])
def test_swiglu_at_8_3_width_matches_gelu_parameters(d, measure):
    """A SwiGLU MLP of hidden width 8/3·d has the parameters of a 4·d GELU MLP (8·d² each),
    exactly when 3 divides d and within one hidden unit (3·d weights) otherwise."""
    swiglu, gelu = count_params(SwiGLU(d)), count_params(GELUMLP(d))
    measure("SwiGLU parameters", swiglu)
    measure.reproduces("GELU MLP parameters", gelu, 8 * d * d)
    measure("SwiGLU / GELU", swiglu / gelu)
    assert gelu - 3 * d < swiglu <= gelu
    assert swiglu == gelu or d % 3 != 0


@claim("dd2.swiglu-better", "likely",
       at=("better performance at same parameter count", "SwiGLU: ~1-2% quality improvement"),
       printed={"claim": "SwiGLU: better performance at the same parameter count", "gain": "~1-2%"},
       scope=LM_SCOPE + " The chapter's attention model (SwiGLU, 32,640 MLP weights per block) "
       "against the same model with a bias-free 4x GELU MLP (32,768); both estimators.",
       remark=PROTOCOL_ESTIMATOR,
       figure=Figure(
           kind="band",
           title="Validation loss with SwiGLU and with GELU MLPs (mean and ±1 sd over seeds)",
           xlabel="training step", ylabel="validation loss (nats per character)"),
       rule=Beats("SwiGLU val loss", "GELU val loss", lower=True))  # fmt: skip
def test_swiglu_beats_gelu_at_equal_parameters(mha_lm, gelu_lm, seed, measure):
    """At (nearly) equal parameters, the model with SwiGLU MLPs ends with a lower validation
    loss (the book's protocol estimator) than the one with GELU MLPs, on average over seeds,
    paired by seed."""
    for name, run in (("SwiGLU", mha_lm), ("GELU", gelu_lm)):
        measure(f"val curve: {name}", run["val_loss"], x=run["steps"], unit="nats")
        measure(f"{name} val loss", run["final_val_loss"], unit="nats")
        measure(f"{name} full-split loss", run["full_val_loss"], unit="nats")
    gelu_loss = gelu_lm["full_val_loss"]
    gain = 100 * (gelu_loss - mha_lm["full_val_loss"]) / gelu_loss  # "~1-2%": within 0.5 of 1.5
    measure("gain (% of GELU's full-split loss)", gain, printed=1.5, tolerance=0.5)
    measure("parameters, SwiGLU / GELU model", mha_lm["params"] / gelu_lm["params"])


# Part 8 · From GPT-2 to LLaMA 3 -----------------------------------------------------------------


@claim("dd2.gpt2-post-norm", "established", at="Norm Placement Post-norm",
       scope="the blocks of transformers' GPT2Block and LlamaDecoderLayer, run with hooks on the "
       "first norm and the attention (random weights)",
       erratum="GPT-2 is pre-norm: its attention reads ln_1 of the block's input (x + "
       "attn(ln_1(x))), as the article's own shape trace shows; post-norm was the original "
       "Transformer's layout", error=errata.GPT2_POST_NORM)  # fmt: skip
def test_gpt2_is_post_norm_and_llama_pre_norm(measure):
    """GPT-2 normalises after the residual sum (post-norm, as the article's table places it)
    while LLaMA normalises the attention's input (pre-norm)."""
    gpt2 = measure("GPT-2 norm placement", gpt2_small()["norm_placement"], printed="post-norm")
    llama = measure("LLaMA norm placement", llama_7b()["norm_placement"], printed="pre-norm")
    if gpt2 == "pre-norm":
        measure.correct(errata.gpt2_norm_correction())
    assert (gpt2, llama) == ("post-norm", "pre-norm")


@claim("dd2.gpt2-llama-components", "established",
       at=("Vocab Size 50,257", "Length 1,024", "MLP Ratio 4×", "Learned absolute", "Biases Yes"),
       printed={"biases": "GPT-2 in attention, MLP and LayerNorm"},
       scope="GPT-2 small (openai-community/gpt2's sizes) built by transformers on the meta "
       "device, no weights downloaded. The table's other column is LLaMA 3's: "
       "dd2.llama3-components and dd2.llama3-mlp-ratio check it against Llama 3's "
       "configurations.")  # fmt: skip
def test_gpt2_and_llama_components(measure):
    """GPT-2 small learns a 1,024 x 768 position table, has biases in its attention, MLP and
    LayerNorms, a 50,257-token vocabulary, a 1,024-token context and an MLP 4 times d_model wide."""
    gpt2 = gpt2_small()
    measure.reproduces("GPT-2 position table", gpt2["position_table"], [1024, 768])
    measure.reproduces("GPT-2 vocabulary", gpt2["vocab_size"], 50_257)
    measure.reproduces("GPT-2 context", gpt2["context"], 1_024)
    gpt2_ratio = measure("GPT-2 MLP ratio", gpt2["d_ff"] / gpt2["d_model"], printed=4)
    for part, has in gpt2["biases"].items():
        measure(f"GPT-2 biases in {part}", has)
    assert all(gpt2["biases"].values()) and gpt2_ratio == 4


@claim("dd2.rope-extrapolates-better", "likely",
       at=("No params, better extrap.", "better length generalization"),
       printed={"RoPE against learned positions": "better extrap."},
       scope="The chapter's attention model and recipe (600 AdamW steps on 64-character "
       "windows) with RoPE, and the same model with GPT-2's learned absolute positions in "
       "place of RoPE, trained alike; both read on the whole validation split, paired by seed. "
       "Says nothing about lengths far past twice the training length or about large models "
       "(Press et al., 2022, found RoPE degrades soon past its training length).",
       remark="A learned table has nothing learned for a position it never trained: rows "
       "64-127 keep torch's initial values, shrunk by weight decay, as GPT-2's would past its "
       "context (reusing the last row, or refusing longer inputs, are the other choices; "
       "neither reads a longer window as such). 'Loss at 128' is the mean over 128-character "
       "windows; 'rise past 64' is how far a model's loss at positions 64-127 lies above its "
       "loss on 64-character windows: extrapolation alone, whatever gap the two models "
       "already have at 64.",
       rule=AllOf((Beats("RoPE loss at 128", "learned positions loss at 128", lower=True),
                   Beats("RoPE rise past 64", "learned positions rise past 64", lower=True)),
                  fresh=True, seen="seeds 0-2, under the rule declared first (the loss at "
                  "128 alone, which mixes in the learned model's gap at 64): supported, "
                  "difference 0.686 nats [0.635, 0.737]; a new user's reading of them led to "
                  "the rise past 64 as the rule's second part"))  # fmt: skip
def test_rope_reads_twice_its_training_length_better_than_learned_positions(
    rope_at_64, learned_at_64, mha_lm, seed, measure
):
    """Trained on 64-character windows, the model with RoPE predicts 128-character windows with
    a lower loss than the same model with learned absolute positions, and its loss rises less
    past position 64."""
    for what, value in (("loss at 128", lambda run: run["loss_at_eval_len"]),
                        ("rise past 64", lambda run: run["loss_beyond"] - run["loss_at_train_len"]),
                        ("loss at 64", lambda run: run["loss_at_train_len"])):  # fmt: skip
        for name, run in (("RoPE", rope_at_64), ("learned positions", learned_at_64)):
            measure(f"{name} {what}", value(run), unit="nats")
    assert rope_at_64["loss_at_train_len"] == mha_lm["full_val_loss"]  # the chapter's model
