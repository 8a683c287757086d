"""Which run is the newest is the runs' own record (their place in the folder), never a
clock or a planted name; a link out of the folder is no run; two renders at once both end
well; a claim the site cannot show yet is named."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from claimbook.__main__ import main
from claimbook.storage.results import latest_results, previous_results, write_results

from tests.unit.conftest import HEADER

ONE = """
@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2, printed=4) == 4
"""

TWO = """
@claim(id="doc.product", level="established", source=DOC, section="1")
def test_product(measure):
    '''Two times two is four.'''
    assert measure("product", 2 * 2, printed=4) == 4
"""


def _run(started: datetime, partial: bool = False) -> dict:
    return {"started": started.isoformat(), "git_commit": "abc", "partial": partial}


def test_a_clock_stepped_back_or_a_planted_name_never_makes_a_run_the_newest(tmp_path, capsys):
    now = datetime.now(UTC)
    first = write_results(tmp_path, _run(now), [])
    second = write_results(tmp_path, _run(now - timedelta(days=1)), [])  # the clock went back
    assert latest_results(tmp_path, full=True) == second
    assert previous_results(tmp_path, second) == first
    planted = tmp_path / "run-99991231T000000.000000Z-evil-000000.json"  # a far-future name
    planted.write_text(json.dumps({"run": {"partial": False}, "claims": []}))
    assert latest_results(tmp_path, full=True) == second
    elsewhere = tmp_path.parent / "other-checkout"
    elsewhere.mkdir()
    target = elsewhere / "run-s999999-x.json"
    target.write_text(json.dumps({"run": {"partial": False}, "claims": []}))
    (tmp_path / "run-s999999-x.json").symlink_to(target)  # a link to another checkout's run
    assert latest_results(tmp_path, full=True) == second
    assert "links out of" in capsys.readouterr().err


def test_two_renders_at_once_both_succeed(pytester, monkeypatch):
    monkeypatch.delenv("CLAIMBOOK_CACHE_DIR", raising=False)
    pytester.makepyfile(test_claims=HEADER + ONE)
    pytester.runpytest("-p", "no:cacheprovider")
    command = [sys.executable, "-m", "claimbook", "render"]
    both = [subprocess.Popen(command, cwd=pytester.path, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]  # fmt: skip
    for process in both:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err


def test_a_claim_the_newest_complete_run_lacks_is_named(pytester, monkeypatch, capsys):
    monkeypatch.delenv("CLAIMBOOK_CACHE_DIR", raising=False)
    monkeypatch.chdir(pytester.path)
    pytester.makepyfile(test_claims=HEADER + ONE)
    pytester.runpytest("-p", "no:cacheprovider")
    pytester.makepyfile(test_claims=HEADER + ONE + TWO)
    pytester.runpytest("-p", "no:cacheprovider", "-k", "product")  # a partial run
    capsys.readouterr()
    assert main(["render"]) == 0
    err = capsys.readouterr().err
    assert "1 claims of the newest run" in err and "doc.product" in err
