"""Bad inputs are refused when the session starts, before anything is trained: a baseline of
the right schema and the wrong shape, and a results folder that is a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.unit.conftest import HEADER

ROOT = Path(__file__).resolve().parents[2]

BOOK = """
from claimbook import Training
from tests.unit.cached_fns import counted

LOG = {{"log": {log!r}, "cue": "count"}}

@claim(id="doc.trains", level="established", source=DOC, section="1",
       trains=[Training(counted, LOG)])
def test_trains(runs, seed):
    '''Reads one training run per seed.'''
    assert runs(counted, LOG, seed)["value"] == seed
"""


@pytest.fixture
def book(pytester, tmp_path, monkeypatch):
    """Runs the one-claim book in a subprocess; returns (result, how many runs trained)."""
    monkeypatch.setenv("CLAIMBOOK_CACHE_DIR", str(tmp_path / "cache"))
    (pytester.path / "tests" / "unit").mkdir(parents=True)  # the toy training functions
    for name in ("__init__.py", "unit/__init__.py", "unit/cached_fns.py"):
        shutil.copy(ROOT / "tests" / name, pytester.path / "tests" / name)
    log = tmp_path / "trained.log"
    pytester.makepyfile(test_claims=HEADER + BOOK.format(log=str(log)))

    def run(*args: str):
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--claimbook-workers=1",
                                               *args)  # fmt: skip
        return result, (log.read_text().count("\n") if log.exists() else 0)

    return run


def test_a_baseline_of_the_wrong_shape_is_refused_before_any_training(book, pytester):
    baseline = pytester.path / "reports" / "baseline.json"
    baseline.parent.mkdir()
    baseline.write_text(json.dumps({"schema": "claimbook.baseline/3", "seeds": "0,1,2",
                                    "claims": []}))  # fmt: skip
    result, trained = book()
    assert result.ret == 2 and trained == 0
    err = result.stderr.str()
    assert "refused before any training" in err and str(baseline) in err
    assert "seeds" in err  # the entry of the wrong shape, named
    result, trained = book("--claimbook-update-baseline")  # the way to replace it still runs
    assert trained == 3 and result.ret == pytest.ExitCode.OK, result.stdout.str()


def test_a_results_folder_that_is_a_file_is_refused_at_the_start(book, pytester):
    (pytester.path / "out.json").write_text("{}")
    result, trained = book("--claimbook-results-dir=out.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and trained == 0
    err = result.stderr.str()
    assert f"--claimbook-results-dir names {pytester.path / 'out.json'}, a file" in err
