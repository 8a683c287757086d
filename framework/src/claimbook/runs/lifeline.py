"""Training workers that never outlive the driver.

On SIGTERM (CI runners, ``docker stop``, Slurm), :func:`sigterm_stops_training` ends the
driver's worker processes and raises KeyboardInterrupt in the main thread, so that the
cleanup of Ctrl-C runs (which stops every engine's workers). On SIGKILL the driver can do
nothing: its workers see it die themselves
(:func:`claimbook.runs.executors.die_with_parent`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Iterator


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
