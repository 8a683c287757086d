"""The deep dive's code and pseudocode blocks, run as printed and compared with a reference.

Each block is cut from the article's text at run time (experiments/printed_code.py): the
Python block runs as printed; pseudocode and code inside box drawings run after the few
spelling changes of ``translate`` (``·`` is ``@``, ``√x`` is ``sqrt(x)``, ``σ²`` a name) and
with the names it leaves undefined supplied as glue. The references are PyTorch's
scaled_dot_product_attention, layer_norm and silu, and transformers' GPT2Block, GPT2MLP,
LlamaMLP and LlamaRMSNorm with the same weights. Each claim's remark names its glue.
"""

from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F
from claimbook import claim, source_text

from experiments.article_code import (
    all_heads,
    block_max,
    cache_states,
    causal,
    flash_code,
    gpt2_block,
    gpt2_causal,
    lines_between,
    python_block,
    row_max,
    row_sum,
    run,
    statements,
    translate,
    unbox,
)
from experiments.modules import apply_rope
from experiments.printed_code import gap, within
from tests.claims.sources import DD2

TIGHT = 1e-5  # float32 results of different operation orders


def boxed(text: str, first: str, last: str) -> list[str]:
    """The lines of the box from the one with ``first`` to the one with ``last``, its borders
    removed."""
    return unbox(lines_between(text, first, last))


def trace_glue() -> dict:
    """What the layer trace leaves undefined, for 3 tokens at width 512 with 8 heads of 64:
    random X and weights from generator 0 (per-head W_Q_h, W_K_h, W_V_h with the heads on
    a leading axis, and W_O), a LayerNorm, a Linear-GELU-Linear MLP, RoPE, the causal
    mask, and Concat joining the heads."""
    g = torch.Generator().manual_seed(0)
    d, h, hd = 512, 8, 64
    X = torch.randn(3, d, generator=g)
    W = {k: torch.randn(h, d, hd, generator=g) / d**0.5 for k in ("Q", "K", "V")}
    W_O = torch.randn(d, d, generator=g) / d**0.5
    norm, mlp = (
        torch.nn.LayerNorm(d),
        torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d)),
    )
    return {"X": X, "W_Q_h": W["Q"], "W_K_h": W["K"], "W_V_h": W["V"], "W_O": W_O,
            "LayerNorm": norm, "MLP": mlp, "softmax": torch.softmax, "sqrt": math.sqrt,
            "positions": torch.arange(3), "apply_rope": lambda t, positions: apply_rope(t),
            "causal_mask": causal(3), "Concat": lambda *heads: torch.cat(heads, -1)}  # fmt: skip


def pre_norm_rope_layer(names: dict) -> torch.Tensor:
    """The reference layer with the trace's weights: x plus PyTorch's causal scaled
    dot-product attention over RoPE-rotated queries and keys (heads side by side), then x
    plus the MLP of the normalised result."""
    X, norm, d = names["X"], names["LayerNorm"], 512
    flat = {n: names[f"W_{n}_h"].permute(1, 0, 2).reshape(d, d) for n in "QKV"}
    xn = norm(X)
    q, k, v = ((xn @ flat[n]).view(3, 8, 64).transpose(0, 1) for n in "QKV")
    attn = F.scaled_dot_product_attention(apply_rope(q), apply_rope(k), v, is_causal=True)
    ref = X + attn.transpose(0, 1).reshape(3, d) @ names["W_O"]
    return ref + names["MLP"](norm(ref))


def shape_trace_glue(g: torch.Generator) -> tuple:
    """GPT-2 small's block (tanh GELU) with random weights from ``g`` (scores of order one,
    so that every weight matters; one LayerNorm, as the trace names one; attention biases
    at zero, as the trace has none), and the trace's names for its weights, with a random
    1 x 512 x 768 input X drawn last. Returns the block and the names."""
    block = gpt2_block(768, 12, "gelu_new")
    for p in block.parameters():
        p.data = torch.randn(p.shape, generator=g) / 768**0.5
    for norm in (block.ln_1, block.ln_2):
        norm.weight.data = 1 + 0.1 * torch.randn(768, generator=g)
    block.attn.c_attn.weight.data *= 2
    a, m = block.attn, block.mlp
    W_Q, W_K, W_V = a.c_attn.weight.split(768, dim=1)
    for bias in (a.c_attn.bias, a.c_proj.bias):
        bias.data.zero_()
    names = {"X": torch.randn(1, 512, 768, generator=g), "LayerNorm": block.ln_1,
             "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": a.c_proj.weight,
             "W_fc1": m.c_fc.weight, "b_fc1": m.c_fc.bias, "W_fc2": m.c_proj.weight,
             "b_fc2": m.c_proj.bias, "GELU": lambda t: F.gelu(t, approximate="tanh"),
             "softmax": torch.softmax, "sqrt": math.sqrt, "causal_mask": causal(512)}  # fmt: skip
    block.ln_2.load_state_dict(block.ln_1.state_dict())  # the trace names one LayerNorm
    return block, names


