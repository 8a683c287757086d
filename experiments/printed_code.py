"""The sources' code blocks, cut from their text at run time, and the least glue to run them.

The chapter (ch04) is a notebook exported as text: each cell follows an ``In [N]:`` prompt,
printed line by line and then once more flattened onto one line (a copy button's text),
and its printed output follows. :func:`notebook_cells` keeps the line-by-line copy.
The chapter's cells import ``mlexp``, the book's helper package, which the text does not
print: :func:`mlexp_glue` supplies the names they use, from this repository's modules.

The article's blocks are cut out by experiments/article_code.py; :func:`gap` and
:func:`within` compare a block's result with its reference for both.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import types
import warnings
from dataclasses import dataclass

import torch

from experiments import modules
from experiments.data import get_batch, shakespeare
from experiments.lm import lr_at

PROMPT = re.compile(r"^In\s\[(\d+)\]:\s*$")  # the export puts a no-break space after "In"
_SPACE = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class Cell:
    """One notebook cell: its number, its code as printed, and the lines printed after it."""

    number: int
    code: str
    after: list[str]  # the non-blank lines after the flattened copy, up to the next cell


def notebook_cells(text: str) -> dict[int, Cell]:
    """The chapter's cells by number. A cell's code ends where its flattened copy starts.

    Raises ValueError for a cell whose flattened copy is missing (the text is malformed).
    """
    lines, cells = text.splitlines(), {}
    starts = [(i, int(m.group(1))) for i, line in enumerate(lines) if (m := PROMPT.match(line))]
    for k, (i, number) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
        body, j = [], i + 1
        while j < end:
            line = lines[j]
            if (
                line.strip()
                and any(b.strip() for b in body)
                and _flat(line) == _flat(" ".join(body))
            ):
                break
            body.append(line)
            j += 1
        else:
            raise ValueError(f"cell In [{number}] has no flattened copy: its end is not found")
        after = [line for line in lines[j + 1 : end] if line.strip()]
        cells[number] = Cell(number, "\n".join(body).strip("\n"), after)
    return cells


def run_code(code: str, namespace: dict, after=None) -> list[str]:
    """Execute ``code`` in ``namespace`` one top-level statement at a time and return the
    lines it printed; ``after(namespace)`` runs after each statement."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for node in ast.parse(code).body:
            exec(compile(ast.Module([node], []), "<printed code>", "exec"), namespace)
            if after is not None:
                after(namespace)
    return out.getvalue().splitlines()


# ---- the chapter's glue: the names its cells import from mlexp --------------------------


@dataclass(frozen=True)
class _Tokenizer:
    vocab_size: int


def _load_char_corpus():
    corpus = shakespeare()
    return _Tokenizer(corpus.vocab_size), corpus.train, corpus.val


def _train_lm(model, train_ids, val_ids, steps, block_size, eval_every, log=False, budget=0):
    """The book's trainer is not printed: this one runs the repository's recipe (AdamW,
    warm-up and cosine, clipping) for ``min(steps, budget)`` updates, then evaluates."""
    gen = torch.Generator().manual_seed(0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    for step in range(min(steps, budget)):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, steps, 3e-3)
        x, y = get_batch(train_ids, 32, block_size, gen)
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    with torch.no_grad():
        x, y = get_batch(val_ids, 32, block_size, gen)
        return {"val": [model(x, y)[1].item()]}


def mlexp_glue(budget: int = 0) -> dict[str, types.ModuleType]:
    """Stand-ins for ``mlexp`` and ``mlexp.transformer``: RMSNorm, SwiGLU and apply_rope
    from experiments/modules.py, a parameter counter, the corpus, and a trainer limited to
    ``budget`` updates; style and plots are no-ops (matplotlib's Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    transformer = types.ModuleType("mlexp.transformer")
    transformer.RMSNorm, transformer.SwiGLU = modules.RMSNorm, modules.SwiGLU
    transformer.apply_rope = modules.apply_rope
    mlexp = types.ModuleType("mlexp")
    mlexp.transformer = transformer
    mlexp.setup_style = lambda: None
    mlexp.count_params = modules.count_params
    mlexp.load_char_corpus = _load_char_corpus
    mlexp.train_lm = lambda *a, **k: _train_lm(*a, **k, budget=budget)
    mlexp.plot_histories = lambda histories, title: plt.subplots()[1]
    return {"mlexp": mlexp, "mlexp.transformer": transformer}


@contextlib.contextmanager
def glued(extra: dict[str, types.ModuleType]):
    """``extra`` importable while the block runs; sys.modules is restored after."""
    saved = {name: sys.modules.get(name) for name in extra}
    sys.modules.update(extra)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def run_notebook(text: str, upto: int, budget: int = 0) -> tuple[dict, dict[int, list[str]]]:
    """Run the chapter's cells 1..upto in one namespace, as a notebook does, with the
    training cells' step counts cut to ``budget``. Returns the namespace and each cell's
    printed lines."""
    import matplotlib.pyplot as plt

    cells, namespace, printed = notebook_cells(text), {"__name__": "__notebook__"}, {}

    def cut_training(ns):
        if "train_recall" in ns and not hasattr(ns["train_recall"], "cut"):
            ns["printed_train_recall"] = ns["train_recall"]
            ns["train_recall"] = _cut(ns["train_recall"], budget)

    with glued(mlexp_glue(budget)), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # matplotlib reading torch tensors
        for number in range(1, upto + 1):
            printed[number] = run_code(cells[number].code, namespace, after=cut_training)
            plt.close("all")
    return namespace, printed


def _cut(train_recall, budget: int):
    def cut(make_mixer, steps=1000, seed=0):
        return train_recall(make_mixer, steps=min(steps, budget), seed=seed)

    cut.cut = True
    return cut


def gap(a: torch.Tensor, b: torch.Tensor) -> float | str:
    """Largest absolute difference of two tensors, or why there is none (a word to record)."""
    if a.shape != b.shape:
        return f"shapes differ: {list(a.shape)} against {list(b.shape)}"
    worst = (a - b).abs().max().item()
    return worst if worst == worst and worst != float("inf") else "not finite"


def within(value: float | str, tolerance: float) -> bool:
    """Whether a :func:`gap` is a number no larger than ``tolerance``."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value <= tolerance
