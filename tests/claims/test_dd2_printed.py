"""The deep dive's printed quantities that the claims of the main file do not check.

Shapes, parameter counts and byte arithmetic, each recomputed from the article's own
inputs on real modules (or on the meta device) and asserted against the printed value.
Nothing here trains; every test is deterministic.
"""

from __future__ import annotations

import math

import torch
from claimbook import claim

from experiments.gpt2 import GPT2, Block, GPT2Config, SelfAttention, parameter_breakdown
from experiments.seeding import deterministic
from tests.claims.sources import DD2

PART7 = "Part 7 · Putting it all together"
KV_COSTS = "Part 8 · KV-cache memory costs"
SWIGLU = "Part 8 · SwiGLU"
EVOLUTION = "Part 8 · From GPT-2 to LLaMA 3"

FLOAT64 = 1e-12
MIB, GIB = 2**20, 2**30


@claim(
    id="dd2.trace-small-heads",
    at=("3 vectors of dim 512", "attn_output_h = weights_h · V_h", "Concat(attn_output_1"),
    level="established",
    source=DD2,
    section=PART7,
    printed={"embedded tokens": [3, 512], "per-head weighted sum": [3, 64], "projected": [3, 512]},
    scope="the article's three token ids [1, 42, 87] embedded at width 512, then one attention "
    "layer of 8 heads (the article's layer), float32, random weights",
)
def test_three_token_trace_heads_and_projection(measure):
    """Three token ids embedded at width 512 give a 3 x 512 input; each of the 8 heads' weighted
    sum of values is 3 x 64, and concatenating the heads and projecting gives 3 x 512 again.
    """
    deterministic(0)
    x = torch.nn.Embedding(100, 512)(torch.tensor([[1, 42, 87]]))
    attn, trace = SelfAttention(512, 8), {}
    with torch.no_grad():
        out = attn(x, trace=trace)
        heads = trace["weights"] @ attn._heads(attn.W_V(x))  # (1, 8, 3, 64)
    embedded = measure("embedded input", list(x.shape[1:]), printed=[3, 512])
    per_head = measure("per-head weighted sum", list(heads.shape[2:]), printed=[3, 64])
    projected = measure("concatenated and projected", list(out.shape[1:]), printed=[3, 512])
    assert embedded == [3, 512] and per_head == [3, 64] and projected == [3, 512]
    assert heads.shape[1] == 8


@claim(
    id="dd2.score-scale",
    at=("Q_h_rotated · K_h_rotated.T / √64", "scores = Q @ K.transpose(-2, -1) / √64"),
    level="established",
    source=DD2,
    section=PART7,
    printed={"d_head (512 / 8 and 768 / 12)": 64, "scores divided by": "√64"},
    scope="the article's attention layer at width 512 with 8 heads and at GPT-2 small's 768 "
    "with 12, float64, random weights, 1 x 16 tokens",
)
def test_scores_are_divided_by_the_root_of_the_head_width(measure):
    """Both of the article's layers have heads of width 64 (512 / 8 and 768 / 12), and their
    attention weights are the causal softmax of the query-key products divided by √64 = 8.
    """
    deterministic(0)
    gaps = []
    for d_model, n_heads in ((512, 8), (768, 12)):
        attn, trace = SelfAttention(d_model, n_heads).double(), {}
        x = torch.randn(1, 16, d_model, dtype=torch.float64)
        with torch.no_grad():
            attn(x, trace=trace)
            q, k = attn._heads(attn.W_Q(x)), attn._heads(attn.W_K(x))
        width = measure(f"d_head at {d_model} / {n_heads}", attn.d_head, printed=64)
        future = torch.ones(16, 16, dtype=torch.bool).triu(1)
        expected = (q @ k.transpose(-2, -1) / math.sqrt(64)).masked_fill(future, -math.inf)
        gap = (trace["weights"] - expected.softmax(-1)).abs().max().item()
        gaps.append(measure(f"largest |weights - softmax(QK^T / 8)| at {d_model}", gap))
        assert width == 64
    assert max(gaps) <= FLOAT64


@claim(
    id="dd2.example-weights-row",
    at=("weights might be [0.2, 0.5, 0.3]", "meaning: 20% attention to"),
    level="established",
    source=DD2,
    section=PART7,
    printed={"weights for position 2": [0.2, 0.5, 0.3], "percent": "20%, 50%, 30%"},
    scope="the article's example weights for the third token, checked as a causal softmax row",
)
def test_example_row_is_a_valid_causal_attention_row(measure):
    """The example weights of the third token are a possible causal attention row: non-negative,
    summing to 1, reachable as a softmax (of their logarithms), and their percentages are 20,
    50 and 30.
    """
    row = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    total = measure("row sum", row.sum().item(), printed=1)
    again = torch.log(row).softmax(-1)
    measure("percent", [round(100 * w, 6) for w in row.tolist()], printed=[20, 50, 30])
    assert (row >= 0).all() and abs(total - 1) <= FLOAT64
    assert (again - row).abs().max().item() <= FLOAT64
    assert [round(100 * w, 6) for w in row.tolist()] == [20, 50, 30]