def run_with_shapes(box: list[str], names: dict) -> tuple[torch.Tensor, list[str], int]:
    """Run the trace's code line by line; each "Shape:" line gives the shape of the last
    statement above it. The prose line "K, V same reshape" is run as Q's reshape of K_all
    and V_all. Returns the final X, the shapes that differ from the printed ones, and how
    many printed shapes were compared."""
    scope, wrong, compared, target = dict(names), [], 0, None
    for line in box:
        for code in statements([line]):
            exec(code, scope)
            target = code.split("=")[0].strip()
            if target == "Q":  # "K, V same reshape": the glue line
                for n in "KV":
                    scope[n] = scope[f"{n}_all"].reshape(1, 512, 12, 64).transpose(1, 2)
        if "Shape:" in line and target:
            compared += 1
            want = [int(n) for n in re.findall(r"\[([\d, ]+)\]", line.split("→")[-1])[0].split(",")]
            if list(scope[target].shape) != want:
                wrong.append(f"{target}: {list(scope[target].shape)} against {want}")
    return scope["X"], wrong, compared


def run_python_block(text: str) -> dict:
    """The article's Python block and usage example run as printed after seeding torch with
    0: the names it defines (``layer``, ``x``, ``output``, ...)."""
    torch.manual_seed(0)
    scope = {"__name__": "__article__"}
    exec(python_block(text), scope)
    return scope


def printed_output_shape(text: str) -> list[int]:
    """The shape the usage example prints in its ``# output = layer(x)  # [...]`` comment."""
    printed_shape = re.search(r"# output = layer\(x\)\s*# \[([\d, ]+)\]", text)
    return [int(n) for n in printed_shape.group(1).split(",")] if printed_shape else []


def gpt2_block_like(layer) -> torch.nn.Module:
    """transformers' GPT2Block (exact GELU) holding the article layer's weights, its
    attention biases at zero (the article's projections have none)."""
    attn, block = layer.attn, gpt2_block(768, 12, "gelu")
    with torch.no_grad():
        block.ln_1.load_state_dict(layer.ln1.state_dict())
        block.ln_2.load_state_dict(layer.ln2.state_dict())
        block.attn.c_attn.weight.copy_(
            torch.cat([attn.W_Q.weight, attn.W_K.weight, attn.W_V.weight]).T
        )
        block.attn.c_attn.bias.zero_()
        block.attn.c_proj.weight.copy_(attn.W_O.weight.T)
        block.attn.c_proj.bias.zero_()
        block.mlp.c_fc.weight.copy_(layer.mlp[0].weight.T)
        block.mlp.c_fc.bias.copy_(layer.mlp[0].bias)
        block.mlp.c_proj.weight.copy_(layer.mlp[2].weight.T)
        block.mlp.c_proj.bias.copy_(layer.mlp[2].bias)
    return block


def sdpa_attention(attn, xn: torch.Tensor) -> torch.Tensor:
    """PyTorch's causal scaled_dot_product_attention over the article attention's own
    projections of ``xn`` (1 x 512 x 768, 12 heads of 64), through its output projection."""
    heads = [w(xn).view(1, 512, 12, 64).transpose(1, 2) for w in (attn.W_Q, attn.W_K, attn.W_V)]
    return attn.W_O(
        F.scaled_dot_product_attention(*heads, is_causal=True).transpose(1, 2).reshape(1, 512, 768)
    )


