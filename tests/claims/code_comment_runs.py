"""Both texts' code blocks run with every statement's values recorded, and each comment judged.

Python (the chapter's cells, the article's layer) runs under a line tracer that records, for
the first few executions of each statement, the names before and after it; pseudocode runs
statement by statement (experiments/article_code.py's spelling) with the same records. Each
comment (tests/claims/code_comments.py) is then judged by every reader it matches
(tests/claims/code_comment_readers.py). Training is cut to one update per run (the loss line
runs once); no claim here needs a trained model.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import re
import sys
import warnings
from collections import defaultdict
from dataclasses import dataclass

import torch

from experiments.article_code import causal, lines_between, python_block, translate, unbox
from experiments.modules import apply_rope
from experiments.printed_code import glued, mlexp_glue, notebook_cells
from tests.claims import code_comments as cc
from tests.claims.code_comment_readers import ABSENT, READERS, SKIP, WHOLE, Reading

CAP = 8  # executions recorded per statement


class Tracer:
    """sys.settrace over the code compiled under the block names of ``nodes`` (name: the
    statements of its code): a :class:`Step` per execution of a statement, and per call of
    a function defined there (key ``(block, def line, "call")``)."""

    def __init__(self, nodes: dict[str, list[ast.stmt]]):
        self.owner = {f: cc.owners(ns) for f, ns in nodes.items()}
        self.node = {f: {n.lineno: n for n in ns} for f, ns in nodes.items()}
        self.steps, self.inits, self.open, self.args = defaultdict(list), {}, {}, {}

    def __enter__(self):
        self.old = sys.gettrace()
        sys.settrace(self.call)
        return self

    def __exit__(self, *exc):
        sys.settrace(self.old)

    def call(self, frame, event, arg):
        f, name = frame.f_code.co_filename, frame.f_code.co_name
        if f not in self.owner or (name.startswith("<") and name != "<module>"):
            return None
        self.args[frame] = args = dict(frame.f_locals)
        key, line = (f, frame.f_code.co_firstlineno, "call"), frame.f_code.co_firstlineno
        if name != "<module>" and len(self.steps[key]) < CAP and line in self.node[f]:
            step = cc.Step(self.node[f][line], args, args, frame.f_globals, self.inits, args)
            self.steps[key].append(step)
        return self.local

    def local(self, frame, event, arg):
        if event not in ("line", "return"):
            return self.local
        f = frame.f_code.co_filename
        key = self.owner[f].get(frame.f_lineno) if event == "line" else None
        last = self.open.get(frame)
        if last and last[0] == key:
            return self.local
        if last and last[1] is not None:
            after = {**frame.f_locals, **({"<return>": arg} if event == "return" else {})}
            node = self.node[f][last[0]]
            args = self.args.get(frame, {})
            self.steps[(f, last[0])].append(
                cc.Step(node, last[1], after, frame.f_globals, self.inits, args)
            )
        if event == "return":
            self.open.pop(frame, None)
            args = self.args.pop(frame, {})
            if frame.f_code.co_name == "__init__" and "self" in args:
                self.inits[id(args["self"])] = {**frame.f_locals}  # holds self: no id reuse
        else:
            full = key is None or len(self.steps[(f, key)]) >= CAP
            self.open[frame] = (key, None if full else dict(frame.f_locals))
        return self.local


@dataclass
class Block:
    """A block as it runs: its name, its lines, the text line of its line 1, its comments."""

    name: str
    lines: list[str]
    first: int
    comments: list[cc.Comment]


def python_unit(name: str, code: str, first: int) -> tuple[Block, list[ast.stmt]]:
    nodes = cc.stmt_nodes(ast.parse(code))
    lines = code.splitlines()
    found = cc.python_comments(code)
    return Block(name, lines, first, cc.associate(name, lines, found, nodes, first)), nodes


def pseudo_unit(name, lines, first, names=None, after=None):
    """A pseudocode block: its statements (the lines that are Python assignments once
    spelled as Python, ``Concat(a_1, ..., a_8)`` as eight copies of the one head ``a_h``),
    run in order on ``names`` when given; ``after(node, scope)`` runs after each."""
    nodes, steps, scope = [], defaultdict(list), dict(names or {})
    for n, raw in enumerate(lines, 1):
        code = translate(re.sub(r"^\s*\d+\.\s[^:=]*:\s+", "", raw.split("#")[0])).strip()
        code = re.sub(r"(\w+)_1, \.\.\., \1_(\d+)", r"*[\1_h] * \2", code)
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        if not tree.body or not isinstance(tree.body[0], ast.Assign | ast.AugAssign):
            continue
        ast.increment_lineno(tree, n - 1)
        nodes.append(tree.body[0])
        if names is not None:
            before = dict(scope)
            exec(code, scope)
            if after:
                after(tree.body[0], scope)
            steps[(name, n)].append(cc.Step(tree.body[0], before, dict(scope), scope, {}))
    found = cc.pseudo_comments(lines)
    block = Block(name, lines, first, cc.associate(name, lines, found, nodes, first, pseudo=True))
    return block, steps


# ---- the chapter --------------------------------------------------------------------------


def ch04_blocks(text: str) -> tuple[list[Block], dict, int]:
    """The chapter's cells run in order as a notebook (mlexp stood in for, one training
    update per run): their blocks, the recorded steps, and the comment lines outside them."""
    import matplotlib.pyplot as plt

    cells, lines = notebook_cells(text), text.splitlines()
    units, nodes = [], {}
    for n, c in cells.items():
        start = cc.line_of(text, f"In\u00a0[{n}]:")
        first = next(i for i in range(start, len(lines)) if lines[i] == c.code.splitlines()[0]) + 1
        block, nodes[f"<ch04 cell {n}>"] = python_unit(f"<ch04 cell {n}>", c.code, first)
        units.append(block)
    ns = {"__name__": "__notebook__"}
    quiet = contextlib.redirect_stdout(io.StringIO())
    with (
        cc.kept_state(),
        glued(mlexp_glue(1)),
        torch.random.fork_rng(),
        warnings.catch_warnings(),
        quiet,
    ):
        warnings.simplefilter("ignore")
        with Tracer(nodes) as tracer:
            for n, c in cells.items():
                for node in ast.parse(c.code).body:
                    exec(compile(ast.Module([node], []), f"<ch04 cell {n}>", "exec"), ns)
                    _one_update(ns)
                plt.close("all")
    inside = {b.first + i for b in units for i in range(len(b.lines))}
    copies = {
        i for i, ln in enumerate(lines, 1) for c in cells.values() if cc.flat(ln) == cc.flat(c.code)
    }
    outside = [i for i, ln in enumerate(lines, 1) if "#" in ln and i not in inside | copies]
    return units, tracer.steps, len(outside)


def _one_update(ns: dict) -> None:
    train = ns.get("train_recall")
    if train is not None and not hasattr(train, "one_update"):
        ns["train_recall"] = lambda make, steps=1000, seed=0: train(make, steps=1, seed=seed)
        ns["train_recall"].one_update = True


# ---- the article --------------------------------------------------------------------------


def trace_names() -> dict:
    """The Part 7 trace's undefined names for one head: 3 tokens of width 512, a head of 64
    (generator 0), a LayerNorm, a Linear-GELU-Linear MLP, RoPE, the causal mask."""
    g = torch.Generator().manual_seed(0)
    w = {k: torch.randn(512, 64, generator=g) / 512**0.5 for k in ("Q", "K", "V")}
    return {"X": torch.randn(3, 512, generator=g), "W_Q_h": w["Q"], "W_K_h": w["K"],
            "W_V_h": w["V"], "W_O": torch.randn(512, 512, generator=g) / 512**0.5,
            "LayerNorm": torch.nn.LayerNorm(512), "softmax": torch.softmax, "sqrt": math.sqrt,
            "MLP": torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                       torch.nn.Linear(2048, 512)),
            "positions": torch.arange(3), "apply_rope": lambda t, positions: apply_rope(t),
            "causal_mask": causal(3), "Concat": lambda *heads: torch.cat(heads, -1)}  # fmt: skip


def mlp_names(silu_line: str) -> dict:
    """The MLP box's names: width 64 and hidden 256 (the box's [d, 4d]), 10 vectors
    (generator 5), GPT-2's tanh GELU and the box's own SiLU line."""
    from tests.claims.test_code_blocks_dd2 import printed_silu

    g = torch.Generator().manual_seed(5)
    shapes = {"x": (10, 64), "W_fc1": (64, 256), "W_fc2": (256, 64), "W_gate": (64, 256),
              "W_up": (64, 256), "W_down": (256, 64)}  # fmt: skip
    return {
        **printed_silu(silu_line),
        **{k: torch.randn(*s, generator=g) for k, s in shapes.items()},
    }


def dd2_blocks(text: str) -> tuple[list[Block], dict, int]:
    """The article's blocks run on their glue: the Part 7 trace, the GPT-2 shape trace, the
    Python layer and its usage example, the MLP box; the Flash loop's comments are read
    (the block is not run here: a checkable comment in it is left unchecked, and fails)."""
    from tests.claims.test_code_blocks_dd2 import shape_trace_glue

    units, steps = [], defaultdict(list)

    def add(block, found):
        units.append(block)
        steps.update(found)

    lines = lines_between(text, "X_norm = LayerNorm(X)", "X = X + mlp_output")
    with torch.no_grad():
        add(*pseudo_unit("Part 7 trace", lines, cc.line_of(text, lines[0]), trace_names()))
        box = unbox(lines_between(text, "INPUT: X [batch=1, seq=512", "OUTPUT: X [1, 512, 768]"))
        _, names = shape_trace_glue(torch.Generator().manual_seed(1))
        add(
            *pseudo_unit(
                "GPT-2 shape trace", box, cc.line_of(text, "INPUT: X [batch=1"), names, _kv
            )
        )
        box = unbox(lines_between(text, "hidden = x @ W_fc1", "SiLU(x) = x * sigmoid(x)"))
        add(
            *pseudo_unit("MLP box", box, cc.line_of(text, "hidden = x @ W_fc1"), mlp_names(box[-1]))
        )
    flash = unbox(
        lines_between(text, "for q_block in Q_blocks:", "O_block = O_block / running_sum")
    )
    add(*pseudo_unit("Flash loop", flash, cc.line_of(text, "for q_block in Q_blocks:")))
    code = python_block(text)
    block, nodes = python_unit("Python layer", code, cc.line_of(text, "import torch"))
    scope = {"__name__": "__article__"}
    with cc.kept_state(), torch.random.fork_rng(), Tracer({"Python layer": nodes}) as tracer:
        torch.manual_seed(0)
        exec(compile(code, "Python layer", "exec"), scope)
    add(block, tracer.steps)
    inside = {b.first + i for b in units for i in range(len(b.lines))}
    outside = [i for i, ln in enumerate(text.splitlines(), 1) if "#" in ln and i not in inside]
    return units, steps, len(outside)


def _kv(node, scope):
    """The trace's prose line 'K, V same reshape': K_all and V_all reshaped as Q was."""
    if cc.target_names(node) == ["Q"]:
        for n in "KV":
            scope[n] = scope[f"{n}_all"].reshape(1, 512, 12, 64).transpose(1, 2)


