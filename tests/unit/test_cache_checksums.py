"""Issue 25, finding 3: a cache entry whose content changed is named and recomputed, never used.

Each cache (training runs, claim outcomes, figures) keeps a sha256 of an entry's content
with it and checks it on every read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from claimbook.render.site import FigureStore
from claimbook.runs.cache import RunCache
from claimbook.storage.atomic import write_json

from tests.unit import cached_fns
from tests.unit.cached_fns import square
from tests.unit.conftest import claim_of

REFUTED = """
@claim(id="doc.sum", level="established", source=DOC, section="1", printed={"sum": 4})
def test_sum(seed, measure):
    '''Two and two make five.'''
    assert measure("sum", 2 + 2, printed=4) == 5
"""

RUNS = """
from claimbook import Training
from tests.unit.cached_fns import square


@claim(id="doc.runs", level="established", source=DOC, section="1",
       trains=[Training(square, {"x": 3})])
def test_runs(runs, seed, measure):
    '''Reads its declared run.'''
    assert measure("value", runs(square, {"x": 3}, seed)["value"]) == 9 + seed
"""

NAMED = "*claimbook: cache entry *{}* fails its checksum (corrupted): {}*"


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if "crashes" not in p.parts)


def test_a_stored_failure_edited_to_a_pass_is_named_and_the_claim_still_fails(
    claims_project, pytester
):
    result, first = claims_project(REFUTED)
    assert result.ret == 1 and claim_of(first, "doc.sum")["verdict"] == "refuted"
    stored = _entries(pytester.path / ".claimbook-cache" / "claims")
    assert len(stored) == 3  # seeds 0, 1, 2
    for path in stored:
        path.write_text(path.read_text().replace('"failed"', '"passed"'))
    result, second = claims_project(REFUTED)
    assert result.ret == 1, result.stdout.str()  # never "passed" from an edited entry
    assert claim_of(second, "doc.sum")["verdict"] == "refuted"
    assert second["run"]["claims_executed"] == 3 and second["run"]["claims_replayed"] == 0
    result.stdout.fnmatch_lines([NAMED.format(stored[0].name, "recomputed")])


def test_a_flipped_digit_in_a_run_entry_is_named_and_the_run_recomputed(claims_project, pytester):
    _, first = claims_project(RUNS)
    assert claim_of(first, "doc.runs")["verdict"] == "holds"
    entries = _entries(pytester.path / ".claimbook-cache")
    runs = [p for p in entries if p.parent.name == "square"]
    assert len(runs) == 3
    flipped = next(p for p in runs if '"value": 9' in p.read_text())  # seed 0's run
    flipped.write_text(flipped.read_text().replace('"value": 9', '"value": 8'))
    result, second = claims_project(RUNS)
    assert result.ret == 0, result.stdout.str()
    assert claim_of(second, "doc.runs")["verdict"] == "holds"  # no false refutation
    assert second["run"]["runs_computed"] == 1
    result.stdout.fnmatch_lines([NAMED.format(flipped.name, "recomputed")])
    assert '"value": 9' in flipped.read_text()


def test_the_run_cache_never_returns_an_entry_that_fails_its_checksum(tmp_path):
    cached_fns.CALLS.clear()
    RunCache(tmp_path, report=[].append)(square, {"x": 3}, 1)
    (entry,) = (tmp_path / "square").glob("*.json")
    assert json.loads(entry.read_text())["checksum"]  # written with one
    entry.write_text(entry.read_text().replace('"value": 10', '"value": 11'))
    lines: list[str] = []
    again = RunCache(tmp_path, report=lines.append)
    assert again(square, {"x": 3}, 1) == {"value": 10}
    assert cached_fns.CALLS == [(3, 1), (3, 1)] and again.computed == 1
    assert f"claimbook: cache entry {entry} fails its checksum (corrupted): recomputed" in lines


def test_an_entry_without_a_checksum_is_recomputed(tmp_path):
    """An older claimbook's entry (no checksum) cannot bypass the check: it is a miss."""
    cached_fns.CALLS.clear()
    RunCache(tmp_path, report=[].append)(square, {"x": 2}, 0)
    (entry,) = (tmp_path / "square").glob("*.json")
    old = json.loads(entry.read_text())
    del old["checksum"]
    old["result"] = {"value": 5}
    write_json(entry, old)
    lines: list[str] = []
    assert RunCache(tmp_path, report=lines.append)(square, {"x": 2}, 0) == {"value": 4}
    assert any("has no checksum" in line for line in lines)


def test_a_corrupted_figure_is_named_and_redrawn(tmp_path):
    drawn: list[int] = []

    def draw(value, path: Path) -> bool:
        drawn.append(value)
        path.write_bytes(b"png " + str(value).encode())
        return True

    lines: list[str] = []
    store = FigureStore(tmp_path / "store", report=lines.append)
    assert store.draw(draw, 7, tmp_path / "a" / "f.png")
    (stored,) = (tmp_path / "store").iterdir()
    stored.write_bytes(b"png 8")  # one digit flipped
    again = FigureStore(tmp_path / "store", report=lines.append)
    assert again.draw(draw, 7, tmp_path / "b" / "f.png")
    assert drawn == [7, 7]
    assert (tmp_path / "b" / "f.png").read_bytes() == b"png 7"
    assert lines == [f"claimbook: cache entry {stored} fails its checksum (corrupted): redrawn"]
    assert [p.read_bytes() for p in (tmp_path / "store").iterdir()] == [b"png 7"]
    # an intact figure is copied, not drawn again
    assert FigureStore(tmp_path / "store", report=lines.append).draw(draw, 7, tmp_path / "c.png")
    assert drawn == [7, 7] and len(lines) == 1
    assert re.fullmatch(r"[0-9a-f]{32}\.[0-9a-f]{64}\.png", stored.name)
