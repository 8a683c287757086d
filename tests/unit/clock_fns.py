"""Toy training functions for the run clock's tests (:mod:`tests.unit.test_run_clock`).

With ``CLOCK_FNS_SLOW_IMPORT`` set to "PID:SECONDS", every process but PID that imports
this module sleeps SECONDS first: workers that take long to start, as on a loaded machine
with heavy imports (they import it to read their run).
"""

import os
import time
from pathlib import Path

_pid, _, _seconds = os.environ.get("CLOCK_FNS_SLOW_IMPORT", "").partition(":")
if _pid and int(_pid) != os.getpid():
    time.sleep(float(_seconds))


def naps(config: dict, seed: int) -> dict:
    """Sleeps config["sleep"] seconds."""
    time.sleep(config["sleep"])
    return {"value": config["x"] + seed}


def hangs(config: dict, seed: int) -> dict:
    """Appends its start time to config["dir"]/X.log (a line a try), then sleeps
    config["sleep"] seconds: a hung training run, as far as the driver can tell."""
    with Path(config["dir"], f"{config['x']}.log").open("a") as log:
        log.write(f"{time.time()}\n")
    time.sleep(config["sleep"])
    return {"value": config["x"] + seed}
