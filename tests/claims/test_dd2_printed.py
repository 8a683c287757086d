"""The deep dive's printed quantities that the claims of the main file do not check.

Shapes, parameter counts and the example attention row. Each printed value is read from the
article's text at run time and checked against Hugging Face transformers' own modules (GPT-2,
and LLaMA for the RoPE example), built from their configurations with random weights, or
against the definition it illustrates. Nothing here trains; every test is deterministic.
"""

from __future__ import annotations

import math
import re

import torch
from claimbook import claim, defaults, source_text

from experiments.modules import count_params
from experiments.printed_values import integers, line_with, lines_between, lines_with, numbers
from experiments.printed_values import shapes as printed_shapes
from experiments.reference_trace import gpt2, gpt2_block_shapes, gpt2_lm_meta, llama, recording
from tests.claims.sources import DD2

pytestmark = defaults(level="established")

FLOAT64 = 1e-12
TRANSFORMERS_GPT2 = "transformers' GPT-2 with its default configuration (GPT-2 small)"


def _small_trace(text: str) -> dict:
    """The set-up of the article's three-token trace: token ids, width, heads."""
    ids = integers(printed_shapes(line_with(text, "Token IDs:"))[0])
    n, width = integers(numbers(line_with(text, "Look up in embedding table")))
    heads = integers(numbers(line_with(text, "Q, K, V Projections (for all")))[-1]
    return {"ids": ids, "tokens": n, "width": width, "heads": heads}


def _trace_printed(text: str, setup: dict) -> tuple[dict, list[int], int]:
    """The trace's printed shapes of each intermediate, as the measures name them; the printed
    input's shape on its own line; and how many heads the printed concatenation joins."""
    embedded_printed = integers(printed_shapes(line_with(text, "→ Input X:"))[0])
    head_printed = integers(printed_shapes(line_with(text, "attn_output_h = weights_h", 1))[0])
    concat = line_with(text, "Concat(attn_output_1")
    concat_heads = int(re.findall(r"attn_output_(\d+)\)", concat)[0])
    projected_printed = integers(printed_shapes(line_with(text, "Concat(attn_output_1", 1))[0])
    printed = {
        "embedded input": [setup["tokens"], setup["width"]],
        "per-head weighted sum": [head_printed] * concat_heads,
        "heads concatenated": [setup["tokens"], concat_heads * head_printed[1]],
        "concatenated and projected": projected_printed,
    }
    return printed, embedded_printed, concat_heads


def _trace_shapes(setup: dict) -> dict:
    """The shapes transformers' LLaMA layer gives the same intermediates at the trace's set-up:
    the embedded tokens, each head's weighted sum, the heads concatenated, then projected."""
    model, seen = llama(hidden_size=setup["width"], num_attention_heads=setup["heads"],
                        num_hidden_layers=1, intermediate_size=64,
                        vocab_size=max(setup["ids"]) + 1), {}  # fmt: skip
    o_proj = model.layers[0].self_attn.o_proj
    o_proj.register_forward_hook(lambda m, args, out: seen.update(concat=args[0], out=out))
    with torch.no_grad(), recording() as calls:
        embedded = model.embed_tokens(torch.tensor([setup["ids"]]))
        model(inputs_embeds=embedded)
    summed = calls[0]["weighted_sum"][0]  # (heads, tokens, d_head)
    return {
        "embedded input": list(embedded.shape[1:]),
        "per-head weighted sum": [list(h.shape) for h in summed],
        "heads concatenated": list(seen["concat"].shape[1:]),
        "concatenated and projected": list(seen["out"].shape[1:]),
    }


@claim("dd2.trace-small-heads",
       at=("3 vectors of dim 512", "attn_output_h = weights_h · V_h", "Concat(attn_output_1"),
       scope="transformers' LLaMA attention layer (RoPE, as the trace) at the article's set-up: "
       "its token ids, width and head count read from the text; random weights, "
       "float32")  # fmt: skip
def test_three_token_trace_heads_and_projection(measure):
    """The three token ids embed to a 3 x 512 input; each of the 8 heads' weighted sum of values
    is 3 x 64; the 8 heads concatenated and projected are 3 x 512 again."""
    text = source_text(DD2)
    setup = _small_trace(text)
    printed, embedded_printed, concat_heads = _trace_printed(text, setup)
    got = _trace_shapes(setup)
    for name, value in got.items():
        measure(name, value, printed=printed[name])
    assert embedded_printed == printed["embedded input"] and concat_heads == setup["heads"]
    assert got == printed