def cache_and_full_attention() -> tuple[torch.Tensor, torch.Tensor, list[list[int]]]:
    """One head of width 16 over 6 random tokens (generator 2), run as the cache steps say:
    each step appends the new token's key and value and attends from its query alone.
    Returns the stacked outputs, full causal attention's output, and the positions (from 1)
    cached after each step."""
    g = torch.Generator().manual_seed(2)
    x, wq, wk, wv = (torch.randn(*s, generator=g) for s in ((6, 16), (16, 16), (16, 16), (16, 16)))
    k_cache, v_cache, held, rows = [], [], [], []
    for t in range(6):
        k_cache.append(x[t] @ wk)
        v_cache.append(x[t] @ wv)
        held.append(list(range(1, t + 2)))
        w = torch.softmax((x[t] @ wq) @ torch.stack(k_cache).T / 4, -1)
        rows.append(w @ torch.stack(v_cache))
    full = F.scaled_dot_product_attention(x @ wq, x @ wk, x @ wv, is_causal=True)
    return torch.stack(rows), full, held


def random_qkv() -> tuple[torch.Tensor, ...]:
    """48 random queries, keys and values of width 16 (generator 3)."""
    g = torch.Generator().manual_seed(3)
    return tuple(torch.randn(48, 16, generator=g) for _ in range(3))


def standard_attention(text: str, Q, K, V) -> torch.Tensor:
    """The box's standard attention (steps 1 to 4) run as printed, its mask step as the
    causal mask added to S."""
    lines = boxed(text, "1. Compute full S = Q @ K.T", "4. Compute O = P @ V")
    standard = [re.search(r"Compute (?:full )?(\w+ = [^\[]+)", line) for line in lines]
    scope = {"Q": Q, "K": K, "V": V, "softmax": lambda s: torch.softmax(s, -1)}
    for found in standard:
        if found:
            exec(found.group(1).strip(), {}, scope)
        if found and found.group(1).startswith("S ="):  # "2. Apply mask to S"
            scope["S"] = scope["S"] + causal(48)
    return scope["O"]


def flash_loop(text: str, Q, K, V, mx, sm) -> torch.Tensor:
    """The box's Flash loop run over blocks of 8 queries and keys, with ``max`` and ``sum``
    read as ``mx`` and ``sm`` (row by row, or over the whole block as written)."""
    names = {"Q_blocks": Q.split(8), "KV_blocks": list(zip(K.split(8), V.split(8), strict=True)),
             "inf": math.inf, "exp": torch.exp, "sqrt": math.sqrt, "d_k": 16, "max": mx,
             "sum": sm, "outputs": []}  # fmt: skip
    exec(flash_code(text), names)
    return torch.cat(names["outputs"]) if names["outputs"] else torch.empty(0)


def norm_glue() -> dict:
    """64 random vectors of width 512 with random gains and shifts (generator 4), epsilon
    1e-5, and mean and var over the vector (var the population variance)."""
    g = torch.Generator().manual_seed(4)
    x, gamma, beta = (
        torch.randn(64, 512, generator=g),
        torch.randn(512, generator=g),
        torch.randn(512, generator=g),
    )
    return {"x": x, "γ": gamma, "β": beta, "ε": 1e-5, "sqrt": torch.sqrt,
            "mean": lambda t: t.mean(-1, keepdim=True),
            "var": lambda t: t.var(-1, keepdim=True, unbiased=False)}  # fmt: skip


