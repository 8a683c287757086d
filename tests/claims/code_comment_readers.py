"""The kinds of checkable statement a code comment makes, each with its judge.

A judge gets the reader's match, one execution (:class:`~tests.claims.code_comments.Step`)
and the names the annotated statement assigned; it returns ``None`` (the comment holds),
``Reading(why)`` (it holds only through one reading, named), ``SKIP`` (this execution has
nothing the statement is about) or a string: what the code computed instead.
"""

from __future__ import annotations

import ast
import math
import re

import torch

from tests.claims.code_comments import (
    SKIP,
    Reading,
    parse_shape,
    resolve,
    shape_gap,
    tensors,
    value,
)
from tests.claims.code_comments import before as _before
from tests.claims.code_comments import close as _close
from tests.claims.code_comments import operand as _operand

SHAPE = re.compile(r"(?<![\w)\]])(?:(\w+): )?[\[(]([\w=, ]+)[\])](?!\s*→)")


def shape(m, step, names, run=()):
    """'(B, heads, T, head_dim)', '[3, 64]', 'x: (batch, time, dim)': each tensor named
    (or assigned) has that shape."""
    items = parse_shape(m[2])
    found = tensors(step, [m[1]] if m[1] in {*names, *step.args} else names)
    if items is None or len(items) < 2 or not found:
        return SKIP
    bad = [f"{n}: {g}" for n, t in found.items() if (g := shape_gap(items, t.shape, step, {}))]
    return "; ".join(bad) or None


def transition(m, step, names, run=()):
    """'[d] → [4d]': the statement's first tensor operand ends in the first shape, its result
    in the second (one binding for both)."""
    first, out = _operand(step, names), tensors(step, names)
    if first is None or not out:
        return SKIP
    bound, x, y = {}, first.shape, next(iter(out.values())).shape
    a, b = parse_shape(m[1]), parse_shape(m[2])
    gap = shape_gap(a, x[-len(a) :], step, bound) or shape_gap(b, y[-len(b) :], step, bound)
    return f"{list(x)} → {list(y)}" if gap else None


def sums_to_one(m, step, names, run=()):
    """'rows sum to 1': every row of the result sums to 1."""
    found = tensors(step, names)
    worst = max(((t.sum(-1) - 1).abs().max().item() for t in found.values()), default=None)
    return SKIP if worst is None else (None if worst < 1e-5 else f"rows off by {worst:.3g}")


def _blocked(t: torch.Tensor) -> torch.Tensor:
    if t.dtype == torch.bool:
        return t
    return torch.isneginf(t) if torch.isneginf(t).any() else (t == 0) & bool((t >= 0).all())


def causal(m, step, names, run=()):
    """'causal', '-inf for future positions', 'no peeking ahead': in a square result, exactly
    the later keys are blocked (-inf, zero weight, or a True mask entry, of either polarity);
    otherwise, inside a module's method, the module's output at a position does not change
    when a later input does."""
    square = [
        t for t in tensors(step, names).values() if t.dim() >= 2 and t.shape[-1] == t.shape[-2]
    ]
    for t in square:
        later = torch.ones(t.shape[-2:], dtype=torch.bool).triu(1)
        b = _blocked(t.detach())
        if not (bool((b == later).all()) or (t.dtype == torch.bool and bool((~b == later).all()))):
            return "blocked keys: " + str(b.reshape(-1, *t.shape[-2:])[0].int().tolist())
    me = step.after.get("self")
    arg = next((v for v in step.args.values() if torch.is_tensor(v)), None)
    if square or not isinstance(me, torch.nn.Module) or arg is None:
        return None if square else SKIP
    x = torch.randn(arg.shape, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        y0, later_x = me(x), x.clone()
        later_x[:, -1] += 1
        y1 = me(later_x)
    return None if _close(y0[:, :-1], y1[:, :-1]) else "earlier outputs move with the last input"


def attends_to_all(m, step, names, run=()):
    """'each position attends to each position': no entry of the result is blocked."""
    found = tensors(step, names)
    bad = [n for n, t in found.items() if not bool(torch.isfinite(t).all())]
    return SKIP if not found else (f"{bad} has blocked entries" if bad else None)


def zeros_left(m, step, names, run=()):
    """'zeros on the left': the result's first position (last axis) is zero, its last not."""
    found = tensors(step, names)
    bad = [n for n, t in found.items() if t[..., 0].any() or not t[..., -1].any()]
    return SKIP if not found else (f"{bad} not zero-padded on the left" if bad else None)


def _added(step):
    """(target, the other summand) of ``t = t + f(...)`` or ``t += f(...)``, else None."""
    node = step.node
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        return ast.unparse(node.target), node.value
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp):
        t, v = ast.unparse(node.targets[0]), node.value
        if isinstance(v.op, ast.Add) and ast.unparse(v.left) == t:
            return t, v.right
    return None


