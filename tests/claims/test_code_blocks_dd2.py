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
    unbox,
)
from experiments.modules import apply_rope
from experiments.printed_code import gap, within
from tests.claims.sources import DD2

PART7 = "Part 7 · Putting it all together"
MASK_CACHE = "Part 8 · Causal masking and the KV cache"
FLASH = "Part 8 · FlashAttention"
NORMS = "Part 8 · RMSNorm"
SWIGLU = "Part 8 · SwiGLU"
TIGHT = 1e-5  # float32 results of different operation orders


@claim(
    id="dd2.code-forward-trace",
    at=("Step 1: Layer Normalization", "Q_h = X_norm · W_Q_h"),
    level="established",
    source=DD2,
    section=PART7,
    scope="the article's steps 1-9 for three tokens at width 512 with 8 heads of "
    "64, random weights, float32",
    remark="Pseudocode, translated: heads run on a leading axis ('in parallel'), so "
    "'For each head h' lines are dropped and Concat(attn_output_1, ..., attn_output_8) "
    "joins the heads; apply_rope, causal_mask, LayerNorm and the Linear-GELU-Linear MLP "
    "are supplied. RoPE rotates Q and K in step 3 only (not also at the input of step 0).",
)
def test_forward_trace_is_a_pre_norm_rope_layer(measure):
    """The article's layer trace, run step by step, computes a pre-norm layer: x plus
    causal scaled softmax attention over rotated queries and keys, then x plus the MLP of
    the normalised result."""
    text = source_text(DD2)
    lines = lines_between(text, "X_norm = LayerNorm(X)", "X = X + mlp_output")
    code = [all_heads(line) for line in statements(lines)]
    g = torch.Generator().manual_seed(0)
    d, h, hd = 512, 8, 64
    X = torch.randn(3, d, generator=g)
    W = {k: torch.randn(h, d, hd, generator=g) / d**0.5 for k in ("Q", "K", "V")}
    W_O = torch.randn(d, d, generator=g) / d**0.5
    norm, mlp = (
        torch.nn.LayerNorm(d),
        torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d)),
    )
    names = {
        "X": X,
        "W_Q_h": W["Q"],
        "W_K_h": W["K"],
        "W_V_h": W["V"],
        "W_O": W_O,
        "LayerNorm": norm,
        "MLP": mlp,
        "softmax": torch.softmax,
        "sqrt": math.sqrt,
        "positions": torch.arange(3),
        "apply_rope": lambda t, positions: apply_rope(t),
        "causal_mask": causal(3),
        "Concat": lambda *heads: torch.cat(heads, -1),
    }
    with torch.no_grad():
        out = run(code, names)["X"]
        flat = {k: w.permute(1, 0, 2).reshape(d, d) for k, w in W.items()}  # heads side by side
        xn = norm(X)
        q, k, v = ((xn @ flat[n]).view(3, h, hd).transpose(0, 1) for n in "QKV")
        attn = F.scaled_dot_product_attention(apply_rope(q), apply_rope(k), v, is_causal=True)
        ref = X + attn.transpose(0, 1).reshape(3, d) @ W_O
        ref = ref + mlp(norm(ref))
    assert within(measure("largest gap to the reference layer", gap(out, ref)), TIGHT)