def llama_rms_norm(gamma: torch.Tensor) -> torch.nn.Module:
    """transformers' LlamaRMSNorm of width 512 (eps 1e-6) with gain ``gamma``."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    ref_rms = LlamaRMSNorm(512, eps=1e-6)
    ref_rms.weight.data = gamma
    return ref_rms


def printed_silu(line: str) -> dict:
    """Names for the MLP box: PyTorch's sigmoid, GPT-2's tanh GELU, and the box's printed
    SiLU definition (its last line) run as a function."""
    silu_line = re.match(r"(\w+)\((\w+)\) = (.+?)(\s{2,}.*)?$", line)
    scope = {"sigmoid": torch.sigmoid, "GELU": lambda t: F.gelu(t, approximate="tanh")}
    exec(f"def {silu_line.group(1)}({silu_line.group(2)}): return {silu_line.group(3)}", scope)
    return scope


def reference_mlps() -> tuple:
    """transformers' GPT2MLP (biases at zero) and LlamaMLP, width 64 and hidden 256, with
    random weights drawn after seeding torch with 5, and 10 random input vectors."""
    from transformers import GPT2Config, LlamaConfig
    from transformers.models.gpt2.modeling_gpt2 import GPT2MLP
    from transformers.models.llama.modeling_llama import LlamaMLP

    torch.manual_seed(5)
    gpt2 = GPT2MLP(256, GPT2Config(n_embd=64, resid_pdrop=0.0))
    llama = LlamaMLP(LlamaConfig(hidden_size=64, intermediate_size=256, hidden_act="silu"))
    for p in [*gpt2.parameters(), *llama.parameters()]:
        p.data = torch.randn(p.shape) * 0.1
    gpt2.c_fc.bias.data.zero_()
    gpt2.c_proj.bias.data.zero_()
    return gpt2, llama, torch.randn(10, 64)


def run_mlp_box(box: list[str], names: dict, gpt2, llama, x) -> tuple:
    """The box's GPT-2 MLP (up to ``output = hidden @ W_fc2``) and SwiGLU MLP (the rest), run
    as printed with the reference modules' weights: their two outputs."""
    names = {**names, "x": x, "W_fc1": gpt2.c_fc.weight, "W_fc2": gpt2.c_proj.weight,
             "W_gate": llama.gate_proj.weight.T, "W_up": llama.up_proj.weight.T,
             "W_down": llama.down_proj.weight.T}  # fmt: skip
    end_gpt2 = next(i for i, line in enumerate(box) if "output = hidden @ W_fc2" in line)
    original = run(statements(box[: end_gpt2 + 1]), names)["output"]
    return original, run(statements(box[end_gpt2 + 1 :]), names)["output"]


@claim("dd2.code-forward-trace", "established",
       at=("Step 1: Layer Normalization", "Q_h = X_norm · W_Q_h"),
       scope="the article's steps 1-9 for three tokens at width 512 with 8 heads of 64, random "
       "weights, float32",
       remark="Pseudocode, translated: heads run on a leading axis ('in parallel'), so "
       "'For each head h' lines are dropped and Concat(attn_output_1, ..., attn_output_8) "
       "joins the heads; apply_rope, causal_mask, LayerNorm and the Linear-GELU-Linear MLP "
       "are supplied. RoPE rotates Q and K in step 3 only (not also at the input of "
       "step 0).")  # fmt: skip
def test_forward_trace_is_a_pre_norm_rope_layer(measure):
    """The article's layer trace, run step by step, computes a pre-norm layer: x plus
    causal scaled softmax attention over rotated queries and keys, then x plus the MLP of
    the normalised result."""
    lines = lines_between(source_text(DD2), "X_norm = LayerNorm(X)", "X = X + mlp_output")
    names = trace_glue()
    with torch.no_grad():
        out = run([all_heads(line) for line in statements(lines)], names)["X"]
        off = measure("largest gap to the reference layer", gap(out, pre_norm_rope_layer(names)))
    assert within(off, TIGHT)


@claim("dd2.code-shape-trace", "established", at="INPUT: X [batch=1, seq=512, d_model=768]",
       scope="the trace's code at GPT-2 small's sizes (512 tokens, width 768, 12 heads), random "
       "weights, float32; transformers' GPT2Block",
       remark="Code in a box, with the borders removed; the prose line 'K, V same reshape' is "
       "run as Q's reshape of K_all and V_all, and GELU is GPT-2's tanh form. The trace gives "
       "W_Q, W_K, W_V and W_O no bias: it is GPT-2's block with its attention biases at zero "
       "(the same omission as dd2.bias-fact-in-param-count); the gap with nonzero biases is "
       "recorded.")  # fmt: skip
def test_shape_trace_runs_with_its_printed_shapes(measure):
    """The GPT-2 small shape trace, run as printed, gives every tensor the shape printed under
    it and computes transformers' GPT-2 block (with its attention biases at zero)."""
    box = boxed(source_text(DD2), "INPUT: X [batch=1, seq=512", "OUTPUT: X [1, 512, 768]")
    g = torch.Generator().manual_seed(1)
    block, names = shape_trace_glue(g)
    x0 = names["X"].clone()
    with torch.no_grad():
        out, wrong, compared = run_with_shapes(box, names)
        off = measure("largest gap to GPT2Block", gap(out, gpt2_causal(block, x0)))
        block.attn.c_attn.bias.data.normal_(0, 0.02, generator=g)
        measure("gap with nonzero attention biases", gap(out, gpt2_causal(block, x0)))
    measure("shapes that differ from the printed ones", len(wrong))
    printed = measure("printed shapes compared", compared)
    assert not wrong, wrong
    assert printed == sum("Shape:" in line for line in box)
    assert within(off, TIGHT)


