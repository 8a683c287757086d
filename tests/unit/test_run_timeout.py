"""A hung training run is stopped at its limit on every engine: the claims reading it are
errors naming the run and the limit, its worker process is killed, the other runs train."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from claimbook.runs import executors

from tests.unit.conftest import HEADER

psutil = pytest.importorskip("psutil")  # a test dependency only: not in claimbook's own

ROOT = Path(__file__).resolve().parents[2]

BOOK = """
from claimbook import Training
from tests.unit.cached_fns import hangs, square

HUNG = {{"x": 1, "sleep": 300, "dir": {pids!r}}}

@claim(id="doc.hung", level="established", source=DOC, section="1",
       trains=[Training(hangs, HUNG)])
def test_hung(runs, seed):
    '''Reads a run whose training never ends.'''
    assert runs(hangs, HUNG, seed)["value"] == 1 + seed

@claim(id="doc.quick", level="established", source=DOC, section="2",
       trains=[Training(square, {{"x": 3}})])
def test_quick(runs, seed):
    '''Reads a run that trains at once.'''
    assert runs(square, {{"x": 3}}, seed)["value"] == 9 + seed
"""

# the limit is the factor times run_seconds (1 s, nothing is recorded), at least the floor;
# counted from the run's start in its worker, so an engine's job may take long to start
FACTOR = 10


@pytest.mark.parametrize("engine", executors.names())
def test_a_hung_run_is_stopped_at_its_limit_and_is_an_error_naming_it(engine, pytester, tmp_path):
    (pytester.path / "tests" / "unit").mkdir(parents=True)  # the toy training functions
    for name in ("__init__.py", "unit/__init__.py", "unit/cached_fns.py"):
        shutil.copy(ROOT / "tests" / name, pytester.path / "tests" / name)
    pytester.makepyprojecttoml(
        "[tool.claimbook]\nclaims = '.'\nrun_seconds = 1\nrun_timeout_floor = 1\n"
    )
    pids = tmp_path / "pids"
    pids.mkdir()
    pytester.makepyfile(test_claims=HEADER + BOOK.format(pids=str(pids)))
    os.environ["CLAIMBOOK_CACHE_DIR"] = str(tmp_path / "cache")
    factor = FACTOR
    start = time.monotonic()
    try:
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--claimbook-seeds=0", f"--claimbook-train-on={engine}",
            f"--claimbook-run-timeout-factor={factor}", "--claimbook-workers=2",
        )  # fmt: skip
    finally:
        del os.environ["CLAIMBOOK_CACHE_DIR"]
    took = time.monotonic() - start
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert took < factor + 40, out  # stopped at its limit, not after its 300 s
    (data,) = [json.loads(p.read_text()) for p in (pytester.path / "reports").rglob("run-*.json")]
    verdicts = {c["id"]: c["verdict"] for c in data["claims"]}
    assert verdicts == {"doc.hung": "error", "doc.quick": "holds"}, out
    hung = next(c for c in data["claims"] if c["id"] == "doc.hung")
    message = json.dumps(hung["instances"])
    assert f"hangs(x=1, sleep=300, dir={pids}) seed 0 was not trained" in message
    assert f"its training ran past its limit of {factor} s" in message
    (pid,) = [int(p.read_text()) for p in pids.glob("*.pid")]
    _, alive = psutil.wait_procs([psutil.Process(pid)] if psutil.pid_exists(pid) else [], 15)
    assert not alive, f"the hung run's worker {pid} is still running"


@pytest.mark.parametrize("value", ['"ten"', "-1", "nan", "true"])
def test_a_timeout_setting_that_is_not_a_number_at_least_0_names_itself(tmp_path, value):
    from claimbook.config import ConfigError, load

    (tmp_path / "pyproject.toml").write_text(f"[tool.claimbook]\nrun_timeout_factor = {value}\n")
    with pytest.raises(ConfigError, match="run_timeout_factor must be a number >= 0"):
        load(tmp_path / "pyproject.toml")


def test_a_timeout_factor_option_that_is_not_a_number_is_a_usage_error(pytester):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--claimbook-run-timeout-factor=-2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claimbook-run-timeout-factor must be a number >= 0*"])


def test_the_local_pool_stopped_for_a_hung_run_trains_the_others_again_uncounted(tmp_path):
    from claimbook.runs.cache import RunCache, Training
    from claimbook.runs.pool import plan, train_missing

    from tests.unit.cached_fns import hangs, slow_square

    hung = Training(hangs, {"x": 1, "sleep": 300, "dir": str(tmp_path)})
    slow = Training(slow_square, {"x": 2, "sleep": 8})
    recorded = {hung.label(0): 0.5, slow.label(0): 4.0}  # limits: 5 s and 40 s
    cache, lines = RunCache(tmp_path / "cache", report=[].append), []
    todo = plan(cache, {(hung, 0), (slow, 0)}, recorded, 60.0)
    done = train_missing(cache, todo, 2, lines.append, "local", (10, 1))
    assert list(done.computed) == [slow.label(0)], lines  # killed with the pool, then again
    assert list(done.failed) == [hung.label(0)]
    assert done.failed[hung.label(0)].startswith("its training ran past its limit of 5 s")
    assert not any("submitting it again" in line or "LOST" in line for line in lines), lines