@claim(
    id="dd2.code-shape-trace",
    at="INPUT: X [batch=1, seq=512, d_model=768]",
    level="established",
    source=DD2,
    section=PART7,
    scope="the trace's code at GPT-2 small's sizes (512 tokens, "
    "width 768, 12 heads), random weights, float32; transformers' GPT2Block",
    remark="Code in a box, with the borders removed; the prose line 'K, V same reshape' is "
    "run as Q's reshape of K_all and V_all, and GELU is GPT-2's tanh form. The trace gives "
    "W_Q, W_K, W_V and W_O no bias: it is GPT-2's block with its attention biases at zero "
    "(the same omission as dd2.gpt2-biases-counted); the gap with nonzero biases is recorded.",
)
def test_shape_trace_runs_with_its_printed_shapes(measure):
    """The GPT-2 small shape trace, run as printed, gives every tensor the shape printed under
    it and computes transformers' GPT-2 block (with its attention biases at zero)."""
    text = source_text(DD2)
    box = unbox(lines_between(text, "INPUT: X [batch=1, seq=512", "OUTPUT: X [1, 512, 768]"))
    block = gpt2_block(768, 12, "gelu_new")
    g = torch.Generator().manual_seed(1)
    for p in block.parameters():  # scores of order one, so that every weight matters
        p.data = torch.randn(p.shape, generator=g) / 768**0.5
    for norm in (block.ln_1, block.ln_2):
        norm.weight.data = 1 + 0.1 * torch.randn(768, generator=g)
    block.attn.c_attn.weight.data *= 2
    a, m = block.attn, block.mlp
    W_Q, W_K, W_V = a.c_attn.weight.split(768, dim=1)
    for bias in (a.c_attn.bias, a.c_proj.bias):
        bias.data.zero_()
    names = {
        "X": torch.randn(1, 512, 768, generator=g),
        "LayerNorm": block.ln_1,
        "W_Q": W_Q,
        "W_K": W_K,
        "W_V": W_V,
        "W_O": a.c_proj.weight,
        "W_fc1": m.c_fc.weight,
        "b_fc1": m.c_fc.bias,
        "W_fc2": m.c_proj.weight,
        "b_fc2": m.c_proj.bias,
        "GELU": lambda t: F.gelu(t, approximate="tanh"),
        "softmax": torch.softmax,
        "sqrt": math.sqrt,
        "causal_mask": causal(512),
    }
    block.ln_2.load_state_dict(block.ln_1.state_dict())  # the trace names one LayerNorm
    scope, x0, wrong, compared = dict(names), names["X"].clone(), [], 0
    target = None
    with torch.no_grad():
        for line in box:  # a "Shape:" line gives the shape of the last statement above it
            for code in statements([line]):
                exec(code, scope)
                target = code.split("=")[0].strip()
                if target == "Q":  # "K, V same reshape": the glue line
                    for n in "KV":
                        scope[n] = scope[f"{n}_all"].reshape(1, 512, 12, 64).transpose(1, 2)
            if "Shape:" in line and target:
                compared += 1
                want = [
                    int(n) for n in re.findall(r"\[([\d, ]+)\]", line.split("→")[-1])[0].split(",")
                ]
                if list(scope[target].shape) != want:
                    wrong.append(f"{target}: {list(scope[target].shape)} against {want}")
        ref = gpt2_causal(block, x0)
        off = measure("largest gap to GPT2Block", gap(scope["X"], ref))
        a.c_attn.bias.data.normal_(0, 0.02, generator=g)
        measure("gap with nonzero attention biases", gap(scope["X"], gpt2_causal(block, x0)))
    measure("shapes that differ from the printed ones", len(wrong))
    printed = measure("printed shapes compared", compared)
    assert not wrong, wrong
    assert printed == sum("Shape:" in line for line in box)
    assert within(off, TIGHT)


@claim(
    id="dd2.code-simplified-layer",
    at="class SimplifiedAttention(nn.Module):",
    level="established",
    source=DD2,
    section=PART7,
    scope="the article's Python block and its usage example (1 x 512 x 768), random "
    "weights, float32; PyTorch's scaled_dot_product_attention and transformers' GPT2Block",
    remark="Runs as printed (the usage example's comment marks removed). Its attention "
    "projections have no bias, so it is GPT-2's block with the attention biases at zero, "
    "and nn.GELU is the exact GELU, not GPT-2's tanh form.",
)
def test_simplified_layer_is_a_gpt2_block(measure):
    """The article's Python attention is causal scaled dot-product attention, its layer is a
    pre-norm GPT-2 block, and the usage example's output has the shape it prints."""
    text = source_text(DD2)
    torch.manual_seed(0)
    scope = {"__name__": "__article__"}
    exec(python_block(text), scope)
    layer, x = scope["layer"], scope["x"]
    printed_shape = re.search(r"# output = layer\(x\)\s*# \[([\d, ]+)\]", text)
    want = [int(n) for n in printed_shape.group(1).split(",")] if printed_shape else []
    attn = layer.attn
    block = gpt2_block(768, 12, "gelu")
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
        xn = layer.ln1(x)
        heads = [w(xn).view(1, 512, 12, 64).transpose(1, 2) for w in (attn.W_Q, attn.W_K, attn.W_V)]
        sdpa = attn.W_O(
            F.scaled_dot_product_attention(*heads, is_causal=True)
            .transpose(1, 2)
            .reshape(1, 512, 768)
        )
        off_attention = measure("attention: largest gap to PyTorch's", gap(attn(xn), sdpa))
        off_block = measure(
            "layer: largest gap to GPT2Block", gap(scope["output"], gpt2_causal(block, x))
        )
    shape = measure("usage output shape", list(scope["output"].shape), printed=want)
    assert within(off_attention, TIGHT) and within(off_block, TIGHT) and shape == want