@claim("dd2.code-simplified-layer", "established", at="class SimplifiedAttention(nn.Module):",
       scope="the article's Python block and its usage example (1 x 512 x 768), random weights, "
       "float32; PyTorch's scaled_dot_product_attention and transformers' GPT2Block",
       remark="Runs as printed (the usage example's comment marks removed). Its attention "
       "projections have no bias, so it is GPT-2's block with the attention biases at zero, "
       "and nn.GELU is the exact GELU, not GPT-2's tanh form.")  # fmt: skip
def test_simplified_layer_is_a_gpt2_block(measure):
    """The article's Python attention is causal scaled dot-product attention, its layer is a
    pre-norm GPT-2 block, and the usage example's output has the shape it prints."""
    text = source_text(DD2)
    scope = run_python_block(text)
    layer, x, want = scope["layer"], scope["x"], printed_output_shape(text)
    block = gpt2_block_like(layer)
    with torch.no_grad():
        xn = layer.ln1(x)
        ours, sdpa = layer.attn(xn), sdpa_attention(layer.attn, xn)
        off_attention = measure("attention: largest gap to PyTorch's", gap(ours, sdpa))
        ref = gpt2_causal(block, x)
        off_block = measure("layer: largest gap to GPT2Block", gap(scope["output"], ref))
    shape = measure("usage output shape", list(scope["output"].shape), printed=want)
    assert within(off_attention, TIGHT) and within(off_block, TIGHT) and shape == want


@claim("dd2.code-kv-cache-steps", "established",
       at="Store in cache: K_cache = [K₁], V_cache = [V₁]",
       scope="one head of width 16, 6 tokens, random projections, float32",
       remark="Pseudocode in words, run as a loop: each step computes the new token's key and "
       "value, appends them to the cache and attends from the new query alone. Read strictly, "
       "'generate token n' is one position off: K_n, V_n and Q_n belong to a token that already "
       "exists, and the pass that computes them predicts token n+1; read as 'process token n' "
       "(the reading run here) the steps are right.")  # fmt: skip
def test_kv_cache_steps_give_full_causal_attention(measure):
    """The printed cache steps hold, after step n, the keys and values of tokens 1 to n, and
    attending from only the new query over that cache gives full causal attention's output."""
    states = cache_states(source_text(DD2))
    rows, full, held = cache_and_full_attention()
    off = measure("largest gap to full causal attention", gap(rows, full))
    printed = measure("printed cache steps", len(states))
    for n, state in enumerate(states):
        measure(f"step {n + 1}: positions cached", held[n], printed=state)
    assert within(off, TIGHT) and printed == 3 and all(s == held[n] for n, s in enumerate(states))


@claim("dd2.code-flash-loop", "established",
       at=("1. Compute full S = Q @ K.T", "for q_block in Q_blocks:"),
       scope="48 queries and keys of width 16 in blocks of 8, float32; PyTorch's "
       "scaled_dot_product_attention",
       remark="Pseudocode in a box, translated: '-inf', 'exp' and 'sqrt' are supplied, '+=' "
       "accumulates, each KV block is unpacked into keys and values. max and sum are read row "
       "by row (one running maximum and normaliser per query): read over the whole block, as "
       "written, the normaliser mixes the rows and the output is wrong (recorded). The box's "
       "standard attention has no 1/sqrt(d) scale and a mask, its Flash loop a scale and no "
       "mask: each is checked here against the matching reference; that the loop lacks the mask "
       "its standard attention applies, in the article's decoder-only setting, is the erratum "
       "dd2.flash-loop-causal, with the corrected loop.")  # fmt: skip
