"""Every engine's workers end with the driver: on SIGTERM, and on SIGKILL (the local
pool's processes, Dask's worker processes, submitit-local's controllers and jobs)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from claimbook.runs import executors

psutil = pytest.importorskip("psutil")  # a test dependency only: not in claimbook's own

ROOT = Path(__file__).resolve().parents[2]

DRIVER = textwrap.dedent(
    """
    import sys
    from claimbook.runs.cache import RunCache, Training
    from claimbook.runs.pool import plan, train_missing
    from tests.unit.cached_fns import hangs

    if __name__ == "__main__":  # engines spawn processes that may import this file
        cache = RunCache(sys.argv[1], report=print)
        runs = {(Training(hangs, {"x": x, "sleep": 120, "dir": sys.argv[2]}), 0)
                for x in range(2)}
        train_missing(cache, plan(cache, runs, {}, 60.0), 2, print, sys.argv[3])
    """
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux signals")


def _workers(driver: psutil.Process, pids: Path, count: int) -> list[psutil.Process]:
    """The driver's descendants once ``count`` runs are training (each wrote its pid)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if len(list(pids.glob("*.pid"))) >= count:
            time.sleep(0.5)
            return driver.children(recursive=True)
        time.sleep(0.2)
    raise AssertionError("the runs never started")


@pytest.mark.parametrize("engine", executors.names())
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_the_workers_end_with_the_driver(tmp_path, engine, signum):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    script, pids = tmp_path / "driver.py", tmp_path / "pids"
    script.write_text(DRIVER)
    pids.mkdir()
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "cache"), str(pids), engine],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    children = []
    try:
        children = _workers(psutil.Process(proc.pid), pids, count=2)
        trainers = [int(p.read_text()) for p in pids.glob("*.pid")]
        assert set(trainers) <= {c.pid for c in children}  # they are the driver's
        proc.send_signal(signum)
        proc.wait(timeout=30)
        if signum == signal.SIGTERM:  # the driver stopped as on Ctrl-C, its cleanup run
            assert proc.returncode == -signal.SIGINT
        _, alive = psutil.wait_procs(children, timeout=15)
        left = [(p.pid, " ".join(p.cmdline())[:80]) for p in alive]
        assert not alive, f"still running after the driver ended: {left}"
    finally:
        proc.kill()
        proc.wait()
        for child in children:  # what a failing run left behind
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()


def test_training_restores_the_previous_sigterm_handler(tmp_path):
    from claimbook.runs.cache import RunCache, Training
    from claimbook.runs.pool import plan, train_missing

    from tests.unit.cached_fns import square

    before = signal.getsignal(signal.SIGTERM)
    cache = RunCache(tmp_path, report=[].append)
    todo = plan(cache, {(Training(square, {"x": 5}), 0)}, {}, 60.0)
    assert len(train_missing(cache, todo, 1, [].append).computed) == 1
    assert signal.getsignal(signal.SIGTERM) is before
