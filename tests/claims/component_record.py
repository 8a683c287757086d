"""The field's record at the level of components: which paper introduced each part of a model.

:mod:`experiments.literature_record` knows works and the models they are known for ("LSTM":
Hochreiter and Schmidhuber, 1997). A sentence often credits a work with one part of a model
("the forget gate", "groups of query heads share a key-value head"), and a model's parts were
not all introduced together: the LSTM of 1997 had input and output gates around a self-loop
of fixed weight 1 (the constant error carousel); the forget gate was added by Gers,
Schmidhuber and Cummins (first at ICANN 1999, then Neural Computation, 2000), peepholes by
Gers and Schmidhuber (2000). This table is our reading of the published papers, written
once; the check reads the credits from the text at run time.

A credit is anachronistic when the part named in the stretch of text a citation governs was
introduced after the cited work: that work cannot have introduced it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from experiments import literature_record as record
from experiments.literature_record import Work
from experiments.text_tables import YEAR, citations

# Works that introduced a part and that the shared record does not hold (it lists works cited).
GERS2000 = Work(("Gers", "Schmidhuber", "Cummins"), 2000,
                "Learning to Forget: Continual Prediction with LSTM", None,
                "Neural Computation 12(10), doi:10.1162/089976600300015015 (ICANN 1999 first)",
                2000, ("forget gate",))  # fmt: skip
GERS_PEEPHOLE = Work(
    ("Gers", "Schmidhuber"),
    2000,
    "Recurrent Nets that Time and Count",
    None,
    "IJCNN 2000, doi:10.1109/IJCNN.2000.861302",
    2000,
    ("peephole connections",),
)

LSTM97, W = record.WORKS["hochreiter1997"], record.WORKS

# part -> (how the texts name it, the work that introduced it)
PARTS: dict[str, tuple[str, Work]] = {
    "input gate": (r"\binput gates?\b|\binput,? (?:and )?(?:forget|output)", LSTM97),
    "output gate": (r"\boutput gates?\b|\b(?:input|forget),? and output gates", LSTM97),
    "cell state": (r"\bcell state\b|constant error carousel", LSTM97),
    "forget gate": (r"\bforget gates?\b|\bforget,(?= input| output)", GERS2000),
    "peephole connections": (r"\bpeepholes?\b", GERS_PEEPHOLE),
    "multi-head attention": (r"\bmulti-head attention\b", W["vaswani2017"]),
    "one shared key-value head": (r"only one key-value head", W["shazeer2019"]),
    "grouped key-value heads": (r"groups of query heads share|grouped-query", W["ainslie2023"]),
    "latent cache": (r"compressed (?:latent )?vector|latent attention", W["deepseek2024"]),
    "tiled exact attention": (r"\bin tiles\b", W["dao2022"]),
    "rotary position embedding": (r"\brotary\b|\bRoPE\b", W["su2021"]),
    "RMSNorm": (r"\bRMSNorm\b", W["zhang2019"]),
    "SwiGLU": (r"\bSwiGLU\b", W["shazeer2020"]),
    "selective state update": (r"depend on the current token|\bselective\b", W["gu2023"]),
}  # fmt: skip


def _work(c) -> Work | None:
    """The cited work: in the shared record, else one of this table's own (Gers 2000)."""
    work, _ = record.resolve(c)
    if work is None and c.authors:
        own = {w for _, w in PARTS.values() if w.authors[0] == c.authors[0] and c.year in w.years}
        work = next(iter(own), None)
    return work


@dataclass(frozen=True)
class Credit:
    """One part named in the stretch of text a citation governs."""

    line: int
    cited: str  # the citation as printed, with its year
    cited_year: int
    part: str
    by: Work  # who introduced the part

    @property
    def anachronistic(self) -> bool:
        return self.by.year > self.cited_year

    def __str__(self) -> str:
        return f"line {self.line}: {self.cited} credited with the {self.part}"


def names(w: Work) -> str:
    """The authors as a citation prints them: up to three surnames, else "X et al."."""
    if len(w.authors) > 3:
        return f"{w.authors[0]} et al."
    return ", ".join(w.authors[:-1]) + (" and " if len(w.authors) > 1 else "") + w.authors[-1]


def who(w: Work) -> str:
    return f"{names(w)} ({w.year}), {w.title}"


def _governed(line: str, start: int, end: int) -> str:
    """The stretch of ``line`` a citation whose year spans ``start:end`` governs: from the start
    of its sentence (or the end of the citation before it, in the same sentence) through the
    following sentences, up to the sentence (or the parenthesis) of the next dated citation."""
    before = [m.end() for m in YEAR.finditer(line, 0, start)]
    opened = line.find(")", before[-1]) + 1 if before else 0
    first = max(line.rfind(". ", 0, start) + 2, opened, 0)
    nxt = YEAR.search(line, end)
    if nxt is None:
        return line[first:]
    cut = line.rfind(". ", end, nxt.start())
    return line[first : cut if cut != -1 else max(line.rfind("(", end, nxt.start()), end)]


def credits(text: str) -> list[Credit]:
    """Every part named in a stretch governed by a dated citation of a recorded work."""
    lines, found = text.splitlines(), []
    for c in citations(text, record.system):
        work = _work(c)
        if work is None or c.title:  # unknown works are the year check's; reading-list lines
            continue
        line = lines[c.line - 1]
        years = [m for m in YEAR.finditer(line) if m[1] == str(c.year)]  # its own year
        at = next((m for m in years if c.name.split()[0] in line[: m.start()][-80:]), years[0])
        stretch = _governed(line, at.start(), at.end())
        for part, (pattern, by) in PARTS.items():
            if re.search(pattern, stretch):
                found.append(Credit(c.line, f"{c.name}, {c.year}", c.year, part, by))
    return found
