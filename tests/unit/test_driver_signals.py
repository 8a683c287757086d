"""The local pool's workers end with the driver: on SIGTERM, and on SIGKILL."""

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

psutil = pytest.importorskip("psutil")  # a test dependency only: not in claimbook's own

ROOT = Path(__file__).resolve().parents[2]

DRIVER = textwrap.dedent(
    """
    import sys
    from claimbook.runs.cache import RunCache, Training
    from claimbook.runs.pool import plan, train_missing
    from tests.unit.cached_fns import slow_square

    cache = RunCache(sys.argv[1], report=print)
    runs = {(Training(slow_square, {"x": x, "sleep": 120}), 0) for x in range(2)}
    train_missing(cache, plan(cache, runs, {}, 60.0), 2, print)
    """
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux signals")


def _workers(driver: psutil.Process, count: int) -> list[psutil.Process]:
    """The driver's descendants once ``count`` of them are training (pool workers)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = driver.children(recursive=True)
        if sum("spawn_main" in " ".join(p.cmdline()) for p in found) >= count:
            time.sleep(1.0)  # let the workers take their runs
            return driver.children(recursive=True)
        time.sleep(0.2)
    raise AssertionError("the pool's workers never started")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_the_pools_workers_end_with_the_driver(tmp_path, signum):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(tmp_path / "cache")],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    children = []
    try:
        children = _workers(psutil.Process(proc.pid), count=2)
        proc.send_signal(signum)
        proc.wait(timeout=30)
        if signum == signal.SIGTERM:  # the driver stopped as on Ctrl-C, its cleanup run
            assert proc.returncode == -signal.SIGINT
        _, alive = psutil.wait_procs(children, timeout=10)
        assert not alive, f"still running after the driver ended: {[p.pid for p in alive]}"
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
