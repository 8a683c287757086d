"""The deep dive's printed cost arithmetic that the main file's claims leave out.

Cache bytes, attention patterns, the norms' reductions and the SwiGLU gate, each recomputed
from the article's own inputs and asserted against the printed value; the claims on the
strided example, the norms, the gate and the years read what they check from the text at
run time. Nothing trains.
"""

from __future__ import annotations

import math
import re

import torch
from claimbook import claim, defaults, source_text
from scipy.optimize import brentq, minimize_scalar

from experiments.kv_cache import measured_kv_bytes
from experiments.printed_values import integers, line_with, numbers
from experiments.profiling import count_flops, growth_exponent
from experiments.reductions import reductions
from experiments.tiled import standard_attention
from tests.claims.sources import DD2

pytestmark = defaults(level="established")

MIB, GIB = 2**20, 2**30


LLAMAS = (("7B", 32, 32, 128, 4096), ("70B", 80, 64, 128, 8192))  # layers, heads, width, d_model


@claim("dd2.kv-formula", at=("= 2 × n_layers × d_model × bytes", "Using FP16 (2 bytes per float):"),
       printed={"fp16": "2 bytes", "per token": "2 × n_layers × n_heads × d_head × bytes"},
       scope="the box's formula against the bytes of keys and values real attention layers "
       "compute (meta device) at its two examples: 32 layers x 32 heads of 128, and 80 x 64 "
       "heads of 128",
       remark="The box's two examples use different megabytes: LLaMA 7B's 0.5 MB (and its GB) "
       "are binary (524,288 B = 0.5 MiB exactly; 0.52 decimal MB), LLaMA 70B's 2.6 MB is "
       "decimal (2,621,440 B = 2.5 MiB).")  # fmt: skip
def test_kv_formula_matches_real_cache_bytes(measure):
    """An fp16 number takes 2 bytes; the per-token cache is 2 x layers x heads x head width x
    bytes, the same as 2 x layers x d_model x bytes since heads x head width is d_model, and it
    equals the bytes real attention layers keep; for LLaMA 7B that is 0.5 MiB per token."""
    fp16 = measure("bytes per fp16 number", torch.empty(0, dtype=torch.float16).element_size())
    ok = []
    for name, layers, heads, width, d_model in LLAMAS:
        real = measure(f"{name} bytes per token", measured_kv_bytes(layers, heads, heads, width, 1))
        ok.append(2 * layers * heads * width * fp16 == 2 * layers * d_model * fp16 == real)
    per_token = measure("7B per token (MiB)", 2 * 32 * 4096 * fp16 / MIB, printed=0.5)
    assert fp16 == 2 and all(ok) and per_token == 0.5


@claim("dd2.kv-100k-tens-of-gb", at="KV-cache can require tens of gigabytes",
       printed={"100K tokens": "tens of gigabytes"},
       scope="the article's LLaMA 7B example (32 layers, 32 heads of 128, fp16), keys and "
       "values of real attention layers on the meta device, 100,000 tokens")  # fmt: skip
def test_100k_token_cache_takes_tens_of_gigabytes(measure):
    """At 100,000 tokens, the fp16 KV cache of the article's LLaMA 7B takes tens of gigabytes:
    between 10 and 100 GB (about 52 GB, 49 GiB)."""
    size = measured_kv_bytes(32, 32, 32, 128, seq_len=100_000)
    gb = measure("100K tokens (GB)", size / 1e9)
    measure("100K tokens (GiB)", size / GIB)
    assert 10 <= gb < 100 and 10 <= size / GIB < 100


def _strided_keys(query: int, stride: int, n: int = 200) -> list[int]:
    """The keys ``query`` keeps in the strided pattern over n tokens: query i keeps key j <= i
    when i - j is a multiple of the stride."""
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    return ((j <= i) & ((i - j) % stride == 0))[query].nonzero().flatten().tolist()


def _rule_strides(query: int, listed: list[int]) -> list[int]:
    """Every stride k (2 to the query) whose pattern, 'every k-th token' up to the query itself,
    gives token ``query`` exactly the keys listed as its first ones."""
    return [k for k in range(2, query + 1) if _strided_keys(query, k)[: len(listed)] == listed]


@claim("dd2.strided-pattern", at="Token 100 attends to tokens 0, 10, 20, 30, ...",
       scope="the printed example, read from the text, against the rule the line above it "
       "states, 'every k-th token', as the strided pattern of Child et al. (2019): query i "
       "keeps key j <= i when i - j is a multiple of k. The expected keys come from the rule "
       "for every k from 2 to the query; the example holds if one k gives exactly the keys "
       "printed; 200 tokens")  # fmt: skip
