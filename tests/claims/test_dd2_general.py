"""The attention deep dive, general checks: the article read as a careful reviewer reads it.

Each claim is a sweep over the text as it stands (read at run time, never transcribed):
every shape comment of its forward-pass trace against the operations it annotates, every
dated attribution against the field's record (:mod:`experiments.literature_record`), every
worked example and printed product against its definition, and every cell of the GPT-2 to
LLaMA 3 comparison table against the body. Nothing trains; the file runs in about a second.
"""

from __future__ import annotations

import itertools
import math
import re

import pytest
import torch
from claimbook import WHOLE_TEXT, claim, source_text
from claimbook.declare.numbers import reproduces

from experiments import literature_record as record
from experiments import real_models as rm
from experiments.text_tables import block_after, box_cells, citations, norm, number
from tests.claims.record_checks import years_against_record
from tests.claims.sources import DD2

TEXT = "the article's text read at run time; no experiment runs"
SUB = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def _shape(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", s))


# (b) the Part 7 trace: each shape comment against the operation it annotates ---------------


def _trace(text, measure):
    ids = re.search(r"Token IDs: +\[([\d, ]+)\]", text)[1]
    n = len(ids.split(","))
    dim = int(re.search(r"(\d+) vectors of dim (\d+)", text)[2])
    heads = int(re.search(r"Q, K, V Projections \(for all (\d+) heads\)", text)[1])
    d_head = dim // heads
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, dim, generator=g)
    w = {k: torch.randn(dim, d_head, generator=g) for k in "QKV"}
    q, k, v = (x @ w[c] for c in "QKV")  # Q_h = X_norm · W_Q_h
    scale = float(re.search(r"K_h_rotated\.T / √(\d+)", text)[1])
    scores = q @ k.T / math.sqrt(scale) + torch.triu(torch.full((n, n), -math.inf), 1)
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    concat = torch.cat([out] * heads, dim=-1) @ torch.randn(heads * d_head, dim, generator=g)
    made = {
        "Q_h": q,
        "K_h": k,
        "V_h": v,
        "scores_h": scores,
        "weights_h": weights,
        "attn_output_h": out,
        "attn_output": concat,
    }
    said = {}
    lines = text.splitlines()
    for i, ln in enumerate(lines):  # a shape comment annotates the nearest assignment above
        if m := re.search(r"# Shape \[([\d, ]+)\]", ln):
            name = next(
                re.match(r"\s*(\w+) =", lines[j])[1]
                for j in range(i, i - 5, -1)
                if re.match(r"\s*\w+ =", lines[j])
            )
            said[name] = _shape(m[1])
    bad = [] if set(said) == set(made) else [f"comments on {sorted(said)}"]
    for name, shape in said.items():
        got = tuple(made[name].shape) if name in made else None
        measure(f"{name} shape", list(got or ()), printed=str(list(shape)))
        bad += [name] * (got != shape)
    sums = measure("largest row-sum error of the weights", float((weights.sum(-1) - 1).abs().max()))
    bad += ["rows sum to 1"] * ("rows sum to 1" not in text or sums > 1e-6)
    return bad + ["scale"] * (scale != d_head)


def _gpt2_box(text, measure):
    """The GPT-2 small trace's heading (d_model, n_heads, d_head) against its own lines."""
    m = re.search(r"d_model=(\d+), n_heads=(\d+), d_head=(\d+)", text)
    d, h, dh = int(m[1]), int(m[2]), int(m[3])
    box = block_after(text, "COMPLETE SHAPE TRACE: ONE TRANSFORMER LAYER", stop="OUTPUT: X")
    shapes = [_shape(s) for ln in box for s in re.findall(r"\[[\d, ]+\]", ln)]
    heads = [s for s in shapes if len(s) == 4]
    seq = {s[1] for s in shapes if len(s) == 3}
    bad = ["width"] * (h * dh != d)
    bad += [f"{s}" for s in heads if s[1] != h or s[3] not in {dh, *seq} or s[2] not in {dh, *seq}]
    reshape = re.search(r"reshape\(1, \d+, (\d+), (\d+)\)", " ".join(box))
    scale = re.search(r"/ √(\d+)", " ".join(box))
    measure("head shapes checked", len(heads))
    bad += ["reshape"] * ((int(reshape[1]), int(reshape[2])) != (h, dh))
    return bad + ["scale"] * (int(scale[1]) != dh) + ["found"] * (len(heads) < 6)


