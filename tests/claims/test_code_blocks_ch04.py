"""The chapter's code cells, run as printed and compared with the repository's reference.

Each cell is cut from the chapter's text at run time (experiments/printed_code.py) and
run in one namespace, as a notebook runs, with the least glue: the book's helper package
``mlexp``, which the text does not print, is stood in for by this repository's RMSNorm,
SwiGLU, apply_rope, parameter counter and corpus. Training is cut to no updates (the
trained results are the claims of test_ch04_token_mixing.py): each claim compares the
cell's printed output where it does not depend on training, and the cell's definitions
with experiments/modules.py and experiments/recall.py on the same inputs and seeds.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from claimbook import claim, source_text

from experiments import modules
from experiments import recall as reference_recall
from experiments.printed_code import gap, notebook_cells, run_notebook, within
from tests.claims.sources import CH04

STEP1, STEP2 = "Step 1 · Convolution", "Step 2 · Recurrence"
STEP3, STEP4 = "Step 3 · Self-attention", "Step 4 · Cheaper attention: MQA, GQA, FlashAttention"
SETUP = "Run it yourself · the shared model skeleton"
VOCAB = 65  # TinyShakespeare's characters, as the glue's corpus gives them
SPECS = {"convolution": modules.CONV, "LSTM": modules.LSTM, "attention": modules.MHA}
NOTEBOOK = "the chapter's cells run in order as printed, with mlexp stood in for by this "
NOTEBOOK += "repository's modules and training cut to no updates; float32, one thread"


def prompt(n: int) -> str:
    """A cell's anchor: its ``In [n]:`` prompt (the code's lines recur in the flattened copy)."""
    return f"In\u00a0[{n}]:"


@functools.lru_cache(maxsize=2)
def _notebook(text: str):
    """The notebook run once per text; its cells seed torch, which they leave as it was (a
    claim that runs it first must draw the numbers one that finds it cached draws)."""
    with torch.random.fork_rng():
        return run_notebook(text, 11)


def notebook():
    """The chapter's text, its cells, and the notebook run on it (once per text)."""
    text = source_text(CH04)
    namespace, printed = _notebook(text)
    return notebook_cells(text), namespace, printed


def same_weights(book: torch.nn.Module, ref: torch.nn.Module) -> bool:
    one, two = book.state_dict(), ref.state_dict()
    return one.keys() == two.keys() and all(within(gap(one[k], two[k]), 0.0) for k in one)


def before(line: str, marker: str) -> str:
    """The part of a printed line before ``marker`` (the part that training does not change)."""
    return line.split(marker)[0].rstrip()


@claim(
    id="ch04.code-skeleton",
    at=(prompt(1), prompt(2)),
    level="established",
    source=CH04,
    section=SETUP,
    scope=NOTEBOOK + "; vocabulary 65, width 64, 4 blocks, seed 0",
    remark="The setup cell's printed torch version is the chapter's build environment, "
    "not compared.",
)
def test_printed_skeleton_is_the_reference_model(measure):
    """The chapter's model skeleton, run as printed with each of the three mixers, creates
    the same parameters as the repository's model under the same seed and gives the same
    logits, and its loss is the cross-entropy of those logits."""
    _, ns, _ = notebook()
    x, y = torch.randint(VOCAB, (2, 16), generator=torch.Generator().manual_seed(1)).unbind(0)
    x, y = x[None], y[None]
    for name, spec in SPECS.items():
        torch.manual_seed(0)
        book = ns["MixerLM"](VOCAB, spec.build)
        torch.manual_seed(0)
        ref = modules.MixerLM(VOCAB, spec)
        logits, loss = book(x, y)
        ref_logits = ref(x)
        weights = measure(f"{name}: same parameters", same_weights(book, ref), printed=True)
        diff = measure(f"{name}: largest logit difference", gap(logits, ref_logits))
        loss_diff = abs(loss.item() - F.cross_entropy(ref_logits[0], y[0]).item())
        assert weights and within(diff, 1e-6) and loss_diff < 1e-6, name


