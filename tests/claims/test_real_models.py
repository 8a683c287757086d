"""What the two sources say about named real models, checked against those models.

Every model is its published checkpoint's configuration written out in
transformers 5.24's own configuration class and built by transformers' model
class on the meta device (shapes only, nothing downloaded); the claim's scope,
and a "configuration" measure, name the checkpoint and its sizes. Where a
mechanism needs numbers (which positions a layer attends to), the same class
runs at a tiny width with random weights and the checkpoint's attention layout.
A class's default configuration never stands in for a model.
"""

from __future__ import annotations

import re

import pytest
import torch
from claimbook import claim, source_text
from claimbook.declare.numbers import reproduces

from experiments import real_models as rm
from experiments import real_others as ro
from experiments.mamba_selective import token_dependence
from experiments.modules import count_params
from experiments.reference import GPT2_SMALL, first_token_sensitivity, llama_7b
from tests.claims import dd2_longformer as longformer
from tests.claims import errata
from tests.claims.printed_text import number, read
from tests.claims.sources import DD2

META = "built by transformers 5.24 on the meta device, nothing downloaded"
GQA_MODELS = {
    "LLaMA 2 70B": "llama2-70b",
    "Llama 3 8B": "llama3-8b",
    "Llama 3 70B": "llama3-70b",
    "Mistral 7B": "mistral-7b",
}


def configuration(measure, *keys: str) -> None:
    """Record which checkpoint configuration(s) a claim built, for its page."""
    for key in keys:
        measure(f"configuration: {key}", rm.named(key))


def configured(measure, key: str, *more: str) -> dict:
    """Record the configuration of checkpoint ``key`` (and of ``more``), return its facts."""
    configuration(measure, key, *more)
    return rm.decoder_facts(key)


def recorded(measure, facts: dict) -> dict:
    """Record the configuration a ``real_others`` function built, return its facts."""
    measure("configuration", facts["config"])
    return facts


def measure_each(measure, values: dict) -> dict:
    """Measure every entry of ``values`` under its own name, in order; return them."""
    for name, value in values.items():
        measure(name, value)
    return values


def scope_of(*keys: str) -> str:
    return "; ".join(rm.named(k) for k in keys) + "; " + META


# ch04 · Fork 2 and Step 4: sliding windows ---------------------------------------------------


def windowed(window: int, n: int = 12) -> list[int]:
    """Positions each of ``n`` causal queries attends to with a window of ``window`` (itself
    included); a window of ``n`` is full causal attention."""
    return [min(t + 1, window) for t in range(n)]


@claim("ch04.mistral-sliding-window", "likely",
       at=("Mistral 7B uses sliding-window attention", "Mistral 7B, 2023"),
       printed={"Mistral 7B": "sliding-window attention: each token sees the last W tokens"},
       scope=scope_of("mistral-7b") + ". The window's effect is read from the attention weights "
       "of MistralForCausalLM at width 32 (4 layers, random weights) with the window cut to 4.",
       remark="The chapter tags the whole paragraph [likely]; this part is a fact of the "
       "checkpoint's configuration. Mistral 7B v0.1 (2023) is the version with a window; later "
       "versions of the checkpoint are not tested here.")  # fmt: skip
def test_mistral_7b_uses_sliding_window_attention(measure):
    """Mistral 7B v0.1 limits every layer's attention to a sliding window of 4,096 tokens: in its
    model class, no query ever attends to more than the window's W positions (itself and the W-1
    before it), in every layer."""
    f = configured(measure, "mistral-7b")
    window = measure("sliding window (tokens)", f["sliding_window"])
    rows = measure("attended positions per query, window 4", rm.attended_positions("mistral-7b"))
    assert window == 4096 and all(row == windowed(4) for row in rows)


@claim("ch04.gemma2-alternating", "likely", at="Gemma 2 alternates local and global layers",
       printed={"Gemma 2": "alternates local (sliding-window) and global attention layers"},
       scope=scope_of("gemma2-9b") + ". Layer kinds from Gemma2Config's layer_types; their effect "
       "from the attention weights of Gemma2ForCausalLM at width 32 (4 layers, random weights) "
       "with the window cut to 4.",
       remark="The chapter tags the whole paragraph [likely]; this part is a fact of the "
       "checkpoint's configuration.")  # fmt: skip
def test_gemma2_alternates_local_and_global_layers(measure):
    """Gemma 2 9B alternates its 42 layers between sliding-window (4,096 tokens) and full attention,
    starting with a sliding one; in its model class the sliding layers attend to at most W positions
    and the full layers to every earlier position."""
    f = configured(measure, "gemma2-9b")
    kinds = measure("layer types", f["layer_types"])
    measure("sliding window (tokens)", f["sliding_window"])
    rows = measure("attended positions per query, window 4", rm.attended_positions("gemma2-9b"))
    assert kinds == ["sliding_attention", "full_attention"] * 21 and f["sliding_window"] == 4096
    assert rows == [windowed(4), windowed(12)] * 2  # local, full, local, full