def test_strided_attention_keeps_every_tenth_token(measure):
    """The example follows its rule: for one stride k (10), token 100's first keys under 'every
    k-th token' are exactly the tokens printed, 0, 10, 20 and 30."""
    text = source_text(DD2)
    assert "Attend to every k-th token" in line_with(text, "Strided attention: Attend")
    query, *listed = integers(numbers(line_with(text, "Strided attention: Attend", 2)))
    measure(f"keys printed for token {query}", listed)
    strides = measure("strides whose rule gives exactly these keys", _rule_strides(query, listed))
    assert len(strides) == 1, f"no stride, or several, gives token {query} the keys {listed}"
    keys = measure(f"keys of token {query}", _strided_keys(query, strides[0]))
    measure.reproduces("its first keys", keys[: len(listed)], listed)


LENGTHS = [512, 1024, 2048, 4096]
# the exponent O(n log n) itself fits over these lengths, plus 0.05: the ceiling for "O(n log n)"
NLOGN_CEILING = growth_exponent(LENGTHS, [n * math.log(n) for n in LENGTHS]) + 0.05


def _pairs(n: int, keep, rows: int = 1024) -> int:
    """Query-key pairs a pattern keeps over n tokens, counted in blocks of rows."""
    j = torch.arange(n)[None, :]
    return sum(int(keep(torch.arange(s, min(s + rows, n))[:, None], j, n).sum()) for s in
               range(0, n, rows))  # fmt: skip


def _longformer(i, j, n, half=32, n_global=2):
    return ((i - j).abs() <= half) | (i < n_global) | (j < n_global)


def _bigbird(i, j, n, half=32, n_global=2, n_random=3):
    gen = torch.Generator().manual_seed(int(i[0, 0]) * 7919 + n)
    picks = torch.randint(n, (i.shape[0], n_random), generator=gen)
    rand = torch.zeros(i.shape[0], n, dtype=torch.bool).scatter_(1, picks, True)
    return _longformer(i, j, n, half, n_global) | rand


def _sparse_transformer(i, j, n):
    stride = round(math.sqrt(n))
    return (j <= i) & (((i - j) < stride) | ((i - j) % stride == 0))


SPARSE_PATTERNS = {
    "Longformer": _longformer,
    "BigBird": _bigbird,
    "Sparse Transformer": _sparse_transformer,
}


def _sparse_correction(exponents: dict[str, float], above: list[str]) -> str:
    """The corrected sentence: the patterns under the ceiling are O(n), those above O(n√n)."""
    linear = " and ".join(n for n in exponents if n not in above)
    return (
        f"Sparse patterns cut the cost below O(n²): {linear} to O(n), the "
        f"{' and '.join(above)} (stride √n) to O(n√n)."
    )


@claim("dd2.sparse-model-cost", at="to achieve O(n) or O(n log n) complexity",
       printed={"Longformer, BigBird, Sparse Transformers": "O(n) or O(n log n)"},
       scope="query-key pairs kept by each model's pattern over 512-4,096 tokens: Longformer "
       "(window +-32, 2 global tokens), BigBird (the same plus 3 random keys per query), Sparse "
       "Transformer (causal local and strided heads, stride sqrt(n), Child et al. 2019); fitted "
       "growth exponent against the one n log n itself fits here, plus 0.05",
       erratum="the Sparse Transformer is neither O(n) nor O(n log n): its local and strided "
       "heads with stride sqrt(n) keep pairs growing as n^1.5 (fitted exponent 1.51 here, "
       "against a ceiling of 1.19; Child et al. 2019 state O(n sqrt(n))); Longformer and "
       "BigBird are linear (1.01, 1.02)",
       error="sparse-transformer-is-n-sqrt-n")  # fmt: skip
def test_sparse_models_cost_at_most_n_log_n(measure):
    """Each of the three named sparse patterns keeps a number of query-key pairs growing no
    faster than n log n: its fitted growth exponent over 512-4,096 tokens is at most the one
    n log n fits over the same lengths, plus 0.05."""
    ceiling = measure("ceiling: n log n's exponent + 0.05", NLOGN_CEILING)
    exponents = {}
    for name, keep in SPARSE_PATTERNS.items():
        pairs = measure(f"pairs kept: {name}", [_pairs(n, keep) for n in LENGTHS], x=LENGTHS)
        exponents[name] = measure(f"growth exponent: {name}", growth_exponent(LENGTHS, pairs))
    if above := [n for n, p in exponents.items() if p > ceiling]:
        measure.correct(_sparse_correction(exponents, above))
    assert not above