@claim(
    id="ch04.code-causal-conv",
    at=prompt(3),
    level="established",
    source=CH04,
    section=STEP1,
    scope=NOTEBOOK + "; width 16, 12 positions, kernels 2, 3 and 4",
)
def test_printed_causal_conv_is_the_causal_sum(measure):
    """The chapter's causal convolution, run as printed, computes y_t = sum over j < k of
    W_j x_(t-j) (zeros before the start), as the repository's convolution mixer does."""
    _, ns, _ = notebook()
    x = torch.randn(2, 12, 16, generator=torch.Generator().manual_seed(2))
    for k in (2, 3, 4):
        book = ns["CausalConv"](16, kernel=k)
        ref = modules.CausalConv(16, k)
        ref.load_state_dict(book.state_dict())
        w = book.conv.weight  # (out, in, k): tap m multiplies x at t - (k - 1 - m)
        direct = torch.zeros_like(x)
        for t in range(12):
            for j in range(min(k, t + 1)):
                direct[:, t] += x[:, t - j] @ w[:, :, k - 1 - j].T
        with torch.no_grad():
            out = book(x)
            off_formula = measure(f"kernel {k}: largest gap to the sum", gap(out, direct))
            off_reference = measure(f"kernel {k}: largest gap to the reference", gap(out, ref(x)))
        assert within(off_formula, 1e-5) and within(off_reference, 0.0), k


@claim(
    id="ch04.code-reach-output",
    at=prompt(4),
    level="established",
    source=CH04,
    section=STEP1,
    scope=NOTEBOOK + "; the cell's own seed 0",
)
def test_printed_reach_cell_prints_its_output(measure):
    """The reach experiment, run as printed, prints the four lines the chapter shows."""
    cells, _, printed = notebook()
    shown = cells[4].after[: len(printed[4])]
    for i, line in enumerate(printed[4]):
        measure(f"line {i + 1}", line, printed=shown[i] if i < len(shown) else "")
    assert len(printed[4]) == 4 and printed[4] == shown


