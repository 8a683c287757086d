"""The session-wide collector: test reports in, claim instance records out.

It reads only what ``pytest_runtest_logreport`` delivers (report outcome,
``user_properties``, durations), so it works the same under pytest-xdist. An
instance has an outcome only once its call phase reported (or its setup failed or
skipped): an instance a stopped session never finished has none, and the run's
outcome counts it as missing.
"""

from __future__ import annotations

import inspect
from collections import defaultdict

from claimbook.declare.measure import MEASURE_KEY
from claimbook.declare.numbers import nonfinite_in

CLAIM_KEY, INSTANCE_KEY = "claimbook.claim", "claimbook.instance"
CRASH_KEY, XFAIL_KEY = "claimbook.crash", "claimbook.erratum-failed"
REPLAY_KEY = "claimbook.replayed"  # the stored outcome an unchanged instance replays
UNFINISHED = "the session ended before this instance finished"


def keep_foreign(properties: list) -> list:
    """``properties`` without claimbook's own (a new list: the item keeps its own)."""
    return [(k, v) for k, v in properties if not str(k).startswith("claimbook.")]


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
    """Accumulates test reports: claim instances by node id, and failing non-claim tests."""

    def __init__(self):
        self._instances: dict[str, dict] = {}
        self.other_failures: list[str] = []  # node ids of failing tests that are not claims

    def add(self, report) -> None:
        """Take one phase report (setup, call or teardown) of one test."""
        props = defaultdict(list)
        for key, value in report.user_properties:
            props[key].append(value)
        if CLAIM_KEY not in props:
            if report.failed and report.nodeid not in self.other_failures:
                self.other_failures.append(report.nodeid)
            return
        inst = self._instances.setdefault(
            report.nodeid,
            {
                "nodeid": report.nodeid,
                "claim": props[CLAIM_KEY][0],
                **props[INSTANCE_KEY][0],
                "outcome": None,
                "duration_s": 0.0,
                "measures": [],
                "message": "",
            },
        )
        inst["duration_s"] += report.duration
        if props[REPLAY_KEY]:  # replayed: say when and in which run it was measured
            entry = props[REPLAY_KEY][0]
            inst["replayed"] = {
                "measured_at": entry["measured_at"],
                "seconds": entry.get("seconds"),
                "run": entry.get("run"),
            }
        if props[MEASURE_KEY]:
            inst["measures"] = props[MEASURE_KEY]
        if inst["outcome"] not in (None, "passed"):
            return  # the first non-pass phase decides
        if report.skipped and XFAIL_KEY in props:  # an erratum failing as declared
            outcome = "failed"
        elif report.skipped:
            outcome = "skipped"
        elif report.failed:
            crashed = report.when != "call" or CRASH_KEY in props
            outcome = "error" if crashed else "failed"
        else:
            if report.when == "call":
                inst["outcome"] = "passed"
            return
        inst["outcome"] = outcome
        replayed = props[REPLAY_KEY] and report.when == "call"  # a teardown error is its own
        inst["message"] = props[REPLAY_KEY][0]["message"] if replayed else message_of(report)
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
