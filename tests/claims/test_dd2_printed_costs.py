"""The deep dive's printed cost arithmetic that the main file's claims leave out.

Cache bytes, attention patterns, the norms' reductions and the SwiGLU gate, each recomputed
from the article's own inputs and asserted against the printed value. Nothing trains.
"""

from __future__ import annotations

import math

import torch
from claimbook import claim
from torch.utils._python_dispatch import TorchDispatchMode

from experiments.kv_cache import measured_kv_bytes
from experiments.profiling import count_flops, growth_exponent
from experiments.tiled import standard_attention
from tests.claims.sources import DD2

SPARSE = "Part 8 · Sparse attention"
KV_COSTS = "Part 8 · KV-cache memory costs"
NORMS = "Part 8 · RMSNorm"
SWIGLU = "Part 8 · SwiGLU"
EVOLUTION = "Part 8 · From GPT-2 to LLaMA 3"
MIB, GIB = 2**20, 2**30


@claim(
    id="dd2.kv-formula",
    at=("= 2 × n_layers × d_model × bytes", "Using FP16 (2 bytes per float):"),
    level="established",
    source=DD2,
    section=KV_COSTS,
    printed={
        "fp16": "2 bytes",
        "per token": "2 × n_layers × n_heads × d_head × bytes",
        "0.5 MB": 0.5,
    },
    scope="the box's formula against the bytes of keys and values real attention layers compute "
    "(meta device) at its two examples: 32 layers x 32 heads of 128, and 80 x 64 heads of 128",
    remark="The box's two examples use different megabytes: LLaMA 7B's 0.5 MB (and its GB) are "
    "binary (524,288 B = 0.5 MiB exactly; 0.52 decimal MB), LLaMA 70B's 2.6 MB is decimal "
    "(2,621,440 B = 2.5 MiB).",
)
def test_kv_formula_matches_real_cache_bytes(measure):
    """An fp16 number takes 2 bytes; the per-token cache is 2 x layers x heads x head width x
    bytes, the same as 2 x layers x d_model x bytes since heads x head width is d_model, and it
    equals the bytes real attention layers keep; for LLaMA 7B that is 0.5 MiB per token.
    """
    fp16 = measure("bytes per fp16 number", torch.empty(0, dtype=torch.float16).element_size())
    ok = []
    for name, layers, heads, width in (("7B", 32, 32, 128), ("70B", 80, 64, 128)):
        d_model = {"7B": 4096, "70B": 8192}[name]
        formula = 2 * layers * heads * width * fp16
        real = measure(f"{name} bytes per token", measured_kv_bytes(layers, heads, heads, width, 1))
        ok.append(formula == 2 * layers * d_model * fp16 == real)
    per_token = measure("7B per token (MiB)", 2 * 32 * 4096 * fp16 / MIB, printed=0.5)
    assert fp16 == 2 and all(ok) and per_token == 0.5


@claim(
    id="dd2.kv-100k-tens-of-gb",
    at="KV-cache can require tens of gigabytes",
    level="established",
    source=DD2,
    section=KV_COSTS,
    printed={"100K tokens": "tens of gigabytes"},
    scope="the article's LLaMA 7B example (32 layers, 32 heads of 128, fp16), keys and values "
    "of real attention layers on the meta device, 100,000 tokens",
)
def test_100k_token_cache_takes_tens_of_gigabytes(measure):
    """At 100,000 tokens, the fp16 KV cache of the article's LLaMA 7B takes tens of gigabytes:
    between 10 and 100 GB (about 52 GB, 49 GiB).
    """
    size = measured_kv_bytes(32, 32, 32, 128, seq_len=100_000)
    gb = measure("100K tokens (GB)", size / 1e9)
    measure("100K tokens (GiB)", size / GIB)
    assert 10 <= gb < 100 and 10 <= size / GIB < 100


