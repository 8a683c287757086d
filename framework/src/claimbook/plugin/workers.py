"""pytest-xdist (``pytest -n N``) and claim tests: refused, with a usage error.

A claims run is judged in one process, from every instance's outcome: xdist's controller
collects nothing, so it would judge nothing and exit 0, while each worker trained on its
own. claimbook trains on its own pool instead (``--claimbook-workers``). So an xdist worker
that selects a claim test runs none of its tests and tells the controller, which then
writes nothing and ends the session with pytest's usage error (exit 4), saying to run
without ``-n``. A session under ``-n`` that selects no claim test (a project's unit
tests) runs as usual.
"""

from __future__ import annotations

import pytest

OUTPUT_KEY = "claimbook_claim_tests"  # in a worker's workeroutput: its selected claim tests
REFUSED = pytest.StashKey[int]()  # on the controller: the claim tests the workers selected


def refused(config: pytest.Config) -> bool:
    """Whether this controller refused the session (claim tests under ``-n``)."""
    return config.stash.get(REFUSED, 0) > 0


def refusal(count: int) -> str:
    tests = "a claim test" if count == 1 else f"{count} claim tests"
    return (
        f"claimbook: ERROR: pytest-xdist (-n) was given and {tests} selected: claimbook "
        "judges a run in one process and trains on its own pool (--claimbook-workers N), "
        "so nothing was run; run the claims without -n (or with -n 0)"
    )


class XdistGuard:
    """Counts the claim tests in each xdist worker, and refuses the session if any."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        output = getattr(self.config, "workeroutput", None)
        if output is None:  # not an xdist worker
            return
        count = sum(1 for item in session.items if item.get_closest_marker("claim"))
        output[OUTPUT_KEY] = count
        if count:
            session.items[:] = []  # nothing trains or runs in a worker

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        count = (getattr(node, "workeroutput", None) or {}).get(OUTPUT_KEY, 0)
        self.config.stash[REFUSED] = max(self.config.stash.get(REFUSED, 0), count)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if refused(self.config):
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if refused(self.config):
            terminalreporter.write_line(refusal(self.config.stash[REFUSED]), red=True, bold=True)
