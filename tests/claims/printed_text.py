"""Numbers, words and code read from a source's text at run time.

A claim about what the text prints finds each printed value by a short pattern around it:
the pattern is the text as printed with ``{}`` where the value to read stands, ``{_}`` for a
number it skips and ``{w}`` for a word it reads. Runs of spaces and tabs match any run of
spaces and tabs (a line break, the end of one line and the next one's indent), and a pattern
must match exactly once in the text, so an edited text is read as it now stands and a
pattern that no longer finds its place says so.
"""

from __future__ import annotations

import re

NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
WORD = r"[A-Za-z][A-Za-z-]*"
_TOKEN = re.compile(r"(\{\}|\{_\}|\{w\}|\s+)")


def _regex(pattern: str) -> re.Pattern:
    parts = []
    for piece in _TOKEN.split(pattern):
        if piece == "{}":
            parts.append(f"({NUMBER})")
        elif piece == "{_}":
            parts.append(f"(?:{NUMBER})")
        elif piece == "{w}":
            parts.append(f"({WORD})")
        elif piece and not piece.strip():  # a line break in the pattern crosses lines
            parts.append(r"\s*\n\s*" if "\n" in piece else r"[ \t]+")
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def read(text: str, pattern: str) -> tuple[str, ...]:
    """The values at ``pattern``'s ``{}`` and ``{w}`` places, as printed (strings)."""
    found = list(_regex(pattern).finditer(text))
    if len(found) != 1:
        where = "nowhere" if not found else f"in {len(found)} places"
        raise LookupError(f"the text matches {pattern!r} {where}; it must match once")
    return found[0].groups()


def number(text: str, pattern: str) -> str:
    """The one number ``pattern`` reads, as printed (e.g. ``"2,360,832"``)."""
    (value,) = read(text, pattern)
    return value


def value(printed: str) -> float:
    """A printed number as a float (thousands separators dropped)."""
    return float(printed.replace(",", ""))


def code_block(text: str, first_line: str) -> str:
    """The printed code that starts with the line ``first_line`` (the line alone, stripped)
    and runs on while lines are blank or indented."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == first_line]
    if len(starts) != 1:
        raise LookupError(f"the text has {len(starts)} lines reading {first_line!r}; need one")
    block = [lines[starts[0]]]
    for line in lines[starts[0] + 1 :]:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        block.append(line)
    return "\n".join(block).rstrip() + "\n"