@claim(
    id="dd2.layers-32-mixing-steps",
    at="With 32 layers, there are 32 opportunities",
    level="established",
    source=DD2,
    section=PART7,
    printed={"attention layers a token passes, 32-layer model": 32},
    scope="the article's GPT-2 layout at 32 layers (meta device), attention modules counted",
)
def test_32_layers_give_32_attention_steps(measure):
    """A 32-layer model of the article's layout runs attention 32 times on the way up: one
    chance per layer for each token to read other positions.
    """
    with torch.device("meta"):
        model = GPT2(GPT2Config(n_layers=32))
    steps = measure(
        "attention modules", sum(isinstance(m, SelfAttention) for m in model.modules()), printed=32
    )
    assert steps == 32


# The article's GPT-2 small block, piece by piece: (label, printed shape, printed parameters)
BLOCK_PARAMS = {
    "LayerNorm (γ + β)": 1_536,
    "W_Q": 589_824,
    "W_K": 589_824,
    "W_V": 589_824,
    "W_O": 589_824,
    "W_fc1": 2_359_296,
    "b_fc1": 3_072,
    "W_fc1 + b_fc1": 2_362_368,
    "W_fc2": 2_359_296,
    "b_fc2": 768,
    "W_fc2 + b_fc2": 2_360_064,
}


@claim(
    id="dd2.gpt2-block-params",
    at=("Params: W_Q [768, 768] = 589,824", "= 2,362,368", "= 2,360,064", "b_fc1: 3072"),
    level="established",
    source=DD2,
    section=PART7,
    printed={k: f"{v:,}" for k, v in BLOCK_PARAMS.items()},
    scope="one block of the article's GPT-2 small (d_model 768, MLP 3,072), built on the meta "
    "device and its tensors counted one by one",
)
def test_gpt2_block_line_items(measure):
    """Each line item of the article's GPT-2 small block has the printed size: a LayerNorm
    1,536, each of the four 768 x 768 projections 589,824, the first MLP matrix 2,359,296 plus
    a 3,072 bias, the second 2,359,296 plus a 768 bias.
    """
    with torch.device("meta"):
        block = Block(GPT2Config())
    fc1, fc2 = block.mlp[0], block.mlp[2]
    counts = {
        "LayerNorm (γ + β)": block.ln_1.weight.numel() + block.ln_1.bias.numel(),
        **{name: getattr(block.attn, name).weight.numel() for name in ("W_Q", "W_K", "W_V", "W_O")},
        "W_fc1": fc1.weight.numel(),
        "b_fc1": fc1.bias.numel(),
        "W_fc1 + b_fc1": sum(p.numel() for p in fc1.parameters()),
        "W_fc2": fc2.weight.numel(),
        "b_fc2": fc2.bias.numel(),
        "W_fc2 + b_fc2": sum(p.numel() for p in fc2.parameters()),
    }
    for name, printed in BLOCK_PARAMS.items():
        measure(name, counts[name], printed=printed)
    assert counts == BLOCK_PARAMS
    assert sum(p.numel() for p in block.ln_2.parameters()) == 1_536


@claim(
    id="dd2.gpt2-summary-shares",
    at=("Embeddings: 39.4M", "LayerNorms: 0.04M", "Final LayerNorm: 768 × 2", "LM head (tied):"),
    level="established",
    source=DD2,
    section=PART7,
    printed={
        "embeddings": "39.4M",
        "all LayerNorms": "0.04M, 0.0%",
        "final LayerNorm": "0.0%",
        "tied LM head": "0 extra parameters",
    },
    scope="the article's GPT-2 small, built on the meta device, shares of its total 124,402,944",
    remark="The four by-type rows add up to 124.44M, 36,864 more than the total: the 24 block "
    "LayerNorms are counted in the attention and MLP rows and again in the LayerNorm row.",
)
def test_gpt2_summary_rows(measure):
    """In the article's GPT-2 small the embeddings are 39.4M parameters, the 25 LayerNorms
    0.04M (0.0% of the total, as is the final one alone), and the tied LM head adds none.
    """
    counts = parameter_breakdown()
    with torch.device("meta"):
        model = GPT2(GPT2Config())
    total = counts["total"]
    norms = sum(
        p.numel()
        for m in model.modules()
        if isinstance(m, torch.nn.LayerNorm)
        for p in m.parameters()
    )
    emb = measure("embeddings (M)", round(counts["embeddings"] / 1e6, 1), printed="39.4")
    ln = measure("all LayerNorms (M)", round(norms / 1e6, 2), printed="0.04")
    ln_pct = measure("all LayerNorms (%)", round(100 * norms / total, 1), printed="0.0")
    final = measure(
        "final LayerNorm (%)", round(100 * counts["final_norm"] / total, 1), printed="0.0"
    )
    head = measure("LM head parameters beyond the embeddings", total - sum(
        counts[k] for k in ("embeddings", "layers", "final_norm")), printed=0)  # fmt: skip
    rows = 12 * (counts["attention"] + counts["mlp"]) + counts["embeddings"] + norms
    measure("sum of the four by-type rows (M)", rows / 1e6)
    assert (emb, ln, ln_pct, final, head) == (39.4, 0.04, 0.0, 0.0, 0)


