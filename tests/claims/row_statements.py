"""Table rows against their sections' whole statements, facet by facet.

A summary table's row says, in a few words, what each method it names changed, what drove it
and what it bought. Its section says the same at length. Both are read here along two facets,
by the words below (our reading, declared once):

- quality: exact (the same mathematics) or lossy (an approximation, "nearly the same quality");
- phase: what the method makes affordable, training or inference (generation, decoding, the
  KV cache).

A method's statement is its bullet in the body ("• FlashAttention (...) changes no
mathematics. ..."), else the idea paragraph of the step whose heading names it, else the body's
sentences that name it. A row disagrees with a method's statement on a facet when both say
something about it and nothing in common: the row credits the method with what its section
does not say, and leaves out what it does.
"""

from __future__ import annotations

import re

from experiments.text_tables import tab_rows

FACETS: dict[str, dict[str, str]] = {
    "quality": {
        "exact": r"\bexact(?:ly)?\b|changes no mathematics",
        "lossy": r"approximat|nearly the same quality|costs? some quality|lost quality",
    },
    "phase": {
        "training": r"\btrain(?:ing|s|ed)?\b",
        "inference": r"\binference\b|\bgenerat(?:ion|es|ing)\b|\bdecod(?:e|es|ing)\b"
        r"|\bcach(?:e|es)\b",
    },
}  # fmt: skip


def facets(words: str) -> dict[str, set[str]]:
    """What a stretch of text says on each facet."""
    return {
        facet: {value for value, pattern in values.items() if re.search(pattern, words, re.I)}
        for facet, values in FACETS.items()
    }


def _idea(lines: list[str], heading: int) -> str:
    """The idea of the step whose heading is at ``heading``: its 'The idea' block, else its
    opening paragraphs, up to the next subheading (a line ending in the pilcrow)."""
    heads = [i for i in range(heading + 1, len(lines)) if lines[i].endswith("¶")]
    start = next((i for i in heads if lines[i].startswith("The idea")), heading)
    end = next((i for i in heads if i > start), len(lines))
    return " ".join(lines[start + 1 : end])


def statement(text: str, method: str) -> str:
    """The body's statement of one method (see the module's docstring); "" if none."""
    lines, name = text.splitlines(), re.escape(method)
    bullet = [
        ln for ln in lines
        if re.match(rf"• (?:[^(]{{0,40}}\b{name}\b|[^(]{{0,40}}\({name};)", ln)
        and not re.match(r"• [^,(]+, \d{4},", ln)  # a reading-list entry cites, never states
    ]  # fmt: skip
    if bullet:
        return bullet[0]
    steps = [i for i, ln in enumerate(lines) if re.match(r"Step \d \((?:major|minor)\)", ln)]
    headed = [i for i in steps if re.search(rf"\b{name}\b", lines[i], re.I)]
    if headed:
        return _idea(lines, headed[0])
    body = " ".join(lines[steps[0] :]) if steps else text
    first = re.escape(method.split()[0])  # "Bahdanau attention": "Bahdanau, Cho and Bengio"
    return " ".join(s for s in re.split(r"(?<=\.) ", body) if re.search(rf"\b{first}\b", s))


def post_mortem_rows(text: str) -> list[tuple[str, list[str], str]]:
    """(row label, the methods it moves to, what the row and the reading below it say)."""
    reading = re.search(
        r"what the model can express: (.*?)\. The later ones are about what the "
        r"hardware can afford: (.*?)\.",
        text,
    )
    terms = re.split(r",? then ", reading[1]) + re.split(r",? then ", reading[2])
    rows = tab_rows(text, "Replacement\tPressure that drove it")
    out = []
    for i, (replacement, *cells) in enumerate(rows):
        target = replacement.split(" to ")[-1].replace(" (for text)", "")
        said = " ".join(cells) + (f" {terms[i]}" if i < len(terms) else "")
        out.append((replacement, target.split(", "), said))
    return out


def evolution_rows(text: str) -> list[tuple[str, list[str], str]]:
    """(row label, the methods it names, what it says of them): a description with one
    ';'-part per named step is paired with them, else it describes each."""
    out = []
    for _, step, _, says in tab_rows(text, "Year\tStep\tLevel"):
        names, parts = step.split(", "), says.split("; ")
        if len(parts) == len(names) > 1:
            out += [(f"{step}: {n}", [n], p) for n, p in zip(names, parts, strict=True)]
        else:
            out.append((step, names, says))
    return out


def disagreements(text: str, rows) -> list[dict]:
    """Every (row, method, facet) where the row and the method's statement say something
    about the facet and have nothing in common."""
    found = []
    for label, methods, said in rows:
        row = facets(said)
        for method in methods:
            body = facets(statement(text, method))
            for facet, values in row.items():
                if values and body[facet] and not values & body[facet]:
                    found.append({"row": label, "method": method, "facet": facet,
                                  "row says": sorted(values),
                                  "body says": sorted(body[facet])})  # fmt: skip
    return found


def checked(text: str, readings: dict[tuple[str, str, str], str], measure) -> list[str]:
    """Both lineage tables' rows against their methods' statements: every disagreement is
    measured; those a declared reading saves (``readings``: (row, method, facet) -> why) are
    remarks, any other is returned, and so is a declared reading the text no longer needs."""
    rows = post_mortem_rows(text) + evolution_rows(text)
    found = disagreements(text, rows)
    measure("row, method and facet pairs compared", sum(len(m) for _, m, _ in rows) * len(FACETS))
    for d in found:
        row, body = ", ".join(d["row says"]), ", ".join(d["body says"])
        measure(f"{d['row']}: {d['method']}, {d['facet']}", f"row: {row}; its step: {body}")
    keys = [(d["row"], d["method"], d["facet"]) for d in found]
    bad = [f"{r}: {m} ({f})" for r, m, f in keys if (r, m, f) not in readings]
    return bad + [f"declared reading no longer needed: {k}" for k in set(readings) - set(keys)]