NORM_MODULES = {
    "LayerNorm": ("reductions (mean, var)", lambda d: torch.nn.LayerNorm(d)),
    "RMSNorm": ("reduction (sum of squares)", lambda d: torch.nn.RMSNorm(d)),
}


def _llama_rmsnorm(d: int) -> torch.nn.Module:
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    return LlamaRMSNorm(d)


@claim("dd2.norm-reductions",
       at=("LayerNorm: 2 reductions (mean, var)", "RMSNorm: 1 reduction (sum of squares)"),
       scope="torch's LayerNorm and RMSNorm and transformers' LlamaRMSNorm, traced and broken "
       "into primitives by torch's own decompositions, reduction primitives counted, "
       "4 x 768")  # fmt: skip
def test_layernorm_reduces_twice_rmsnorm_once(measure):
    """Over each position LayerNorm takes two reductions (its mean and its variance) and
    RMSNorm one (the sum of the squares, for their mean)."""
    text, x, ok = source_text(DD2), torch.randn(4, 768), []
    modules = NORM_MODULES | {"LLaMA's RMSNorm": (NORM_MODULES["RMSNorm"][0], _llama_rmsnorm)}
    for name, (snippet, build) in modules.items():
        printed = int(numbers(line_with(text, snippet))[0])
        found = reductions(build(768), x)
        measure(f"{name}: reductions", ", ".join(found))
        ok.append(measure(f"{name}: how many", len(found), printed=printed) == printed)
    assert all(ok)


def _swiglu_mlp() -> torch.nn.Module:
    """transformers' LLaMA MLP (SwiGLU: down(SiLU(gate(x)) * up(x))), small, float64."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaMLP

    return LlamaMLP(LlamaConfig(hidden_size=16, intermediate_size=32, num_attention_heads=2,
                                hidden_act="silu")).double()  # fmt: skip


def _gate_factor(mlp: torch.nn.Module, gate: float) -> tuple[float, float]:
    """With every gate value pinned to ``gate``: the factor the MLP's output is of its ungated
    output down(up(x)) (least squares), and the largest deviation from that multiple."""
    x = torch.randn(64, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    pin = mlp.gate_proj.register_forward_hook(lambda m, a, out: torch.full_like(out, gate))
    with torch.no_grad():
        out, ungated = mlp(x), mlp.down_proj(mlp.up_proj(x))
    pin.remove()
    factor = (out * ungated).sum().item() / (ungated * ungated).sum().item()
    return factor, (out - factor * ungated).abs().max().item()


def _printed_gates(text: str) -> dict[str, float]:
    """The gate values the box prints for "block" and for "pass"."""
    lines = {verb: line_with(text, f"→ {verb} this information") for verb in ("block", "pass")}
    return {verb: float(re.findall(r"gate ≈ (-?[\d.]+)", line)[0]) for verb, line in lines.items()}


def _silu_landmarks() -> dict[str, float]:
    """From torch's SiLU (float64): the gate where SiLU(gate) = 1, SiLU's lowest value and the
    gate where it takes it, and SiLU(3)."""
    silu = torch.nn.functional.silu
    low = minimize_scalar(lambda g: silu(torch.tensor(g, dtype=torch.float64)).item())
    one = brentq(lambda g: silu(torch.tensor(g, dtype=torch.float64)).item() - 1, 0, 3)
    return {"gate where SiLU(gate) = 1": one, "lowest SiLU(gate)": low.fun, "at gate": low.x,
            "SiLU(3)": silu(torch.tensor(3.0, dtype=torch.float64)).item()}  # fmt: skip


@claim("dd2.swiglu-gate",
       at=("gate ≈ 0 → block this information", "gate ≈ 1 → pass this information through"),
       printed={"gate ≈ 0": "blocks", "gate ≈ 1": "passes"},
       scope="transformers' LLaMA MLP (SwiGLU), float64, every gate value pinned to the printed "
       "one (gate = x @ W_gate, as the box names it), its output against the ungated "
       "down(up(x)); torch's SiLU for the range",
       remark="The sentence holds at its two points, but SiLU is no 0-1 switch: a gate of 1 "
       "passes 73% of the hidden value (all of it only at a gate of 1.28); SiLU grows without "
       "bound (a gate of 3 multiplies by 2.86) and dips to -0.278 at a gate of -1.28, flipping "
       "the sign.")  # fmt: skip
def test_swiglu_gate_blocks_at_0_and_passes_at_1(measure):
    """In SwiGLU's SiLU(gate) * hidden, a gate of 0 blocks the hidden value (the MLP's output is
    exactly 0) and a gate of 1 passes it through: the output is the ungated one, scaled by a
    positive factor (SiLU(1) = 0.73), its direction kept."""
    cases, mlp = _printed_gates(source_text(DD2)), _swiglu_mlp()
    blocked, _ = _gate_factor(mlp, cases["block"])
    passed, spread = _gate_factor(mlp, cases["pass"])
    measure(f"output factor at gate {cases['block']:g}", blocked, printed=0)
    measure(f"output factor at gate {cases['pass']:g}", passed)
    measure("largest deviation from that multiple", spread)
    silu = {name: measure(name, v) for name, v in _silu_landmarks().items()}
    assert blocked == 0 and passed > 0 and spread <= 1e-12
    # the remark's numbers, from torch's SiLU
    one, low, at = (silu[k] for k in ("gate where SiLU(gate) = 1", "lowest SiLU(gate)", "at gate"))
    assert (round(passed, 2), round(one, 2), round(low, 3), round(at, 2)) == (
        0.73, 1.28, -0.278, -1.28)  # fmt: skip


def _bias_free_weights(*shapes: tuple[int, int]) -> int:
    """The weights of bias-free linear layers of the given (in, out) shapes."""
    return sum(torch.nn.Linear(a, b, bias=False).weight.numel() for a, b in shapes)


@claim("dd2.swiglu-at-4d", at="Parameters: W_gate [d, 4d] + W_up [d, 4d] + W_down [4d, d]",
       printed={"at hidden 4d": "W_gate [d, 4d] + W_up [d, 4d] + W_down [4d, d]"},
       scope="bias-free SwiGLU matrices at hidden width 4d against a GELU MLP's two, "
       "d = 768")  # fmt: skip
def test_swiglu_at_4d_has_half_again_the_gelu_parameters(measure):
    """With the hidden width of 4d the box writes, SwiGLU's three matrices hold 12·d², half as
    much again as the GELU MLP's 8·d²: the reason its hidden width is cut to 8/3·d."""
    d = 768
    swiglu = _bias_free_weights((d, 4 * d), (d, 4 * d), (4 * d, d))
    ratio = measure("SwiGLU at 4d / GELU MLP", swiglu / (2 * _bias_free_weights((d, 4 * d))))
    assert swiglu == 12 * d * d and ratio == 1.5


