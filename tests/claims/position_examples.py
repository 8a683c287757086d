"""Worked examples that name positions, read from a text and held against the rule around them.

An example names which token attends to which, which window a token sees, or which position
predicts which token. Its rule comes from the setting the text states in the example's
section (the lines between the headings around it): causal (a decoder position sees itself
and earlier positions, and predicts the token after it) or bidirectional (an encoder
position sees both sides; a masked position predicts its own token). A section that names
neither takes the document's setting, causal for both texts (decoder-only models). An
example is wrong when it breaks the rule of every setting its section states; it holds
through a reading when it keeps one setting's rule and breaks another's.

Each reader returns ``(name, {setting: holds})`` pairs; nothing here is an expected answer.
"""

from __future__ import annotations

import itertools
import re

from experiments.text_tables import norm

CAUSAL, BIDIRECTIONAL = "causal", "bidirectional"
MARKERS = {
    CAUSAL: r"causal|decoder-only|autoregressive|left-to-right|PREDICT NEXT|\bpredict",
    BIDIRECTIONAL: r"\[CLS\]|bidirectional|\bBERT\b|encoder|masked language",
}


def _heading(lines: list[str], i: int) -> bool:
    s = lines[i].strip()
    blank = (i == 0 or not lines[i - 1].strip()) and (
        i + 1 >= len(lines) or not lines[i + 1].strip()
    )
    return (
        blank
        and bool(s)
        and len(s) < 70
        and not lines[i][:1].isspace()
        and not re.search(r"[.,;:)\]│─┐┘]$|[=#]", s)
        and not re.match(r"[•\d┌│└├]|Step \d|[A-Z][a-z]*:", s)
    )


def section(text: str, at: int) -> str:
    """The lines of the section holding character offset ``at``: from the heading before it
    to the next heading."""
    lines = text.splitlines()
    row = text.count("\n", 0, at)
    start = next((i for i in range(row, -1, -1) if _heading(lines, i)), 0)
    end = next((i for i in range(row + 1, len(lines)) if _heading(lines, i)), len(lines))
    return "\n".join(lines[start:end])


def settings(text: str, at: int) -> set[str]:
    """The settings the section around ``at`` states (the document's causal one if none)."""
    sec = section(text, at)
    found = {name for name, pattern in MARKERS.items() if re.search(pattern, sec)}
    return found or {CAUSAL}


def _judge(text: str, at: int, rules: dict) -> dict[str, bool]:
    """Each setting of the section around ``at`` with whether the example keeps its rule."""
    return {s: bool(rules[s]) for s in sorted(settings(text, at))}


def _position(words: list[str], word: str, nth: int = 1) -> int:
    return [i for i, w in enumerate(words) if w == word][nth - 1]


def _words(phrase: str) -> list[str]:
    return re.findall(r"[\w\[\]?]+", phrase)


# dd2 ------------------------------------------------------------------------------------------


def windows(text: str) -> list:
    """'Token t attends to tokens a-b': inside one's own past (causal), or a window centred on
    the token (bidirectional)."""
    out = []
    for m in re.finditer(r"Token (\d+) attends to tokens (\d+)-(\d+)", text):
        t, lo, hi = (int(x) for x in m.groups())
        rules = {CAUSAL: lo <= hi <= t, BIDIRECTIONAL: lo <= t <= hi and t - lo == hi - t}
        out.append((norm(m[0]), _judge(text, m.start(), rules)))
    return out


def strides(text: str) -> list:
    """'Token t attends to tokens 0, k, 2k, ...': one stride, through the token's own residue;
    causal: none after the token."""
    out = []
    for m in re.finditer(r"Token (\d+) attends to tokens ((?:\d+, )+)\.\.\.", text):
        t, keys = int(m[1]), [int(x) for x in m[2].rstrip(", ").split(", ")]
        steps = {b - a for a, b in itertools.pairwise(keys)}
        stride = len(steps) == 1 and next(iter(steps)) > 0 and (t - keys[0]) % keys[1] == 0
        rules = {CAUSAL: stride and max(keys) <= t, BIDIRECTIONAL: stride}
        out.append((norm(m[0]), _judge(text, m.start(), rules)))
    return out


