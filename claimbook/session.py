"""The session-wide collector: test reports in, claims with verdicts out.

It reads only what ``pytest_runtest_logreport`` delivers (report outcome,
``user_properties``, durations), so it works the same under pytest-xdist.
"""

from __future__ import annotations

from collections import defaultdict

from claimbook.measure import MEASURE_KEY
from claimbook.spec import ClaimSpec
from claimbook.verdicts import Instance, decide

CLAIM_KEY, INSTANCE_KEY = "claimbook.claim", "claimbook.instance"
CRASH_KEY, XFAIL_KEY = "claimbook.crash", "claimbook.erratum-failed"
REPLAY_KEY = "claimbook.replayed"  # the stored outcome an unchanged instance replays


def replay_command(nodeid: str, seed: int | None) -> str:
    """The one command that re-runs a single claim instance."""
    seeds = f" --seeds {seed}" if seed is not None else ""
    return f'nox -s claims -- "{nodeid}"{seeds}'


def message_of(report) -> str:
    """A report's one-line message: the assertion, the skip reason, or the error's last line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message.splitlines()[0]  # the assertion, not pytest's introspection
    if isinstance(report.longrepr, tuple):  # skips: (path, line, reason)
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    text = str(report.longrepr or "").strip()
    return text.splitlines()[-1] if text else ""


class ClaimCollector:
    """Accumulates claim-test reports; :meth:`claims` gives their verdicts."""

    def __init__(self):
        self._instances: dict[str, dict] = {}
        self.other_failures = 0  # failing tests that are not claims

    def add(self, report) -> None:
        """Take one phase report (setup, call or teardown) of one test."""
        props = defaultdict(list)
        for key, value in report.user_properties:
            props[key].append(value)
        if CLAIM_KEY not in props:
            if report.failed:
                self.other_failures += 1
            return
        inst = self._instances.setdefault(
            report.nodeid,
            {
                "nodeid": report.nodeid,
                "claim": props[CLAIM_KEY][0],
                **props[INSTANCE_KEY][0],
                "outcome": "passed",
                "duration_s": 0.0,
                "measures": [],
                "message": "",
            },
        )
        inst["duration_s"] += report.duration
        if props[REPLAY_KEY]:  # replayed: say when it was measured, and how long it took then
            entry = props[REPLAY_KEY][0]
            inst["replayed"] = {
                "measured_at": entry["measured_at"],
                "seconds": entry.get("seconds"),
            }
        if props[MEASURE_KEY]:
            inst["measures"] = props[MEASURE_KEY]
        if inst["outcome"] != "passed":
            return  # the first non-pass phase decides
        if report.skipped and XFAIL_KEY in props:  # an erratum failing as declared
            inst["outcome"] = "failed"
        elif report.skipped:
            inst["outcome"] = "skipped"
        elif report.failed:
            crashed = report.when != "call" or CRASH_KEY in props
            inst["outcome"] = "error" if crashed else "failed"
        else:
            return
        inst["message"] = (
            props[REPLAY_KEY][0]["message"] if props[REPLAY_KEY] else message_of(report)
        )
        if inst["outcome"] in ("failed", "error"):
            inst["replay"] = replay_command(report.nodeid, inst["seed"])

    def claims(self, complete: bool = True) -> list[dict]:
        """One record per claim: its spec, test, verdict and instances, in collection order.

        ``complete``: the run covered the default seeds and every test (see
        :func:`claimbook.verdicts.decide`).
        """
        return claims_from_instances(list(self._instances.values()), complete)


def claims_from_instances(instances: list[dict], complete: bool = True) -> list[dict]:
    """Group instance records (each with its ``claim`` spec dict, sentence, test, file, line
    and source code) into claim records with verdicts, in order of first appearance."""
    by_id: dict[str, list[dict]] = defaultdict(list)
    for inst in instances:
        by_id[inst["claim"]["id"]].append(inst)
    records = []
    for insts in by_id.values():
        spec = ClaimSpec.from_dict(insts[0]["claim"])
        verdict = decide(
            spec.level,
            [Instance(i["seed"], i["params"], i["outcome"]) for i in insts],
            spec.erratum,
            complete,
        )
        note = verdict.note
        if verdict.verdict == "skipped":  # say why, not only that
            note = "; ".join(sorted({i["message"] for i in insts if i["message"]}))
        first = insts[0]
        checks = [
            m["reproduced"] for i in insts for m in i["measures"] if m.get("reproduced") is not None
        ]
        records.append(
            {
                **spec.to_dict(),
                "sentence": first["sentence"],
                "test": first["test"],
                "file": first["file"],
                "line": first["line"],
                "source_code": first.get("source_code", ""),
                "verdict": verdict.verdict,
                "gates": verdict.gates,
                "seeds_passed": verdict.seeds_passed,
                "seeds_total": verdict.seeds_total,
                "note": note,
                # printed numbers that reproduce / printed numbers judged
                "printed_reproduced": [sum(checks), len(checks)] if checks else None,
                "instances": [
                    {
                        k: v
                        for k, v in i.items()
                        if k not in ("claim", "sentence", "test", "file", "line", "source_code")
                    }
                    for i in insts
                ],
            }
        )
    return records
