"""What both sources' attribution claims share: each citation's year beside the record's, and
each part of a model a citation is credited with beside the paper that introduced it."""

from __future__ import annotations

from experiments import literature_record as record
from tests.claims.component_record import credits, names, who


def years_against_record(found, measure) -> list:
    """Measure each citation's recorded year beside its printed one; the record's problems."""
    bad = []
    for c in found:
        work, problems = record.resolve(c)
        measure(str(c), work.year if work else None, printed=str(c.year))
        bad += problems
    return bad


def parts_against_record(text: str, measure) -> list:
    """Measure who introduced each part a citation is credited with (the component record);
    the credits of a part introduced after the cited work."""
    found = credits(text)
    measure("parts credited to a cited work", len(found))
    for c in found:
        measure(f"line {c.line}, {c.part}: introduced by", who(c.by))
    bad = [c for c in found if c.anachronistic]
    measure("parts credited to a work older than the part", [str(c) for c in bad])
    return bad


def part_correction(c) -> str:
    """The correction of one anachronistic credit: who introduced the part, where, and when."""
    return (
        f"Line {c.line}: the {c.part} is not in the work cited there ({c.cited}); it was "
        f"introduced by {who(c.by)}, {c.by.venue}. Credit it there, e.g. 'the {c.part} (added "
        f"by {names(c.by)}, {c.by.year})'."
    )
