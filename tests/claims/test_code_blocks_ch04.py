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
import re

import torch
import torch.nn.functional as F
from claimbook import claim, source_text

from experiments import modules
from experiments import recall as reference_recall
from experiments.printed_code import gap, notebook_cells, run_notebook, within
from tests.claims.sources import CH04

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


def seeded(make, *args, **kwargs):
    """``make(*args, **kwargs)`` right after ``torch.manual_seed(0)``: a model built by the
    book's code and one built by the repository's draw the same initial numbers."""
    torch.manual_seed(0)
    return make(*args, **kwargs)


def measure_lines(measure, label: str, ours: list[str], shown: list[str]) -> None:
    """Record each line the cell printed here (``label 1``, ``label 2``, ...) beside the line
    the chapter prints at its place ("" past the chapter's last)."""
    for i, line in enumerate(ours):
        measure(f"{label} {i + 1}", line, printed=shown[i] if i < len(shown) else "")


def skeleton_against_reference(ns: dict, spec) -> tuple[bool, float, float]:
    """The book's MixerLM with ``spec``'s mixer against the repository's, both built at seed
    0, on 16 tokens and their targets from generator 1: whether they hold the same
    parameters, the largest logit gap, and the gap between the book's loss and the
    cross-entropy of the reference's logits."""
    x, y = torch.randint(VOCAB, (2, 16), generator=torch.Generator().manual_seed(1)).unbind(0)
    x, y = x[None], y[None]
    book, ref = seeded(ns["MixerLM"], VOCAB, spec.build), seeded(modules.MixerLM, VOCAB, spec)
    logits, loss = book(x, y)
    ref_logits = ref(x)
    loss_gap = abs(loss.item() - F.cross_entropy(ref_logits[0], y[0]).item())
    return same_weights(book, ref), gap(logits, ref_logits), loss_gap