def test_flash_loop_is_exact_attention(measure):
    """The article's Flash Attention loop, run block by block with a running maximum and
    normaliser per query, gives exactly the attention it computes in one pass; its standard
    attention is masked softmax attention."""
    text, (Q, K, V) = source_text(DD2), random_qkv()
    ref = F.scaled_dot_product_attention(Q[None], K[None], V[None], is_causal=True, scale=1.0)[0]
    standard = standard_attention(text, Q, K, V)
    off_standard = measure("standard: largest gap to PyTorch's", gap(standard, ref))
    by_row = flash_loop(text, Q, K, V, row_max, row_sum)
    by_block = flash_loop(text, Q, K, V, block_max, torch.sum)
    flash_ref = F.scaled_dot_product_attention(Q[None], K[None], V[None])[0]
    off_flash = measure("Flash loop: largest gap to PyTorch's", gap(by_row, flash_ref))
    measure("Flash loop read over whole blocks: largest gap", gap(by_block, flash_ref))
    assert within(off_standard, TIGHT) and within(off_flash, TIGHT)


@claim("dd2.code-norms", "established", at=("1. Compute mean:", "1. Compute RMS:"),
       scope="64 vectors of width 512, random gains and shifts, float32; PyTorch's layer_norm "
       "(eps 1e-5) and transformers' LlamaRMSNorm (eps 1e-6)",
       remark="Pseudocode in a box, run with σ² spelled as a name and √ as a square root; mean "
       "and var are over the vector (var the population variance, as LayerNorm uses; the "
       "sample variance would differ by d/(d-1)). The printed RMSNorm has no epsilon: an "
       "all-zero vector gives 0/0.")  # fmt: skip
def test_printed_norms_are_layernorm_and_rmsnorm(measure):
    """The article's LayerNorm steps compute PyTorch's layer norm, and its RMSNorm steps
    compute LLaMA's RMSNorm, with the same gains (and shift)."""
    text, names = source_text(DD2), norm_glue()
    layer = run(statements(boxed(text, "1. Compute mean:", "4. Scale & shift:")), names)
    rms = run(statements(boxed(text, "1. Compute RMS:", "3. Scale only:")), names)
    x, gamma, beta = names["x"], names["γ"], names["β"]
    with torch.no_grad():
        layer_norm = F.layer_norm(x, (512,), gamma, beta, 1e-5)
        off_ln = measure("LayerNorm: largest gap", gap(layer["output"], layer_norm))
        off_rms = measure("RMSNorm: largest gap", gap(rms["output"], llama_rms_norm(gamma)(x)))
    assert within(off_ln, TIGHT) and within(off_rms, TIGHT)


@claim("dd2.code-mlp-blocks", "established", at=("hidden = x @ W_fc1", "gate = x @ W_gate"),
       scope="width 64, hidden 256, 10 vectors, float32; transformers' GPT2MLP and LlamaMLP with "
       "the same weights",
       remark="Code in a box; GELU is GPT-2's tanh form and sigmoid PyTorch's. The printed "
       "GPT-2 MLP has no biases (GPT-2's has two, as the article's own shape trace shows): it "
       "is GPT2MLP with its biases at zero. SiLU's printed definition is run as a "
       "function.")  # fmt: skip
def test_printed_mlps_are_gpt2_and_llama_mlps(measure):
    """The article's GPT-2 MLP and SwiGLU MLP, run as printed, compute transformers' GPT-2 MLP
    (biases at zero) and LLaMA MLP with the same weights, and its SiLU is PyTorch's."""
    box = boxed(source_text(DD2), "hidden = x @ W_fc1", "SiLU(x) = x * sigmoid(x)")
    scope = printed_silu(box[-1])
    gpt2, llama, x = reference_mlps()
    with torch.no_grad():
        original, swiglu = run_mlp_box(box, scope, gpt2, llama, x)
        off_gpt2 = measure("GPT-2 MLP: largest gap", gap(original, gpt2(x)))
        off_llama = measure("SwiGLU MLP: largest gap", gap(swiglu, llama(x)))
        off_silu = measure("SiLU: largest gap", gap(scope["SiLU"](x), F.silu(x)))
    assert within(off_gpt2, TIGHT) and within(off_llama, TIGHT) and within(off_silu, TIGHT)


MASK_LINE = "S_block = S_block + mask_block[i][j]  # -inf where the key comes after the query"
FLASH_FIXES = (  # the printed loop, corrected: block indices, a causal mask, rows kept apart
    ("for q_block in Q_blocks:", "for i, q_block in enumerate(Q_blocks):"),
    ("for kv_block in KV_blocks:", "for j, kv_block in enumerate(KV_blocks):"),
    ("block_max = max(S_block)", "block_max = rowmax(S_block)"),
    ("running_sum += sum(P_block)", "running_sum += rowsum(P_block)"),
)


