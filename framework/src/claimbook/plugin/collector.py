"""One record per claim instance, kept in this process: opened at collection, filled by
``measure`` and the report hooks, read as the instance's outcome.

The session opens a :class:`Record` for every claim instance it collects and keeps it in
the item's stash; ``measure`` appends to it, the makereport hook notes a crash or an
erratum failing as declared, a replay fills it from the stored outcome, and each phase
report (``pytest_runtest_logreport``) completes it. An instance has an outcome only once
its call phase reported (or its setup failed or skipped): an instance a stopped session
never finished has none, and the run's outcome counts it as missing. Nothing travels
through pytest's ``user_properties`` (the claims run in this one process: the plugin
refuses pytest-xdist) unless ``--claimbook-junit-values`` asks for the values in JUnit XML.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field

import pytest

from claimbook.declare.numbers import nonfinite_in

UNFINISHED = "the session ended before this instance finished"


@dataclass
class Record:
    """What the session knows of one claim instance, from collection to its outcome."""

    claim: dict  # the claim's validated declaration, as the results file keeps it
    instance: dict  # seed, params, sentence, test, file, line, source code, replay form, ...
    measures: list = field(default_factory=list)  # what measure() recorded, or the replay's
    crash: str = ""  # the call raised something other than a failed check: an error
    erratum_failed: bool = False  # an erratum failing as declared (pytest counts it xfailed)
    replayed: dict | None = None  # the stored outcome replayed instead of executing the test


RECORD = pytest.StashKey[Record]()


def junit_properties(record: Record) -> list[tuple[str, str]]:
    """The record as JUnit XML properties (``--claimbook-junit-values``), each value standard
    JSON (JUnit XML would otherwise write Python's repr)."""
    props = [("claimbook.claim", record.claim), ("claimbook.instance", record.instance)]
    props += [("claimbook.measure", m) for m in record.measures]
    props += [("claimbook.replayed", record.replayed)] if record.replayed else []
    return [(name, json.dumps(value, allow_nan=False)) for name, value in props]


def plain_param(value):
    """A test parameter as JSON keeps it: a plain value, else its repr."""
    return value if isinstance(value, int | float | str | bool | type(None)) else repr(value)


def sentence_of(function) -> str:
    """The claim: the docstring's first paragraph on one line."""
    return " ".join((inspect.getdoc(function) or "").split("\n\n")[0].split())


def source_of(function) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def message_of(report) -> str:
    """A report's one-line message: the assertion, the skip reason, or the error's last line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        lines = crash.message.splitlines()
        return lines[0] if lines else ""  # the assertion, not pytest's introspection
    if isinstance(report.longrepr, tuple):  # skips: (path, line, reason)
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    text = str(report.longrepr or "").strip()
    return text.splitlines()[-1] if text else ""


def _replay(inst: dict) -> str:
    """The instance's replay command, in its book's form (recorded with the instance)."""
    from claimbook.judge.claims import DEFAULT_REPLAY, replay_command  # the judge: on use

    return replay_command(inst["nodeid"], inst["seed"], inst.get("replay_form") or DEFAULT_REPLAY)


class ClaimCollector:
    """The session's records: claim instances by node id, and failing non-claim tests."""

    def __init__(self):
        self._records: dict[str, Record] = {}  # every claim instance collected
        self._instances: dict[str, dict] = {}  # those that reported, as results keep them
        self.other_failures: list[str] = []  # node ids of failing tests that are not claims

    def open(self, item, record: Record) -> None:
        """Keep ``record`` as ``item``'s, from its collection on."""
        item.stash[RECORD] = self._records[item.nodeid] = record

    def record(self, nodeid: str) -> Record | None:
        return self._records.get(nodeid)

    def add(self, report) -> None:
        """Take one phase report (setup, call or teardown) of one test."""
        record = self._records.get(report.nodeid)
        if record is None:
            if report.failed and report.nodeid not in self.other_failures:
                self.other_failures.append(report.nodeid)
            return
        inst = self._instances.setdefault(
            report.nodeid,
            {
                "nodeid": report.nodeid,
                "claim": record.claim,
                **record.instance,
                "outcome": None,
                "duration_s": 0.0,
                "measures": record.measures,
                "message": "",
            },
        )
        inst["duration_s"] += report.duration
        if record.replayed:  # replayed: say when and in which run it was measured
            entry = record.replayed
            inst["replayed"] = {
                "measured_at": entry["measured_at"],
                "seconds": entry.get("seconds"),
                "run": entry.get("run"),
            }
        if inst["outcome"] not in (None, "passed"):
            return  # the first non-pass phase decides
        if report.skipped and record.erratum_failed and report.when == "call":
            outcome = "failed"  # an erratum failing as declared
        elif report.skipped:
            outcome = "skipped"
        elif report.failed:
            crashed = report.when != "call" or bool(record.crash)
            outcome = "error" if crashed else "failed"
        else:
            if report.when == "call":
                inst["outcome"] = "passed"
            return
        inst["outcome"] = outcome
        replayed = record.replayed and report.when == "call"  # a teardown error is its own
        inst["message"] = record.replayed["message"] if replayed else message_of(report)
        if outcome in ("failed", "error"):
            inst["replay"] = _replay(inst)

    def reported(self) -> list[str]:
        """Node ids of the claim instances that finished with an outcome."""
        return [n for n, i in self._instances.items() if i["outcome"] is not None]

    def instances(self) -> list[dict]:
        """Every claim instance record. One that never finished is an ``error`` saying so, and
        so is one that measured a non-finite value, even if the test caught the exception."""
        out = []
        for inst in self._instances.values():
            bad = [m for m in inst["measures"] if m.get("nonfinite")]
            if inst["outcome"] is None:
                inst = {**inst, "outcome": "error", "message": UNFINISHED}
            elif bad and inst["outcome"] != "error":
                kinds = ", ".join(sorted(set(nonfinite_in(bad[0]["value"]))))
                message = f"measured value {bad[0]['name']!r} is {kinds} (the test went on past it)"
                inst = {**inst, "outcome": "error", "message": message}
            if inst["outcome"] == "error":
                inst["replay"] = _replay(inst)
            out.append(inst)
        return out
