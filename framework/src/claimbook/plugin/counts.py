"""Why pytest's counts differ from a claims session's: one line for the terminal summary.

pytest counts items: each claim test once per seed and parameter, the seeds of later looks
included (``collected 17 items``), then the outcomes of what ran (``8 passed``). claimbook
holds the later seeds back until a planned look asks for them, and -k, -m or a shard
deselect some, so the two counts differ by what this line says.
"""

from __future__ import annotations


def counts_lines(claims) -> list[str]:
    """The line on pytest's counts (none where they need no explaining: nothing held back,
    deselected or added, or no claims session to explain)."""
    if claims.outcome is None or claims.leg is not None:
        return []
    looks = claims.looks
    added = looks.counts["extra_instances"] + looks.counts["free_instances"]
    chosen = claims.selection
    held, deselected, first = looks.held, chosen.deselected, chosen.total - added
    if not (held or deselected or added):
        return []
    parts = [f"{held} later seeds held back for the planned looks"] if held else []
    parts += [f"{deselected} deselected (-k, -m or a shard)"] if deselected else []
    line = (
        f"pytest's counts: of the {first + held + deselected} items it collected (a claim test "
        f"once per seed and parameter), {' and '.join(parts)}, so {first} ran at first"
    )
    if added:
        line += f"; the planned looks then ran {added} held seeds: {first + added} tests in all"
    return [line]