def corrected_flash_text(text: str) -> str:
    """The article with its Flash loop corrected (FLASH_FIXES, and the mask line after the
    scaling), every other line as printed."""
    for old, new in FLASH_FIXES:
        text = text.replace(old, new)
    scaled = next(ln for ln in text.splitlines() if "S_block = S_block / √d_k" in ln)
    indent = scaled[: scaled.index("S_block")]
    return text.replace(scaled, f"{scaled}\n{indent}{MASK_LINE}")


def loop_code(text: str) -> str:
    """The text's Flash loop (printed or corrected), translated as flash_code does: '+='
    spelled out, each KV block unpacked, each Q block's output collected."""
    first = "for i, q_block" if "for i, q_block" in text else "for q_block in Q_blocks:"
    lines = [translate(ln) for ln in unbox(lines_between(text, first, "O_block = O_block /"))]
    out = []
    for n, line in enumerate(lines):
        out.append(re.sub(r"^(\s*)(\w+) \+= (.*)$", r"\1\2 = \2 + \3", line))
        if re.match(r"\s*for (j, )?kv_block", line):
            indent = re.match(r"\s*", next(s for s in lines[n + 1 :] if s.strip()))[0]
            out.append(f"{indent}k_block, v_block = kv_block")
    body = re.match(r"\s*", lines[1])[0]
    return "\n".join([*out, f"{body}outputs.append(O_block)"])


def run_flash(text: str, Q, K, V, mx, sm) -> torch.Tensor:
    """The text's Flash loop run over blocks of 8 with ``max`` and ``sum`` read as ``mx`` and
    ``sm``; a corrected loop's row-wise max and sum and causal mask blocks are supplied."""
    mask = [list(row.split(8, dim=1)) for row in causal(Q.shape[0]).split(8)]
    names = {"Q_blocks": Q.split(8), "KV_blocks": list(zip(K.split(8), V.split(8), strict=True)),
             "inf": math.inf, "exp": torch.exp, "sqrt": math.sqrt, "d_k": Q.shape[1], "max": mx,
             "sum": sm, "rowmax": row_max, "rowsum": row_sum, "mask_block": mask,
             "outputs": []}  # fmt: skip
    exec(loop_code(text), names)
    return torch.cat(names["outputs"])


@claim("dd2.flash-loop-causal", "established",
       at=("2. Apply mask to S", "running_sum += sum(P_block)"),
       printed={"Flash loop": "mathematically equivalent to standard attention (the box's, "
                "mask applied)"},
       scope="48 queries and keys of width 16 in blocks of 8, float32; PyTorch's causal "
       "scaled_dot_product_attention (the decoder-only setting Part 8 states)",
       erratum="the loop has no mask step, though the standard attention above it masks S and "
       "the article's models are decoder-only: each query reads keys after it, under either "
       "reading of max(S_block) and sum(P_block); read over the whole block as written, the "
       "normaliser also mixes the rows. With the mask added per block pair and both read per "
       "row, the loop gives causal attention exactly.",
       error="flash-loop-unmasked")  # fmt: skip
def test_flash_loop_computes_the_boxs_masked_attention(measure):
    """The article's Flash loop, run as printed, computes the causal (masked) scaled attention
    its box's standard attention computes, whether max and sum are read per row or over the
    whole block."""
    text, (Q, K, V) = source_text(DD2), random_qkv()
    ref = F.scaled_dot_product_attention(Q[None], K[None], V[None], is_causal=True)[0]
    fixed = run_flash(corrected_flash_text(text), Q, K, V, block_max, torch.sum)
    off_fixed = measure("corrected loop: largest gap to causal attention", gap(fixed, ref))
    by_row = measure("as printed, per row: largest gap to causal attention",
                     gap(run_flash(text, Q, K, V, row_max, row_sum), ref))  # fmt: skip
    whole = measure("as printed, whole block: largest gap to causal attention",
                    gap(run_flash(text, Q, K, V, block_max, torch.sum), ref))  # fmt: skip
    loop = lines_between(corrected_flash_text(text), "for i, q_block", "O_block = O_block /")
    measure.correct("\n".join(unbox(loop)))
    assert within(off_fixed, TIGHT), "the corrected loop is not causal attention"
    assert within(max(by_row, whole), TIGHT), "the printed loop lets queries read later keys"
