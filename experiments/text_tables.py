"""Reading a source text's citations, tables and printed lines at run time.

Small parsers for the general checks: they take the text as it stands and return plain
data, so a claim compares what the text prints now (never a transcription) with an
independent record or with the text's own body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME = r"[A-Z][\w'’é-]*"
AUTHORS_AT_END = re.compile(rf"(?:{NAME}(?:, | and ))*{NAME}(?: et al\.)?$")
YEAR = re.compile(r"(?<![\w.,·-])(19[5-9]\d|20[0-2]\d)(?![\d\w-])")
SUBJECT = re.compile(r"(?:^|[.:]\s|•\s)(?:The\s)?([A-Z][\w-]*(?:\s[\w-]+){0,3}) \($")


def norm(s: str) -> str:
    """Runs of spaces and tabs as one space, ends stripped (as coverage anchors match)."""
    return re.sub(r"[ \t]+", " ", s).strip()


def line_with(text: str, anchor: str) -> str:
    """The one line of ``text`` holding ``anchor`` (whitespace-normalised; of a code line and
    its cell's flattened copy, the code line); an anchor found on no line or on several
    fails, naming it."""
    hits = [ln for ln in text.splitlines() if norm(anchor) in norm(ln)]
    if len(hits) > 1:  # a code cell is printed twice, once flattened onto one long line
        hits = [ln for ln in hits if len(ln) < 400]
    if len(hits) != 1:
        raise AssertionError(f"{anchor!r} is on {len(hits)} lines of the text, not one")
    return hits[0]


def matching(text: str, pattern: str) -> list[re.Match]:
    """The match of ``pattern`` at the start of each (whitespace-normalised) line it fits."""
    return [m for ln in text.splitlines() if (m := re.match(pattern, norm(ln)))]


def setting(text: str, anchor: str, name: str) -> str:
    """A keyword default (``kernel=4``) or assignment (``T=40``) on the anchored code line."""
    return re.search(rf"\b{name}\s*=\s*([\w.]+)", line_with(text, anchor)).group(1)


def number(s: str) -> float:
    """A printed number with thousands commas, as a float."""
    return float(s.replace(",", ""))


def block_after(text: str, heading: str, stop: str | None = None) -> list[str]:
    """The lines after the line holding ``heading``, up to the first blank line (or up to the
    line holding ``stop``)."""
    lines, out = text.splitlines(), []
    start = next(i for i, ln in enumerate(lines) if norm(heading) in norm(ln))
    for ln in lines[start + 1 :]:
        if (stop is None and not ln.strip()) or (stop is not None and norm(stop) in norm(ln)):
            break
        out.append(ln)
    return out


def tab_rows(text: str, header: str) -> list[list[str]]:
    """The rows of the tab-separated table whose header line starts with ``header``."""
    return [ln.split("\t") for ln in block_after(text, header) if "\t" in ln]


def box_cells(line: str) -> list[str]:
    """The cells of one line of a box drawing: the text between the frame's bars, split at
    runs of two or more spaces."""
    inner = line.strip().strip("│").strip()
    return [c.strip() for c in re.split(r"\s{2,}", inner) if c.strip()]


@dataclass(frozen=True)
class Citation:
    """One dated mention in the prose: who or what, the year, and where."""

    line: int  # 1-based line of the text
    year: int
    name: str  # the authors as printed ("Gu, Goel and Ré", "Olsson et al.") or a system
    authors: tuple[str, ...] | None  # surnames when ``name`` is an author list, else None
    et_al: bool
    subject: str | None  # the thing introduced, where the sentence opens "X (citation)"
    acronym: str | None  # "(MQA; Shazeer, 2019)" names MQA
    title: str | None  # a reading-list entry's title

    def __str__(self) -> str:
        return f"{self.name}, {self.year} (line {self.line})"


def _authors(name: str) -> tuple[tuple[str, ...], bool]:
    et_al = name.endswith(" et al.")
    core = name.removesuffix(" et al.")
    return tuple(re.split(r", | and ", core)), et_al


def _title(rest: str) -> str | None:
    m = re.match(r'\):\s*"([^"]+)"', rest) or re.match(r",\s*([^;]+?)(?:;|\.$|$)", rest)
    return m.group(1).strip() if m else None


def citations(text: str, systems) -> list[Citation]:
    """Every dated mention in the prose of ``text`` (table rows and fork headers, which
    :func:`tab_rows` and the lineage checks read, are left out). ``systems(name)`` says
    whether a name is a named system or model ("AlexNet", "GPT-2") rather than authors.
    A year with neither an author list nor a known system before it is returned with the
    words before it as its name and no authors, for the claim to flag."""
    found = []
    for no, line in enumerate(text.splitlines(), 1):
        if re.match(r"^(\d{4}|Fork \d)", line) or len(line) > 1500:  # tables, flattened code
            continue
        for m in YEAR.finditer(line):
            pre = line[: m.start()]
            form_b = pre.endswith("(")
            head = pre[:-1].rstrip() if form_b else pre.rstrip(", ").rstrip()
            if not form_b:  # the citation starts after the last "(", ";" or bullet
                head = re.split(r"[(;•]", head)[-1].strip()
            head = re.sub(r"^(?:see also|and|as in)\s+", "", head).removesuffix("'s")
            name = next((s for s in _suffixes(head) if systems(s)), None)
            authors, et_al = None, False
            if name is None and (a := AUTHORS_AT_END.search(head)):
                name = a.group(0)
                authors, et_al = _authors(name)
            if name is None:
                name = head[-40:]
            opener = pre[: pre.rfind("(")].rstrip() if "(" in pre and not form_b else ""
            s = SUBJECT.search(opener + " (") if opener else None
            acr = re.search(r"\((\w+); [^()]*$", pre)
            title = _title(line[m.end() :]) if line.lstrip().startswith("•") else None
            found.append(Citation(no, int(m.group(1)), name, authors, et_al,
                                  s.group(1) if s else None, acr.group(1) if acr else None,
                                  title))  # fmt: skip
    return found


def _suffixes(head: str) -> list[str]:
    """The word-final pieces of ``head``, longest first ("Mistral 7B", "7B")."""
    words = head.split()
    return [" ".join(words[i:]) for i in range(max(0, len(words) - 4), len(words))]