@claim(
    id="dd2.strided-pattern",
    at="Token 100 attends to tokens 0, 10, 20, 30, ...",
    level="established",
    source=DD2,
    section=SPARSE,
    printed={"token 100, stride 10": "tokens 0, 10, 20, 30, ..."},
    scope="the strided pattern of Child et al. (2019), query i keeps key j <= i with (i - j) "
    "divisible by the stride, at stride 10 over 200 tokens",
)
def test_strided_attention_keeps_every_tenth_token(measure):
    """With a stride of 10, token 100 attends to tokens 0, 10, 20, 30, ... up to itself: 11 keys
    out of 101, a tenth of the causal row."""
    i, j = torch.arange(200)[:, None], torch.arange(200)[None, :]
    mask = (j <= i) & ((i - j) % 10 == 0)
    keys = measure("keys of token 100", mask[100].nonzero().flatten().tolist())
    assert keys[:4] == [0, 10, 20, 30] and keys == list(range(0, 101, 10))


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


@claim(
    id="dd2.sparse-model-cost",
    at="to achieve O(n) or O(n log n) complexity",
    level="established",
    source=DD2,
    section=SPARSE,
    printed={"Longformer, BigBird, Sparse Transformers": "O(n) or O(n log n)"},
    scope="query-key pairs kept by each model's pattern over 512-4,096 tokens: Longformer (window "
    "+-32, 2 global tokens), BigBird (the same plus 3 random keys per query), Sparse "
    "Transformer (causal local and strided heads, stride sqrt(n), Child et al. 2019); fitted "
    "growth exponent against the one n log n itself fits here, plus 0.05",
    erratum="the Sparse Transformer is neither O(n) nor O(n log n): its local and strided heads "
    "with stride sqrt(n) keep pairs growing as n^1.5 (fitted exponent 1.51 here, against a "
    "ceiling of 1.19; Child et al. 2019 state O(n sqrt(n))); Longformer and BigBird are linear "
    "(1.01, 1.02)",
)
def test_sparse_models_cost_at_most_n_log_n(measure):
    """Each of the three named sparse patterns keeps a number of query-key pairs growing no
    faster than n log n: its fitted growth exponent over 512-4,096 tokens is at most the one
    n log n fits over the same lengths, plus 0.05.
    """
    ceiling = measure("ceiling: n log n's exponent + 0.05", NLOGN_CEILING)
    exponents = {}
    for name, keep in (
        ("Longformer", _longformer),
        ("BigBird", _bigbird),
        ("Sparse Transformer", _sparse_transformer),
    ):
        pairs = measure(f"pairs kept: {name}", [_pairs(n, keep) for n in LENGTHS], x=LENGTHS)
        exponents[name] = measure(f"growth exponent: {name}", growth_exponent(LENGTHS, pairs))
    assert all(p <= ceiling for p in exponents.values())


class _Reductions(TorchDispatchMode):
    """Counts the reduction operators dispatched (mean, var, sum, ...)."""

    NAMES = ("mean", "var", "sum", "std", "var_mean", "norm")

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += func.overloadpacket.__name__ in self.NAMES
        return func(*args, **(kwargs or {}))


@claim(
    id="dd2.norm-reductions",
    at=("LayerNorm: 2 reductions (mean, var)", "RMSNorm: 1 reduction (sum of squares)"),
    level="established",
    source=DD2,
    section=NORMS,
    printed={"LayerNorm": "2 reductions", "RMSNorm": "1 reduction"},
    scope="the two normalisations written as the article's steps (mean, variance, normalise; "
    "mean square, normalise) in torch, reduction operators counted as dispatched, 4 x 768",
)
def test_layernorm_reduces_twice_rmsnorm_once(measure):
    """Computed as the article lists them, LayerNorm takes two reductions over each position
    (its mean and its variance) and RMSNorm one (the mean of the squares)."""
    x, eps = torch.randn(4, 768), 1e-5
    with _Reductions() as layer:
        mu, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
        ln = (x - mu) / torch.sqrt(var + eps)
    with _Reductions() as rms:
        out = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
    n_ln = measure("LayerNorm reductions", layer.count, printed=2)
    n_rms = measure("RMSNorm reductions", rms.count, printed=1)
    ref = torch.nn.functional.layer_norm(x, (768,), eps=eps)
    assert (ln - ref).abs().max() < 1e-5 and out.shape == x.shape
    assert (n_ln, n_rms) == (2, 1)


