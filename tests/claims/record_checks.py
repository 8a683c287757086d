"""What both sources' attribution claims share: each citation's year beside the record's."""

from __future__ import annotations

from experiments import literature_record as record


def years_against_record(found, measure) -> list:
    """Measure each citation's recorded year beside its printed one; the record's problems."""
    bad = []
    for c in found:
        work, problems = record.resolve(c)
        measure(str(c), work.year if work else None, printed=str(c.year))
        bad += problems
    return bad