def _score_layers(setup: dict) -> dict:
    """The article's two layers, each as (the line printing its scale, a builder, the tolerance
    of its weights against the causal softmax)."""
    return {
        "LLaMA at the trace's sizes": (
            "Q_h_rotated · K_h_rotated.T /",
            lambda: llama(
                hidden_size=setup["width"],
                num_attention_heads=setup["heads"],
                num_hidden_layers=1,
                intermediate_size=64,
                vocab_size=100,
            ),
            1e-6,  # transformers' LLaMA takes its softmax in float32
        ),
        "GPT-2 small": ("scores = Q @ K.transpose(-2, -1) /", lambda: gpt2(n_layer=1), FLOAT64),
    }


def _weights_against_scaled_softmax(model, root: int) -> tuple[int, float]:
    """Run ``model`` (float64) on 1 x 16 random inputs (seed 0): its heads' width, and the
    largest gap between its attention weights and the causal softmax of Q·Kᵀ / √root."""
    x = torch.randn(1, 16, model.config.hidden_size, dtype=torch.float64,
                    generator=torch.Generator().manual_seed(0))  # fmt: skip
    with torch.no_grad(), recording() as calls:
        model(inputs_embeds=x)
    q, k, weights = calls[0]["query"], calls[0]["key"], calls[0]["weights"]
    future = torch.ones(16, 16, dtype=torch.bool).triu(1)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(root)).masked_fill(future, -math.inf)
    return q.shape[-1], (weights - scores.softmax(-1)).abs().max().item()


@claim("dd2.score-scale",
       at=("Q_h_rotated · K_h_rotated.T / √64", "scores = Q @ K.transpose(-2, -1) / √64"),
       printed={"scores divided by": "√64"},
       scope="the attention weights of transformers' LLaMA layer at the trace's width and heads "
       "(queries and keys rotated, as printed) and of its GPT-2 small, float64, random weights, "
       "1 x 16 tokens, against the causal softmax of Q·Kᵀ divided by the printed root (to "
       "1e-12; 1e-6 for LLaMA, whose softmax runs in float32)")  # fmt: skip
def test_scores_are_divided_by_the_root_of_the_head_width(measure):
    """In both of the article's layers the heads are 64 wide, and the attention weights are the
    causal softmax of the queries times the keys divided by √64 = 8."""
    text, ok = source_text(DD2), []
    for name, (snippet, build, tolerance) in _score_layers(_small_trace(text)).items():
        root = int(re.findall(r"√(\d+)", line_with(text, snippet))[0])
        width, gap = _weights_against_scaled_softmax(build().double(), root)
        d_head = measure(f"d_head, {name}", width, printed=root)
        gap = measure(f"largest |weights - causal softmax(Q·Kᵀ / √{root})|, {name}", gap)
        ok.append(d_head == root and gap <= tolerance)
    assert all(ok)


def _example_row(text: str) -> tuple[list[str], int, str, list[float], list[tuple[str, str]]]:
    """The example sentence's words, the position and token of the example row, its printed
    weights, and its reading as (percent, token) pairs."""
    sentence = re.findall(r'for the sentence "([^"]+)"', text)[0].split()
    position, token = re.findall(r'Example for position (\d+) \("([^"]+)"\)', text)[0]
    row = printed_shapes(line_with(text, "weights might be"))[0]
    reading = re.findall(r'(\d+)% (?:attention )?to "([^"]+)"', line_with(text, "meaning:"))
    return sentence, int(position), token, row, reading


@claim("dd2.example-weights-row",
       at=("weights might be [0.2, 0.5, 0.3]", "meaning: 20% attention to"),
       printed={"weights for position 2": [0.2, 0.5, 0.3]},
       scope="the example row and its reading, as printed, against the step's own definition: a "
       "causal softmax row (one weight per position up to its own, each positive, summing to "
       "1)")  # fmt: skip
def test_example_row_is_a_valid_causal_attention_row(measure):
    """The example weights of position 2 ("sat") are a possible row of the step's causal
    softmax: one positive weight for each of the three tokens it may see, summing to 1, and the
    percentages read off it (20% to "The", 50% to "cat", 30% to "sat") are those weights."""
    sentence, position, token, row, reading = _example_row(source_text(DD2))
    measure("positions the row covers", len(row), printed=position + 1)
    total = measure("row sum", sum(row), printed=1)
    measure("percent", [100 * w for w in row], printed=[float(p) for p, _ in reading])
    assert token == sentence[position] and len(row) == position + 1
    assert all(w > 0 for w in row) and abs(total - 1) <= FLOAT64
    assert [t for _, t in reading] == sentence[: position + 1]
    assert all(abs(100 * w - float(p)) <= FLOAT64 for w, (p, _) in zip(row, reading, strict=True))


