"""The terminal summary says why pytest's counts (collected, deselected, passed) differ from
the claim instances a claims session ran: seeds held back for the planned looks, deselected
instances, and the seeds the looks added."""

from __future__ import annotations

import re

from tests.unit.test_looks import TYPICAL

PLAIN = """
@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(seed, measure):
    '''Two and two make four, whatever the seed.'''
    assert measure("sum", 2 + 2) == 4
"""


def _numbers(out: str) -> tuple[int, int, str]:
    collected = int(re.search(r"collected (\d+) items", out).group(1))
    passed = int(re.search(r"(\d+) passed", out.splitlines()[-1]).group(1))
    line = next(line for line in out.splitlines() if line.startswith("pytest's counts"))
    return collected, passed, line


def test_the_summary_accounts_for_held_seeds_and_those_the_looks_added(claims_project):
    result, data = claims_project(TYPICAL)
    collected, passed, line = _numbers(result.stdout.str())
    added = data["run"]["looks"]["extra_instances"]
    held = collected - 3  # every seed past the first look's three
    assert added == 2 and held > added
    assert line == (
        f"pytest's counts: of the {collected} items it collected (a claim test once per seed "
        f"and parameter), {held} later seeds held back for the planned looks, so 3 ran at "
        f"first; the planned looks then ran 2 held seeds: 5 tests in all"
    )
    assert passed == 5


def test_deselected_instances_are_counted_and_a_plain_run_needs_no_line(claims_project):
    result, _ = claims_project(TYPICAL + PLAIN, "-k", "sum")
    collected, passed, line = _numbers(result.stdout.str())
    assert "3 deselected (-k, -m or a shard), so 3 ran at first" in line
    assert f"of the {collected} items" in line and passed == 3
    result, _ = claims_project(PLAIN)
    assert "pytest's counts" not in result.stdout.str()  # 3 collected, 3 passed: nothing to say
