"""Statistics words on the pages, linked to their definitions on "How to read a verdict"
(templates/reading.md.j2, rendered as ``reading.md``)."""

from __future__ import annotations

import re

PAGE = "reading.md"

# (pattern, anchor on the reading page); longer phrases first, so that they win
TERMS = (
    (r"(?:supported|refuted|(?:not )?(?:equivalent|observed)|inconclusive) at \d+(?:\.\d+)?%",
     "confidence"),
    (r"\d+(?:\.\d+)?% overall", "confidence"),
    (r"\d+(?:\.\d+)?% (?:per-look )?interval|per-look (?:interval|level)", "per-look-interval"),
    (r"one-sided t bound|t bound", "t-bound"),
    (r"order-statistic interval|timing ratio", "timing-ratio"),
    (r"distribution-free cross-check|assumption warning|sign-flip", "cross-check"),
    (r"tolerance bound|distribution-free", "tolerance-bound"),
    (r"(?:(?:under|over) )?\d+% chance that its (?:remaining )?planned looks decide it"
     r"|no remaining planned look can decide it", "outlook"),
    (r"\d+% power", "power"),
    (r"futile|futility", "futility"),
    (r"q-values?|Benjamini-Hochberg", "q-value"),
    (r"p-values?", "p-value"),
    (r"two one-sided tests", "equivalent"),
    (r"Clopper-Pearson|success rate", "success-rate"),
    (r"paired comparison|paired t", "paired-comparison"),
    (r"planned looks?|next look", "looks"),
    (r"fresh seeds|declared after data", "fresh-seeds"),
    (r"counterexamples?", "counterexample"),
    (r"deterministic", "deterministic"),
    (r"budget", "budget"),
    (r"margin", "margin"),
)  # fmt: skip
_ALL = re.compile(
    "|".join(f"(?P<t{i}>(?<!\\w){pattern}(?!\\w))" for i, (pattern, _) in enumerate(TERMS)),
    re.IGNORECASE,
)


LABELS = {"p": "p-value", "confidence": "confidence", "q": "q-value",
          "distribution-free cross-check": "cross-check",
          "assumption warning": "cross-check"}  # evidence table rows  # fmt: skip


def label_term(what: str, prefix: str = "") -> str:
    """A row label of a claim's evidence table, linked when it is a statistics word."""
    anchor = LABELS.get(what)
    return f"[{what}]({prefix}{PAGE}#{anchor})" if anchor else what


def link_terms(text: str, prefix: str = "") -> str:
    """``text`` (Markdown already escaped) with the first use of each term linked to its
    definition; ``prefix``: the path from the page to the docs root."""
    seen: set[str] = set()

    def link(match: re.Match) -> str:
        anchor = TERMS[int(match.lastgroup[1:])][1]
        if anchor in seen:
            return match.group()
        seen.add(anchor)
        return f"[{match.group()}]({prefix}{PAGE}#{anchor})"

    return _ALL.sub(link, text)
