"""The attention deep dive's literature statements that fit this book's scale, run.

The norm-placement formula the article prints is evaluated, as printed, with the parts of
transformers' post-norm attention sub-layer; the information-flow schematic is read against
the article's own earlier account of the layers; the gain of dropping biases is counted on
Llama 3 8B as transformers builds it. Texts are read at run time.
"""

from __future__ import annotations

import itertools
import re

from claimbook import WHOLE_TEXT, claim, defaults, source_text

from experiments.literature_checks import bias_savings, gpt2_sublayer_gaps, post_norm_gaps
from experiments.real_models import config_of
from experiments.text_tables import block_after
from tests.claims import errata
from tests.claims.example_grammar import check, correction, entries
from tests.claims.sources import DD2

pytestmark = defaults(level="established")

FLOAT64 = 1e-9


def _norm_formulas(text: str) -> dict[str, str]:
    """The table's norm-placement row: layout name -> formula printed under it."""
    lines = text.splitlines()
    row = next((i for i, line in enumerate(lines) if "Norm Placement" in line), None)
    if row is None:  # an error, never the erratum failing as declared
        raise LookupError("the table has no Norm Placement row")
    cells = lambda line: [c for c in re.split(r"\s{2,}", line.strip(" │")) if c]  # noqa: E731
    names, formulas = cells(lines[row])[1:], cells(lines[row + 1])
    if not len(names) == len(formulas) == 2 or "Post-norm" not in names:
        raise LookupError(f"the Norm Placement row is not two layouts: {names}, {formulas}")
    return dict(zip(names, formulas, strict=True))


def _candidates() -> list[str]:
    """Every way to place one Norm around x, Attn(x) or their sum, plus the residual."""
    inner = ["Attn(x)", "Attn(Norm(x))", "Norm(Attn(x))"]
    outer = [f"x + {a}" for a in inner] + [f"Norm(x + {a})" for a in inner[:1]]
    return outer + [f"{a} + {b}" for a, b in itertools.product(["Norm(x)"], inner[:1])]


def _gpt2_formula(gaps: dict[str, float]) -> str:
    """The one formula whose gap from GPT2Block's attention sub-layer is within float64."""
    right = [f for f, g in gaps.items() if g <= FLOAT64]
    if len(right) != 1:
        raise RuntimeError(f"not exactly one candidate is GPT2Block's formula: {right}")
    return right[0]


def _bert_formulas() -> list[str]:
    """The candidate formulas BertAttention (a post-norm sub-layer) computes."""
    return [f for f, r in post_norm_gaps({f: f for f in _candidates()}).items() if r["gap"] <= 1e-9]


@claim("dd2.post-norm-formula", at="x + Norm(Attn(x))",
    scope="the table's GPT-2 formula read at run time and evaluated as printed with the parts "
    "of transformers' GPT2Block (its attention and the LayerNorm before it; width 32, 4 heads, "
    "random weights, float64), against that block's own attention sub-layer; every other way "
    "of placing one Norm is evaluated too, and so is BertAttention, a post-norm sub-layer",
    erratum="GPT-2's attention sub-layer computes x + Attn(Norm(x)) (pre-norm, as the "
    "article's own shape trace and code have it); the x + Norm(Attn(x)) printed in GPT-2's "
    "column differs from it, and is not the original Transformer's post-norm either, "
    "Norm(x + Attn(x)), which BertAttention computes.",
    error=errata.GPT2_POST_NORM,
    remark="Read as a definition of post-norm, x + Norm(Attn(x)) is a layout of its own "
    "(Swin Transformer V2 calls it res-post-norm); what makes it wrong here is the column: the "
    "cell describes GPT-2. One error with the cell's label (dd2.gpt2-post-norm), so one "
    "correction. The pre-norm formula, x + Attn(Norm(x)), is right.")  # fmt: skip
def test_printed_gpt2_norm_formula_is_gpt2s(measure):
    """The norm-placement formula the article's table prints in GPT-2's column, x +
    Norm(Attn(x)), is what GPT-2's attention sub-layer computes."""
    formulas = _norm_formulas(source_text(DD2))
    printed = measure("GPT-2's formula printed", formulas["Post-norm"], printed="x + Norm(Attn(x))")
    gaps = gpt2_sublayer_gaps({f: f for f in {printed, *_candidates()}})
    gap = measure("printed formula: largest gap from GPT-2's sub-layer", gaps[printed])
    right = measure("the formula GPT-2's block computes", _gpt2_formula(gaps))
    measure("the formula BertAttention (post-norm) computes", _bert_formulas())
    if gap > FLOAT64:
        measure.correct(errata.gpt2_norm_correction(right))
    assert gap <= FLOAT64


def _bands(text: str, pattern: str) -> list[tuple[int, int]]:
    """(first, last) layers of each band a pattern finds, in order; "20+" runs to 32."""
    found = [(int(a), int(b) if b else 32) for a, b in re.findall(pattern, text)]
    if not found:
        raise LookupError(f"no layer bands match {pattern!r}")
    return found


