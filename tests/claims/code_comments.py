"""Every comment of a printed code block, read, tied to the statements it annotates, and held
against the values those statements computed when the block ran.

A comment is a ``#`` comment of the code as it runs (a usage example's commented-out code is
code). Which statements a comment annotates, a rule fixed before looking at any value:

- a trailing comment annotates its own statement; on a ``def`` line, the function's
  arguments at each call; on another compound header (``for``, ``with``), the header and its
  body;
- in Python, a comment on lines of its own annotates the statements directly below it, up to
  the next blank line (PEP 8's block comments), else the nearest statement above;
- in pseudocode, a comment directly under a statement (no blank line) annotates that
  statement (the trace's "# Shape" notes), otherwise as in Python.

Each reader below recognises one kind of checkable statement in a comment and judges one
execution of the annotated statements (:class:`Step`): ``None`` when it holds, else what the
code computed. A comment no reader recognises is descriptive (it names a step) and is listed.
Nothing here is an expected answer.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import tokenize
from dataclasses import dataclass, field

import torch

# names that mean the same size, declared once (a symbol binds to the frame's variable of any
# spelling in its group, to ``self.<name>`` or ``self.n_<name>``, or to a local of the
# object's __init__; otherwise it binds to the first size it meets in that execution)
ALIASES = [{"B", "batch"}, {"T", "time", "seq", "seq_len"}, {"C", "dim", "d_model", "d"},
           {"heads", "n_heads", "nh"}, {"head_dim", "d_head", "hs"}, {"k", "kernel"}]  # fmt: skip


@dataclass
class Comment:
    """One comment (consecutive comment lines of their own are one): its block, the source
    line of its first ``#``, its words, and the block lines of the statements it annotates."""

    block: str
    line: int
    text: str
    stmts: list[int] = field(default_factory=list)
    call: bool = False  # annotates the arguments of the function defined on its line


@dataclass
class Step:
    """One execution of one statement: names before and after it, its frame's globals and
    arguments, its syntax tree, and the __init__ locals of the objects met (by id)."""

    node: ast.stmt
    before: dict
    after: dict
    globals: dict
    inits: dict
    args: dict = field(default_factory=dict)


# ---- reading and association ---------------------------------------------------------------


def python_comments(code: str) -> list[tuple[int, str, bool]]:
    """(line, words, on a line of its own) for each comment of Python code."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            own = not tok.line[: tok.start[1]].strip()
            out.append((tok.start[0], tok.string.lstrip("#").strip(), own))
    return out


def pseudo_comments(lines: list[str]) -> list[tuple[int, str, bool]]:
    """The same for pseudocode: the words after the first ``#`` of a line."""
    return [
        (n, ln.split("#", 1)[1].strip(), not ln.split("#", 1)[0].strip())
        for n, ln in enumerate(lines, 1)
        if "#" in ln
    ]


def stmt_nodes(tree: ast.AST) -> list[ast.stmt]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def header_end(node: ast.stmt) -> int:
    body = getattr(node, "body", None)
    return body[0].lineno - 1 if body else node.end_lineno


def owners(nodes: list[ast.stmt]) -> dict[int, int]:
    """Each line to the start of the innermost statement (or compound header) holding it."""
    own = {}
    for n in sorted(nodes, key=lambda n: n.lineno):
        for line in range(n.lineno, header_end(n) + 1):
            own[line] = n.lineno
    return own


def associate(block, lines, found, nodes, first_line, pseudo=False) -> list[Comment]:
    """Comments of a block (``found`` from the readers above) with the statements each
    annotates, by the rule of the module docstring; ``first_line`` is the text line of the
    block's line 1."""
    own, starts = owners(nodes), {n.lineno: n for n in nodes}
    out, i = [], 0
    while i < len(found):
        row, text, alone = found[i]
        end = row
        while alone and i + 1 < len(found) and found[i + 1][2] and found[i + 1][0] == end + 1:
            i, end = i + 1, end + 1
            text += " " + found[i][1]
        c = Comment(block, first_line + row - 1, text)
        if not alone and row in own:
            node = starts[own[row]]
            c.call = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            body = [] if c.call else getattr(node, "body", [])
            c.stmts = [node.lineno] + [b.lineno for b in body]
        elif pseudo and row - 1 in own and lines[row - 2].split("#")[0].strip():
            c.stmts = [own[row - 1]]
        else:
            stop = next((j for j in range(end, len(lines)) if not lines[j].strip()
                         or lines[j].strip().startswith("#")), len(lines))  # fmt: skip
            c.stmts = sorted(n.lineno for n in nodes if end < n.lineno <= stop)
            above = [n for n in nodes if n.end_lineno < row]
            if not c.stmts and above:
                c.stmts = [max(above, key=lambda n: (n.end_lineno, n.lineno)).lineno]
        out.append(c)
        i += 1
    return out