@claim(
    id="dd2.code-kv-cache-steps",
    at="Store in cache: K_cache = [K₁], V_cache = [V₁]",
    level="established",
    source=DD2,
    section=MASK_CACHE,
    scope="one head of width 16, 6 tokens, random projections, float32",
    remark="Pseudocode in words, run as a loop: each step computes the new token's key and "
    "value, appends them to the cache and attends from the new query alone.",
)
def test_kv_cache_steps_give_full_causal_attention(measure):
    """The printed cache steps hold, after step n, the keys and values of tokens 1 to n, and
    attending from only the new query over that cache gives full causal attention's output."""
    states = cache_states(source_text(DD2))
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
    off = measure("largest gap to full causal attention", gap(torch.stack(rows), full))
    printed = measure("printed cache steps", len(states))
    for n, state in enumerate(states):
        measure(f"step {n + 1}: positions cached", held[n], printed=state)
    assert within(off, TIGHT) and printed == 3 and all(s == held[n] for n, s in enumerate(states))


@claim(
    id="dd2.code-flash-loop",
    at=("1. Compute full S = Q @ K.T", "for q_block in Q_blocks:"),
    level="established",
    source=DD2,
    section=FLASH,
    scope="48 queries and keys of width 16 in blocks of 8, float32; PyTorch's "
    "scaled_dot_product_attention",
    remark="Pseudocode in a box, translated: '-inf', 'exp' and 'sqrt' are supplied, '+=' "
    "accumulates, each KV block is unpacked into keys and values. max and sum are read row "
    "by row (one running maximum and normaliser per query): read over the whole block, as "
    "written, the normaliser mixes the rows and the output is wrong (recorded). The box's "
    "standard attention has no 1/sqrt(d) scale and a mask, its Flash loop a scale and no "
    "mask: each is checked as printed against the matching reference.",
)
def test_flash_loop_is_exact_attention(measure):
    """The article's Flash Attention loop, run block by block with a running maximum and
    normaliser per query, gives exactly the attention it computes in one pass; its standard
    attention is masked softmax attention."""
    text = source_text(DD2)
    g = torch.Generator().manual_seed(3)
    Q, K, V = (torch.randn(48, 16, generator=g) for _ in range(3))
    standard = [
        re.search(r"Compute (?:full )?(\w+ = [^\[]+)", line)
        for line in unbox(
            lines_between(text, "1. Compute full S = Q @ K.T", "4. Compute O = P @ V")
        )
    ]
    scope = {"Q": Q, "K": K, "V": V, "softmax": lambda s: torch.softmax(s, -1)}
    for found in standard:
        if found:
            exec(found.group(1).strip(), {}, scope)
        if found and found.group(1).startswith("S ="):  # "2. Apply mask to S"
            scope["S"] = scope["S"] + causal(48)
    ref = F.scaled_dot_product_attention(Q[None], K[None], V[None], is_causal=True, scale=1.0)[0]
    off_standard = measure("standard: largest gap to PyTorch's", gap(scope["O"], ref))
    results = {}
    for reading, (mx, sm) in {"row": (row_max, row_sum), "block": (block_max, torch.sum)}.items():
        blocks = {
            "Q_blocks": Q.split(8),
            "KV_blocks": list(zip(K.split(8), V.split(8), strict=True)),
        }
        names = {
            **blocks,
            "inf": math.inf,
            "exp": torch.exp,
            "sqrt": math.sqrt,
            "d_k": 16,
            "max": mx,
            "sum": sm,
            "outputs": [],
        }
        exec(flash_code(text), names)
        results[reading] = torch.cat(names["outputs"]) if names["outputs"] else torch.empty(0)
    flash_ref = F.scaled_dot_product_attention(Q[None], K[None], V[None])[0]
    off_flash = measure("Flash loop: largest gap to PyTorch's", gap(results["row"], flash_ref))
    measure("Flash loop read over whole blocks: largest gap", gap(results["block"], flash_ref))
    assert within(off_standard, TIGHT) and within(off_flash, TIGHT)