def _block_items(block) -> dict[str, list[torch.Tensor]]:
    """The article's line items of one block, as tensors of transformers' GPT2Block."""
    split, w_qkv = block.attn.split_size, block.attn.c_attn.weight
    fc1, fc2 = block.mlp.c_fc, block.mlp.c_proj
    items = {
        n: [w_qkv[:, i * split : (i + 1) * split]] for i, n in enumerate(("W_Q", "W_K", "W_V"))
    }
    return items | {
        "W_O": [block.attn.c_proj.weight], "W_fc1": [fc1.weight], "b_fc1": [fc1.bias],
        "W_fc1 + b_fc1": [fc1.weight, fc1.bias], "W_fc2": [fc2.weight], "b_fc2": [fc2.bias],
        "W_fc2 + b_fc2": [fc2.weight, fc2.bias], "γ + β": [block.ln_1.weight, block.ln_1.bias],
    }  # fmt: skip


def _printed_items(text: str) -> list[tuple[str, list[list[int]], int]]:
    """(item, printed shapes, printed count) for each line item the trace and the table print."""
    found = []
    for name in ("W_Q", "W_K", "W_V", "W_O", "W_fc1", "W_fc2", "γ"):
        for line in lines_with(text, f"Params: {name} ["):
            item = {"W_fc1": "W_fc1 + b_fc1", "W_fc2": "W_fc2 + b_fc2", "γ": "γ + β"}.get(
                name, name
            )
            found.append(
                (item, [integers(s) for s in printed_shapes(line)], int(numbers(line)[-1]))
            )
    for name in ("W_Q", "W_K", "W_V", "W_O", "W_fc1", "b_fc1", "W_fc2", "b_fc2"):
        *dims, count = integers(numbers(line_with(text, f"{name}: ")))
        found.append((name, [dims], count))
    for line in lines_with(text, "LayerNorm (pre):"):  # "768 × 2": two vectors of 768
        width, vectors, count = integers(numbers(line))
        found.append(("γ + β", [[width]] * vectors, count))
    return found


@claim("dd2.gpt2-block-params",
       at=("Params: W_Q [768, 768] = 589,824", "= 2,362,368", "= 2,360,064", "b_fc1: 3072"),
       scope=f"one block of {TRANSFORMERS_GPT2}, on the meta device: every line item of the "
       "trace and of the table, read from the text, against its tensors (c_attn split in three "
       "as GPT2Attention splits it); the attention biases GPT-2 has are another claim's "
       "(dd2.bias-fact-in-param-count)")  # fmt: skip
def test_gpt2_block_line_items(measure):
    """Each line item of the GPT-2 small block, in the trace and in the table, has the shape
    and the parameter count of the real block's tensors: four 768 x 768 attention matrices of
    589,824, the MLP's 768 x 3,072 and 3,072 x 768 matrices with biases of 3,072 and 768
    (2,362,368 and 2,360,064 with them) and each LayerNorm's two vectors of 768 (1,536)."""
    items = _block_items(gpt2_lm_meta().transformer.h[0])
    printed, ok = _printed_items(source_text(DD2)), []
    for name, shapes, count in printed:
        got = measure(f"{name} count", sum(t.numel() for t in items[name]), printed=count)
        got_shapes = measure(f"{name} shapes", [list(t.shape) for t in items[name]], printed=shapes)
        ok.append(got == count and got_shapes == shapes)
    assert len(printed) == 18 and all(ok)


def _params(*modules) -> int:
    return sum(count_params(m) for m in modules)


def _layernorms(model: torch.nn.Module) -> list[torch.nn.LayerNorm]:
    """Every LayerNorm of ``model``."""
    return [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]


def _summary_printed(text: str) -> tuple[float, ...]:
    """The summary's printed embeddings (M), all LayerNorms (M, then %), the final LayerNorm
    (%) and the tied LM head's parameters."""
    emb_p = float(re.findall(r"Embeddings:\s+([\d.]+)M", text)[0])
    ln_p, ln_pct_p = numbers(line_with(text, "LayerNorms: "))
    final_p = numbers(line_with(text, "Final LayerNorm: "))[-1]
    return emb_p, ln_p, ln_pct_p, final_p, numbers(line_with(text, "LM head (tied):"))[-1]


@claim("dd2.gpt2-summary-shares",
       at=("Embeddings: 39.4M", "LayerNorms: 0.04M", "Final LayerNorm: 768 × 2", "LM head (tied):"),
       scope=f"{TRANSFORMERS_GPT2}, built on the meta device (tied head, as published); shares "
       "of its total of unique parameters",
       remark="transformers' GPT-2 small has 124,439,808 parameters, 36,864 more than the "
       "article's 124,402,944: the attention biases the article leaves out "
       "(dd2.bias-fact-in-param-count). The shares checked here are the same against either "
       "total.")  # fmt: skip