# ---- judging --------------------------------------------------------------------------------


@dataclass
class Verdict:
    comment: cc.Comment
    kind: str
    status: str  # holds, reading, wrong, not run
    detail: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}: {self.comment.text}"


def judge(blocks: list[Block], steps: dict) -> tuple[list[Verdict], list[cc.Comment]]:
    """Every checkable statement of every comment with its verdict over the recorded
    executions, and the comments no reader recognises (descriptive)."""
    by_block = defaultdict(list)
    for key, found in steps.items():
        by_block[key[0]] += found
    verdicts, descriptive = [], []
    for block in blocks:
        for c in block.comments:
            hits = [(kind, m) for kind, (find, _) in READERS.items() for m in find(c.text)]
            if not hits:
                descriptive.append(c)
            for kind, m in hits:
                verdicts.append(_verdict(c, kind, m, steps, by_block[block.name]))
    return verdicts, descriptive


def _verdict(c, kind, m, steps, run) -> Verdict:
    keys = [(c.block, s, "call") if c.call else (c.block, s) for s in c.stmts]
    mine = [s for k in keys for s in steps.get(k, [])]
    names = [
        [a for a in s.args if a != "self"] if c.call else cc.target_names(s.node) for s in mine
    ]
    check = READERS[kind][1]
    if kind in WHOLE:
        results = [check(m, mine, names, run)]
    else:
        results = [check(m, s, ns, run) for s, ns in zip(mine, names, strict=True)]
    results = [r for r in results if r is not SKIP]
    if mine and not results and kind in ABSENT:
        return Verdict(c, kind, "wrong", ABSENT[kind])
    wrong = [r for r in results if r is not None and not isinstance(r, Reading)]
    if wrong:
        return Verdict(c, kind, "wrong", wrong[0])
    readings = [r for r in results if isinstance(r, Reading)]
    if readings:
        return Verdict(c, kind, "reading", str(readings[0]))
    return Verdict(c, kind, "holds" if results else "not run", f"{len(results)} executions")
