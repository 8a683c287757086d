"""Anchors: exact snippets of one line of a source text, resolved to their line.

Matching is whitespace-normalised: in the text and in the snippet, every run of spaces
and tabs counts as one space, and the ends are stripped. An anchor must occur exactly
once in the whole text (lengthen it until it does), unless it names which occurrence it
means: a line the text repeats verbatim is anchored as the n-th occurrence of its snippet,
counted in text order (line by line, left to right). The text is read at run time from
``CLAIMBOOK_SOURCES_DIR`` (or a folder given explicitly) and never copied anywhere.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

SOURCES_ENV = "CLAIMBOOK_SOURCES_DIR"
_SPACE = re.compile(r"[ \t]+")


def normalise(text: str) -> str:
    """``text`` with each run of spaces and tabs made one space, ends stripped."""
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class Resolved:
    """Where an anchor is: ``line`` (1-based) when found exactly once, else None and why."""

    line: int | None
    problem: str = ""  # "" | "not found" | "ambiguous: lines 3, 9"


class Text:
    """A source text's lines, normalised once for matching."""

    def __init__(self, raw: str, path: Path | None = None):
        self.path = path
        self.lines = raw.splitlines()
        self.normal = [normalise(line) for line in self.lines]

    def find(self, snippet: str, occurrence: int = 0) -> Resolved:
        """The one line holding ``snippet``; not found, or ambiguous (naming the lines).
        With ``occurrence`` n (1-based), the line of its n-th occurrence in text order;
        a problem when the text holds fewer."""
        wanted = normalise(snippet)
        if not wanted:
            return Resolved(None, "empty anchor")
        hits = [n for n, line in enumerate(self.normal, 1) for _ in range(line.count(wanted))]
        if not hits:
            return Resolved(None, "not found")
        shown = ", ".join(map(str, sorted(set(hits))[:8]))
        if occurrence:
            if occurrence > len(hits):
                times = "once" if len(hits) == 1 else f"only {len(hits)} times"
                return Resolved(None, f"has no occurrence {occurrence}: it occurs {times} "
                                f"(line{'s' if len(hits) > 1 else ''} {shown})")  # fmt: skip
            return Resolved(hits[occurrence - 1])
        if len(hits) > 1:
            return Resolved(None, f"ambiguous: occurs {len(hits)} times (lines {shown})")
        return Resolved(hits[0])


def value_pattern(value: str) -> re.Pattern:
    """A printed value as it must occur in its line: whitespace-normalised, and not part of a
    longer number (``0.5`` does not occur in ``0.58``, nor ``115`` in ``1,115,394``)."""
    body = re.escape(normalise(value)).replace(r"\ ", " ")
    head = r"(?<!\d)(?<!\d[.,])" if value.strip()[:1].isdigit() else ""
    tail = r"(?!\d)(?![.,]\d)" if value.strip()[-1:].isdigit() else ""
    return re.compile(head + body + tail)


def value_in_line(value: str, line: str) -> bool:
    return bool(value_pattern(value).search(normalise(line)))


def sources_dir(explicit: Path | str | None = None) -> Path | None:
    """The folder of source texts: ``explicit``, else ``$CLAIMBOOK_SOURCES_DIR``, else None."""
    chosen = explicit or os.environ.get(SOURCES_ENV)
    return Path(chosen) if chosen else None


def read_text(folder: Path | None, name: str) -> tuple[Text | None, str]:
    """The text ``name`` under ``folder``, or (None, why it is not available)."""
    if folder is None:
        return None, f"{SOURCES_ENV} is not set"
    if not name:
        return None, "its claims' Source declares no path"
    path = Path(folder) / name
    try:
        return Text(path.read_text(encoding="utf-8"), path), ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {path}: {exc.__class__.__name__}"
