"""Small computations behind literature statements that fit this book's scale.

Norm placement: a printed formula is evaluated with the attention and LayerNorm of
transformers' BertAttention (the original Transformer's post-norm sub-layer) and
compared with what that module computes. Biases: Llama 3 8B built by transformers on
the meta device as published (no biases) and with its own switches turned on. Context
lengths: transformers' configuration classes, whose defaults are the checkpoints their
docstrings name.
"""

from __future__ import annotations

import ast
import re

import torch

from experiments.modules import count_params
from experiments.profiling import count_flops
from experiments.real_models import config_of, named


def evaluate_formula(formula: str, names: dict):
    """Evaluate ``formula`` (names, calls of names, + and parentheses) with ``names``.

    An ast walk, no eval: anything else in the formula raises ValueError.
    """

    def ev(node):
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return ev(node.left) + ev(node.right)
        if isinstance(node, ast.Call) and not node.keywords:
            return ev(node.func)(*(ev(a) for a in node.args))
        raise ValueError(f"not a sum of calls: {ast.dump(node)}")

    return ev(ast.parse(formula.strip(), mode="eval").body)


@torch.no_grad()
def post_norm_gaps(formulas: dict[str, str], seed: int = 0) -> dict[str, dict]:
    """Each formula against transformers' post-norm sub-layer (BertAttention), in float64.

    A BERT attention sub-layer of width 32 (4 heads, random weights, eval mode) reads
    x (2, 6, 32); Attn is its attention with the output projection, Norm its LayerNorm.
    Per formula: ``gap`` (largest |formula - BertAttention|) and ``spread`` (largest
    |std - 1| of the output per position: 0 for an output that a LayerNorm produced).
    """
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertAttention

    torch.manual_seed(seed)
    cfg = BertConfig(hidden_size=32, num_attention_heads=4, intermediate_size=64)
    layer = BertAttention(cfg).double().eval()
    x = torch.randn(2, 6, 32, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    reference = layer(x)[0]
    names = {
        "x": x,
        "Attn": lambda h: layer.output.dense(layer.self(h)[0]),
        "Norm": layer.output.LayerNorm,
    }
    out = {}
    for label, formula in formulas.items():
        y = evaluate_formula(formula, names)
        spread = (y.std(-1, unbiased=False) - 1).abs().max().item()
        out[label] = {"gap": (y - reference).abs().max().item(), "spread": spread}
    return out


@torch.no_grad()
def gpt2_sublayer_gaps(formulas: dict[str, str], seed: int = 0) -> dict[str, float]:
    """Each formula against GPT-2's own attention sub-layer, in float64: largest gap.

    transformers' GPT2Block of width 32 (4 heads, random weights, eval mode) with its MLP's
    output projection zeroed, so that the block's output is its attention sub-layer's alone;
    Attn is the block's attention (with its output projection), Norm the LayerNorm before it
    (ln_1). Both read x (2, 6, 32) the same way, so any masking applies to both alike.
    """
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    torch.manual_seed(seed)
    cfg = GPT2Config(n_embd=32, n_head=4, n_layer=1, n_positions=16, attn_implementation="eager")
    block = GPT2Block(cfg).double().eval()
    block.mlp.c_proj.weight.zero_()
    block.mlp.c_proj.bias.zero_()
    x = torch.randn(2, 6, 32, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    first = lambda out: out[0] if isinstance(out, tuple) else out  # noqa: E731
    reference = first(block(x))
    names = {"x": x, "Attn": lambda h: first(block.attn(h)), "Norm": block.ln_1}
    return {
        label: (evaluate_formula(f, names) - reference).abs().max().item()
        for label, f in formulas.items()
    }


def bias_savings(key: str = "llama3-8b") -> dict:
    """Checkpoint ``key`` (a LLaMA) as published and with attention and MLP biases switched on.

    Returns config, params (as published), with_biases, saved (with - without), share
    (saved / with_biases), and work_share: the bias additions of one token (one per bias
    number) over the matrix-product FLOPs of one token through the biased model.
    """
    import transformers  # here: its import takes seconds

    published = config_of(key)
    biased = config_of(key)
    biased.attention_bias, biased.mlp_bias = True, True
    with torch.device("meta"):
        plain = transformers.LlamaForCausalLM(published)
        model = transformers.LlamaForCausalLM(biased)
        flops = count_flops(lambda: model(torch.zeros(1, 1, dtype=torch.long)))
    saved = count_params(model) - count_params(plain)
    additions = sum(p.numel() for n, p in model.named_parameters() if n.endswith("bias"))
    return {
        "config": named(key),
        "params": count_params(plain),
        "with_biases": count_params(model),
        "saved": saved,
        "bias_numbers": additions,
        "share": saved / count_params(model),
        "work_share": additions / flops,
    }


def default_context(config_class: str) -> dict:
    """The context length of transformers' ``config_class`` defaults and the checkpoint its
    docstring says the defaults reproduce (first huggingface.co link)."""
    import transformers  # here: its import takes seconds

    cls = getattr(transformers, config_class)
    cfg = cls()
    names = ("max_position_embeddings", "n_positions", "max_seq_len")
    context = next(getattr(cfg, n) for n in names if getattr(cfg, n, None) is not None)
    checkpoint = re.search(r"\[([\w\-./]+)\]\(https://huggingface\.co/", cls.__doc__ or "")
    return {"context": context, "checkpoint": checkpoint[1] if checkpoint else None}