# ch04 · Step 4: GQA in real models -----------------------------------------------------------


@claim("ch04.gqa-models", "established", at="which is why LLaMA 2 70B, Llama 3 and Mistral use it",
       printed={name: "GQA (1 < kv heads < query heads)" for name in GQA_MODELS},
       scope=scope_of(*GQA_MODELS.values())
       + ". Heads read from the q_proj and k_proj widths.")  # fmt: skip
@pytest.mark.parametrize("model", list(GQA_MODELS))
def test_llama2_llama3_and_mistral_use_gqa(model, measure):
    """LLaMA 2 70B, Llama 3 (8B and 70B) and Mistral 7B use grouped-query attention: more than one
    key-value head, and fewer than query heads."""
    f = configured(measure, GQA_MODELS[model])
    heads, kv = measure("query heads", f["n_heads"]), measure("kv heads", f["n_kv_heads"])
    assert 1 < kv < heads


def mha_bytes_per_token(f: dict) -> int:
    """fp16 keys and values per token of a model with ``f``'s sizes and one kv head per query
    head (multi-head attention)."""
    return 2 * f["n_layers"] * f["n_heads"] * f["head_dim"] * 2


@claim("ch04.llama2-70b-heads", "established",
       at="LLaMA 2 70B uses 64 query heads and 8 key-value heads",
       scope=scope_of("llama2-70b") + ". The cache is the fp16 keys and values its 80 "
       "layers' k_proj and v_proj output for one token, against 64 kv heads at the "
       "same sizes.")  # fmt: skip
def test_llama2_70b_has_64_query_and_8_kv_heads(measure):
    """LLaMA 2 70B has 64 query heads and 8 key-value heads, so its KV cache is 8 times smaller than
    multi-head attention's at the same sizes (80 layers, heads of 128)."""
    f = configured(measure, "llama2-70b")
    heads = measure("query heads", f["n_heads"], printed=64)
    kv = measure("kv heads", f["n_kv_heads"], printed=8)
    measure("layers", f["n_layers"], printed=80)
    measure("head width", f["head_dim"], printed=128)
    smaller = measure("MHA cache / LLaMA 2 70B cache",
                      mha_bytes_per_token(f) / f["kv_bytes_per_token"], printed=8)  # fmt: skip
    assert (heads, kv, f["n_layers"], f["head_dim"]) == (64, 8, 80, 128) and smaller == 8


@claim("ch04.kv-70b-reference", "established",
       at=("70B-scale GQA (8 kv heads) : 1.34 GB", "a 70-billion-parameter model"),
       printed={"model": "70 billion parameters"},
       scope=scope_of("llama2-70b")
       + ". GB = 10^9 bytes, as the chapter's code divides.")  # fmt: skip
def test_llama2_70b_cache_for_4096_tokens_is_1_34_gb(measure):
    """The real LLaMA 2 70B, whose 70-billion-parameter scale the chapter names, keeps 1.34 GB of
    fp16 keys and values for one 4,096-token sequence."""
    f = configured(measure, "llama2-70b")
    gb = measure("cache for 4,096 tokens (GB)", f["kv_bytes_per_token"] * 4096 / 1e9,
                 printed="1.34")  # fmt: skip
    billions = measure("parameters (billions)", f["params"] / 1e9)
    assert f"{gb:.2f}" == "1.34" and round(billions, -1) == 70


# ch04 · Step 3, Fork 3 and Step 5: Mamba and Jamba --------------------------------------------


@claim("ch04.mamba-short-conv", "established", at="the short convolution inside each Mamba block",
       printed={"Mamba block": "contains a short convolution"},
       scope="state-spaces/mamba-130m-hf; " + META)  # fmt: skip
def test_every_mamba_block_has_a_short_convolution(measure):
    """Every block of Mamba (130M) contains a short causal convolution: a depthwise Conv1d with a
    kernel of 4 tokens."""
    f = recorded(measure, ro.mamba_facts())
    kernel = measure("convolution kernel (tokens)", f["conv_kernel"])
    blocks = measure("blocks with a convolution", f["blocks_with_conv"])
    measure("blocks", f["n_blocks"])
    assert blocks == f["n_blocks"] == 24 and kernel == 4 and f["conv_depthwise"]


@claim("ch04.mamba-selective", "established",
       at=r"made \(A\) and \(B\) depend on the current token",
       printed={"Mamba": "A and B depend on the current token"},
       scope="state-spaces/mamba-130m-hf's layout; " + META + ". The token dependence is read from "
       "transformers' MambaMixer run for real at width 32 (state 16, kernel 4, random weights, "
       "float64) on two inputs differing only in the last token: what it hands its selective scan, "
       "discretised as the scan does.",
       remark="Right in the chapter's own notation, h_t = A h_(t-1) + B x_t, whose A and B are the "
       "discrete ones: Mamba's discrete A is exp(Δ_t·A) and its discrete B is Δ_t·B_t, and both "
       "move with the current token (measured). Read as the continuous A of the Mamba paper, the "
       "sentence is half right: B (with C and the step Δ) is computed from each token, while A "
       "itself is one learned matrix shared by every token (A_log, no token axis) and depends on "
       "the token only through Δ. The paper's own wording makes Δ, B and C the selective "
       "parameters.")  # fmt: skip