@claim(
    id="ch04.code-lstm-mixer",
    at=prompt(5),
    level="established",
    source=CH04,
    section=STEP2,
    scope=NOTEBOOK + "; width 64, 10 positions",
)
def test_printed_lstm_mixer_prints_its_counts(measure):
    """The LSTM mixer cell, run as printed, prints the two parameter counts the chapter shows,
    and its mixer computes what the repository's LSTM mixer computes with the same weights."""
    cells, ns, printed = notebook()
    shown = cells[5].after[: len(printed[5])]
    for i, line in enumerate(printed[5]):
        measure(f"line {i + 1}", line, printed=shown[i] if i < len(shown) else "")
    book, ref = ns["LSTMMixer"](64), modules.LSTMMixer(64)
    try:
        ref.load_state_dict(book.state_dict())
        loaded = True
    except RuntimeError:  # a different width: not the reference's mixer
        loaded = False
    x = torch.randn(2, 10, 64, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        diff = measure(
            "largest gap to the reference",
            gap(book(x), ref(x)) if loaded else "weights differ in shape",
        )
    assert printed[5] == shown and within(diff, 0.0)


@claim(
    id="ch04.code-recall-task",
    at=prompt(6),
    level="established",
    source=CH04,
    section=STEP2,
    scope=NOTEBOOK + "; batches from generators seeded 0, 5 and 99; "
    "20 training steps of the convolution model at seed 0",
    remark="The cell's accuracies need its 1,000 training steps and are the claims "
    "ch04.recall-conv and ch04.recall-lstm; here the printed loop runs 20 steps and is "
    "compared step for step with the repository's.",
)
def test_printed_recall_task_is_the_reference_task(measure):
    """The recall cell, run as printed, draws the same sequences as the repository's recall
    task from the same generator, builds models with the parameter counts the chapter prints,
    and its training loop gives the same model as the repository's after 20 steps."""
    cells, ns, printed = notebook()
    for seed, batch in ((0, 64), (5, 1), (99, 4000)):
        book = ns["recall_batch"](batch, torch.Generator().manual_seed(seed))
        ref = reference_recall.recall_batch(batch, torch.Generator().manual_seed(seed))
        same = all(within(gap(a, b), 0.0) for a, b in zip(book, ref, strict=True))
        assert measure(f"generator {seed}: same sequences as the reference", same, printed=True), (
            seed
        )
    shown = [line for line in cells[6].after if "params" in line]
    counts = [before(line, "mean accuracy") for line in printed[6] if "params" in line]
    for i, line in enumerate(counts):
        measure(f"count line {i + 1}", line, printed=before(shown[i], "mean accuracy"))
    assert counts == [before(line, "mean accuracy") for line in shown]
    _, accuracy = ns["printed_train_recall"](lambda d: ns["CausalConv"](d), steps=20, seed=0)
    cfg = reference_recall.RecallConfig(modules.CONV, steps=20)
    ref = reference_recall.train_recall(cfg, 0)
    diff = measure("largest accuracy gap after 20 steps", abs(accuracy - ref["accuracy"]).max())
    assert diff == 0


@claim(
    id="ch04.code-attention",
    at=prompt(7),
    level="established",
    source=CH04,
    section=STEP3,
    scope=NOTEBOOK + "; width 64, 4 query heads, 4, 2 and 1 key-value heads, 12 positions",
)
def test_printed_attention_is_causal_softmax_attention(measure):
    """The attention cell, run as printed, prints the parameter count the chapter shows, and
    with 4, 2 or 1 key-value heads it computes the causal softmax attention the repository's
    explicit formula gives with the same weights: softmax(QK^T / sqrt(d_h) + M) V."""
    cells, ns, printed = notebook()
    measure("printed line", printed[7][0], printed=cells[7].after[0])
    x = torch.randn(2, 12, 64, generator=torch.Generator().manual_seed(4))
    for n_kv in (4, 2, 1):
        book, ref = ns["Attention"](64, n_heads=4, n_kv_heads=n_kv), modules.Attention(64, 4, n_kv)
        ref.load_state_dict(book.state_dict())
        with torch.no_grad():
            _, v = ref.keys_values(x)
            heads = ref.attention_weights(x) @ v.repeat_interleave(4 // n_kv, dim=1)
            explicit = ref.out(heads.transpose(1, 2).reshape(2, 12, 64))
            diff = measure(f"{n_kv} kv heads: largest gap", gap(book(x), explicit))
        assert within(diff, 1e-5), n_kv
    assert printed[7][0] == cells[7].after[0]


@claim(
    id="ch04.code-attention-recall",
    at=prompt(8),
    level="established",
    source=CH04,
    section=STEP3,
    scope=NOTEBOOK,
    remark="The accuracies need the 1,000 training steps and are the claim "
    "ch04.recall-attention; the cell's parameter count is checked here.",
)
def test_printed_attention_recall_model_size(measure):
    """The attention recall cell, run as printed, builds a model with the parameter count the
    chapter prints, the repository's two-block attention model with the same weights."""
    cells, ns, printed = notebook()
    line = measure(
        "count line",
        before(printed[8][0], "mean accuracy"),
        printed=before(cells[8].after[0], "mean accuracy"),
    )
    torch.manual_seed(0)
    book = ns["MixerLM"](32, lambda d: ns["Attention"](d), dim=64, n_layers=2)
    torch.manual_seed(0)
    ref = modules.MixerLM(32, modules.MHA, 64, 2)
    weights = measure("same parameters as the reference", same_weights(book, ref), printed=True)
    assert line == before(cells[8].after[0], "mean accuracy") and weights


@claim(
    id="ch04.code-heatmap-readout",
    at=prompt(9),
    level="established",
    source=CH04,
    section=STEP3,
    scope=NOTEBOOK + "; the untrained attention model of the cell before",
    remark="Which token each head attends to most needs the trained model (the claim "
    "ch04.induction-heads); the example's query and answer and the recomputation of the "
    "weights are checked here.",
)
def test_printed_heatmap_cell_recomputes_the_weights(measure):
    """The heatmap cell, run as printed, shows the query key and the correct value the chapter
    prints, and its recomputed second-layer weights at the query are the model's own
    attention weights there."""
    cells, ns, printed = notebook()
    shown = before(cells[9].after[0], "most-attended")
    line = measure("example line", before(printed[9][0], "most-attended"), printed=shown)
    book = ns["m"]
    ref = modules.Attention(64, book.n_heads, book.n_kv)
    ref.load_state_dict(book.state_dict())
    with torch.no_grad():
        own = ref.attention_weights(ns["h"])[0, :, -1]
    diff = measure("largest gap to the model's weights", gap(ns["w"], own))
    assert line == shown and within(diff, 1e-5)


@claim(
    id="ch04.code-lm-params",
    at=prompt(10),
    level="established",
    source=CH04,
    section=STEP3,
    scope=NOTEBOOK + "; vocabulary 65",
    remark="The losses and seconds need the 600 training steps (the claims "
    "ch04.shakespeare-*); the printed parameter counts are checked here.",
)
def test_printed_lm_cell_model_sizes(measure):
    """The language-model cell, run as printed, builds the three models with the parameter
    counts the chapter prints, each the repository's model with the same weights."""
    cells, ns, printed = notebook()
    shown = [before(line, "final val loss") for line in cells[10].after[:3]]
    counts = [before(line, "final val loss") for line in printed[10]]
    for i, line in enumerate(counts):
        measure(f"count line {i + 1}", line, printed=shown[i] if i < len(shown) else "")
    for (name, make), spec in zip(ns["mixers"].items(), SPECS.values(), strict=False):
        torch.manual_seed(0)
        book = ns["MixerLM"](VOCAB, make)
        torch.manual_seed(0)
        assert measure(
            f"{name}: same parameters",
            same_weights(book, modules.MixerLM(VOCAB, spec)),
            printed=True,
        ), name
    assert counts == shown


@claim(
    id="ch04.code-kv-table",
    at=prompt(11),
    level="established",
    source=CH04,
    section=STEP4,
    scope=NOTEBOOK + "; the cache of the repository's attention layers measured in 16-bit numbers",
    remark="The validation-loss column needs the 600 training steps (the claims "
    "ch04.gqa-* and ch04.mqa-*); every other printed column and line is checked.",
)
def test_printed_kv_cell_prints_its_table(measure):
    """The KV-cache cell, run as printed, prints the table's variants, key-value heads and
    cache bytes per token and the three 70B-scale lines the chapter shows; the bytes per
    token are what the repository's attention layers actually store in 16-bit numbers."""
    cells, ns, printed = notebook()
    shown = cells[11].after[: len(printed[11])]
    cut = [line.rsplit(" ", 1)[0] if i in (1, 2, 3) else line for i, line in enumerate(printed[11])]
    want = [line.rsplit(" ", 1)[0] if i in (1, 2, 3) else line for i, line in enumerate(shown)]
    for i, line in enumerate(cut):
        measure(f"line {i + 1}", line, printed=want[i] if i < len(want) else "")
    x = torch.randn(1, 8, 64)
    for n_kv in (4, 2, 1):
        layers = [modules.Attention(64, 4, n_kv).half() for _ in range(4)]
        stored = sum(t.numel() * t.element_size() for a in layers for t in a.keys_values(x.half()))
        per_token = measure(f"{n_kv} kv heads: bytes per token", stored // 8)
        assert per_token == ns["kv_bytes_per_token"](4, n_kv, 16), n_kv
    assert cut == want