def test_gpt2_summary_rows(measure):
    """In GPT-2 small the embeddings are 39.4M parameters, the 25 LayerNorms 0.04M (0.0% of the
    total, as is the final one alone), and the LM head, tied to the token embeddings, adds none."""
    emb_p, ln_p, ln_pct_p, final_p, head_p = _summary_printed(source_text(DD2))
    model = gpt2_lm_meta()
    core, norms = model.transformer, _layernorms(model)
    total = measure("total, each tensor once", _params(model))
    emb = measure("embeddings (M)", _params(core.wte, core.wpe) / 1e6, printed=emb_p)
    ln = measure("all LayerNorms (M)", _params(*norms) / 1e6, printed=ln_p)
    ln_pct = measure("all LayerNorms (%)", 100 * _params(*norms) / total, printed=ln_pct_p)
    final = measure("final LayerNorm (%)", 100 * _params(core.ln_f) / total, printed=final_p)
    head = measure("LM head's parameters beyond the rest", total - _params(core), printed=head_p)
    assert round(emb, 1) == emb_p and round(ln, 2) == ln_p
    assert round(ln_pct, 1) == ln_pct_p and round(final, 1) == final_p and head == head_p


def _printed_trace(text: str) -> tuple[int, int, int, dict[int, list], list]:
    """The printed shape trace: the input's batch, length and width; each numbered step's
    shape lines (the one "same reshape" line of step 3 standing for K's and V's); and the
    output line's shapes."""
    box = lines_between(text, "COMPLETE SHAPE TRACE", "OUTPUT: X [")
    batch, seq, width = integers(numbers(line_with(text, "INPUT: X [batch=")))
    steps: dict[int, list] = {}
    step = 0
    for line in box:
        if heading := re.match(r"│ (\d+)\. ", line):
            step = int(heading.group(1))
        elif "Shape:" in line or "same reshape" in line:
            steps.setdefault(step, []).append([integers(s) for s in printed_shapes(line)])
    steps[3] = [steps[3][0], steps[3][1], steps[3][1]]  # the one "same reshape" line is K's and V's
    return batch, seq, width, steps, [integers(s) for s in printed_shapes(box[-1])]


def _block_steps(g: dict) -> dict[int, list]:
    """The recorded shapes of a GPT-2 block, grouped as the printed trace's 13 steps."""
    heads = g["heads"]
    return {1: [g["ln_1"]], 2: [g["Q"], g["K"], g["V"]],
            3: [[g["Q"][2], heads[0]], [heads[1]], [heads[2]]],  # "K, V same reshape → ... each"
            4: [g["scores"]], 5: [[g["weights"]]], 6: [g["weighted sum"]], 7: [g["W_O"]],
            8: [[g["residual 1"]]], 9: [[g["ln_2"][1]]], 10: [g["fc1"]], 11: [[g["GELU"][1]]],
            12: [g["fc2"]], 13: [[g["output"]]]}  # fmt: skip


@claim("dd2.gpt2-trace-shapes",
       at=("COMPLETE SHAPE TRACE: ONE TRANSFORMER LAYER", "@ [768, 3072] → [1, 512, 3072]"),
       scope=f"the first block of {TRANSFORMERS_GPT2}, run for real in float32 on a random "
       "input of the printed batch and length, with hooks on its sub-modules and its own eager "
       "attention recorded; every shape line of the printed trace read from the text")  # fmt: skip
def test_gpt2_block_every_intermediate_shape(measure):
    """Every intermediate of a GPT-2 small block has its printed shape: the norms keep
    (1, 512, 768); the four projections are 768 x 768; keys transposed are (1, 12, 64, 512);
    the weights (1, 12, 512, 512); the weighted sum (1, 12, 512, 64); the MLP widens to 3,072
    and back, GELU leaving the shape alone; both residual sums are (1, 512, 768)."""
    batch, seq, width, steps, output = _printed_trace(source_text(DD2))
    g = gpt2_block_shapes(batch, seq)
    measure("model width", g["ln_1"][0][-1], printed=width)
    measure("layer output", [g["output"]], printed=output)
    for number, shapes in (got := _block_steps(g)).items():
        measure(f"step {number}", shapes, printed=steps.get(number))
    assert sorted(steps) == list(range(1, 14)) and got == steps and output == [g["output"]]
    assert g["GELU"][0] == g["GELU"][1]  # "(unchanged)"