def test_mamba_computes_its_recurrence_from_the_token(measure):
    """In Mamba, the recurrence's discrete transition A_t = exp(Δ_t·A) and its input matrix B_t are
    computed from the current token: changing only the last token changes both there (and nothing at
    the first position), while the continuous A is one parameter shared by every token."""
    f = recorded(measure, ro.mamba_facts())
    per_token = measure("x_proj output per token (Δ, B and C)", f["x_proj"])
    measure("A_log shape (130M)", f["A_shape"])
    moved = measure_each(measure, token_dependence())
    assert per_token == f["time_step_rank"] + 2 * f["state_size"]  # Δ, B and C per token
    assert moved["discrete A changes at the last token"] > 0
    assert moved["discrete B changes at the last token"] > 0
    assert moved["B changes at the last token"] > 0 and moved["step changes at the last token"] > 0
    assert moved["A changes"] == 0 and len(moved["A shape"]) == 2  # shared: no token axis
    assert moved["discrete A changes at the first token"] == 0


@claim("ch04.mamba-fixed-state", "established", at="Memory and compute per token stay constant",
       printed={"Mamba": "memory per token constant however long the context"},
       scope="state-spaces/mamba-130m-hf, forward on the meta device over 16 and 256 tokens; "
       "against " + rm.named("llama-7b")
       + ". Memory only: compute per token is not measured.")  # fmt: skip
def test_mamba_state_does_not_grow_with_the_context(measure):
    """Mamba's inference state (convolution and SSM states of every block) holds the same number of
    values after 16 tokens as after 256, where a Transformer's KV cache grows 16-fold."""
    f = recorded(measure, ro.mamba_facts((16, 256)))
    short, long = measure("Mamba cache numbers after 16, 256 tokens", f["cache_numbers"])
    kv = rm.decoder_facts("llama-7b")["kv_bytes_per_token"] // 2
    measure("LLaMA 7B cache numbers after 16, 256 tokens", [16 * kv, 256 * kv])
    assert short == long == 24 * 1536 * (4 + 16)


@claim("ch04.jamba-few-attention-layers", "likely",
       at=("hybrids keep a few attention layers among many Mamba layers", "(as in Jamba, 2024)"),
       place="(as in Jamba, 2024)",
       printed={"Jamba": "a few attention layers among many Mamba layers"},
       scope="ai21labs/Jamba-v0.1 (layer kinds from the built JambaForCausalLM); " + META,
       remark="The chapter's [likely] covers the literature claim about the branches merging; "
       "the layer count is a fact of the checkpoint.")  # fmt: skip
def test_jamba_keeps_one_attention_layer_in_eight(measure):
    """Jamba v0.1 is a hybrid with a small fraction of attention layers: 4 of its 32 layers are
    attention, one in every 8, the other 28 Mamba."""
    f = recorded(measure, ro.jamba_layers())
    attention = measure("attention layers", f["attention"])
    mamba = measure("Mamba layers", f["mamba"])
    measure("layer kinds", f["kinds"])
    assert (attention, mamba) == (4, 28)


# ch04 · Fork 1: ConvNeXt, Swin, ViT -------------------------------------------------------------

CONVNEXT_VS_RESNET = ("resnet stem", "convnext stem", "resnet largest kernel", "convnext kernel",
                      "convnext norm", "convnext activation", "resnet activations per block",
                      "convnext activations per block", "resnet norms per block",
                      "convnext norms per block")  # fmt: skip


@claim("ch04.convnext-design", "established",
       at="a patchify stem, larger 7×7 kernels, LayerNorm, GELU, fewer activations",
       printed={"ConvNeXt vs ResNet":
                "patchify stem, 7x7 kernels, LayerNorm, GELU, fewer activations"},
       scope="facebook/convnext-tiny-224 against microsoft/resnet-50; " + META)  # fmt: skip
def test_convnext_is_a_resnet_with_vit_design_choices(measure):
    """Against ResNet-50, ConvNeXt-T has a patchify stem (4x4, stride 4, where ResNet has a 7x7
    stride-2 convolution), 7x7 depthwise kernels (ResNet's largest is 3x3), LayerNorm instead of
    BatchNorm, GELU, and one activation per block where ResNet has three."""
    f = recorded(measure, ro.vision_facts())
    measure_each(measure, {name: f[name] for name in CONVNEXT_VS_RESNET})
    assert f["convnext stem"] == [4, 4, 4, 4] and f["resnet stem"] == [7, 7, 2, 2]
    assert f["convnext kernel"] == 7 > f["resnet largest kernel"] and f["convnext depthwise"]
    assert f["convnext norm"] == "ConvNextLayerNorm" and f["convnext activation"].startswith("GELU")
    assert f["convnext activations per block"] == 1 < f["resnet activations per block"] == 3