def causal_sum(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """y_t = sum over j < k of W_j x_(t-j), zeros before the start, from a Conv1d weight
    (out, in, k) whose tap m multiplies x at t - (k - 1 - m)."""
    k, direct = w.shape[-1], torch.zeros_like(x)
    for t in range(x.shape[1]):
        for j in range(min(k, t + 1)):
            direct[:, t] += x[:, t - j] @ w[:, :, k - 1 - j].T
    return direct


def conv_gaps(make, k: int) -> tuple[float, float]:
    """The book's causal convolution of width 16 and kernel ``k`` on 2 x 12 random vectors
    (generator 2): its largest gap to the causal sum and to the repository's CausalConv
    with the same weights."""
    x = torch.randn(2, 12, 16, generator=torch.Generator().manual_seed(2))
    book, ref = make(16, kernel=k), modules.CausalConv(16, k)
    ref.load_state_dict(book.state_dict())
    direct = causal_sum(x, book.conv.weight)
    with torch.no_grad():
        out = book(x)
        return gap(out, direct), gap(out, ref(x))


def lstm_mixer_gap(make):
    """The book's LSTM mixer of width 64 against the repository's with the same weights on
    2 x 10 random vectors (generator 3): the largest gap, or a note when the weights cannot
    be loaded (a different width: not the reference's mixer)."""
    book, ref = make(64), modules.LSTMMixer(64)
    try:
        ref.load_state_dict(book.state_dict())
    except RuntimeError:
        return "weights differ in shape"
    x = torch.randn(2, 10, 64, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        return gap(book(x), ref(x))


def same_recall_batches(ns: dict, batch: int, seed: int) -> bool:
    """Whether the book's recall_batch and the repository's draw the same tensors from a
    generator seeded ``seed``."""
    book = ns["recall_batch"](batch, torch.Generator().manual_seed(seed))
    ref = reference_recall.recall_batch(batch, torch.Generator().manual_seed(seed))
    return all(within(gap(a, b), 0.0) for a, b in zip(book, ref, strict=True))


def count_lines(lines: list[str]) -> list[str]:
    """The recall cell's parameter-count lines, cut before their (trained) accuracy."""
    return [before(line, "mean accuracy") for line in lines if "params" in line]


def recall_training_gap(ns: dict):
    """The largest accuracy gap between the book's printed training loop and the
    repository's, both 20 steps of the convolution model at seed 0."""
    _, accuracy = ns["printed_train_recall"](lambda d: ns["CausalConv"](d), steps=20, seed=0)
    ref = reference_recall.train_recall(reference_recall.RecallConfig(modules.CONV, steps=20), 0)
    return abs(accuracy - ref["accuracy"]).max()


def attention_gap(make, n_kv: int) -> float:
    """The book's attention (width 64, 4 query heads, ``n_kv`` key-value heads) on 2 x 12
    random vectors (generator 4) against the explicit formula softmax(QK^T / sqrt(d_h) + M) V
    that the repository's Attention computes with the same weights: the largest gap."""
    x = torch.randn(2, 12, 64, generator=torch.Generator().manual_seed(4))
    book, ref = make(64, n_heads=4, n_kv_heads=n_kv), modules.Attention(64, 4, n_kv)
    ref.load_state_dict(book.state_dict())
    with torch.no_grad():
        _, v = ref.keys_values(x)
        heads = ref.attention_weights(x) @ v.repeat_interleave(4 // n_kv, dim=1)
        explicit = ref.out(heads.transpose(1, 2).reshape(2, 12, 64))
        return gap(book(x), explicit)


def reference_weights(book, h: torch.Tensor) -> torch.Tensor:
    """The attention weights of the repository's Attention, loaded with ``book``'s weights,
    from every head at the last query of ``h``."""
    ref = modules.Attention(64, book.n_heads, book.n_kv)
    ref.load_state_dict(book.state_dict())
    with torch.no_grad():
        return ref.attention_weights(h)[0, :, -1]


def without_loss_column(lines: list[str]) -> list[str]:
    """The KV-cache printout with the table rows (lines 2 to 4) cut before their last column,
    the validation loss, which needs training."""
    return [line.rsplit(" ", 1)[0] if i in (1, 2, 3) else line for i, line in enumerate(lines)]


def cache_bytes_per_token(n_kv: int, x: torch.Tensor) -> int:
    """Bytes the keys and values of 4 of the repository's attention layers (width 64, 4 query
    heads, ``n_kv`` key-value heads) hold per token in 16-bit numbers, on the tokens of ``x``."""
    layers = [modules.Attention(64, 4, n_kv).half() for _ in range(4)]
    stored = sum(t.numel() * t.element_size() for a in layers for t in a.keys_values(x.half()))
    return stored // x.shape[1]


@claim("ch04.code-skeleton", "established", at=(prompt(1), prompt(2)),
       scope=NOTEBOOK + "; vocabulary 65, width 64, 4 blocks, seed 0",
       remark="The setup cell's printed torch version is the chapter's build environment, "
       "not compared.")  # fmt: skip
def test_printed_skeleton_is_the_reference_model(measure):
    """The chapter's model skeleton, run as printed with each of the three mixers, creates
    the same parameters as the repository's model under the same seed and gives the same
    logits, and its loss is the cross-entropy of those logits."""
    _, ns, _ = notebook()
    for name, spec in SPECS.items():
        same, logit_gap, loss_gap = skeleton_against_reference(ns, spec)
        weights = measure(f"{name}: same parameters", same, printed=True)
        diff = measure(f"{name}: largest logit difference", logit_gap)
        assert weights and within(diff, 1e-6) and loss_gap < 1e-6, name


@claim("ch04.code-causal-conv", "established", at=prompt(3),
       scope=NOTEBOOK + "; width 16, 12 positions, kernels 2, 3 and 4")  # fmt: skip
def test_printed_causal_conv_is_the_causal_sum(measure):
    """The chapter's causal convolution, run as printed, computes y_t = sum over j < k of
    W_j x_(t-j) (zeros before the start), as the repository's convolution mixer does."""
    _, ns, _ = notebook()
    for k in (2, 3, 4):
        to_sum, to_reference = conv_gaps(ns["CausalConv"], k)
        off_formula = measure(f"kernel {k}: largest gap to the sum", to_sum)
        off_reference = measure(f"kernel {k}: largest gap to the reference", to_reference)
        assert within(off_formula, 1e-5) and within(off_reference, 0.0), k


@claim("ch04.code-reach-output", "established", at=prompt(4),
       scope=NOTEBOOK + "; the cell's own seed 0")  # fmt: skip
def test_printed_reach_cell_prints_its_output(measure):
    """The reach experiment, run as printed, prints the four lines the chapter shows."""
    cells, _, printed = notebook()
    shown = cells[4].after[: len(printed[4])]
    measure_lines(measure, "line", printed[4], shown)
    assert len(printed[4]) == 4 and printed[4] == shown


@claim("ch04.code-lstm-mixer", "established", at=prompt(5),
       scope=NOTEBOOK + "; width 64, 10 positions")  # fmt: skip
def test_printed_lstm_mixer_prints_its_counts(measure):
    """The LSTM mixer cell, run as printed, prints the two parameter counts the chapter shows,
    and its mixer computes what the repository's LSTM mixer computes with the same weights."""
    cells, ns, printed = notebook()
    shown = cells[5].after[: len(printed[5])]
    measure_lines(measure, "line", printed[5], shown)
    diff = measure("largest gap to the reference", lstm_mixer_gap(ns["LSTMMixer"]))
    assert printed[5] == shown and within(diff, 0.0)


@claim("ch04.code-recall-task", "established", at=prompt(6),
       scope=NOTEBOOK + "; batches from generators seeded 0, 5 and 99; "
       "20 training steps of the convolution model at seed 0",
       remark="The cell's accuracies need its 1,000 training steps and are the claims "
       "ch04.recall-conv and ch04.recall-lstm-flat; here the printed loop runs 20 steps and is "
       "compared step for step with the repository's.")  # fmt: skip
def test_printed_recall_task_is_the_reference_task(measure):
    """The recall cell, run as printed, draws the same sequences as the repository's recall
    task from the same generator, builds models with the parameter counts the chapter prints,
    and its training loop gives the same model as the repository's after 20 steps."""
    cells, ns, printed = notebook()
    for seed, batch in ((0, 64), (5, 1), (99, 4000)):
        name = f"generator {seed}: same sequences as the reference"
        assert measure(name, same_recall_batches(ns, batch, seed), printed=True), seed
    shown, counts = count_lines(cells[6].after), count_lines(printed[6])
    for i, line in enumerate(counts):
        measure(f"count line {i + 1}", line, printed=shown[i])
    assert counts == shown
    assert measure("largest accuracy gap after 20 steps", recall_training_gap(ns)) == 0


@claim("ch04.code-attention", "established", at=prompt(7),
       scope=NOTEBOOK + "; width 64, 4 query heads, 4, 2 and 1 key-value heads, "
       "12 positions")  # fmt: skip
def test_printed_attention_is_causal_softmax_attention(measure):
    """The attention cell, run as printed, prints the parameter count the chapter shows, and
    with 4, 2 or 1 key-value heads it computes the causal softmax attention the repository's
    explicit formula gives with the same weights: softmax(QK^T / sqrt(d_h) + M) V."""
    cells, ns, printed = notebook()
    measure("printed line", printed[7][0], printed=cells[7].after[0])
    for n_kv in (4, 2, 1):
        diff = measure(f"{n_kv} kv heads: largest gap", attention_gap(ns["Attention"], n_kv))
        assert within(diff, 1e-5), n_kv
    assert printed[7][0] == cells[7].after[0]


@claim("ch04.code-attention-recall", "established", at=prompt(8), scope=NOTEBOOK,
       remark="The accuracies need the 1,000 training steps and are the claim "
       "ch04.recall-attention; the cell's parameter count is checked here.")  # fmt: skip
def test_printed_attention_recall_model_size(measure):
    """The attention recall cell, run as printed, builds a model with the parameter count the
    chapter prints, the repository's two-block attention model with the same weights."""
    cells, ns, printed = notebook()
    shown = before(cells[8].after[0], "mean accuracy")
    line = measure("count line", before(printed[8][0], "mean accuracy"), printed=shown)
    book = seeded(ns["MixerLM"], 32, lambda d: ns["Attention"](d), dim=64, n_layers=2)
    ref = seeded(modules.MixerLM, 32, modules.MHA, 64, 2)
    weights = measure("same parameters as the reference", same_weights(book, ref), printed=True)
    assert line == shown and weights


@claim("ch04.code-heatmap-readout", "established", at=prompt(9),
       scope=NOTEBOOK + "; the untrained attention model of the cell before",
       remark="Which token each head attends to most needs the trained model (the claim "
       "ch04.induction-circuit); the example's query and answer and the recomputation of the "
       "weights are checked here.")  # fmt: skip
def test_printed_heatmap_cell_recomputes_the_weights(measure):
    """The heatmap cell, run as printed, shows the query key and the correct value the chapter
    prints, and its recomputed second-layer weights at the query are the model's own
    attention weights there."""
    cells, ns, printed = notebook()
    shown = before(cells[9].after[0], "most-attended")
    line = measure("example line", before(printed[9][0], "most-attended"), printed=shown)
    own = reference_weights(ns["m"], ns["h"])
    diff = measure("largest gap to the model's weights", gap(ns["w"], own))
    assert line == shown and within(diff, 1e-5)


@claim("ch04.code-lm-params", "established", at=prompt(10), scope=NOTEBOOK + "; vocabulary 65",
       remark="The losses and seconds need the 600 training steps (the claims "
       "ch04.shakespeare-*); the printed parameter counts are checked here.")  # fmt: skip
def test_printed_lm_cell_model_sizes(measure):
    """The language-model cell, run as printed, builds the three models with the parameter
    counts the chapter prints, each the repository's model with the same weights."""
    cells, ns, printed = notebook()
    shown = [before(line, "final val loss") for line in cells[10].after[:3]]
    counts = [before(line, "final val loss") for line in printed[10]]
    measure_lines(measure, "count line", counts, shown)
    for (name, make), spec in zip(ns["mixers"].items(), SPECS.values(), strict=False):
        book, ref = seeded(ns["MixerLM"], VOCAB, make), seeded(modules.MixerLM, VOCAB, spec)
        assert measure(f"{name}: same parameters", same_weights(book, ref), printed=True), name
    assert counts == shown


@claim("ch04.code-kv-table", "established", at=prompt(11),
       scope=NOTEBOOK + "; the cache of the repository's attention layers measured in 16-bit "
       "numbers",
       remark="The validation-loss column needs the 600 training steps (the claims "
       "ch04.gqa-* and ch04.mqa-*); every other printed column and line is checked.")  # fmt: skip
def test_printed_kv_cell_prints_its_table(measure):
    """The KV-cache cell, run as printed, prints the table's variants, key-value heads and
    cache bytes per token and the three 70B-scale lines the chapter shows; the bytes per
    token are what the repository's attention layers actually store in 16-bit numbers."""
    cells, ns, printed = notebook()
    cut = without_loss_column(printed[11])
    want = without_loss_column(cells[11].after[: len(printed[11])])
    measure_lines(measure, "line", cut, want)
    x = torch.randn(1, 8, 64)
    for n_kv in (4, 2, 1):
        per_token = measure(f"{n_kv} kv heads: bytes per token", cache_bytes_per_token(n_kv, x))
        assert per_token == ns["kv_bytes_per_token"](4, n_kv, 16), n_kv
    assert cut == want


def caption_count(text: str) -> int:
    """How many tokens the heatmap's caption says each head's weights are over."""
    return int(re.search(r"each head's weights over the (\d+) earlier tokens", text)[1])


@claim("ch04.heatmap-caption-positions", "established",
       at="each head's weights over the 20 earlier tokens",
       printed={"positions the weights cover": "20 earlier tokens"},
       scope=NOTEBOOK + "; the heatmap cell's weights and ticks (shapes and the query's own "
       "share do not need the trained model)",
       erratum="the query's attention is causal with the diagonal (is_causal=True; the chapter: "
       "'the query compares itself with every earlier position'), so its weights are a softmax "
       "over 21 positions, the 20 earlier tokens and the query itself, and the heatmap plots 21 "
       "columns (xticks range(T), T = 21, the last labelled ?k9); read as 'the weights on the "
       "earlier tokens', the caption still leaves out a plotted column that holds weight",
       error="heatmap-caption-counts-20-of-21")  # fmt: skip
def test_heatmap_caption_counts_the_plotted_positions(measure):
    """The heatmap's caption counts the positions each head's weights are over: the softmax of
    the query's weights, and the heatmap's columns, span the number of tokens it names."""
    _, ns, _ = notebook()
    text = source_text(CH04)
    said = caption_count(text)
    columns = measure("positions the weights cover", ns["w"].shape[-1], printed=f"{said}")
    measure("heatmap columns (ticks)", ns["T"])
    own = measure("smallest weight a head puts on the query itself", ns["w"][:, -1].min().item())
    measure.correct(
        f"each head's weights over all {columns} positions the query sees: the {columns - 1} "
        "earlier tokens and the query itself (the last column)"
    )
    assert own > 0 and ns["T"] == columns
    assert columns == said, f"the caption counts {said}, the weights cover {columns}"