@claim(
    id="dd2.code-norms",
    at=("1. Compute mean:", "1. Compute RMS:"),
    level="established",
    source=DD2,
    section=NORMS,
    scope="64 vectors of width 512, random gains and shifts, "
    "float32; PyTorch's layer_norm (eps 1e-5) and transformers' LlamaRMSNorm (eps 1e-6)",
    remark="Pseudocode in a box, run with σ² spelled as a name and √ as a square root; mean "
    "and var are over the vector "
    "(var the population variance, as LayerNorm uses; the sample variance would differ "
    "by d/(d-1)). The printed RMSNorm has no epsilon: an all-zero vector gives 0/0.",
)
def test_printed_norms_are_layernorm_and_rmsnorm(measure):
    """The article's LayerNorm steps compute PyTorch's layer norm, and its RMSNorm steps
    compute LLaMA's RMSNorm, with the same gains (and shift)."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    text = source_text(DD2)
    g = torch.Generator().manual_seed(4)
    x, gamma, beta = (
        torch.randn(64, 512, generator=g),
        torch.randn(512, generator=g),
        torch.randn(512, generator=g),
    )
    names = {
        "x": x,
        "γ": gamma,
        "β": beta,
        "ε": 1e-5,
        "sqrt": torch.sqrt,
        "mean": lambda t: t.mean(-1, keepdim=True),
        "var": lambda t: t.var(-1, keepdim=True, unbiased=False),
    }
    layer = run(
        statements(unbox(lines_between(text, "1. Compute mean:", "4. Scale & shift:"))), names
    )
    rms = run(statements(unbox(lines_between(text, "1. Compute RMS:", "3. Scale only:"))), names)
    ref_rms = LlamaRMSNorm(512, eps=1e-6)
    ref_rms.weight.data = gamma
    with torch.no_grad():
        off_ln = measure(
            "LayerNorm: largest gap",
            gap(layer["output"], F.layer_norm(x, (512,), gamma, beta, 1e-5)),
        )
        off_rms = measure("RMSNorm: largest gap", gap(rms["output"], ref_rms(x)))
    assert within(off_ln, TIGHT) and within(off_rms, TIGHT)


@claim(
    id="dd2.code-mlp-blocks",
    at=("hidden = x @ W_fc1", "gate = x @ W_gate"),
    level="established",
    source=DD2,
    section=SWIGLU,
    scope="width 64, hidden 256, 10 vectors, float32; "
    "transformers' GPT2MLP and LlamaMLP with the same weights",
    remark="Code in a box; GELU is GPT-2's tanh form and sigmoid PyTorch's. The printed "
    "GPT-2 MLP has no biases (GPT-2's has two, as the article's own shape trace shows): it "
    "is GPT2MLP with its biases at zero. SiLU's printed definition is run as a function.",
)
def test_printed_mlps_are_gpt2_and_llama_mlps(measure):
    """The article's GPT-2 MLP and SwiGLU MLP, run as printed, compute transformers' GPT-2 MLP
    (biases at zero) and LLaMA MLP with the same weights, and its SiLU is PyTorch's."""
    from transformers import GPT2Config, LlamaConfig
    from transformers.models.gpt2.modeling_gpt2 import GPT2MLP
    from transformers.models.llama.modeling_llama import LlamaMLP

    text = source_text(DD2)
    box = unbox(lines_between(text, "hidden = x @ W_fc1", "SiLU(x) = x * sigmoid(x)"))
    silu_line = re.match(r"(\w+)\((\w+)\) = (.+?)(\s{2,}.*)?$", box[-1])
    scope = {"sigmoid": torch.sigmoid, "GELU": lambda t: F.gelu(t, approximate="tanh")}
    exec(f"def {silu_line.group(1)}({silu_line.group(2)}): return {silu_line.group(3)}", scope)
    torch.manual_seed(5)
    gpt2 = GPT2MLP(256, GPT2Config(n_embd=64, resid_pdrop=0.0))
    llama = LlamaMLP(LlamaConfig(hidden_size=64, intermediate_size=256, hidden_act="silu"))
    for p in [*gpt2.parameters(), *llama.parameters()]:
        p.data = torch.randn(p.shape) * 0.1
    gpt2.c_fc.bias.data.zero_()
    gpt2.c_proj.bias.data.zero_()
    x = torch.randn(10, 64)
    names = {
        **scope,
        "x": x,
        "W_fc1": gpt2.c_fc.weight,
        "W_fc2": gpt2.c_proj.weight,
        "W_gate": llama.gate_proj.weight.T,
        "W_up": llama.up_proj.weight.T,
        "W_down": llama.down_proj.weight.T,
    }
    end_gpt2 = next(i for i, line in enumerate(box) if "output = hidden @ W_fc2" in line)
    with torch.no_grad():
        original = run(statements(box[: end_gpt2 + 1]), names)["output"]
        swiglu = run(statements(box[end_gpt2 + 1 :]), names)["output"]
        off_gpt2 = measure("GPT-2 MLP: largest gap", gap(original, gpt2(x)))
        off_llama = measure("SwiGLU MLP: largest gap", gap(swiglu, llama(x)))
        off_silu = measure("SiLU: largest gap", gap(scope["SiLU"](x), F.silu(x)))
    assert within(off_gpt2, TIGHT) and within(off_llama, TIGHT) and within(off_silu, TIGHT)