@claim("ch04.convnext-swin-same-size", "likely",
       at="ConvNeXt matches Swin Transformers of the same size",
       printed={"ConvNeXt vs Swin": "of the same size"},
       scope="facebook/convnext-tiny-224 and microsoft/swin-tiny-patch4-window7-224 with their "
       "1,000-class heads; " + META + ". Only the size is checked; the ImageNet result is cited "
       "(ch04.convnext-matches-swin).")  # fmt: skip
def test_convnext_t_and_swin_t_have_the_same_size(measure):
    """ConvNeXt-T and Swin-T, the pair compared at the smallest size, have the same number of
    parameters to within 2% (about 28 million each)."""
    f = recorded(measure, ro.vision_facts())
    conv = measure("ConvNeXt-T parameters (M)", f["convnext params"] / 1e6)
    swin = measure("Swin-T parameters (M)", f["swin params"] / 1e6)
    assert abs(conv - swin) / swin < 0.02


@claim("ch04.vit-patches", "established",
       at=("Split the image into patches and let self-attention mix them",
           "the same attention applied to image patches"),
       place="Split the image into patches and let self-attention mix them",
       printed={"ViT": "image patches mixed by self-attention"},
       scope="google/vit-base-patch16-224, forward of a 224 x 224 image on the meta device; "
       + META)  # fmt: skip
