"""Training workers that never outlive the driver.

On SIGTERM (CI runners, ``docker stop``, Slurm), :func:`sigterm_stops_training` ends the
driver's worker processes and raises KeyboardInterrupt in the main thread, so that the
cleanup of Ctrl-C runs. On SIGKILL the driver can do nothing: each local pool worker asks
Linux in its initializer (:func:`die_with_parent`) for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``, the kernel's own mechanism: no polling thread).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def die_with_parent(parent: int) -> None:
    """In a worker: be killed when the process ``parent`` (the driver) dies. Linux only;
    elsewhere nothing (SIGTERM is still handled by the driver)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the driver died before the request: nobody will signal
        os._exit(1)


@contextlib.contextmanager
def sigterm_stops_training() -> Iterator[None]:
    """While the block runs, SIGTERM ends the worker processes and interrupts the driver as
    Ctrl-C would; the previous handler is restored after. Nothing outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        for worker in multiprocessing.active_children():
            worker.terminate()
        raise KeyboardInterrupt("stopped by SIGTERM")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