def _shape(t) -> list[int]:
    return list(t.shape)


@claim(
    id="dd2.gpt2-trace-shapes",
    at=("COMPLETE SHAPE TRACE: ONE TRANSFORMER LAYER", "@ [768, 3072] → [1, 512, 3072]"),
    level="established",
    source=DD2,
    section=PART7,
    printed={
        "LayerNorm": "[1, 512, 768] → [1, 512, 768]",
        "Q, K, V and output projections": "[1, 512, 768] @ [768, 768] → [1, 512, 768]",
        "scores": "[1, 12, 512, 64] @ [1, 12, 64, 512] → [1, 12, 512, 512]",
        "weights": "[1, 12, 512, 512]",
        "weighted sum": "[1, 12, 512, 512] @ [1, 12, 512, 64] → [1, 12, 512, 64]",
        "fc1, GELU": "[1, 512, 768] @ [768, 3072] → [1, 512, 3072], unchanged by GELU",
        "fc2": "[1, 512, 3072] @ [3072, 768] → [1, 512, 768]",
        "residual sums": "[1, 512, 768]",
    },
    scope="one block of the article's GPT-2 small on a random 1 x 512 input, run for real in "
    "float32 with a hook on every sub-module; the article's X @ W is our x @ weight.T",
)
def test_gpt2_block_every_intermediate_shape(measure):
    """Every intermediate of the article's GPT-2 small block has its printed shape: the norms
    keep (1, 512, 768); the four projections are 768 x 768; keys transposed are (1, 12, 64, 512);
    the weights (1, 12, 512, 512); the weighted sum (1, 12, 512, 64); the MLP widens to 3,072
    and back, GELU leaving the shape alone; both residual sums are (1, 512, 768).
    """
    deterministic(0)
    block, seen = Block(GPT2Config()), {}
    names = {"ln_1": block.ln_1, "ln_2": block.ln_2, "fc1": block.mlp[0], "gelu": block.mlp[1]}
    names |= {"fc2": block.mlp[2]} | {n: getattr(block.attn, n) for n in ("W_Q", "W_K", "W_V")}
    names["W_O"] = block.attn.W_O

    def hook(name):
        return lambda module, args, out: seen.update({name: [_shape(args[0]), _shape(out)]})

    for name, module in names.items():
        module.register_forward_hook(hook(name))
    trace: dict = {}
    x = torch.randn(1, 512, 768)
    with torch.no_grad():
        out = block(x, trace=trace)
        after_attn = x + block.attn(block.ln_1(x))
        v = block.attn._heads(block.attn.W_V(block.ln_1(x)))
        weighted = trace["weights"] @ v
    x3, x4 = [1, 512, 768], [1, 512, 3072]
    got = {
        "LayerNorm 1, 2": [seen["ln_1"], seen["ln_2"]],
        "projections": [seen[n] + [list(getattr(block.attn, n).weight.T.shape)]
                        for n in ("W_Q", "W_K", "W_V", "W_O")],
        "K transposed": _shape(torch.empty(trace["K"], device="meta").transpose(-2, -1)),
        "weights": _shape(trace["weights"]),
        "weighted sum": _shape(weighted),
        "fc1": seen["fc1"] + [list(block.mlp[0].weight.T.shape)],
        "GELU": seen["gelu"],
        "fc2": seen["fc2"] + [list(block.mlp[2].weight.T.shape)],
        "residual sums": [_shape(after_attn), _shape(out)],
    }  # fmt: skip
    printed = {
        "LayerNorm 1, 2": [[x3, x3], [x3, x3]],
        "projections": [[x3, x3, [768, 768]]] * 4,
        "K transposed": [1, 12, 64, 512],
        "weights": [1, 12, 512, 512],
        "weighted sum": [1, 12, 512, 64],
        "fc1": [x3, x4, [768, 3072]],
        "GELU": [x4, x4],
        "fc2": [x4, x3, [3072, 768]],
        "residual sums": [x3, x3],
    }
    for name, shapes in got.items():
        measure(name, shapes, printed=printed[name])
    assert got == printed