@claim(
    id="dd2.swiglu-gate",
    at=("gate ≈ 0 → block this information", "gate ≈ 1 → pass this information through"),
    level="established",
    source=DD2,
    section=SWIGLU,
    printed={"gate ≈ 0": "blocks", "gate ≈ 1": "passes"},
    scope="torch's SiLU, the gate of SiLU(gate) * hidden, in float64",
    remark="SiLU is not a 0-1 switch: a gate of 1 passes 73% of the hidden value, and a gate of 3 "
    "amplifies it (2.86).",
)
def test_swiglu_gate_blocks_at_0_and_passes_at_1(measure):
    """In SiLU(gate) * hidden, a gate of 0 multiplies the hidden value by exactly 0, and a gate
    of 1 by SiLU(1) = 0.73, letting most of it through."""
    silu = torch.nn.functional.silu
    at0 = measure("SiLU(0)", silu(torch.tensor(0.0, dtype=torch.float64)).item(), printed=0)
    at1 = measure("SiLU(1)", silu(torch.tensor(1.0, dtype=torch.float64)).item())
    measure("SiLU(3)", silu(torch.tensor(3.0, dtype=torch.float64)).item())
    assert at0 == 0 and 0.5 < at1 < 1


@claim(
    id="dd2.swiglu-at-4d",
    at="Parameters: W_gate [d, 4d] + W_up [d, 4d] + W_down [4d, d]",
    level="established",
    source=DD2,
    section=SWIGLU,
    printed={"at hidden 4d": "W_gate [d, 4d] + W_up [d, 4d] + W_down [4d, d]"},
    scope="bias-free SwiGLU matrices at hidden width 4d against a GELU MLP's two, d = 768",
)
def test_swiglu_at_4d_has_half_again_the_gelu_parameters(measure):
    """With the hidden width of 4d the box writes, SwiGLU's three matrices hold 12·d², half as
    much again as the GELU MLP's 8·d²: the reason its hidden width is cut to 8/3·d."""
    d = 768
    swiglu = sum(torch.nn.Linear(a, b, bias=False).weight.numel() for a, b in
                 ((d, 4 * d), (d, 4 * d), (4 * d, d)))  # fmt: skip
    gelu = 2 * torch.nn.Linear(d, 4 * d, bias=False).weight.numel()
    ratio = measure("SwiGLU at 4d / GELU MLP", swiglu / gelu)
    assert swiglu == 12 * d * d and ratio == 1.5


@claim(
    id="dd2.five-years",
    at="improvements discovered over 5 years of research",
    level="established",
    source=DD2,
    section=EVOLUTION,
    printed={"GPT-2 to LLaMA 3": "5 years"},
    scope="the years the article's own table prints for GPT-2 (2019) and LLaMA 3 (2024)",
)
def test_table_years_are_five_apart(measure):
    """The table's GPT-2 (2019) and LLaMA 3 (2024) are five years apart."""
    years = measure("2024 - 2019", 2024 - 2019, printed=5)
    assert years == 5


QUADRATIC_LENGTHS = [1024, 2048, 4096, 8192]


@claim(
    id="dd2.attention-compute-quadratic",
    at="even O(n²) computation (not just memory)",
    level="established",
    source=DD2,
    section=SPARSE,
    printed={"full attention": "O(n²) computation"},
    scope="FLOPs of the matrix products of standard attention (one head of width 64) that torch "
    "dispatches, counted on the meta device for 1K-8K tokens",
)
def test_full_attention_compute_grows_quadratically(measure):
    """The work of full attention grows with the square of the sequence length: its fitted
    growth exponent over 1K-8K tokens is within 0.1 of 2 (4·n²·d FLOPs exactly)."""
    flops = []
    for n in QUADRATIC_LENGTHS:
        with torch.device("meta"):
            q, k, v = (torch.empty(1, n, 64) for _ in range(3))
            flops.append(count_flops(lambda q=q, k=k, v=v: standard_attention(q, k, v)))
    measure("FLOPs", flops, x=QUADRATIC_LENGTHS)
    p = measure("growth exponent", growth_exponent(QUADRATIC_LENGTHS, flops), printed=2)
    assert abs(p - 2) <= 0.1
    assert flops == [4 * n * n * 64 for n in QUADRATIC_LENGTHS]