def residual(m, step, names, run=()):
    """'residual': the statement adds a term to the value it replaces (new - old = term)."""
    found = _added(step)
    if found is None:
        return SKIP
    t, term = found
    new, old = value(step, t), step.before.get(t)
    if not torch.is_tensor(new) or not torch.is_tensor(old):
        return SKIP
    return None if _close(new - old, _before(step, term), 1e-4) else "new - old is not the term"


def pre_norm(m, step, names, run=()):
    """'pre-norm': the residual's term applies its layer to a normalised copy of the value
    (every vector of the layer's input has root-mean-square 1, as a fresh norm gives)."""
    found = _added(step)
    if found is None or not isinstance(found[1], ast.Call) or not found[1].args:
        return SKIP
    inner = _before(step, found[1].args[0])
    rms = inner.pow(2).mean(-1).sqrt()
    return None if _close(rms, torch.ones_like(rms), 1e-2) else f"input rms {rms.mean():.3g}"


def counts(m, steps, names, run=()):
    """'80 layers, ... width 128', '4,000 fresh examples': each count is a number the
    annotated code uses (a literal) or a size of a value it computed (judged once over all
    the executions of the statements the comment annotates)."""
    said = {int((c[1] or c[2]).replace(",", "")) for c in COUNT.finditer(SHAPE.sub("", m.string))}
    used = {int(c.value) for s in steps for c in ast.walk(s.node) if isinstance(c, ast.Constant)
            and isinstance(c.value, int | float) and float(c.value).is_integer()}  # fmt: skip
    used |= {n for s, ns in zip(steps, names, strict=True) for t in tensors(s, ns).values()
             for n in t.shape}  # fmt: skip
    if not steps:
        return SKIP
    missing = sorted(said - used)
    return f"{missing} not among {sorted(used)}" if missing else None


COUNT = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?= [a-z])|(?:(?<=width )|(?<=size ))(\d+)")


def matrices(m, step, names, run=()):
    """'k matrices of size dim x dim': the result's weight holds that many such matrices."""
    sizes = [resolve(s, step) for s in m.groups()]
    found = [getattr(value(step, n), "weight", value(step, n)) for n in names]
    found = [t for t in found if torch.is_tensor(t)]
    if not found or None in sizes:
        return SKIP
    bad = [list(t.shape) for t in found if sorted(t.shape) != sorted(sizes)]
    return f"weight {bad[0]} against {sizes}" if bad else None


def token_range(m, step, names, run=()):
    """'keys are tokens 0..15': every recorded value of that name spans exactly that range."""
    seen = [s.after[m[1]] for s in run if torch.is_tensor(s.after.get(m[1]))]
    if not seen:
        return SKIP
    lo, hi = min(int(t.min()) for t in seen), max(int(t.max()) for t in seen)
    return None if (lo, hi) == (int(m[2]), int(m[3])) else f"{m[1]} span {lo}..{hi}"


def layout(m, step, names, run=()):
    """'k v k v ... k v': the result interleaves, position by position, the local tensors
    whose names start with those letters, in that order."""
    letters = m[1].split()
    p = next(
        p
        for p in range(1, len(letters) + 1)
        if letters == (letters[:p] * len(letters))[: len(letters)]
    )
    for t in tensors(step, names).values():
        for j, letter in enumerate(letters[:p]):
            part = next((v for n, v in step.after.items() if n.startswith(letter) and n not in names
                         and torch.is_tensor(v) and v.shape == t[:, j::p].shape), None)  # fmt: skip
            if part is None or not torch.equal(part, t[:, j::p]):
                return f"positions {j}::{p} are not {letter}"
        return None
    return SKIP


def then_one(m, step, names, run=()):
    """'... then the query key': the result is the operand before it plus one token, one of
    the row's own ``<word>s``."""
    pool = step.after.get(m[1] + "s")
    first = _operand(step, names)
    out = tensors(step, names)
    if first is None or pool is None or not out:
        return SKIP
    t = next(iter(out.values()))
    ok = t.shape[1] == first.shape[1] + 1 and torch.equal(t[:, :-1], first)
    return None if ok and bool((pool == t[:, -1:]).any(-1).all()) else "not one more such token"


def only_last(m, step, names, run=()):
    """'only the final prediction is scored': changing every position but the last of the
    indexed operand leaves the result as it is (and changing the last does not)."""
    subs = [
        s
        for s in ast.walk(step.node)
        if isinstance(s, ast.Subscript)
        and isinstance(s.value, ast.Name)
        and ast.unparse(s.slice).strip("()") == ":, -1"
    ]
    out = tensors(step, names)
    if not subs or not out:
        return SKIP if out else "no last position indexed"
    name, expr = subs[0].value.id, step.node.value
    x, g = step.before[name], torch.Generator().manual_seed(0)
    rest, last = x.detach().clone(), x.detach().clone()
    rest[:, :-1] = torch.randn(rest[:, :-1].shape, generator=g)
    last[:, -1] = torch.randn(last[:, -1].shape, generator=g)
    base = _before(step, expr)
    moved = not _close(_before(step, expr, **{name: last}), base)
    return (
        None
        if _close(_before(step, expr, **{name: rest}), base) and moved
        else "other positions count"
    )


