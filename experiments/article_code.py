"""The article's (dd2) blocks: cut out of the text, spelled as Python, and their glue.

The article prints Python, pseudocode, and code inside box drawings. :func:`lines_between`
cuts a block out, :func:`unbox` strips the box borders, :func:`translate` applies the few
spelling changes that make pseudocode run (``·`` for a matrix product, ``√x``, ``σ²``),
and :func:`statements` keeps the lines that are then Python assignments. The rest is the
glue single claims need; each claim's remark names what it used.
"""

from __future__ import annotations

import ast
import re
import textwrap

import torch


def lines_between(text: str, first: str, last: str, start: int = 0) -> list[str]:
    """The text's lines from the first one holding ``first`` (at or after line index
    ``start``) to the next one holding ``last``, both included.

    Raises ValueError when either is missing."""
    lines = text.splitlines()
    try:
        i = next(n for n in range(start, len(lines)) if first in lines[n])
        j = next(n for n in range(i, len(lines)) if last in lines[n])
    except StopIteration:
        raise ValueError(f"no block from {first!r} to {last!r} in the text") from None
    return lines[i : j + 1]


def unbox(lines: list[str]) -> list[str]:
    """Lines with a box drawing's vertical borders removed and the block dedented."""
    inner = [re.sub(r"\s*│\s*$", "", re.sub(r"^\s*│", "", line)).rstrip() for line in lines]
    return textwrap.dedent("\n".join(inner)).splitlines()


def translate(line: str) -> str:
    """Pseudocode spelled as Python: ``·`` is ``@``, ``√x`` / ``√(...)`` is ``sqrt``,
    ``σ²`` the name ``sigma_sq``, another ``x²`` is ``x**2``, ``.T`` of a stack of
    matrices transposes each (``.mT``)."""
    line = line.replace("·", "@").replace("σ²", "sigma_sq")
    line = re.sub(r"(\w)²", r"\1**2", line)
    line = re.sub(r"√\(", "sqrt(", line)
    line = re.sub(r"√(\w+)", r"sqrt(\1)", line)
    return line.replace(".T ", ".mT ").replace(".T\n", ".mT\n")


def statements(lines: list[str]) -> list[str]:
    """The lines that are Python assignments once translated (prose, headings and
    shape notes are dropped), stripped of step numbers such as ``3. Normalize:``."""
    kept = []
    for line in lines:
        code = translate(re.sub(r"^\s*\d+\.\s[^:=]*:\s+", "", line)).strip()
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        if tree.body and isinstance(tree.body[0], ast.Assign | ast.AugAssign):
            kept.append(code)
    return kept


def row_max(*args):
    """``max`` of the Flash loop read row by row (one running maximum per query)."""
    if len(args) == 1:
        return args[0].amax(-1, keepdim=True)
    return torch.maximum(torch.as_tensor(args[0]), torch.as_tensor(args[1]))


def row_sum(t):
    """``sum`` of the Flash loop read row by row (one normaliser per query)."""
    return t.sum(-1, keepdim=True)


def block_max(*args):
    """``max`` read literally: one number over the whole block."""
    if len(args) == 1:
        return args[0].max()
    return torch.maximum(torch.as_tensor(args[0]), torch.as_tensor(args[1]))


def causal(n: int) -> torch.Tensor:
    """An additive causal mask: -inf above the diagonal, 0 elsewhere."""
    return torch.full((n, n), float("-inf")).triu(1)


def run(lines: list[str], names: dict) -> dict:
    """Execute statements one by one with ``names`` as their variables; return the names."""
    scope = dict(names)
    for line in lines:
        exec(line, scope)
    return scope


def all_heads(line: str) -> str:
    """``Concat(a_1, ..., a_8)`` as the eight heads of ``a_h`` (heads on its leading axis)."""
    return re.sub(r"(\w+)_1, \.\.\., \1_(\d+)", r"*\1_h[:\2]", line)


def gpt2_block(d: int, heads: int, activation: str):
    """transformers' GPT2Block of width ``d`` (eager attention, no dropout), in eval mode."""
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    cfg = GPT2Config(
        n_embd=d,
        n_head=heads,
        activation_function=activation,
        resid_pdrop=0.0,
        attn_pdrop=0.0,
        embd_pdrop=0.0,
    )
    cfg._attn_implementation = "eager"
    return GPT2Block(cfg).eval()


def gpt2_causal(block, x: torch.Tensor) -> torch.Tensor:
    """A GPT2Block on its own attends both ways (GPT2Model builds the mask): pass it."""
    return block(x, attention_mask=causal(x.shape[-2])[None, None])


def python_block(text: str) -> str:
    """The article's Python block, with its usage example's comment marks removed."""
    lines = lines_between(text, "import torch", "# output = layer(x)")
    return "\n".join(line[2:] if line.startswith("# ") and "(" in line else line for line in lines)


def cache_states(text: str) -> list[list[int]]:
    """The K cache after each printed step, as the positions it holds (K₁ is 1)."""
    steps = "\n".join(
        lines_between(text, "Step 1: Generate token 1", "Append: K_cache = [K₁, K₂, K₃]")
    )
    states = []
    for part in re.split(r"Step \d+: Generate token \d+", steps)[1:]:
        last = re.findall(r"K_cache = \[([^\]]*)\]", part)[-1]
        states.append(
            [
                int(s.translate(str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")))
                for s in re.findall(r"K([₀-₉]+)", last)
            ]
        )
    return states


def flash_code(text: str) -> str:
    """The Flash loop, translated, with the glue: each KV block unpacked into its keys and
    values, and each Q block's output collected."""
    lines = [
        translate(line)
        for line in unbox(
            lines_between(text, "for q_block in Q_blocks:", "O_block = O_block / running_sum")
        )
    ]
    out = []
    for i, line in enumerate(lines):
        out.append(re.sub(r"^(\s*)(\w+) \+= (.*)$", r"\1\2 = \2 + \3", line))
        if line.lstrip().startswith("for kv_block"):
            indent = re.match(r"\s*", next(s for s in lines[i + 1 :] if s.strip())).group(0)
            out.append(f"{indent}k_block, v_block = kv_block")
    body = re.match(r"\s*", lines[1]).group(0)
    return "\n".join([*out, f"{body}outputs.append(O_block)"])
