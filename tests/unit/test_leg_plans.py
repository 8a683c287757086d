"""Training legs carry the plan they were cut from: legs of one round cut from different
plans (two durations files) are refused when their caches meet, naming both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from claimbook.runs.cache import RunCache
from claimbook.runs.pool import plan
from claimbook.storage.durations import SCHEMA

from tests.unit.cached_fns import square
from tests.unit.conftest import HEADER
from tests.unit.test_executors import ROOT, runs_of, session, union

POOLED = """
from claimbook import Training
from tests.unit.cached_fns import square

@claim(id="doc.pooled", level="established", source=DOC, section="2",
       trains=[Training(square, {"x": x}) for x in (3, 4, 5)])
def test_pooled(runs, seeds):
    '''Every seed's runs of three configs: each value is x squared plus its seed.'''
    for x in (3, 4, 5):
        assert [runs(square, {"x": x}, s)["value"] for s in seeds] == [x * x + s for s in seeds]
"""


def test_two_durations_files_cut_two_plans_and_the_split_is_told_apart(tmp_path):
    cache = RunCache(tmp_path, report=[].append)
    runs = runs_of(square, [{"x": x} for x in (3, 4, 5, 6)])
    even = plan(cache, runs, {}, 60.0, (1, 2))
    labels = [s["label"] for s in plan(cache, runs, {}, 60.0).specs]
    skewed = plan(cache, runs, {labels[0]: 1000.0, labels[1]: 1.0}, 60.0, (2, 2))
    assert even.cut["missing"] == skewed.cut["missing"]  # the same runs were missing
    assert even.cut["plan"] != skewed.cut["plan"]  # cut into parts differently
    assert plan(cache, runs, {}, 60.0, (2, 2)).cut == even.cut  # one plan, both parts


def test_legs_of_different_plans_are_refused_when_their_caches_meet(pytester, tmp_path):
    (pytester.path / "tests" / "unit").mkdir(parents=True)  # the toy training functions
    for name in ("__init__.py", "unit/__init__.py", "unit/cached_fns.py"):
        shutil.copy(ROOT / "tests" / name, pytester.path / "tests" / name)
    pytester.makepyfile(test_claims=HEADER + POOLED)
    leg1, leg2, merged = tmp_path / "leg1", tmp_path / "leg2", tmp_path / "merged"
    result, _ = session(pytester, leg1, "--claimbook-train-part=1/2")
    assert result.ret == 0, result.stdout.str()
    markers = list((leg1 / "legs").glob("plan-*.json"))
    labels = sorted(json.loads(p.read_text())["label"] for p in (leg1 / "square").glob("*.json"))
    durations = Path(pytester.path, "reports", "durations.json")
    durations.parent.mkdir(parents=True, exist_ok=True)
    durations.write_text(
        json.dumps({"schema": SCHEMA, "seconds": {labels[0]: 1000.0, labels[1]: 1.0}})
    )
    result, _ = session(pytester, leg2, "--claimbook-train-part=2/2")  # another plan
    assert result.ret == 0, result.stdout.str()
    durations.unlink()
    union([leg1, leg2], merged)
    result, _ = session(pytester, merged, "--claimbook-no-train")
    assert result.ret == 2
    out = result.stdout.str() + result.stderr.str()
    assert "split the same missing runs from different plans" in out
    assert markers[0].name in out