def formula(m, step, names, run=()):
    """'softmax(QK^T / sqrt(d)) V': the result, with Q, K, V the frame's tensors of those
    names and d the heads' width; a causal mask is allowed as a reading where the statement
    itself asks for one (is_causal=True)."""
    q, k, v = (next((step.after[n] for n in (s, s.lower()) if n in step.after), None)
               for s in (m[1], m[2], m[4]))  # fmt: skip
    out = tensors(step, names)
    if q is None or k is None or v is None or not out:
        return SKIP
    y, s = next(iter(out.values())), q @ k.transpose(-2, -1)
    masks = {"no mask": 0.0}
    if "is_causal=True" in ast.unparse(step.node):
        masks["the causal mask its line sets"] = torch.full(s.shape[-2:], -math.inf).triu(1)
    widths = {"the head width": q.shape[-1], "the model width": resolve("C", step)}
    for (wname, d), (mname, mask) in ((w, mk) for w in widths.items() for mk in masks.items()):
        if d and _close(torch.softmax(s / math.sqrt(d) + mask, -1) @ v, y, 1e-4):
            plain = (wname, mname) == ("the head width", "no mask")
            return None if plain else Reading(f"d {wname}, {mname}")
    return "none of softmax(QK^T / sqrt(d)) V, masked or not"


def example_row(m, step, names, run=()):
    """'Example for position 2 ... [0.2, 0.5, 0.3]': row 2 of the result has as many
    nonzero weights as the example lists, and the example sums to 1 as the rows do."""
    nums = [float(x) for x in m[2].split(",")]
    out = [t for t in tensors(step, names).values() if t.dim() >= 2]
    if not out:
        return SKIP
    row = out[0].reshape(-1, *out[0].shape[-2:])[0][int(m[1])]
    ok = int((row > 0).sum()) == len(nums) and abs(sum(nums) - 1) < 1e-6
    return None if ok else f"row {m[1]} holds {int((row > 0).sum())} weights"


def gaps(m, step, names, run=()):
    """'tokens between the query and the key of each pair': per pair, the positions from the
    key that the query repeats to the query (read from the sequences the block built: a row
    whose last token occurs once before, and the pair index of each row)."""
    dist = next(iter(value(step, n) for n in names), None)
    data = next(((s.after["x"], s.after["which"]) for s in run if torch.is_tensor(s.after.get("x"))
                 and torch.is_tensor(s.after.get("which"))), None)  # fmt: skip
    if dist is None or data is None:
        return SKIP
    x, which = data
    pos = (x[:, :-1] == x[:, -1:]).int().argmax(-1)
    back = x.shape[1] - 1 - pos
    said = torch.as_tensor(dist)[which]
    if torch.equal(said, back - 1):
        return None
    if torch.equal(said, back):
        return Reading("the positions from the key to the query; strictly between lie one fewer")
    return f"the query is {back[:5].tolist()} positions after its key"


def _shapes(text):
    return [m for m in SHAPE.finditer(text) if (p := parse_shape(m[2])) and len(p) >= 2]


WHOLE = {"counts"}  # judged once over all the comment's executions
ABSENT = {"residual": "no statement it annotates adds a term to the value it replaces",
          "pre-norm": "no statement it annotates adds a layer of a normalised input"}  # fmt: skip
READERS = {  # kind: (finder of its statements in a comment, judge)
    "shape": (_shapes, shape),
    "shape change": (re.compile(r"\[(\w+)\]\s*→\s*\[(\w+)\]").finditer, transition),
    "rows sum to 1": (re.compile(r"sums? to 1\b").finditer, sums_to_one),
    "causal": (re.compile(r"causal|future positions|peeking ahead", re.I).finditer, causal),
    "all positions": (re.compile(r"each position attends to each").finditer, attends_to_all),
    "zero padding": (re.compile(r"zeros on the left").finditer, zeros_left),
    "residual": (re.compile(r"residual").finditer, residual),
    "pre-norm": (re.compile(r"[Pp]re-norm").finditer, pre_norm),
    "counts": (lambda t: [m] if (m := COUNT.search(SHAPE.sub("", t))) else [], counts),
    "matrices": (re.compile(r"(\w+) matrices of size (\w+) x (\w+)").finditer, matrices),
    "token range": (re.compile(r"(\w+) are tokens (\d+)\.\.(\d+)").finditer, token_range),
    "interleaving": (re.compile(r"^((?:[a-z] )+)\.\.\.").finditer, layout),
    "one more token": (re.compile(r"^\.\.\. then the (?:\w+ )?(\w+)$").finditer, then_one),
    "last position only": (re.compile(r"only the (?:final|last) \w+ is").finditer, only_last),
    "formula": (re.compile(r"softmax\((\w)(\w)\^T / sqrt\((\w+)\)\) ?(\w)").finditer, formula),
    "example row": (re.compile(r"position (\d+).*?\[([\d., ]+)\]").finditer, example_row),
    "distances": (re.compile(r"tokens between the \w+ and the \w+ of each").finditer, gaps),
}