def induction_box(text: str) -> list:
    """The circuit box: the previous-token step attends back; the induction step, at the
    repeated token, predicts the token that followed its first occurrence."""
    ctx = re.search(r'Context: "([^"]+)"', text)
    words = _words(ctx[1]) if ctx else []
    out = []
    for m in re.finditer(r'At "(\w+)", attend to "(\w+)"', text):
        q, k = _position(words, m[1]), _position(words, m[2])
        rules = {CAUSAL: k < q, BIDIRECTIONAL: True}
        out.append((norm(m[0]), _judge(text, m.start(), rules)))
    m = re.search(r'At second "(\w+)".*?Predict: "(\w+)"', text, re.S)
    if m and words:
        first, second = _position(words, m[1]), _position(words, m[1], 2)
        follows = words[first + 1] == m[2] and first + 1 < second
        next_slot = second + 1 < len(words) and words[second + 1] == "[???]"
        rules = {CAUSAL: follows and next_slot, BIDIRECTIONAL: follows}
        out.append((f'at second "{m[1]}", predict "{m[2]}"', _judge(text, m.start(), rules)))
    return out


def previous_token_prose(text: str) -> list:
    """'When processing "A," it looks at "B" and writes ... what followed (C)': the position
    of A must see C (causal: C at or before A)."""
    ctx = _words(re.search(r'Context: "([^"]+)"', text)[1])
    out = []
    pattern = r'When processing "(\w+)," it looks at "(\w+)" and writes information about '
    for m in re.finditer(pattern + r"what followed \((\w+)\)", text):
        at, about = _position(ctx, m[1]), _position(ctx, m[3])
        rules = {CAUSAL: about <= at, BIDIRECTIONAL: True}
        out.append((norm(m[0]), _judge(text, m.start(), rules)))
    return out


def _sentence_with(text: str, wanted: list[str]) -> list[str]:
    for phrase in re.findall(r'"([A-Za-z ]{5,})', text):
        words = _words(phrase)
        if all(w in words for w in wanted):
            return words
    return []


def moving_information(text: str) -> list:
    """'attend from "X" → "Y"' and 'the prediction that "X" ... is correct' inside the sentence
    they quote: causal, X's position reads only earlier words and predicts the word after X;
    masked (bidirectional), X's position predicts X."""
    out = []
    for m in re.finditer(r'In "([^"]+)":', text):
        words, sec = _words(m[1]), section(text, m.start())
        for a in re.finditer(r'attend from "(\w+)" → "(\w+)"', sec):
            rules = {CAUSAL: words.index(a[2]) < words.index(a[1]), BIDIRECTIONAL: True}
            out.append((norm(a[0]), _judge(text, m.start(), rules)))
        for p in re.finditer(r'from "(\w+)".*?the prediction that "(\w+)"', sec, re.S):
            at, target = words.index(p[1]), words.index(p[2])
            rules = {CAUSAL: target == at + 1, BIDIRECTIONAL: target == at}
            label = f'attention at "{p[1]}" informs the prediction of "{p[2]}"'
            out.append((label, _judge(text, m.start(), rules)))
    return out


def causal_claims(text: str) -> list:
    """'in causal models, the representation of "A" at layer n contains information about "B"
    and "C"': stated causal, so B and C must come at or before A."""
    out = []
    pattern = r'in causal models, the representation of "(\w+)" at layer \d+ contains '
    for m in re.finditer(pattern + r'information about "(\w+)" and "(\w+)"', text):
        words = _sentence_with(text, list(m.groups()))
        at = words.index(m[1])
        out.append((norm(m[0]), {CAUSAL: all(words.index(w) <= at for w in m.groups()[1:])}))
    return out


def mask_matrix(text: str) -> list:
    """The printed mask: row i allows exactly the keys the stated rule allows."""
    found = re.finditer(r"^pos (\d) +\[([\d ]+)\]$", text, re.M)
    rows = [[int(x) for x in m[2].split()] for m in found]
    at = text.find("Attention Mask (for")
    n = len(rows)
    rules = {
        CAUSAL: rows == [[int(j <= i) for j in range(n)] for i in range(n)],
        BIDIRECTIONAL: rows == [[1] * n for _ in range(n)],
    }
    return [(f"{n} x {n} mask", _judge(text, at, rules))] if rows else []


def weights_row(text: str) -> list:
    """'Example for position p ("w")': the row covers positions 0..p (causal), and the words
    it names are those positions' words."""
    example = r'Example for position (\d+) \("(\w+)"\):\s+# weights might be \[([\d., ]+)\]'
    m = re.search(example, text)
    if not m:
        return []
    p, row = int(m[1]), m[3].split(",")
    named = re.findall(r'\d+% (?:attention )?to "(\w+)"', text[m.end() : m.end() + 200])
    words = _sentence_with(text, [m[2], *named])
    ok = words.index(m[2]) == p and named == words[: p + 1]
    rules = {CAUSAL: ok and len(row) == p + 1, BIDIRECTIONAL: len(row) == len(words)}
    return [(f"weights for position {p}", _judge(text, m.start(), rules))]


