"""Claim instances whose inputs are unchanged since they last ran: found before the tests
run, replayed instead of executed, and stored after each execution (the key and the store
are :mod:`claimbook.runs.claimcache`'s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from claimbook.declare.marker import spec_of
from claimbook.plugin.collector import RECORD, message_of
from claimbook.runs.claimcache import ClaimCache, session_context

_KEY = pytest.StashKey[str]()  # a claim instance's claim-cache key


class Reuse:
    """The stored outcomes of one session: ``replays`` maps node id -> stored outcome."""

    def __init__(self, config: pytest.Config, settings, folder: Path, enabled: bool, started):
        self.config, self.settings, self.started = config, settings, started
        self.cache = ClaimCache(folder, enabled=enabled)
        self.replays: dict[str, dict] = {}

    def _fresh_only(self) -> bool:
        """A named instance (a replay command) always executes afresh, with its traceback."""
        return any("::" in arg for arg in self.config.args)

    def _test_files(self, collected: set[Path]) -> list[Path]:
        """Every test module of the claims folder, whatever this run selected (AST-keyed)."""
        folder = self.settings.path("claims")
        patterns = self.config.getini("python_files")
        found = (
            {p for pattern in patterns for p in folder.rglob(pattern)} if folder.is_dir() else set()
        )
        return sorted(found | collected)

    def find(self, claim_items: list, seeds: list[int], collected: set[Path], has_runs) -> dict:
        """Key ``claim_items`` and note those whose stored outcome can be replayed (where
        ``has_runs(item)``: the runs it stood on are there); return {error name: count} of
        the instances that could not be keyed."""
        uncacheable: dict[str, int] = {}
        if not (self.cache.enabled and not self._fresh_only() and claim_items):
            return uncacheable
        root = self.config.rootpath
        self.cache.context = session_context(root, self._test_files(collected), self.settings)
        for item in claim_items:
            try:
                env = spec_of(item).env
                item.stash[_KEY] = key = self.cache.key(item, seeds, env)
                entry = self.cache.load(key)
            except Exception as exc:  # e.g. a missing corpus: the test itself will say so
                name = exc.__class__.__name__
                uncacheable[name] = uncacheable.get(name, 0) + 1
                continue
            # replayed only where the runs it stood on are: a lost leg's runs are then named
            if entry is not None and has_runs(item):
                self.replays[item.nodeid] = entry
        return uncacheable

    def replay(self, item, entry: dict) -> None:
        """Give ``item`` the stored measures and outcome of its last execution."""
        record = item.stash[RECORD]
        record.measures[:] = entry["measures"]  # in place: the collector holds this list
        record.replayed = entry
        if entry["outcome"] == "failed":  # short: the traceback would show this hook, not the test
            run = f" in {entry['run']}" if entry.get("run") else ""
            pytest.fail(
                f"(reused from {entry['measured_at']}{run}; its replay command runs it afresh) "
                f"{entry['message']}",
                pytrace=False,
            )

    def store(self, item, call, report) -> None:
        """Store an executed instance's pass or failure for reuse (never a crash or a skip)."""
        excinfo = call.excinfo
        if _KEY not in item.stash:
            return
        if excinfo is None:
            outcome = "passed"
        elif excinfo.errisinstance((AssertionError, pytest.fail.Exception)):
            outcome = "failed"
        else:
            return  # a crash runs again; a skip's reason may have changed by the next run
        measures = item.stash[RECORD].measures
        if any(m.get("nonfinite") for m in measures):
            return  # an error however the test ended (see ClaimCollector.instances)
        self.cache.store(
            item.stash[_KEY], outcome, message_of(report), measures, round(report.duration, 3),
            run="the run started " + self.started.isoformat("T", "seconds"),
        )  # fmt: skip
