"""Figure labels against the grammar of their examples: the deep dive's syntactic head catalogue.

Each entry of the catalogue is a label ("DIRECT OBJECT HEADS"), an example sentence with
bracketed words and an arrow drawn under it from one word to another. The arrow's two ends are
read from the columns of its marks (a mark on a space may belong to either neighbour: both are
tried, and the label holds if either reading fits). The grammatical role of each pair of words
is our reading of each example, written once below in plain terms (which word is the subject,
the direct or indirect object, the determiner, the antecedent); a label holds when the pair
the arrow links has one of the roles the label names.
"""

from __future__ import annotations

import re

# example (brackets removed) -> {frozenset({word, word}): the role of that pair}
GRAMMAR: dict[str, dict[frozenset, str]] = {
    "The cat that I saw sleeps": {
        frozenset({"sleeps", "cat"}): "subject",  # the cat sleeps
        frozenset({"saw", "I"}): "subject",
        frozenset({"saw", "cat"}): "direct object",  # (that) I saw the cat
    },
    "She gave him the book": {
        frozenset({"gave", "She"}): "subject",
        frozenset({"gave", "him"}): "indirect object",  # the recipient
        frozenset({"gave", "book"}): "direct object",  # the thing given
        frozenset({"the", "book"}): "determiner",
    },
    "the big red ball": {
        frozenset({"the", "ball"}): "determiner",
        frozenset({"big", "ball"}): "adjective",
        frozenset({"red", "ball"}): "adjective",
    },
    "John said he would come": {
        frozenset({"said", "John"}): "subject",
        frozenset({"he", "John"}): "antecedent",
        frozenset({"come", "he"}): "subject",
    },
    "The cat licked itself": {
        frozenset({"licked", "cat"}): "subject",
        frozenset({"licked", "itself"}): "direct object",
        frozenset({"itself", "cat"}): "reflexive antecedent",
    },
}

# label -> the roles a pair it links may have
LABELS: dict[str, set[str]] = {
    "SUBJECT-VERB": {"subject"},
    "DIRECT OBJECT": {"direct object"},
    "INDIRECT OBJECT": {"indirect object"},
    "DETERMINER-NOUN": {"determiner", "adjective"},
    "COREFERENCE": {"antecedent", "reflexive antecedent"},
    "RARE/REFLEXIVE": {"reflexive antecedent"},
}


def _words(line: str) -> list[tuple[int, int, str]]:
    """(first column, last column, word) of each word of an example line."""
    return [(m.start(), m.end() - 1, m[0]) for m in re.finditer(r"[A-Za-z]+", line)]


def _at(line: str, col: int) -> set[str]:
    """The word at a column; on a space, either neighbour."""
    words = _words(line)
    hit = {w for a, b, w in words if a <= col <= b}
    if hit:
        return hit
    return {w for a, b, w in words if b == col - 1 or a == col + 1}


def entries(text: str) -> list[dict]:
    """The catalogue's entries: label, example, and the word pairs its arrow may link."""
    lines, found = text.splitlines(), []
    for i, line in enumerate(lines):
        label = re.match(r"│\s+([A-Z][A-Z/ -]+?) HEADS\s*│?$", line.rstrip())
        if not label:
            continue
        ex_line = next(x for x in lines[i + 1 : i + 4] if '"' in x)
        arrow = lines[lines.index(ex_line, i) + 1]
        example = re.search(r'"([^"]+)"', ex_line)[1]
        starts = [j for j, ch in enumerate(arrow) if ch == "↑"]
        ends = [j for j, ch in enumerate(arrow) if ch == "┘"]
        named = re.search(r'attends strongly to "(\w+)"', arrow)
        froms = _at(ex_line, starts[0]) if starts else set()
        tos = {named[1]} if named else (_at(ex_line, ends[0]) if ends else set())
        pairs = [frozenset({a, b}) for a in sorted(froms) for b in sorted(tos) if a != b]
        found.append({"line": i + 1, "label": label[1], "example": re.sub(r"[\[\]]", "", example),
                      "printed": example, "pairs": pairs})  # fmt: skip
    return found


def check(entry: dict) -> tuple[list[str], str | None]:
    """The roles of the pairs the arrow may link, and what is wrong (None: the label fits)."""
    if entry["example"] not in GRAMMAR:  # an error: our reading has no entry for it
        raise LookupError(f"no grammatical reading of {entry['example']!r} in GRAMMAR")
    if entry["label"] not in LABELS:
        raise LookupError(f"no roles for the label {entry['label']!r} in LABELS")
    roles = [GRAMMAR[entry["example"]].get(p, "no relation") for p in entry["pairs"]]
    if not roles:
        return roles, "the arrow links no two words"
    if LABELS[entry["label"]] & set(roles):
        return roles, None
    return roles, f"labelled {entry['label']}, the arrow links a pair whose role is {roles}"


def correction(entry: dict) -> str:
    """Where the arrow of a mislabelled entry should point, from the example's grammar."""
    grammar, wanted = GRAMMAR[entry["example"]], LABELS[entry["label"]]
    ends = {w for p in entry["pairs"] for w in p}
    shown = "; ".join(f"{' and '.join(_q(p))}: {grammar.get(p, 'no relation')}"
                      for p in entry["pairs"])  # fmt: skip
    right = [f"{' and '.join(_q(p))} ({r})" for p, r in grammar.items() if r in wanted and p & ends]
    return (
        f'{entry["label"]} HEADS, "{entry["printed"]}": the arrow links {shown}. A '
        f"{entry['label'].lower()} head links {'; '.join(right) or 'no pair of this example'}: "
        "draw the arrow between those words, or name the entry by the role its arrow shows."
    )


def _q(pair: frozenset) -> list[str]:
    return [f'"{w}"' for w in sorted(pair, key=str.lower)]