@contextlib.contextmanager
def kept_state():
    """The process's environment and torch's thread count as they were (the setup cell sets
    one thread; torch sets a cache folder in the environment on first use)."""
    env, threads = dict(os.environ), torch.get_num_threads()
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(env)
        torch.set_num_threads(threads)


def line_of(text: str, snippet: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if snippet in ln)


SKIP = object()


class Reading(str):
    """Holds only through the reading named."""


def close(a, b, tol=1e-5) -> bool:
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return a.shape == b.shape and bool(((a - b).abs() <= tol * (1 + b.abs())).all())


def before(step, expr: ast.expr, **swap):
    with torch.no_grad():
        return eval(compile(ast.Expression(expr), "<comment>", "eval"), step.globals,
                    {**step.before, **swap})  # fmt: skip


def operand(step, names):
    """The statement's first tensor operand: a name it reads that it does not assign."""
    found = (n.id for n in ast.walk(step.node) if isinstance(n, ast.Name) and n.id not in names)
    return next((step.before[n] for n in found if torch.is_tensor(step.before.get(n))), None)


def flat(s: str) -> str:
    return " ".join(s.split())


# ---- what a statement assigned ---------------------------------------------------------------


def target_names(node: ast.stmt) -> list[str]:
    """The names (or attribute paths) a statement assigns; ``<return>`` for a return."""
    if isinstance(node, ast.Return):
        return ["<return>"]
    targets = {
        ast.Assign: lambda n: n.targets,
        ast.AugAssign: lambda n: [n.target],
        ast.AnnAssign: lambda n: [n.target],
        ast.For: lambda n: [n.target],
        ast.With: lambda n: [i.optional_vars for i in n.items if i.optional_vars],
    }.get(type(node), lambda n: [])(node)
    out = []
    for t in targets:
        out += [ast.unparse(e) for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
    return out


def value(step: Step, name: str):
    if name in step.after:
        return step.after[name]
    try:
        return eval(name, {}, step.after)  # an attribute path such as self.conv
    except Exception:  # a name this execution never bound
        return None


def tensors(step: Step, names: list[str]) -> dict[str, torch.Tensor]:
    found = {n: value(step, n) for n in names}
    return {n: v for n, v in found.items() if isinstance(v, torch.Tensor)}


def resolve(symbol: str, step: Step) -> int | None:
    """A size symbol's value in this execution (None when the frame does not name it)."""
    group = next((g for g in ALIASES if symbol in g), {symbol})
    me = step.after.get("self")
    init = step.inits.get(id(me), {}) if me is not None else {}
    for name in sorted(group):
        for v in (step.after.get(name), getattr(me, name, None), getattr(me, f"n_{name}", None),
                  init.get(name)):  # fmt: skip
            if isinstance(v, int) and not isinstance(v, bool):
                return v
    return None


def canonical(symbol: str) -> str:
    return min(next((g for g in ALIASES if symbol in g), {symbol}))


ITEM = re.compile(r"^(?:\w+=)?(\d*)([A-Za-z_]\w*)?$")


def parse_shape(group: str) -> list[tuple[int, str | None]] | None:
    """'B, heads, T, head_dim' or '3, 64' or '4d' as (multiplier or literal, symbol) items."""
    items = []
    for part in (p.strip() for p in group.split(",")):
        m = ITEM.match(part)
        if not m or not (m[1] or m[2]):
            return None
        items.append((int(m[1] or 1), m[2]))
    return items


def shape_gap(items, shape, step: Step, bound: dict) -> str | None:
    """None when ``shape`` is the stated one under one binding of its free symbols."""
    if len(items) != len(shape):
        return f"rank {len(shape)}"
    for (mult, sym), n in zip(items, shape, strict=True):
        if sym is None:
            want = mult
        else:
            size = resolve(sym, step)
            if size is None and n % mult == 0:
                size = bound.setdefault(canonical(sym), n // mult)
            want = None if size is None else mult * size
        if want != n:
            return f"{list(shape)}"
    return None