TRACES = {"'The cat sat' trace": _trace, "GPT-2 small shape trace": _gpt2_box}


@claim("dd2.trace-comments-match-shapes", "established",
       at=("Q_h = X_norm · W_Q_h # Shape [3, 64]", "# Shape [3, 3], rows sum to 1",
           "(GPT-2 Small: d_model=768, n_heads=12, d_head=64)"),
       scope=TEXT + "; the small trace's steps run as torch operations at the sizes its text "
       "states (the token list, the model width, the head count), with seeded random "
       "weights")  # fmt: skip
@pytest.mark.parametrize("trace", list(TRACES))
def test_each_trace_comment_is_the_shape_its_step_makes(trace, measure):
    """Each shape comment in the article's forward-pass trace of 'The cat sat' is the shape its step
    produces at the stated sizes (3 tokens, width 512, 8 heads): the per-head projections, the 3 x 3
    scores and weights whose rows sum to 1, the weighted values and the concatenated output; the
    scores are scaled by the head width. The GPT-2 small trace's heading (width 768, 12 heads of 64)
    is the one its reshape, scale and per-head shapes use."""
    bad = TRACES[trace](source_text(DD2), measure)
    assert not bad, f"shape comments that do not match their step: {bad}"


# (c) attributions against the field's record ------------------------------------------------


@claim("dd2.attributions-match-record", "established",
       at=('Clark et al. (2019): "What Does BERT Look At?"', "Flash Attention (Dao et al., 2022)",
           "GPT-2 (2019) LLaMA 3 (2024)", 'Su et al. (2021): "RoFormer'),
       place=WHOLE_TEXT,
       scope=TEXT + ", against the record in experiments/literature_record.py (arXiv id or venue "
       "per work); model years are release years",
       remark="The reading list calls Olsson et al. (2022) the induction heads' discovery; the "
       "record credits their first description to Elhage et al. (2021), listed just above it. "
       "Read as 'the paper on induction heads', the line holds.")  # fmt: skip
def test_every_attribution_matches_the_record(measure):
    """Every dated attribution in the article (the head-analysis papers, FlashAttention, the models
    in the comparison table and the reading list) names the authors, year and title the field
    records for that work."""
    found = citations(source_text(DD2), record.system)
    bad = years_against_record(found, measure)
    measure("attributions found", len(found))
    assert found and not bad, bad


# (d) worked examples and printed arithmetic against their definitions --------------------


def _weights_row(text, measure):
    row = [float(x) for x in re.search(r"weights might be \[([\d., ]+)\]", text)[1].split(",")]
    pos = int(re.search(r"# Example for position (\d+)", text)[1])
    pct = [int(p) / 100 for p in re.findall(r"(\d+)% (?:attention )?to", text)]
    total = measure("row sum", sum(row), printed="1")
    bad = ["sum"] * (abs(total - 1) > 1e-9) + ["positive"] * any(w <= 0 for w in row)
    bad += ["causal length"] * (len(row) != pos + 1)  # position p sees 0..p
    return bad + ["percentages"] * (pct != row)


def _causal_mask(text, measure):
    rows = [
        list(map(int, m[2].split())) for m in re.finditer(r"^pos (\d) +\[([\d ]+)\]$", text, re.M)
    ]
    size = int(re.search(r"Attention Mask \(for sequence length (\d+)\)", text)[1])
    rule = "Position i can only attend to positions ≤ i" in text
    code = (torch.triu(torch.ones(size, size), diagonal=1).bool()).logical_not().int().tolist()
    measure("mask rows", rows)
    return ["size"] * (len(rows) != size) + ["rule"] * (not rule) + ["matrix"] * (rows != code)


def _kv_steps(text, measure):
    lines = block_after(text, "KV-cache stores the K and V vectors", stop="This reduces")
    bad, step = [], 0
    for ln in (norm(x).translate(SUB) for x in lines):
        if m := re.match(r"Step (\d+): Generate token (\d+)", ln):
            step = int(m[1])
            bad += [ln] * (m[1] != m[2])
        elif m := re.match(r"- Compute K(\d+), V(\d+)", ln):
            bad += [ln] * (int(m[1]) != step or int(m[2]) != step)
        elif m := re.match(
            r"- (Retrieve|Retrieve from cache|Append): K_cache = \[([K\d, ]+)\]", ln
        ):
            keys = [int(k) for k in re.findall(r"K(\d+)", m[2])]
            want = list(range(1, step + (m[1] == "Append")))
            bad += [ln] * (keys != want)
        elif m := re.match(r"- Attention only needs new Q(\d+)", ln):
            bad += [ln] * (int(m[1]) != step)
    return bad + ["steps"] * (measure("steps", step) != 3)