def test_vit_turns_an_image_into_patch_tokens(measure):
    """ViT-B/16 cuts a 224 x 224 image into 196 patches of 16 x 16 pixels, adds a class token, and
    mixes the 197 tokens with 12-head self-attention, as a text model mixes words."""
    f = recorded(measure, ro.vision_facts())
    patch = measure("patch (pixels)", f["vit patch"])
    tokens = measure("tokens after the embedding", f["vit tokens"])
    measure("attention heads", f["vit attention heads"])
    assert patch == [16, 16] and tokens == [1, (224 // 16) ** 2 + 1, 768]


# ch04 · Step 4 and Fork 2: MLA, Longformer ------------------------------------------------------


@claim("ch04.mla-compressed", "established", at="caches one small compressed vector per token",
       printed={"MLA": "one small compressed vector per token, expanded into keys and values"},
       scope="deepseek-ai/DeepSeek-V2 (one DeepseekV2Attention layer of its configuration); "
       + META,
       remark="Measured are the widths the layer's projections give: what a cache of the "
       "latent would hold per token, against the keys and values expanded from it. Whether "
       "an implementation caches the latent or the expansion is not what the widths "
       "show.")  # fmt: skip
def test_mla_expands_a_small_latent_into_keys_and_values(measure):
    """DeepSeek-V2's latent attention computes per token and layer one 576-wide vector (a 512-wide
    compressed key-value latent plus a 64-wide shared rotary key), from which it expands 40,960
    numbers of keys and values for its 128 heads: 71 times fewer numbers to keep."""
    f = recorded(measure, ro.mla_facts())
    latent = measure("latent per token and layer", f["latent"])
    expanded = measure("expanded keys and values per token and layer", f["expanded"])
    measure("expanded / latent", expanded / latent)
    assert latent == f["kv_lora_rank"] + 64 and expanded / latent > 10


@claim("ch04.longformer-window-global", "established",
       at=("attend only within a window plus a few global tokens (Longformer)",
           "(Longformer, 2020;"),
       printed={"Longformer": "a window plus a few global tokens"},
       scope="allenai/longformer-base-4096; " + META)  # fmt: skip
def test_longformer_attends_in_a_window_plus_global_tokens(measure):
    """Longformer-base attends within a 512-token window in all 12 layers and has separate query,
    key and value projections for its global tokens."""
    f = recorded(measure, ro.sparse_facts())
    window = measure("window (tokens)", f["longformer window"])
    layers = measure("windowed layers", f["longformer layers windowed"])
    assert window == 512 and layers == 12 and f["longformer global projections"]


SPARSE_PATTERNS = ("longformer window", "bigbird attention", "bigbird block",
                   "bigbird random blocks")  # fmt: skip


@claim("dd2.sparse-models", "established",
       at="Models like Longformer, BigBird, and Sparse Transformers",
       printed={"Longformer, BigBird": "combine local, global (and random) sparse patterns"},
       scope="allenai/longformer-base-4096 and google/bigbird-roberta-base; " + META
       + ". Sparse Transformers (Child et al., 2019) has no transformers class and is "
       "not tested.")  # fmt: skip
def test_longformer_and_bigbird_combine_sparse_patterns(measure):
    """Longformer combines a local window with global tokens, and BigBird's block-sparse attention
    combines windowed blocks of 64 tokens with global and 3 random blocks."""
    f = recorded(measure, ro.sparse_facts())
    measure_each(measure, {name: f[name] for name in SPARSE_PATTERNS})
    assert f["longformer window"] == 512 and f["longformer global projections"]
    assert f["bigbird attention"] == "BigBirdBlockSparseAttention"
    assert f["bigbird random blocks"] > 0


def global_pattern(n: int, half: int, global_token: int = 0) -> list[list[int]]:
    """Longformer's rule as the article states it: the global token attends to every position,
    and every other position to its window (``half`` each side) and to the global token."""
    window = [{j for j in range(n) if abs(i - j) <= half} | {global_token} for i in range(n)]
    return [list(range(n)) if i == global_token else sorted(w) for i, w in enumerate(window)]


@claim("dd2.global-attention", "established",
       at=("3. Global attention: Certain tokens (like [CLS] or special markers) attend to",
           "[CLS] attends to all tokens; all tokens attend to [CLS]"),
       printed={"[CLS]": "attends to all tokens; all tokens attend to [CLS]"},
       scope="transformers' LongformerModel (Beltagy et al., 2020): one layer from a small "
       "LongformerConfig (width 32, 2 heads, attention_window 4: two positions each side), 16 "
       "tokens, position 0 given global attention (global_attention_mask) as Longformer gives "
       "it to [CLS]; random weights, float64, nothing downloaded. Who attends to whom is read "
       "from the gradient of each output position with respect to the inputs "
       "(tests/claims/dd2_longformer.py).")  # fmt: skip
def test_longformer_global_token_attends_to_all_and_all_to_it(measure):
    """In Longformer a token given global attention ([CLS]) attends to every position and every
    position attends to it, while every other token attends only within its window (two
    positions each side) and to the global token."""
    rows = longformer.attended((0,))
    n, half = longformer.LENGTH, longformer.WINDOW // 2
    measure("positions the global token attends to", len(rows[0]))
    measure("positions that attend to the global token", sum(0 in r for r in rows))
    outside = [j for i, r in enumerate(rows[1:], 1) for j in r if j and abs(i - j) > half]
    measure("keys of other tokens outside their window, the global token apart", len(outside))
    measure("keys of token 8", rows[8])
    assert rows == global_pattern(n, half)


# dd2 · Part 8: decoder-only models, LLaMA sizes, KV cache -----------------------------------------


def decoder_configs() -> tuple:
    """The transformers configurations of GPT-2 small and of LLaMA 7B's checkpoint."""
    from transformers import GPT2Config, LlamaConfig

    return GPT2Config(**GPT2_SMALL), LlamaConfig(**rm.CHECKPOINTS["llama-7b"][2])


@claim("dd2.decoder-only", "established", at="Modern LLMs like GPT and LLaMA are decoder-only",
       printed={"GPT, LLaMA": "decoder-only, left to right"},
       scope="GPT-2 small and " + rm.named("llama-7b") + "; " + META + ". Causality from "
       "GPT2LMHeadModel and LlamaForCausalLM at width 32-64 with random weights.")  # fmt: skip
def test_gpt2_and_llama_are_causal_decoders(measure):
    """GPT-2 and LLaMA are decoder-only: no encoder or cross-attention in their configurations, and
    position 0's output does not move when every later token changes."""
    configuration(measure, "llama-7b")
    gpt2, llama = decoder_configs()
    gpt2_enc = measure("GPT-2 encoder-decoder", gpt2.is_encoder_decoder or gpt2.add_cross_attention)
    llama_enc = measure("LLaMA encoder-decoder", llama.is_encoder_decoder)
    gpt2_moved = measure("GPT-2: largest change at position 0", max(first_token_sensitivity(2)))
    llama_moved = measure("LLaMA: largest change at position 0",
                          rm.first_position_moves("llama-7b"))  # fmt: skip
    assert not (gpt2_enc or llama_enc) and gpt2_moved == llama_moved == 0.0


LLAMA_SIZES = {  # model -> (checkpoint, the article's pattern, the name's size in billions)
    "LLaMA 7B": ("llama-7b", "n_layers = {}, n_heads = {}, d_head = {}, d_model = {}", 7),
    "LLaMA 70B": ("llama2-70b", "n_layers = {}, d_model = {}", 70),
}
SIZE_NAMES = {
    "n_layers": "layers",
    "n_heads": "heads",
    "d_head": "head width",
    "d_model": "d_model",
}
CONFIG_FIELDS = {"layers": "num_hidden_layers", "heads": "num_attention_heads",
                 "head width": "head_dim", "d_model": "hidden_size"}  # fmt: skip
NAMED_SIZE = 0.05  # a model's name rounds its parameter count: 6.74B is "7B", 68.98B "70B"


def printed_sizes(text: str, pattern: str) -> dict:
    """The sizes the article prints for one model, read from its text now."""
    names = [SIZE_NAMES[n] for n in re.findall(r"(\w+) = \{\}", pattern)]
    return {name: int(v) for name, v in zip(names, read(text, pattern), strict=True)}


def real_sizes(f: dict) -> dict:
    """The published checkpoint's sizes under the names of :data:`SIZE_NAMES`."""
    return {"layers": f["n_layers"], "heads": f["n_heads"], "head width": f["head_dim"],
            "d_model": f["d_model"]}  # fmt: skip


def params_with(key: str, sizes: dict) -> int:
    """Parameters of the checkpoint's LlamaForCausalLM with ``sizes`` put in its published
    config (the values the article does not print stay the published ones), on the meta device.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    config = {**rm.CHECKPOINTS[key][2], **{CONFIG_FIELDS[k]: v for k, v in sizes.items()}}
    with torch.device("meta"):
        return count_params(LlamaForCausalLM(LlamaConfig(**config)))


@claim("dd2.llama-sizes", "established",
       at=("n_layers = 32, n_heads = 32, d_head = 128, d_model = 4096",
           "n_layers = 80, d_model = 8192"),
       scope=scope_of("llama-7b", "llama2-70b") + ". The article's sizes are read from its text "
       "at run time; a LlamaForCausalLM with them in the published configuration (the sizes it "
       "does not print, such as the MLP width and LLaMA 2 70B's 8 kv heads, kept) is counted on "
       f"the meta device against the model's name, within {NAMED_SIZE:.0%}. The article's "
       "'LLaMA 70B' is LLaMA 2 70B (LLaMA 1 had no 70B).")  # fmt: skip
@pytest.mark.parametrize("model", list(LLAMA_SIZES))
def test_the_articles_llama_sizes_are_the_real_ones(model, measure):
    """The sizes the article gives for LLaMA 7B (32 layers, 32 heads of 128, d_model 4,096) and
    LLaMA 70B (80 layers, d_model 8,192) are those of the real checkpoints, and a model built with
    them has the size its name says (7 and 70 billion parameters)."""
    key, pattern, billions = LLAMA_SIZES[model]
    f = configured(measure, key)
    printed, real = printed_sizes(source_text(DD2), pattern), real_sizes(f)
    for name, size in printed.items():
        measure(name, real[name], printed=size)
    built = measure("parameters with the article's sizes (billions)",
                    params_with(key, printed) / 1e9)  # fmt: skip
    measure("parameters of the published model (billions)", f["params"] / 1e9)
    assert all(real[name] == size for name, size in printed.items())
    assert abs(built / billions - 1) <= NAMED_SIZE


def printed_kv_cache(text: str) -> tuple:
    """The article's LLaMA 70B cache: MB per token and GB for 32K tokens, read from its text."""
    per_mb = number(text, "Per token: 2 × {_} × {_} × 2 bytes = {} MB")
    return per_mb, number(text, "For 32K context: {_} × {_} = {} GB")


@claim("dd2.kv-llama70b-reference", "established",
       at=("Per token: 2 × 80 × 8192 × 2 bytes = 2.6 MB",
           "For 32K context: 2.6 × 32768 = 85 GB"),
       scope=scope_of("llama2-70b") + ". Bytes are the fp16 keys and values its k_proj and v_proj "
       "output; MB and GB are 10^6 and 10^9 bytes; the printed sizes are read from the article at "
       "run time.",
       erratum="the real LLaMA 70B (LLaMA 2 70B) uses GQA with 8 kv heads for its 64 query heads, "
       "so its fp16 cache is 2 x 80 x 8 x 128 x 2 = 327,680 bytes (0.33 MB) per token and 10.7 GB "
       "at 32K tokens, 8 times less than the article's 2.6 MB and 85 GB, which assume one key and "
       "value per query head",
       error=errata.LLAMA70B_GQA)  # fmt: skip
def test_llama70b_kv_cache_of_the_real_model(measure):
    """The real LLaMA 70B's fp16 KV cache takes 2.6 MB per token and 85 GB for 32K tokens."""
    per_mb, at_32k = printed_kv_cache(source_text(DD2))
    per_token = configured(measure, "llama2-70b")["kv_bytes_per_token"]
    mb = measure("per token (MB)", per_token / 1e6, printed=per_mb)
    gb = measure("32K tokens (GB)", per_token * 32768 / 1e9, printed=at_32k)
    errata.llama70b_gqa_correction(measure, per_token)
    assert reproduces(mb, per_mb) and reproduces(gb, at_32k)


# dd2 · Part 8: GQA, SwiGLU, GPT-2 -> LLaMA 3 ---------------------------------------------------


@claim("dd2.gqa-models", "established",
       at=("USED IN: LLaMA 2 70B, LLaMA 3, Mistral", "GQA: 2-8× reduction in KV-cache memory"),
       printed={"used in": "LLaMA 2 70B, LLaMA 3, Mistral"},
       scope=scope_of(*GQA_MODELS.values()) + ". 'Most modern LLMs' is not tested.",
       remark="The chapter names the same three families as GQA models (ch04.gqa-models): the "
       "two sources agree, and both agree with the checkpoints.")  # fmt: skip
@pytest.mark.parametrize("model", list(GQA_MODELS))
def test_named_models_use_gqa_with_a_2_to_8x_smaller_cache(model, measure):
    """LLaMA 2 70B, Llama 3 and Mistral use GQA, and their KV cache is 2 to 8 times smaller than
    multi-head attention's at the same sizes."""
    f = configured(measure, GQA_MODELS[model])
    heads, kv = measure("query heads", f["n_heads"]), measure("kv heads", f["n_kv_heads"])
    reduction = measure("cache reduction vs MHA", heads / kv, printed="2-8")
    assert 1 < kv < heads and 2 <= reduction <= 8


@claim("dd2.gpt2-activation", "established",
       at=("MLP Activation GELU SwiGLU", "11. Activation (GELU)"),
       printed={"GPT-2 MLP activation": "GELU"},
       scope="openai-community/gpt2 (GPT-2 small) config and transformers' GPT2MLP activation, "
       "on 10,001 points of [-6, 6] in float64",
       remark="GPT-2's activation is gelu_new, the tanh approximation of GELU; it differs from "
       "the exact GELU (x·Φ(x), torch's nn.GELU() default, which the article's sketch code "
       "uses) by at most 4.7e-4.")  # fmt: skip
def test_gpt2_uses_the_tanh_approximation_of_gelu(measure):
    """GPT-2's MLP activation is GELU, in its tanh approximation (transformers' gelu_new):
    0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), to float64 rounding."""
    f = recorded(measure, ro.gpt2_activation())
    name = measure("activation_function", f["activation"])
    tanh = measure("max |act - tanh GELU|", f["vs tanh approximation"])
    exact = measure("max |act - exact GELU|", f["vs exact GELU"])
    assert name == "gelu_new" and tanh < 1e-12 and exact < 1e-3


def llama_mlp_vs_swiglu() -> float:
    """Largest difference between transformers' LlamaMLP (width 32, LLaMA 7B's activation,
    random weights, float64) and down(silu(gate(x)) · up(x)) on 5 random inputs."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaMLP

    tiny = LlamaConfig(**dict(rm.CHECKPOINTS["llama-7b"][2], hidden_size=32, intermediate_size=86))
    torch.manual_seed(0)
    mlp = LlamaMLP(tiny).double()
    x = torch.randn(5, 32, dtype=torch.float64)
    swiglu = mlp.down_proj(torch.nn.functional.silu(mlp.gate_proj(x)) * mlp.up_proj(x))
    return (mlp(x) - swiglu).abs().max().item()


@claim("dd2.llama-swiglu", "established",
       at=("SWIGLU MLP (LLaMA, etc.):", "(actually uses 8/3 × d to match param count)"),
       printed={"LLaMA MLP": "SwiGLU, hidden 8/3 x d, the parameters of a 4 x d MLP"},
       scope=scope_of("llama-7b") + ". The formula is checked on transformers' LlamaMLP at width "
       "32 with LLaMA 7B's activation, random weights, float64.")  # fmt: skip
def test_llama_7b_uses_swiglu_at_8_3_width(measure):
    """LLaMA 7B's MLP is SwiGLU: down(silu(gate(x)) · up(x)), with hidden width 11,008, 8/3 of
    d_model rounded up to a multiple of 256, so its parameters are within 1% of a 4x MLP's."""
    f = configured(measure, "llama-7b")
    d, hidden = f["d_model"], measure("MLP hidden width", f["d_ff"])
    measure("hidden / d_model", hidden / d, printed="8/3")
    ratio = measure("SwiGLU / 4x MLP parameters", 3 * d * hidden / (8 * d * d))
    error = measure("max |LlamaMLP - SwiGLU formula|", llama_mlp_vs_swiglu())
    assert f["gated"] and f["activation"] == "silu" and error == 0.0
    assert hidden == -(-int(8 * d / 3) // 256) * 256 and abs(ratio - 1) < 0.01


LLAMA3 = ("llama3-8b", "llama3-70b")


def components(f: dict, long_context: int) -> dict:
    """What the article's GPT-2 -> LLaMA 3 table compares, read from one checkpoint's facts
    (and the context of its longer-context release)."""
    return {
        "position parameters": f["position_params"],
        "norm": f["norm"],
        "norm placement": llama_7b()["norm_placement"],
        "kv heads < query heads": f["n_kv_heads"] < f["n_heads"],
        "MLP": f"gated, {f['activation']}" if f["gated"] else f["activation"],
        "biases": f["biases"],
        "vocabulary": f["vocab_size"],
        "context": f["context"],
        "context (Llama 3.1)": long_context,
    }


@claim("dd2.llama3-components", "established",
       at=("Position Encoding Learned absolute RoPE (rotary)", "Normalization LayerNorm RMSNorm",
           "Norm Placement Post-norm Pre-norm", "Attention Multi-Head (MHA) Grouped Query (GQA)",
           "No (removed from most)", "Vocab Size 50,257 128,000+",
           "Context Length 1,024 8,192 - 128,000+"),
       printed={"positions": "RoPE, no parameters", "norm": "RMSNorm, pre-norm",
                "attention": "GQA, n_kv < n_heads", "MLP": "SwiGLU", "biases": "none",
                "vocabulary": "128,000+", "context": "8,192 - 128,000+"},
       scope=scope_of(*LLAMA3, "llama3.1-8b") + ". Pre-norm is read from "
       "transformers' LlamaDecoderLayer (the class of every Llama 3 checkpoint) with "
       "hooks, at width 32.")  # fmt: skip
@pytest.mark.parametrize("key", LLAMA3)
def test_llama3_has_the_articles_modern_components(key, measure):
    """Llama 3 (8B and 70B) encodes positions with parameter-free RoPE, normalises with RMSNorm
    before attention and MLP, uses GQA and a SwiGLU MLP, has no biases, a vocabulary of over 128,000
    tokens and a context of 8,192 tokens (131,072 in Llama 3.1)."""
    f = configured(measure, key, "llama3.1-8b")
    long = rm.decoder_facts("llama3.1-8b")["context"]
    rows = measure_each(measure, components(f, long))
    assert rows["position parameters"] == 0 and rows["norm"] == "LlamaRMSNorm"
    assert rows["norm placement"] == "pre-norm" and rows["kv heads < query heads"]
    assert rows["MLP"] == "gated, silu" and not rows["biases"]
    assert rows["vocabulary"] >= 128_000 and rows["context"] == 8192 and long >= 128_000


def ratio_correction(ratio: float, f: dict) -> str:
    """The table's MLP Ratio row for LLaMA 3 as it should read, from the measured ratio."""
    return (
        f"MLP Ratio for LLaMA 3: {ratio:.1f}× ({f['d_ff']:,} / {f['d_model']:,}, a SwiGLU widened "
        "by Meta's ffn_dim_multiplier 1.3); ~2.7× (8/3) is LLaMA 1's and LLaMA 2 7B's and 13B's"
    )


@claim("dd2.llama3-mlp-ratio", "established", at="MLP Ratio 4× ~2.7× (8/3)",
       scope=scope_of(*LLAMA3) + ". The ratio is the gate projection's width over d_model.",
       erratum="Llama 3's MLP is 3.5 times d_model, not about 2.7: 14,336 / 4,096 in Llama 3 8B "
       "and 28,672 / 8,192 in Llama 3 70B (published configs; Meta widened the SwiGLU by an "
       "ffn_dim_multiplier of 1.3). 8/3 (2.69 after rounding) is LLaMA 1 7B's and LLaMA 2 7B's "
       "ratio (11,008 / 4,096)",
       error="llama3-mlp-ratio-is-3-5")  # fmt: skip
@pytest.mark.parametrize("key", LLAMA3)
def test_llama3_mlp_is_8_3_of_d_model(key, measure):
    """Llama 3's SwiGLU hidden width is about 2.7 (8/3) times d_model."""
    f = configured(measure, key)
    printed = number(source_text(DD2), "MLP Ratio {_}× ~{}×")
    ratio = measure("d_ff / d_model", f["d_ff"] / f["d_model"], printed=printed)
    measure.correct(ratio_correction(ratio, f))
    assert reproduces(ratio, printed)


@claim("ch04.multimodal-encoders-vit", "likely",
       at="the vision encoders in multimodal LLMs are almost all ViTs",
       printed={"multimodal LLMs' vision encoders": "almost all ViTs"},
       scope="the vision towers of llava-hf/llava-1.5-7b-hf (CLIP ViT-L/14, 336 px) and "
       "google/paligemma-3b-pt-224 (SigLIP So400m/14, 224 px), " + META + ". Two "
       "examples: 'almost all' is a survey of the field, cited "
       "(ch04.vit-multimodal-encoders), not tested.")  # fmt: skip
@pytest.mark.parametrize("model", list(ro.TOWERS))
def test_multimodal_vision_towers_are_vits(model, measure):
    """The vision encoders of LLaVA-1.5 and PaliGemma are ViTs: they cut the image into
    non-overlapping 14 x 14 patches and mix the patch tokens with self-attention in every layer."""
    f = recorded(measure, ro.vision_tower(model))
    patch = measure("patch convolution: kernel, stride", f["patch"])
    measure("tokens for one image", f["tokens"])
    layers = measure("self-attention layers", f["attention_layers"])
    assert patch == [14, 14, 14, 14] and layers == f["n_layers"]
