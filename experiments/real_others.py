"""Named non-LLaMA models checked against their reference configurations in transformers.

GPT-2's activation, Mamba, Jamba, DeepSeek-V2's latent attention, the vision
models of the chapter's first fork (ResNet-50, ConvNeXt-T, Swin-T, ViT-B/16) and
the sparse-attention encoders (Longformer, BigBird). Each configuration is
written out with its published checkpoint's sizes and built by transformers'
class on the meta device; nothing is downloaded. Every function returns plain
data with a "config" entry naming what it built.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from experiments.modules import count_params
from experiments.reference import GPT2_SMALL, GPT2_SMALL_NAME, describe

MAMBA_130M = dict(hidden_size=768, state_size=16, num_hidden_layers=24, conv_kernel=4, expand=2,
                  vocab_size=50280, time_step_rank="auto", use_conv_bias=True)  # fmt: skip
JAMBA_V01 = dict(
    hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
    num_key_value_heads=8, num_experts=16, num_experts_per_tok=2, vocab_size=65536,
    attn_layer_period=8, attn_layer_offset=4, expert_layer_period=2, expert_layer_offset=1,
    mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=256,
    max_position_embeddings=262144,
)  # fmt: skip
DEEPSEEK_V2 = dict(
    hidden_size=5120, num_hidden_layers=60, num_attention_heads=128, num_key_value_heads=128,
    kv_lora_rank=512, q_lora_rank=1536, qk_nope_head_dim=128, qk_rope_head_dim=64,
    v_head_dim=128, vocab_size=102400, intermediate_size=12288, moe_intermediate_size=1536,
    n_routed_experts=160, n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1,
)  # fmt: skip
RESNET_50 = dict(embedding_size=64, hidden_sizes=[256, 512, 1024, 2048], depths=[3, 4, 6, 3],
                 layer_type="bottleneck", hidden_act="relu", num_labels=1000)  # fmt: skip
CONVNEXT_T = dict(patch_size=4, hidden_sizes=[96, 192, 384, 768], depths=[3, 3, 9, 3],
                  hidden_act="gelu", layer_scale_init_value=1e-6, num_labels=1000)  # fmt: skip
SWIN_T = dict(image_size=224, patch_size=4, embed_dim=96, depths=[2, 2, 6, 2],
              num_heads=[3, 6, 12, 24], window_size=7, mlp_ratio=4.0, num_labels=1000)  # fmt: skip
VIT_B16 = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
               intermediate_size=3072, image_size=224, patch_size=16, num_labels=1000)  # fmt: skip
LONGFORMER_BASE = dict(attention_window=512, hidden_size=768, num_hidden_layers=12,
                       num_attention_heads=12, intermediate_size=3072,
                       max_position_embeddings=4098, vocab_size=50265)  # fmt: skip
BIGBIRD_BASE = dict(attention_type="block_sparse", block_size=64, num_random_blocks=3,
                    hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                    max_position_embeddings=4096, vocab_size=50358)  # fmt: skip


def _build(cls_name: str, cfg_name: str, sizes: dict):
    import transformers  # here: its import takes seconds

    with torch.device("meta"):
        return getattr(transformers, cls_name)(getattr(transformers, cfg_name)(**sizes))


def gpt2_activation() -> dict:
    """GPT-2 small's MLP activation: its name and how it compares with two GELUs.

    The activation transformers' GPT2MLP applies (from GPT-2 small's config), on
    10,001 points of [-6, 6] in float64, against the tanh approximation
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) and the exact x Phi(x).
    """
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2MLP

    cfg = GPT2Config(**GPT2_SMALL)
    act = GPT2MLP(4 * cfg.n_embd, cfg).act
    x = torch.linspace(-6, 6, 10001, dtype=torch.float64)
    tanh = 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return {
        "config": describe(GPT2_SMALL_NAME, GPT2_SMALL),
        "activation": cfg.activation_function,
        "vs tanh approximation": (act(x) - tanh).abs().max().item(),
        "vs exact GELU": (act(x) - torch.nn.functional.gelu(x)).abs().max().item(),
    }


def mamba_facts(lengths: tuple[int, ...] = (16, 256)) -> dict:
    """Mamba 130M (state-spaces/mamba-130m-hf): its mixer's parts and its cache per length.

    conv_kernel and conv_depthwise (the short causal convolution in each block),
    x_proj (out width = time-step rank + 2 x state size: the token-dependent
    step, B and C), A_shape (A_log, a parameter with no batch or time axis),
    cache_numbers: numbers the inference cache holds after reading each length
    (meta-device forward), and params.
    """
    model = _build("MambaForCausalLM", "MambaConfig", MAMBA_130M)
    mixer = model.backbone.layers[0].mixer
    cache = {}
    with torch.device("meta"):
        for n in lengths:
            c = model(torch.zeros(1, n, dtype=torch.long), use_cache=True).cache_params
            cache[n] = sum(
                c.get_conv_state(i).numel() + c.get_recurrent_state(i).numel()
                for i in range(len(model.backbone.layers))
            )
    return {
        "config": describe("state-spaces/mamba-130m-hf (Mamba, 130M)", MAMBA_130M),
        "conv_kernel": mixer.conv1d.kernel_size[0],
        "conv_depthwise": mixer.conv1d.groups == mixer.conv1d.in_channels,
        "blocks_with_conv": sum(hasattr(b.mixer, "conv1d") for b in model.backbone.layers),
        "n_blocks": len(model.backbone.layers),
        "x_proj": mixer.x_proj.out_features,
        "time_step_rank": mixer.time_step_rank,
        "state_size": mixer.ssm_state_size,
        "A_shape": list(mixer.A_log.shape),
        "cache_numbers": [cache[n] for n in lengths],
        "params": count_params(model),
    }


def jamba_layers() -> dict:
    """Jamba v0.1 (ai21labs/Jamba-v0.1) built on the meta device: kinds of its 32 layers."""
    model = _build("JambaForCausalLM", "JambaConfig", JAMBA_V01)
    kinds = [
        "attention" if "Attention" in type(x).__name__ else "mamba" for x in model.model.layers
    ]
    return {
        "config": describe("ai21labs/Jamba-v0.1", JAMBA_V01),
        "kinds": kinds,
        "attention": kinds.count("attention"),
        "mamba": kinds.count("mamba"),
        "params": count_params(model),
    }


def mla_facts() -> dict:
    """DeepSeek-V2's multi-head latent attention, one layer built on the meta device.

    latent: width per token of what kv_a_proj_with_mqa computes from the hidden
    state (the compressed key-value vector plus the shared rotary key); expanded:
    width of the keys and values kv_b_proj (and the rotary key) make from it for
    all heads; n_layers to scale per-token totals.
    """
    from transformers import DeepseekV2Config
    from transformers.models.deepseek_v2.modeling_deepseek_v2 import DeepseekV2Attention

    cfg = DeepseekV2Config(**DEEPSEEK_V2)
    with torch.device("meta"):
        attn = DeepseekV2Attention(cfg, layer_idx=0)
    heads = cfg.num_attention_heads
    return {
        "config": describe("deepseek-ai/DeepSeek-V2", DEEPSEEK_V2),
        "latent": attn.kv_a_proj_with_mqa.out_features,
        "kv_lora_rank": cfg.kv_lora_rank,
        "expanded": attn.kv_b_proj.out_features + heads * cfg.qk_rope_head_dim,
        "n_layers": cfg.num_hidden_layers,
    }


def _kinds(module: nn.Module, kinds: tuple) -> int:
    return sum(isinstance(m, kinds) for m in module.modules())


def vision_facts() -> dict:
    """ResNet-50, ConvNeXt-T, Swin-T and ViT-B/16 on the meta device: stems, blocks, sizes."""
    resnet = _build("ResNetForImageClassification", "ResNetConfig", RESNET_50)
    convnext = _build("ConvNextForImageClassification", "ConvNextConfig", CONVNEXT_T)
    swin = _build("SwinForImageClassification", "SwinConfig", SWIN_T)
    vit = _build("ViTForImageClassification", "ViTConfig", VIT_B16)
    r_block = resnet.resnet.encoder.stages[0].layers[0]
    c_block = convnext.convnext.encoder.stages[0].layers[0]
    acts = (nn.ReLU, nn.GELU, type(c_block.act))
    norms = (nn.BatchNorm2d, nn.LayerNorm, type(c_block.layernorm))
    r_stem = resnet.resnet.embedder.embedder.convolution
    c_stem = convnext.convnext.embeddings.patch_embeddings
    with torch.device("meta"):
        tokens = list(vit.vit(torch.zeros(1, 3, 224, 224)).last_hidden_state.shape)
    return {
        "config": "; ".join(
            describe(n, s)
            for n, s in (
                ("microsoft/resnet-50", RESNET_50),
                ("facebook/convnext-tiny-224", CONVNEXT_T),
                ("microsoft/swin-tiny-patch4-window7-224", SWIN_T),
                ("google/vit-base-patch16-224", VIT_B16),
            )
        ),
        "resnet stem": [*r_stem.kernel_size, *r_stem.stride],
        "convnext stem": [*c_stem.kernel_size, *c_stem.stride],
        "resnet largest kernel": max(
            m.kernel_size[0] for m in r_block.modules() if isinstance(m, nn.Conv2d)
        ),
        "convnext kernel": c_block.dwconv.kernel_size[0],
        "convnext depthwise": c_block.dwconv.groups == c_block.dwconv.in_channels,
        "resnet activations per block": _kinds(r_block, acts),
        "convnext activations per block": _kinds(c_block, acts),
        "resnet norms per block": _kinds(r_block, norms),
        "convnext norms per block": _kinds(c_block, norms),
        "convnext norm": type(c_block.layernorm).__name__,
        "convnext activation": type(c_block.act).__name__,
        "convnext params": count_params(convnext),
        "swin params": count_params(swin),
        "vit patch": list(vit.vit.embeddings.patch_embeddings.projection.kernel_size),
        "vit tokens": tokens,
        "vit attention heads": vit.config.num_attention_heads,
    }


def sparse_facts() -> dict:
    """Longformer-base-4096 and BigBird-RoBERTa-base on the meta device: their attention kinds."""
    lf = _build("LongformerModel", "LongformerConfig", LONGFORMER_BASE)
    bb = _build("BigBirdModel", "BigBirdConfig", BIGBIRD_BASE)
    lf_attn = lf.encoder.layer[0].attention.self
    bb_attn = bb.encoder.layer[0].attention.self
    return {
        "config": describe("allenai/longformer-base-4096", LONGFORMER_BASE)
        + "; "
        + describe("google/bigbird-roberta-base", BIGBIRD_BASE),
        "longformer window": 2 * lf_attn.one_sided_attn_window_size,
        "longformer global projections": all(
            hasattr(lf_attn, n) for n in ("query_global", "key_global", "value_global")
        ),
        "longformer layers windowed": len(lf.config.attention_window),
        "bigbird attention": type(bb_attn).__name__,
        "bigbird block": bb.config.block_size,
        "bigbird random blocks": bb.config.num_random_blocks,
    }


# llava-hf/llava-1.5-7b-hf's vision tower (CLIP ViT-L/14 at 336 px) and
# google/paligemma-3b-pt-224's (SigLIP So400m/14 at 224 px), from their config.json
CLIP_L14_336 = dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                    num_attention_heads=16, image_size=336, patch_size=14)  # fmt: skip
SIGLIP_SO400M_224 = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27,
                         num_attention_heads=16, image_size=224, patch_size=14)  # fmt: skip
TOWERS = {
    "LLaVA-1.5 7B": ("CLIPVisionModel", "CLIPVisionConfig", CLIP_L14_336),
    "PaliGemma 3B": ("SiglipVisionModel", "SiglipVisionConfig", SIGLIP_SO400M_224),
}


def vision_tower(name: str) -> dict:
    """A multimodal model's vision encoder on the meta device: is it a ViT?

    patch: kernel and stride of its first convolution (a ViT cuts the image into
    non-overlapping patches: kernel == stride == patch size); tokens: the shape
    of its last hidden state for one image; attention_layers: encoder layers
    holding q, k and v projections (self-attention over the patch tokens).
    """
    cls, cfg_cls, sizes = TOWERS[name]
    model = _build(cls, cfg_cls, sizes)
    conv = next(m for m in model.modules() if isinstance(m, nn.Conv2d))
    side = sizes["image_size"]
    with torch.device("meta"):
        tokens = list(model(torch.zeros(1, 3, side, side)).last_hidden_state.shape)
    layers = [
        m for m in model.modules() if all(hasattr(m, p) for p in ("q_proj", "k_proj", "v_proj"))
    ]
    checkpoint = {"LLaVA-1.5 7B": "llava-hf/llava-1.5-7b-hf vision tower",
                  "PaliGemma 3B": "google/paligemma-3b-pt-224 vision tower"}[name]  # fmt: skip
    return {
        "config": describe(checkpoint, sizes),
        "patch": [*conv.kernel_size, *conv.stride],
        "tokens": tokens,
        "attention_layers": len(layers),
        "n_layers": sizes["num_hidden_layers"],
    }