# ch04 -----------------------------------------------------------------------------------------


def _pairs(text: str) -> int:
    return int(re.search(r"N_PAIRS, N_SYM = (\d+), \d+", text)[1])


def recall_distances(text: str) -> list:
    """'(d tokens for the last pair, D for the first)': counted back from the query at the end
    of 'k v k v ... k v query', key i at position 2i."""
    m = re.search(r"\((\d+) tokens for the last pair, (\d+) for the first\)", text)
    n = _pairs(text)
    back = [2 * n - 2 * i for i in range(n)]  # the query at 2n
    ok = (back[-1], back[0]) == (int(m[1]), int(m[2]))
    return [(norm(m[0]), _judge(text, m.start(), {CAUSAL: ok, BIDIRECTIONAL: ok}))]


def conv_window(text: str) -> list:
    """'A L-layer convolution with kernel k sees the last w tokens, so it can reach at most the
    last p pairs': a causal window of L(k-1)+1 positions ending at the query."""
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
    pattern = r"A (\d+)-layer convolution with kernel (\d+) sees the last (\d+) tokens, so it "
    m = re.search(pattern + r"can reach at most the last (\w+) pairs", text)
    layers, k, w = int(m[1]), int(m[2]), int(m[3])
    reach = layers * (k - 1) + 1
    keys = [d for d in range(2, 2 * _pairs(text) + 1, 2) if d < reach]  # back from the query
    ok = w == reach and len(keys) == words.get(m[4], -1)
    return [(norm(m[0]), _judge(text, m.start(), {CAUSAL: ok}))]


def heatmap_columns(text: str) -> list:
    """'each head's weights over the n earlier tokens', of the query of a 'k v ... k v query'
    sequence in causal attention (is_causal=True: a position sees itself and the positions
    before it): the weights cover 2 x pairs + 1 positions."""
    m = re.search(r"each head's weights over the (\d+) earlier tokens", text)
    self_included = "is_causal=True" in text
    columns = 2 * _pairs(text) + self_included
    return [(norm(m[0]), _judge(text, m.start(), {CAUSAL: int(m[1]) == columns}))]


def induction_prose(text: str) -> list:
    """'the value token that follows the matching key' and 'copied each key into the value
    token after it': in the generator's 'k v' order the value comes one after its key, and
    layer 1 copies forward (causal)."""
    m = re.search(r"the single value token that follows the matching key", text)
    order = "# k v k v ... k v" in text
    copy = re.search(r"copied each key into the value token (after|before) it", text)
    ok = order and m is not None and copy[1] == "after"
    return [(norm(copy[0]), _judge(text, copy.start(), {CAUSAL: ok}))]


def scored_position(text: str) -> list:
    """'cross_entropy(logits[:, i], answer)  # only the final prediction is scored': the query,
    last in the sequence, is the position whose prediction is the answer."""
    m = re.search(r"cross_entropy\(logits\[:, (-?\d+)\], answer\)\s+# only the final", text)
    return [(norm(m[0]), _judge(text, m.start(), {CAUSAL: int(m[1]) == -1}))]


def pair_count(text: str) -> list:
    """'pair n is the ordinal key-value pair', pairs counted from 0."""
    ordinals = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]
    ordinals += ["ninth", "tenth"]
    m = re.search(r"so pair (\d+) is the (\w+) key-value pair", text)
    ok = m[2] in ordinals and ordinals.index(m[2]) == int(m[1])
    return [(norm(m[0]), _judge(text, m.start(), {CAUSAL: ok}))]


DD2_EXAMPLES = {
    "local windows": windows,
    "strided patterns": strides,
    "induction circuit box": induction_box,
    "previous-token head prose": previous_token_prose,
    "moving information": moving_information,
    "stated-causal representations": causal_claims,
    "causal mask matrix": mask_matrix,
    "example weights row": weights_row,
}
CH04_EXAMPLES = {
    "recall key distances": recall_distances,
    "convolution window": conv_window,
    "heatmap columns": heatmap_columns,
    "induction circuit prose": induction_prose,
    "scored position": scored_position,
    "pair numbering": pair_count,
}


def verdicts(found: list) -> tuple[list[str], list[str]]:
    """The examples that break the rule of every setting their section states, and those
    that hold through only some of them (a reading)."""
    wrong = [name for name, by in found if not any(by.values())]
    reading = [name for name, by in found if any(by.values()) and not all(by.values())]
    return wrong, reading
