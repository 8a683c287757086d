"""The corrections the suite's errata record, run afresh, and what each one states.

``recorded()`` runs every erratum claim of tests/claims that needs no training (each one
does, today) with a fresh Measure, once per parameter, and keeps the corrections it
records; ``boxes()`` names the boxes of its source text that a claim's anchors fall in (a
box is a drawn frame, ┌ to └; a line outside any frame is a box of its own);
``stated()`` reads a correction's numbers as {(subject, label, unit): values}, the
subject being the model named last before the number (LLaMA 70B, GPT-2 small), the label
the words just before it. Two corrections of one box disagree where they state the same
(subject, label, unit) with different values.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import itertools
import re
from pathlib import Path

from claimbook.declare.measure import Measure

from experiments.text_tables import norm

CLAIMS = Path(__file__).resolve().parents[1] / "claims"
NUMBER = re.compile(
    r"(?<![\w×.,-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
    r"(%|×|M(?![\w])| MiB| GiB| MB| GB| bytes)?(?![\w.]|,\d)"
)
SUBJECT = re.compile(r"(?:LLaMA|Llama|GPT-2|Mistral)(?: \d+(?:\.\d+)?B| \d(?![\d.])| small)?")
STOP = {"the", "of", "is", "its", "a", "an", "with", "and", "as", "at", "in", "for", "by"}


def _marks(fn) -> tuple[dict, list[dict]]:
    """A claim test's marker fields and each of its parameter combinations."""
    marks = getattr(fn, "pytestmark", [])
    claim = next((m for m in marks if m.name == "claim"), None)
    fields = {} if claim is None else dict(zip(("id", "level"), claim.args, strict=False))
    fields |= {} if claim is None else claim.kwargs
    combos = [{}]
    for m in marks:
        if m.name == "parametrize":
            names = (
                [n.strip() for n in m.args[0].split(",")]
                if isinstance(m.args[0], str)
                else m.args[0]
            )
            values = [v if len(names) > 1 else (v,) for v in m.args[1]]
            combos = [c | dict(zip(names, v, strict=True)) for c in combos for v in values]
    return fields, combos


def erratum_claims():
    """(claim id, its anchors, the test function, its parameter combinations) of every erratum
    claim whose test takes only ``measure`` and its parameters."""
    for path in sorted(CLAIMS.glob("test_*.py")):
        module = importlib.import_module(f"tests.claims.{path.stem}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            fields, combos = _marks(fn)
            if name.startswith("test_") and fields.get("erratum"):
                args = set(inspect.signature(fn).parameters) - {"measure"}
                if all(args <= set(c) for c in combos):
                    at = fields.get("at", ())
                    yield fields["id"], [at] if isinstance(at, str) else list(at), fn, combos


def corrections_of(fn, combos) -> list[str]:
    """The corrections ``fn`` records, over its parameter combinations, each once."""
    out = []
    for params in combos:
        measure = Measure([])
        with contextlib.suppress(AssertionError):  # an erratum fails as declared
            fn(**params, measure=measure)
        out += [p["value"] for p in measure.measures if p.get("correction")]
    return list(dict.fromkeys(out))


def boxes(text: str, anchors: list[str]) -> set[int]:
    """The first line of each box (drawn frame, or a lone line) holding one of the anchors."""
    lines, found = text.splitlines(), set()
    for anchor in anchors:
        for i, line in enumerate(lines):
            if norm(anchor) in norm(line):
                found.add(_box_start(lines, i))
    return found


def _box_start(lines: list[str], i: int) -> int:
    for j in range(i, -1, -1):
        if lines[j].lstrip().startswith("┌"):
            return j
        if lines[j].lstrip().startswith("└") and j != i:
            return i
        if not lines[j].lstrip().startswith(("│", "├", "┌")):
            return i
    return i


def _masked(correction: str) -> tuple[str, list[tuple[int, str]]]:
    """The correction with each model's name blanked (its digits are no quantity), a count
    that starts a label ("12 layers:", "×12 layers") made a word, "MLP (all)" read "MLP all";
    and where each name stands."""
    names = [(m.start(), m[0]) for m in SUBJECT.finditer(correction)]
    text = SUBJECT.sub(lambda m: "@" * len(m[0]), correction)
    text = re.sub(r"×(\d+)(?= [A-Za-z])", r"n\1", text)
    text = re.sub(r"(?<![\d,.])(\d+)(?= [A-Za-z][\w ]*:)", r"n\1", text)
    return re.sub(r"\((\w+)\)", r" \1 ", text), names


def stated(correction: str) -> dict[tuple, set[float]]:
    """The numbers a correction states, by (subject, label words, unit)."""
    text, names = _masked(correction)
    out: dict[tuple, set[float]] = {}
    previous, label = 0, ()
    for m in NUMBER.finditer(text):
        words = re.sub(r"[\s:(=×+*/-]+$", "", text[previous : m.start()])
        part = re.split(r"[:;(]|, ", words)[-1] if words else ""
        key = tuple(sorted(w for w in re.findall(r"[a-z0-9_]+", part.lower()) if w not in STOP))
        label = key or label
        subject = next((name for at, name in reversed(names) if at < m.start()), "")
        unit = (m[2] or "").strip()
        out.setdefault((subject, label, unit), set()).add(float(m[1].replace(",", "")))
        previous = m.end()
    return out


def disagreements(first: str, second: str) -> list[str]:
    """What two corrections of one box state differently: the same label and unit, of the same
    model (or of the box's, where one names none), with other values."""
    out = []
    for (s1, label, unit), v1 in stated(first).items():
        for (s2, label2, unit2), v2 in stated(second).items():
            same = (label, unit) == (label2, unit2) and (s1 == s2 or "" in (s1, s2))
            if same and v1 != v2:
                out.append(f"{s1 or s2} {' '.join(label)} ({unit}): {sorted(v1)} vs {sorted(v2)}")
    return out


def box_pairs(recorded: dict[str, tuple[set, list[str]]]):
    """Every pair of corrections, of two claims, that touch one box."""
    for (one, (box1, c1)), (two, (box2, c2)) in itertools.combinations(recorded.items(), 2):
        if box1 & box2:
            for x, y in itertools.product(c1, c2):
                yield one, two, x, y