def _variants_box(text, measure):
    box = block_after(text, "ATTENTION VARIANTS COMPARISON", stop="Why GQA works")
    bad, sizes = [], {}
    for name in ("MULTI-HEAD", "MULTI-QUERY", "GROUPED QUERY"):
        i = next(j for j, ln in enumerate(box) if name in ln)
        part = box[i : i + 12]
        q = sum(len(re.findall(r"Q[₀-₉]", ln)) for ln in part if "Q heads" in ln)
        k_line = next(ln for ln in part if "K heads" in ln)
        k = len(re.findall(r"\[", k_line))
        kv = next(
            re.search(r"(\d+) K(?: heads)? \+ (\d+) V(?: heads)? = (\d+) vectors", ln)
            for ln in part
            if "KV-cache:" in ln
        )
        sizes[name] = int(kv[3])
        measure(f"{name}: drawn K heads", k, printed=kv[1])
        bad += [name] * (int(kv[1]) != k or int(kv[2]) != k or int(kv[3]) != 2 * k or q != 8)
    for name, printed in (("MULTI-QUERY", "8"), ("GROUPED QUERY", "2")):
        said = re.search(
            r"\((\d+)× reduction",
            next(ln for ln in box if "KV-cache:" in ln and str(sizes[name]) + " vectors" in ln),
        )[1]
        ratio = measure(f"{name}: reduction", sizes["MULTI-HEAD"] // sizes[name], printed=said)
        bad += [name + " reduction"] * (ratio != int(said) or said != printed)
    return bad


UNIT = {"bytes": (1, 1), "MB": (1e6, 2**20), "GB": (1e9, 2**30)}


def _side(s: str) -> tuple[float, str | None]:
    nums = re.findall(r"[\d][\d,]*(?:\.\d+)?", s)
    unit = next((u for u in UNIT if re.search(rf"\b{u}\b", s)), None)
    return math.prod(float(x.replace(",", "")) for x in nums), unit


def _products(text, measure):
    bad, n = [], 0
    for ln in text.splitlines():
        body = norm(ln.replace("│", " "))
        if m := re.search(r"Params: (.*?) = ([\d,]+)", body):  # a sum of weight shapes
            value = sum(math.prod(_shape(s)) for s in re.findall(r"\[[\d, ]+\]", m[1]))
            measure(m[0], value, printed=m[2].replace(",", ""))
            bad += [m[0]] * (value != int(m[2].replace(",", "")))
            n += 1
            continue
        if "=" not in body or not re.search(r"\d\s*×\s*\d", body):
            continue
        body = re.sub(r"^.*?:\s+(?=[\d(])", "", body).split(" (")[0]
        parts = [p.strip() for p in body.split("=")]
        for lhs, rhs in itertools.pairwise(parts):  # each '=' in a chain
            if "+" in lhs:
                value, unit = sum(_side(t)[0] for t in lhs.split("+")), None
            else:
                value, unit = _side(lhs)
            printed, want = re.search(r"[\d][\d,]*(?:\.\d+)?", rhs)[0], _side(rhs)[1]
            if want in ("MB", "GB") and unit != "bytes":  # per-token MB times tokens -> GB
                unit = "MB" if want == "GB" else unit
            scales = [UNIT[unit][i] / UNIT[want][i] for i in (0, 1)] if unit and want else [1]
            fits = [sc for sc in scales if reproduces(value * sc, printed.replace(",", ""))]
            ok, shown = bool(fits), (fits or scales)[0]  # decimal, else binary units
            measure(f"{lhs} = {rhs}", value * shown, printed=printed.replace(",", ""))
            bad += [f"{lhs} = {rhs}"] * (not ok)
            n += 1
    return bad + ["products found"] * (measure("equations checked", n) < 20)


def _matmul_shapes(text, measure):
    bad, n = [], 0
    for ln in text.splitlines():
        m = re.search(r"Shape: (\[[\d, ]+\])(?: @ (\[[\d, ]+\]))? → (\[[\d, ]+\])", ln)
        if not m:
            continue
        a, b, c = _shape(m[1]), m[2] and _shape(m[2]), _shape(m[3])
        if b:  # torch's own broadcasting matmul, on shapes only
            got = tuple(torch.empty(a, device="meta").matmul(torch.empty(b, device="meta")).shape)
        else:  # a reshape or a norm keeps the number of elements
            got = c if math.prod(a) == math.prod(c) else a
        measure(norm(m[0]), list(got), printed=str(list(c)))
        bad += [norm(m[0])] * (got != c)
        n += 1
    return bad + ["shape lines found"] * (n < 8)


def _kv_examples(text, measure):
    m = re.search(r"n_layers = (\d+), n_heads = (\d+), d_head = (\d+), d_model = (\d+)", text)
    bad = ["d_model = n_heads x d_head"] * (int(m[2]) * int(m[3]) != int(m[4]))
    formula = (
        "= 2 × n_layers × d_model × bytes" in text and "2 × n_layers × n_heads × d_head" in text
    )
    per = re.search(r"Per token: 2 × (\d+) × (\d+) × 2 bytes", text)
    bad += ["7B operands"] * (not formula or (per[1], per[2]) != (m[1], m[4]))
    found = re.findall(r"(\d+)K tokens: +([\d.]+) × (\d+)", text)
    for label, per_token, tokens in found:
        measure(f"{label}K tokens", int(tokens), printed=str(int(label) * 1024))
        bad += [f"{label}K"] * (int(tokens) != int(label) * 1024 or per_token != "0.5")
    bad += ["context rows"] * (len(found) != 4)
    ctx = re.search(r"For (\d+)K context: [\d.]+ × (\d+)", text)
    return bad + ["32K context"] * (int(ctx[2]) != int(ctx[1]) * 1024)


EXAMPLES = {
    "example weights row": _weights_row,
    "causal mask": _causal_mask,
    "KV-cache steps": _kv_steps,
    "attention variants box": _variants_box,
    "printed products and sums": _products,
    "shape-trace matrix products": _matmul_shapes,
    "KV-cache examples against the formula": _kv_examples,
}


@claim("dd2.worked-examples-follow-definitions", "established",
       at=("# weights might be [0.2, 0.5, 0.3]", "Attention Mask (for sequence length 4):",
           "Append: K_cache = [K₁, K₂, K₃], etc.", "KV-cache: 1 K + 1 V = 2 vectors per layer",
           "Per token: 2 × 32 × 4096 × 2 bytes = 524,288 bytes = 0.5 MB",
           "Shape: [1, 12, 512, 64] @ [1, 12, 64, 512] → [1, 12, 512, 512]"),
       place=WHOLE_TEXT,
       scope=TEXT + ". A size in MB or GB holds if it reproduces in decimal or in binary units "
       "(the box's mixing of the two is dd2.kv-units-consistent); the shares in percent are "
       "dd2.gpt2-percentages; which heads LLaMA 70B caches is "
       "dd2.gqa-fact-in-kv-arithmetic.")  # fmt: skip
@pytest.mark.parametrize("item", list(EXAMPLES))
def test_each_worked_example_follows_its_definition(item, measure):
    """Each worked example in the article follows the definition it illustrates: the example weights
    are a causal softmax row; the 4 x 4 mask is 'position i sees positions up to i' and the code's
    mask; the KV-cache steps hold exactly the keys generated so far; the variants box counts the
    heads it draws; every printed product, sum and matrix-product shape is right; and the KV-cache
    examples use the formula and context lengths they name."""
    bad = EXAMPLES[item](source_text(DD2), measure)
    assert not bad, f"the example breaks its definition: {bad}"


# (e) the comparison table against the body --------------------------------------------------


def _table(text) -> dict[str, tuple[str, str]]:
    rows, current = {}, None
    for ln in block_after(text, "COMPONENT", stop="EFFICIENCY GAINS"):
        cells = box_cells(ln)
        if len(cells) == 3:
            current = cells[0]
            rows[current] = [cells[1], cells[2]]
        elif cells and current and not set(cells[0]) <= set("─├┤"):
            rows[current][0 if len(cells) == 2 or ln.index(cells[0]) < 40 else 1] += " " + cells[0]
            if len(cells) == 2:
                rows[current][1] += " " + cells[1]
    return {k: tuple(v) for k, v in rows.items()}


def _heads(box: list[str], variant: str) -> tuple[int, int]:
    """The query and key heads drawn in one part of the variants box."""
    i = next(j for j, ln in enumerate(box) if variant in ln)
    q = next(ln for ln in box[i:] if "Q heads:" in ln)
    k = next(ln for ln in box[i:] if "K heads:" in ln)
    return len(re.findall(r"Q[₀-₉]", q)), k.count("[")


def _row_checks(text) -> dict[str, tuple[bool, bool]]:
    """For each table row, whether the body agrees with the GPT-2 cell and the LLaMA 3 cell:
    each cell's own terms are read from it and looked up in the body."""
    t = _table(text)
    llama3, llama31 = rm.decoder_facts("llama3-8b"), rm.decoder_facts("llama3.1-8b")
    d_model = int(re.search(r"d_model=(\d+), n_heads", text)[1])
    fc1 = _shape(re.search(r"Params: W_fc1 (\[\d+, \d+\])", text)[1])  # [d_model, d_ff]
    tok = re.search(r"Token embeddings: +(\d+) × (\d+)", text)
    pos = re.search(r"Position embeddings: +(\d+) × (\d+)", text)
    ln_box, rms_box, var_box, gpt2_mlp, swiglu = (
        " ".join(block_after(text, a, stop=b))
        for a, b in (
            ("LAYERNORM:", "RMSNORM (Root"),
            ("RMSNORM (Root", "WHY RMSNORM"),
            ("ATTENTION VARIANTS COMPARISON", "Why GQA works"),
            ("ORIGINAL MLP (GPT-2)", "SWIGLU MLP"),
            ("SWIGLU MLP (LLaMA", "WHY SWIGLU"),
        )
    )
    box = block_after(text, "ATTENTION VARIANTS COMPARISON", stop="Why GQA works")
    pe, norm_, attn, act, ratio, impl = (
        t[k] for k in ("Position Encoding", "Normalization", "Attention", "MLP Activation",
                       "MLP Ratio", "Attention Impl.")
    )  # fmt: skip
    rel = {"=": lambda q, k: q == k, "<": lambda q, k: k < q}
    gpt2_rel, llama_rel = (re.search(r"n_kv ([=<]) n_heads", c)[1] for c in attn)
    r = re.search(r"([\d.]+)× \((\d+)/(\d+)\)", ratio[1])
    memory = {w: re.search(rf"{w} Attention Memory: (O\([^)]*\))", text)[1]
              for w in ("Standard", "Flash")}  # fmt: skip
    return {
        "Position Encoding": (  # learned [max_seq, d_model] = the breakdown's 1024 x 768 table
            "[max_seq, d_model]" in pe[0]
            and (int(pos[1]), int(pos[2])) == (number(t["Context Length"][0]), d_model),
            "No params" in pe[1] and "RoPE: No position embedding table" in text,
        ),
        "Normalization": (  # each quantity the cell names is computed in the LayerNorm box
            all(
                f"{w}(x)" in ln_box if w.isascii() else w in ln_box  # mean(x), var(x); β
                for w in norm_[0].split()[1:]
                if w != "+"
            ),
            "RMS only" in norm_[1] and "rms =" in rms_box and "no shift parameter β" in rms_box,
        ),
        "Attention": (  # the relation between kv and query heads as the box draws them
            rel[gpt2_rel](*_heads(box, "MULTI-HEAD ATTENTION")),
            rel[llama_rel](*_heads(box, "GROUPED QUERY")) and "LLaMA 3" in var_box,
        ),
        "MLP Activation": (  # the cell's activation is the one the body's MLP of that model uses
            act[0].split()[0] == re.search(r"hidden = (\w+)\(hidden\)", gpt2_mlp)[1],
            act[1].split()[0].lower() == "swiglu"
            and re.search(r"(\w+)\(", act[1].split()[1])[1] in swiglu
            and all(w in swiglu for w in re.findall(r"W_(\w+)", act[1].replace("W_g", "W_gate"))),
        ),
        "MLP Ratio": (
            ratio[0].startswith(f"{fc1[1] // fc1[0]}×"),
            r is not None
            and f"{r[2]}/{r[3]} × d" in swiglu
            and bool(reproduces(int(r[2]) / int(r[3]), r[1])),
        ),
        "Attention Impl.": (
            memory["Standard"] in impl[0].split(),
            memory["Flash"] in impl[1].split(),
        ),
        "Vocab Size": (
            number(t["Vocab Size"][0].split()[0]) == int(tok[1]),
            _at_least(t["Vocab Size"][1].split()[0], llama3["vocab_size"])
            and "larger vocab" in t["Vocab Size"][1]
            and llama3["vocab_size"] > int(tok[1]),
        ),
        "Context Length": (
            number(t["Context Length"][0]) == int(pos[1]),
            _context_range(t["Context Length"][1], llama3["context"], llama31["context"]),
        ),
    }


def _at_least(printed: str, n: int) -> bool:
    """A printed "N+" holds for n from N up to a tenth above it (a little over N); a plain N
    only for n itself."""
    base = number(printed.rstrip("+"))
    return base <= n < 1.1 * base if printed.endswith("+") else n == base


def _context_range(cell: str, short: int, long: int) -> bool:
    """LLaMA 3's context cell, "A - B+": A is Llama 3's context, B+ Llama 3.1's (its 128K)."""
    low, high = (c.strip() for c in cell.split(" - "))
    return number(low) == short and _at_least(high, long)


ROWS = (
    "Position Encoding",
    "Normalization",
    "Attention",
    "MLP Activation",
    "MLP Ratio",
    "Attention Impl.",
    "Vocab Size",
    "Context Length",
)


LLAMA3_CONFIG_ROWS = {"Vocab Size": "vocab_size", "Context Length": "context"}


@claim("dd2.table-agrees-with-body", "established",
       at=("COMPONENT GPT-2 (2019) LLaMA 3 (2024)", "Normalization LayerNorm RMSNorm",
           "MLP Ratio 4× ~2.7× (8/3)", "Attention Impl. Standard Flash Attention 2"),
       place=WHOLE_TEXT,
       scope=TEXT + ". Each cell against what the body says of the same thing (the parameter "
       "breakdown, the shape trace, the code, the RMSNorm, SwiGLU, GQA and FlashAttention boxes). "
       "The norm-placement and bias rows, which the body contradicts, are the errata "
       "dd2.norm-placement-agrees and dd2.bias-fact-in-param-count; whether the cells are true of "
       "the real models is dd2.llama3-components and dd2.llama3-mlp-ratio. The body says nothing "
       "of LLaMA 3's vocabulary and context: those two cells are read against Llama 3 8B's and "
       "Llama 3.1 8B's published configurations (experiments/real_models.py), built by "
       "transformers' LlamaForCausalLM on the meta device: the vocabulary its embedding holds, "
       "the context its max_position_embeddings; 'N+' reads as N up to a tenth above it, and "
       "'BPE' (a tokenizer, not in a configuration) is not checked.")  # fmt: skip
@pytest.mark.parametrize("row", ROWS)
def test_each_table_row_agrees_with_the_body(row, measure):
    """Each row of the article's GPT-2 to LLaMA 3 table says what the article's body says of the
    same component: learned positions of the breakdown's size against RoPE's lack of a table,
    LayerNorm's mean, variance and shift against RMSNorm's root mean square, full heads against
    grouped ones, GELU against SwiGLU's gate, the 4x and 8/3 widths, the memory of standard and
    Flash attention, and GPT-2's vocabulary and context; LLaMA 3's vocabulary (over 128,000) and
    context (8,192, and over 128,000 in Llama 3.1) are its configurations'."""
    gpt2, llama = _row_checks(source_text(DD2))[row]
    if row in LLAMA3_CONFIG_ROWS:
        for key in ("llama3-8b", "llama3.1-8b"):
            measure(f"configuration: {key}", rm.named(key))
            facts = rm.decoder_facts(key)
            measure(f"{key}: {LLAMA3_CONFIG_ROWS[row]}", facts[LLAMA3_CONFIG_ROWS[row]])
    measure("GPT-2 cell agrees with the body", gpt2)
    measure("LLaMA 3 cell agrees with the body", llama)
    assert gpt2 and llama, f"the {row} row disagrees with the body"