def _accounts(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The schematic's bands and the earlier account's stages, as (first, last) layers."""
    bands = _bands(text, r"Layers (\d+)-(\d+): [A-Z]")
    stages = _bands(text, r"(?:Early|Middle|Late) layers \((\d+)(?:-(\d+)|\+)\):")
    return bands, stages


def _spans(bands: list[tuple[int, int]]) -> list[str]:
    return [f"{a}-{b}" for a, b in bands]


def _overlap(band: tuple[int, int], stage: tuple[int, int]) -> int:
    return max(0, min(band[1], stage[1]) - max(band[0], stage[0]) + 1)


def _stage_of(bands: list[tuple[int, int]], stages: list[tuple[int, int]]) -> list[int]:
    """For each band, the stage holding most of it."""
    return [
        max(range(len(stages)), key=lambda s, a=a, b=b: _overlap((a, b), stages[s]))
        for a, b in bands
    ]


def _outside(bands, stages, stage_of) -> tuple[list[int], list[int]]:
    """How many layers each band reaches outside its stage, and those layers, in order."""
    pairs = list(zip(bands, stage_of, strict=True))
    shifts = [max(stages[s][0] - a, b - stages[s][1], 0) for (a, b), s in pairs]
    differ = sorted(
        x for (a, b), s in pairs for x in range(a, b + 1) if not stages[s][0] <= x <= stages[s][1]
    )
    return shifts, differ


@claim("dd2.info-flow-bands",
    at=("Layers 1-3: Local patterns", "Layers 4-10: Semantic building",
        "Layers 11-20: Compositional meaning", "Layers 21-32: Task completion"),
    place=WHOLE_TEXT,
    printed={"schematic bands": "1-3 local, 4-10 semantic, 11-20 compositional, 21-32 task",
             "earlier account": "early 1-4, middle 5-20, late 20+"},
    scope="a check of the article against itself: the information-flow schematic's four bands "
    "and the earlier 'How Layers Specialize' stages, both read from the text at run time. What "
    "the layers of a real 32-layer model do is not tested here (it needs a pretrained model's "
    "weights and a probe; the coverage map cites it); the earlier account is measured, "
    "speculative, on a 24-layer character model by dd2.layer-locality.",
    remark="The two accounts differ by one layer: layer 4 is early (local patterns) in the "
    "first and semantic building in the second, and the first puts layer 20 in both the "
    "middle and the late stage. The article calls the progression rough, with significant "
    "overlap, so a one-layer shift is within what it says, not an error.")  # fmt: skip
def test_information_flow_bands_restate_the_layer_account(measure):
    """The article's two accounts of what layers do agree: the information-flow schematic's bands
    cover layers 1-32 once each, in the order of the earlier account (local, then semantic and
    compositional, then the task), and each band lies within one of its stages up to one layer
    at either end. (A check of the text, not of what real models' layers do.)"""
    bands, stages = _accounts(source_text(DD2))
    measure("schematic bands", _spans(bands), printed=["1-3", "4-10", "11-20", "21-32"])
    measure("earlier stages", _spans(stages))
    covered = [layer for a, b in bands for layer in range(a, b + 1)]
    measure("layers the bands cover, in order", [covered[0], covered[-1], len(covered)])
    stage_of = _stage_of(bands, stages)
    measure("the stage of each band (0 early, 1 middle, 2 late)", stage_of)
    shifts, differ = _outside(bands, stages, stage_of)
    measure("layers each band reaches outside its stage", shifts)
    measure("layers the accounts place differently", differ)
    assert covered == list(range(1, 33)), "the bands do not cover layers 1-32 once each"
    assert stage_of == sorted(stage_of) and set(stage_of) == set(range(len(stages)))
    assert max(shifts) <= 1


# what the gains line's words promise: the parameters saved (a sign), the work (a share band)
PARAMS_WORD = {"fewer": 1, "same": 0, "more": -1}
SPEED_WORD = {"marginally": (0.0, 0.01), "slightly": (0.0, 0.01), "significantly": (0.1, 1.0)}


def _gains_line(text: str) -> tuple[str, str]:
    """The words the efficiency box prints for dropping biases: (params word, speed word)."""
    m = re.search(r"No biases: (\w+) params, (\w+) faster", text)
    if m is None or m[1].lower() not in PARAMS_WORD or m[2].lower() not in SPEED_WORD:
        raise LookupError("the efficiency box's 'No biases' line is not one this claim reads")
    return m[1].lower(), m[2].lower()


def _box_biases(text: str) -> tuple[int, int]:
    """The biases the GPT-2 breakdown box counts (its b_ lines and each LayerNorm's shift, half
    of its 'd × 2'), over its 12 layers and final norm; and the box's grand total."""
    box = block_after(text, "GPT-2 SMALL PARAMETER BREAKDOWN", stop="GRAND TOTAL")
    layers = int(re.search(r"PER LAYER \(×(\d+) layers\)", text)[1])
    bias_lines = [m for ln in box if (m := re.search(r"b_\w+:.*= +([\d,]+)", ln))]
    biases = [int(m[1].replace(",", "")) for m in bias_lines]
    shifts = [int(m[1]) for ln in box if (m := re.search(r"LayerNorm \(pre\): +(\d+) × 2", ln))]
    final = int(re.search(r"Final LayerNorm: +(\d+) × 2", text)[1])
    total = int(re.search(r"GRAND TOTAL: +([\d,]+)", text)[1].replace(",", ""))
    return layers * (sum(biases) + sum(shifts)) + final, total


def _llama_biases(cfg) -> int:
    """The biases attention_bias and mlp_bias add to a LLaMA, from its configuration part by
    part: q, k, v, o, then gate, up and down, each one number per output, in every layer."""
    head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    q, kv = cfg.num_attention_heads * head, cfg.num_key_value_heads * head
    per_layer = q + 2 * kv + cfg.hidden_size + 2 * cfg.intermediate_size + cfg.hidden_size
    return cfg.num_hidden_layers * per_layer


@claim("dd2.no-biases-gains", at="No biases: Fewer params, marginally faster",
    scope="the efficiency box's line read at run time; the saving counted twice: from the "
    "article's own GPT-2 breakdown (its b_ lines and LayerNorm shifts, against its grand "
    "total) and on meta-llama/Meta-Llama-3-8B's sizes built by transformers' LlamaForCausalLM "
    "on the meta device as published and with attention_bias and mlp_bias on, where the "
    "saving must be the biases its configuration gives, part by part. 'Faster' as work: the "
    "bias additions of one token against the FLOPs of its matrix products (FlopCounterMode); "
    "'marginally' as below 1%. Wall-clock time is not measured.")  # fmt: skip
def test_dropping_biases_saves_a_few_parameters_and_little_work(measure):
    """Dropping the biases saves parameters, in the article's own GPT-2 count and in Llama 3 8B
    (exactly the biases its configuration gives), and their share of the parameters and of the
    work per token is marginal (below 1%)."""
    params_word, speed_word = _gains_line(source_text(DD2))
    measure("the line's words", [params_word, speed_word], printed=["fewer", "marginally"])
    box_saved, box_total = _box_biases(source_text(DD2))
    measure("biases the GPT-2 breakdown counts", box_saved)
    box_share = measure("their share of the breakdown's total", box_saved / box_total)
    found = bias_savings("llama3-8b")
    measure("configuration", found["config"])
    measure("parameters as published (no biases)", found["params"])
    measure("parameters with attention and MLP biases", found["with_biases"])
    saved = measure("parameters saved", found["saved"])
    expected = measure("biases its configuration gives", _llama_biases(config_of("llama3-8b")))
    share = measure("share of parameters saved", found["share"])
    work = measure("bias additions per matrix-product FLOP", found["work_share"])
    assert found["bias_numbers"] == saved == expected, "the saving is not the model's biases"
    sign = PARAMS_WORD[params_word]
    assert all((n > 0) - (n < 0) == sign for n in (box_saved, saved)), params_word
    low, high = SPEED_WORD[speed_word]
    assert all(low <= x < high for x in (box_share, share, work)), speed_word


# The syntactic head catalogue: each label against the grammar of its example ----------------


@claim("dd2.head-catalog-labels", at=("DIRECT OBJECT HEADS", '"She gave [him] [the book]"'),
    scope="the catalogue's five entries read from the article at run time: each label, its "
    "example and the two words its arrow links (by the columns of its marks), against our "
    "reading of each example's grammar, written once in tests/claims/example_grammar.py",
    erratum="In 'She gave him the book', 'him' is the indirect object (the recipient) and 'the "
    "book' the direct object (the thing given): the catalogue's direct-object example links "
    "'gave' to 'him'. A direct-object head (Clark et al. 2019's dobj head) links the verb and "
    "'book'.",
    remark="The other four entries fit their labels: 'sleeps' to its subject 'cat', 'the' to "
    "'ball', 'he' to 'John' (its arrow starts between 'John' and 'said'; the reading that fits "
    "is taken), 'itself' to 'cat'. Whether BERT or GPT heads do this is cited "
    "(Clark et al. 2019, Htut et al. 2019). The entry's name joins two kinds: Voita et al.'s "
    "rare-token heads attend to the least frequent tokens of a sentence (in a translation "
    "encoder, not BERT or GPT), which has nothing to do with a reflexive pronoun's subject; "
    "the reflexive example is the article's own illustration.")  # fmt: skip
def test_each_head_label_fits_the_grammar_of_its_example(measure):
    """Each entry of the syntactic head catalogue links two words of its example whose
    grammatical relation is the one its label names (subject and verb, a verb and its direct
    object, a determiner and its noun, a pronoun and its antecedent)."""
    found = entries(source_text(DD2))
    measure("catalogue entries", len(found))
    bad = []
    for e in found:
        roles, wrong = check(e)
        measure(f"{e['label']}: role of the pair the arrow links", ", ".join(roles))
        if wrong:
            bad.append(wrong)
            measure.correct(correction(e))
    assert found and not bad, bad