@claim("dd2.five-years", at="improvements discovered over 5 years of research",
       scope="the sentence's years against the years the article's own comparison table prints "
       "for GPT-2 and LLaMA 3, both read from the text")  # fmt: skip
def test_table_years_are_five_apart(measure):
    """The years of research the sentence counts are those between the table's GPT-2 (2019) and
    LLaMA 3 (2024): five."""
    text = source_text(DD2)
    years = int(re.findall(r"over (\d+) years of research", text)[0])
    start, end = (int(y) for y in re.findall(r"GPT-2 \((\d{4})\)\s+LLaMA 3 \((\d{4})\)", text)[0])
    measure.reproduces(f"{end} - {start}", end - start, years)


QUADRATIC_LENGTHS = [1024, 2048, 4096, 8192]


def _attention_flops(n: int) -> int:
    """FLOPs torch dispatches for standard attention over n tokens, one head of width 64
    (meta device)."""
    with torch.device("meta"):
        q, k, v = (torch.empty(1, n, 64) for _ in range(3))
        return count_flops(lambda: standard_attention(q, k, v))


@claim("dd2.attention-compute-quadratic", at="even O(n²) computation (not just memory)",
       printed={"full attention": "O(n²) computation"},
       scope="FLOPs of the matrix products of standard attention (one head of width 64) that "
       "torch dispatches, counted on the meta device for 1K-8K tokens")  # fmt: skip
def test_full_attention_compute_grows_quadratically(measure):
    """The work of full attention grows with the square of the sequence length: its fitted
    growth exponent over 1K-8K tokens is within 0.1 of 2 (4·n²·d FLOPs exactly)."""
    flops = [_attention_flops(n) for n in QUADRATIC_LENGTHS]
    measure("FLOPs", flops, x=QUADRATIC_LENGTHS)
    p = measure("growth exponent", growth_exponent(QUADRATIC_LENGTHS, flops), printed=2)
    assert abs(p - 2) <= 0.1
    assert flops == [4 * n * n * 64 for n in QUADRATIC_LENGTHS]
