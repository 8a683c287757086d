"""Numbers and shapes as a source prints them, read from its text at run time.

A claim that checks a printed value reads it from the text (``claimbook.source_text``) with
these helpers, so that an edited text is checked as it stands. Snippets match with runs of
spaces and tabs counted as one space, as the coverage maps' anchors do.
"""

from __future__ import annotations

import re

_SPACE = re.compile(r"[ \t]+")
# a number not glued to a name (fc1, attn_output_8): 1,536 or 124,402,944 or 0.04 or 64
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?:\.\d+)?)")
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")


def _flat(line: str) -> str:
    return _SPACE.sub(" ", line).strip()


def line_index(text: str, snippet: str) -> int:
    """Index of the one line of ``text`` that contains ``snippet``.

    Raises:
        ValueError: if no line or more than one line contains it.
    """
    want = _flat(snippet)
    found = [i for i, line in enumerate(text.splitlines()) if want in _flat(line)]
    if len(found) != 1:
        where = "no line" if not found else f"{len(found)} lines"
        raise ValueError(f"the text has {where} with {snippet!r}: expected exactly one")
    return found[0]


def line_with(text: str, snippet: str, after: int = 0) -> str:
    """The line that contains ``snippet`` (or the ``after``-th line below it), spaces folded."""
    lines = text.splitlines()
    return _flat(lines[line_index(text, snippet) + after])


def lines_with(text: str, snippet: str) -> list[str]:
    """Every line that contains ``snippet`` (a line the text prints more than once), folded."""
    want = _flat(snippet)
    return [_flat(line) for line in text.splitlines() if want in _flat(line)]


def lines_between(text: str, first: str, last: str) -> list[str]:
    """The lines from the one containing ``first`` to the one containing ``last``, folded."""
    lines = text.splitlines()
    start, end = line_index(text, first), line_index(text, last)
    if end < start:
        raise ValueError(f"{last!r} comes before {first!r} in the text")
    return [_flat(line) for line in lines[start : end + 1]]


def numbers(line: str) -> list[float]:
    """The numbers printed in ``line``, thousands separators dropped ("1,536" -> 1536)."""
    return [float(m.group().replace(",", "")) for m in _NUMBER.finditer(line)]


def shapes(line: str) -> list[list[float]]:
    """The bracketed lists printed in ``line`` ("[1, 512, 768]", "[0.2, 0.5, 0.3]"), in order."""
    return [numbers(inside) for inside in _BRACKETS.findall(line)]


def integers(values: list[float]) -> list[int]:
    """``values`` as ints; raises ValueError if one is not a whole number."""
    if any(v != int(v) for v in values):
        raise ValueError(f"expected whole numbers, got {values}")
    return [int(v) for v in values]
