"""The pytest plugin: options, the claim marker, fixtures, and the end-of-run gate.

Registered through the ``pytest11`` entry point, so any pytest run in an
environment with claimbook installed knows ``@claim``, ``seed``, ``seeds``,
``measure`` and ``runs``. A run that collects no claim test behaves like
plain pytest and writes nothing.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from claimbook.baseline import BaselineError, compare, diff_table, load_baseline, write_baseline
from claimbook.cache import RunCache
from claimbook.claimcache import ClaimCache
from claimbook.history import History
from claimbook.measure import MEASURE_KEY, Measure
from claimbook.results import provenance, write_results
from claimbook.schedule import available_cores, instance_runs, parse_shard, shard_of, train_missing
from claimbook.seeds import DEFAULT_SEEDS, parse_seeds
from claimbook.session import (
    CLAIM_KEY,
    CRASH_KEY,
    INSTANCE_KEY,
    REPLAY_KEY,
    XFAIL_KEY,
    ClaimCollector,
    message_of,
)
from claimbook.spec import ClaimDeclarationError, validate
from claimbook.table import verdict_table

_SESSION = pytest.StashKey["ClaimSession"]()
_RUNS = pytest.StashKey[set]()  # the (Training, seed) runs a claim instance reads
_KEY = pytest.StashKey[str]()  # its claim-cache key


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _workers(text: str) -> int:
    if text == "auto":
        return available_cores()
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--workers expects a number >= 1 or auto, got {text!r}")
    return int(text)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("claimbook", "claimbook: claims tested across seeds")
    group.addoption(
        "--seeds",
        type=parse_seeds,
        default=parse_seeds(DEFAULT_SEEDS),
        metavar="LIST",
        help=f"seeds to run each seeded claim with, e.g. 0,1,2 or 0-4 (default: {DEFAULT_SEEDS})",
    )
    group.addoption(
        "--results-dir",
        default="reports/results",
        metavar="DIR",
        help="where the run's results JSON is written (default: reports/results)",
    )
    group.addoption(
        "--no-cache",
        action="store_true",
        help="recompute every training run and execute every claim test; read no cache",
    )
    group.addoption(
        "--workers",
        type=_workers,
        default="auto",
        metavar="N",
        help="processes that train runs at once, one thread each (default: auto, every core)",
    )
    group.addoption(
        "--shard",
        type=_shard,
        default=None,
        metavar="I/N",
        help="run part I of N: a fixed split in which the claims reading one training run "
        "stay together; merge the N results files with `nox -s site -- FILES`",
    )
    group.addoption(
        "--baseline",
        default="reports/baseline.json",
        metavar="FILE",
        help="the accepted state this run is compared with (default: reports/baseline.json)",
    )
    group.addoption(
        "--update-baseline",
        action="store_true",
        help="accept this run: rewrite the baseline from it (needs a full run with no gating "
        "verdict); regressions against the old baseline are reported, not failed",
    )
    group.addoption(
        "--history",
        default="reports/history.sqlite",
        metavar="FILE",
        help="SQLite file every run is appended to (default: reports/history.sqlite)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "claim(id, level, source, section, printed=None, scope='', erratum='', figure=None, "
        "remark=''): "
        "the test checks a claim of a source document (see claimbook.claim)",
    )
    session = ClaimSession(config)
    config.stash[_SESSION] = session
    config.pluginmanager.register(session, "claimbook-session")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "seed" in metafunc.fixturenames:
        seeds = metafunc.config.getoption("seeds")
        metafunc.parametrize("seed", seeds, ids=[f"seed{s}" for s in seeds])


def _plain_param(value):
    return value if isinstance(value, (int, float, str, bool, type(None))) else repr(value)


def _sentence(function) -> str:
    """The claim: the docstring's first paragraph on one line."""
    return " ".join((inspect.getdoc(function) or "").split("\n\n")[0].split())


def _source(function) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def pytest_collection_modifyitems(session, config, items) -> None:
    owners: dict[str, str] = {}
    described: dict[object, tuple[str, str]] = {}  # function -> (sentence, source), once each
    for item in items:
        marker = item.get_closest_marker("claim")
        if marker is None:
            continue
        try:
            spec = validate(item.nodeid, marker.args, marker.kwargs)
        except ClaimDeclarationError as exc:
            raise pytest.UsageError(str(exc)) from None
        test = item.nodeid.split("[")[0]
        owner = owners.setdefault(spec.id, test)
        if owner != test:
            raise pytest.UsageError(
                f"{test}: claim marker: id {spec.id!r} is already used by {owner}"
            )
        if item.function not in described:
            described[item.function] = (_sentence(item.function), _source(item.function))
        sentence, source_code = described[item.function]
        if not sentence:
            raise pytest.UsageError(f"{test}: claim marker: the test needs a docstring (the claim)")
        params = dict(item.callspec.params) if hasattr(item, "callspec") else {}
        seed = params.pop("seed", None)
        path, line, _ = item.location
        item.user_properties.append((CLAIM_KEY, spec.to_dict()))
        instance = {
            "seed": seed,
            "params": {k: _plain_param(v) for k, v in params.items()},
            "sentence": sentence,
            "test": test,
            "file": path,
            "line": (line or 0) + 1,
            "source_code": source_code,
        }
        item.user_properties.append((INSTANCE_KEY, instance))
        trains = marker.kwargs.get("trains") or ()
        try:
            item.stash[_RUNS] = instance_runs(
                trains, item.callspec.params if hasattr(item, "callspec") else {},
                item.fixturenames, config.getoption("seeds"),
            )  # fmt: skip
        except ValueError as exc:
            raise pytest.UsageError(f"{test}: claim marker: {exc}") from None
    if config.getoption("shard"):
        _keep_shard(config, items)


def _keep_shard(config: pytest.Config, items: list) -> None:
    """Deselect every claim instance outside this shard (see :func:`shard_of`)."""
    index, count = config.getoption("shard")
    runs = {item.nodeid: item.stash.get(_RUNS, set()) for item in items}
    assigned = shard_of(runs, count)
    kept = [item for item in items if assigned[item.nodeid] == index - 1]
    dropped = [item for item in items if assigned[item.nodeid] != index - 1]
    config.stash[_SESSION].shard_dropped = len(dropped)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[_SESSION].total = len(session.items)  # after -k deselection


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Before the first test: decide which instances replay, and train what the rest read."""
    if not session.config.option.collectonly:
        session.config.stash[_SESSION].prepare(session.items)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem) -> bool | None:
    """Replay an unchanged claim instance instead of calling it (raises as the test did)."""
    claims = pyfuncitem.config.stash[_SESSION]
    entry = claims.replays.get(pyfuncitem.nodeid)
    if entry is None:
        return None
    claims.replay(pyfuncitem, entry)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Hold a claim test to the training runs it declares."""
    runs = item.config.stash[_SESSION].cache
    runs.declared = item.stash.get(_RUNS, set()) if item.get_closest_marker("claim") else None
    try:
        return (yield)
    finally:
        runs.declared = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    excinfo = call.excinfo
    claims = item.config.stash[_SESSION]
    if (
        call.when == "call"
        and item.get_closest_marker("claim")
        and item.nodeid not in claims.replays
    ):
        claims.remember(item, call, report)
    expected = (AssertionError, pytest.fail.Exception, pytest.skip.Exception)
    if call.when == "call" and excinfo is not None and not excinfo.errisinstance(expected):
        # a crash is an error, never a refutation
        report.user_properties.append((CRASH_KEY, f"{excinfo.typename}: {excinfo.value}"[:500]))
    elif call.when == "call" and report.failed and (marker := item.get_closest_marker("claim")):
        erratum = marker.kwargs.get("erratum")
        if erratum:  # failing as declared: pytest counts it as xfailed, the verdict as failed
            report.outcome, report.wasxfail = "skipped", f"erratum: {erratum}"
            report.user_properties.append((XFAIL_KEY, True))
    return report


@pytest.fixture(scope="session")
def seeds(pytestconfig) -> list[int]:
    """Every seed of this run (``--seeds``), for claims about all seeds at once."""
    return list(pytestconfig.getoption("seeds"))


@pytest.fixture
def measure(request) -> Measure:
    """Record measured values: ``measure(name, value, printed=None, unit=None, x=None)``."""
    return Measure(request.node.user_properties)


@pytest.fixture(scope="session")
def runs(pytestconfig) -> RunCache:
    """Cached experiment runs: ``runs(fn, config, seed)`` computes ``fn(config, seed)`` once."""
    return pytestconfig.stash[_SESSION].cache


class ClaimSession:
    """One pytest session's claims: collects reports, decides, writes, gates, prints."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.started = datetime.now(UTC)
        self.collector = ClaimCollector()
        self.total = 0
        self.done = 0
        self.deselected = 0
        self.results_path: Path | None = None
        self.claims: list[dict] = []
        self.comparison: dict | None = None
        self.partial = False
        self.messages: list[str] = []  # printed in the terminal summary
        cache_dir = Path(
            os.environ.get("CLAIMBOOK_CACHE_DIR") or config.rootpath / ".claimbook-cache"
        )
        fresh = config.getoption("no_cache")
        self.cache = RunCache(cache_dir, self.say, enabled=not fresh)
        self.claim_cache = ClaimCache(cache_dir / "claims", enabled=not fresh)
        self.replays: dict[str, dict] = {}  # node id -> stored outcome, for unchanged instances
        self.executed = 0
        self.shard_dropped = 0
        self.training = None  # what the pool trained (schedule.TrainingReport)

    def prepare(self, items: list) -> None:
        """Key every claim instance, find the unchanged ones, train the runs the rest read."""
        seeds = self.config.getoption("seeds")
        needed, uncacheable = set(), {}
        for item in items:
            if item.get_closest_marker("claim") is None or not hasattr(item, "function"):
                continue
            try:
                item.stash[_KEY] = key = self.claim_cache.key(item, seeds)
            except Exception as exc:  # e.g. a missing corpus: the test itself will say so
                uncacheable[exc.__class__.__name__] = uncacheable.get(exc.__class__.__name__, 0) + 1
                key = None
            entry = self.claim_cache.load(key) if key else None
            if entry is not None:
                self.replays[item.nodeid] = entry
            else:
                needed |= item.stash.get(_RUNS, set())
        for error, count in uncacheable.items():
            self.messages.append(f"{count} claim tests executed without a stored outcome: {error}")
        if self.replays:
            self.say(f"{len(self.replays)} claim tests unchanged since they last ran: reused")
        self.training = train_missing(
            self.cache, needed, self.config.getoption("workers"), self.say
        )

    def replay(self, item, entry: dict) -> None:
        """Give ``item`` the stored measures and outcome of its last execution."""
        item.user_properties.extend((MEASURE_KEY, m) for m in entry["measures"])
        item.user_properties.append((REPLAY_KEY, entry))
        if entry["outcome"] == "failed":  # short: the traceback would show this hook, not the test
            pytest.fail(f"(reused from {entry['measured_at']}) {entry['message']}", pytrace=False)
        if entry["outcome"] == "skipped":
            pytest.skip(entry["message"])

    def remember(self, item, call, report) -> None:
        """Count an executed claim instance; store its outcome (not a crash, nor without a key)."""
        self.executed += 1
        excinfo = call.excinfo
        if _KEY not in item.stash:
            return
        if excinfo is None:
            outcome = "passed"
        elif excinfo.errisinstance(pytest.skip.Exception):
            outcome = "skipped"
        elif excinfo.errisinstance((AssertionError, pytest.fail.Exception)):
            outcome = "failed"
        else:
            return
        measures = [v for k, v in item.user_properties if k == MEASURE_KEY]
        self.claim_cache.store(
            item.stash[_KEY], outcome, message_of(report), measures, round(report.duration, 3)
        )

    def say(self, line: str) -> None:
        """Print a progress line now, even while the test's output is captured."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if reporter is None:  # e.g. an xdist worker
            return
        text = f"[claimbook {self.done}/{self.total} tests done] {line}"
        if capture is None:
            reporter.write_line(text)
            return
        with capture.global_and_fixture_disabled():
            reporter.ensure_newline()
            reporter.write_line(text)

    def pytest_deselected(self, items) -> None:
        self.deselected += len(items)

    def pytest_runtest_logreport(self, report) -> None:
        self.collector.add(report)
        if report.when == "teardown":
            self.done += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):  # an xdist worker: the controller reports
            return
        seeds = self.config.getoption("seeds")
        # a replayed test, a -k subset or fewer seeds than the default: the site keeps
        # showing the last full run, and an erratum that holds here is not called fixed
        selected = (  # partial for a reason other than being a shard
            self.deselected > self.shard_dropped
            or any("::" in a for a in self.config.args)
            or not set(parse_seeds(DEFAULT_SEEDS)) <= set(seeds)
        )
        partial = selected or bool(self.shard_dropped)
        self.partial = partial
        self.claims = self.collector.claims(complete=not partial)
        if not self.claims and not self.shard_dropped:
            return  # no claim test ran; an empty shard still writes its (empty) results
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.shard_dropped:
            session.exitstatus = pytest.ExitCode.OK
        config = self.config
        run = provenance(config.rootpath, self.started, seeds, list(config.invocation_params.args))
        run["partial"] = partial
        run["runs_computed"], run["runs_read"] = self.cache.computed, self.cache.read
        run["workers"] = self.training.workers if self.training else 0
        run["training_wall_s"] = round(self.training.wall_s, 3) if self.training else 0.0
        run["claims_executed"], run["claims_replayed"] = self.executed, len(self.replays)
        shard = self.config.getoption("shard")
        run["shard"] = (
            {"index": shard[0], "count": shard[1], "selected": selected} if shard else None
        )
        update = config.getoption("update_baseline")
        self.comparison = self._compare(run)
        regressions = bool(self.comparison and self.comparison.get("regressions"))
        broken = bool(self.comparison and self.comparison.get("error"))
        gating = any(c["gates"] for c in self.claims)
        refusal = self._baseline_refusal(partial) if update else None
        run["baseline_update"] = None if not update else refusal or "written"
        failed = gating or broken or refusal or (regressions and not update)
        run["exit_status"] = 1 if failed else 0
        results_dir = config.rootpath / config.getoption("results_dir")
        results = {"run": run, "claims": self.claims, "comparison": self.comparison}
        self.results_path = write_results(results_dir, run, self.claims, self.comparison)
        self._append_history(results)
        if update and not refusal:
            write_baseline(self._path("baseline"), results)
            self.messages.append(
                f"baseline updated: {self._path('baseline')} ({len(self.claims)} claims)"
            )
        elif refusal:
            self.messages.append(f"{refusal}; {self._path('baseline')} is unchanged")
        if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            failed = run["exit_status"] or self.collector.other_failures
            session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK

    def _path(self, option: str) -> Path:
        return self.config.rootpath / self.config.getoption(option)

    def _compare(self, run: dict) -> dict | None:
        """This run against the baseline; None without one, {"error": ...} if it is unreadable."""
        path = self._path("baseline")
        try:
            baseline = load_baseline(path)
        except BaselineError as exc:
            return {"error": str(exc)}
        if baseline is None:
            self.messages.append(
                f"no baseline at {path}: nothing to compare with; accept this run with "
                "`nox -s claims -- --update-baseline`"
            )
            return None
        comparison = compare(baseline, {"run": run, "claims": self.claims})
        comparison["baseline"] = str(path.relative_to(self.config.rootpath))
        comparison["baseline_commit"] = baseline.get("commit")
        comparison["accepted"] = bool(self.config.getoption("update_baseline"))
        return comparison

    def _append_history(self, results: dict) -> None:
        try:
            history = History(self._path("history"), self.messages.append)
            history.append(results, self.results_path.name)
            history.close()
        except (OSError, sqlite3.Error) as exc:  # the history never blocks a run
            self.messages.append(f"history not updated: {exc}")

    def _baseline_refusal(self, partial: bool) -> str | None:
        """Why this run cannot become the baseline, or None if it can."""
        if partial:
            return (
                f"baseline NOT updated: --update-baseline needs a full run (every claim, seeds "
                f"{DEFAULT_SEEDS} at least) and this one was partial"
            )
        gating = [c["id"] for c in self.claims if c["gates"]]
        if gating:
            return (
                f"baseline NOT updated: gating verdicts ({', '.join(gating)}) cannot be accepted; "
                "fix them or declare them errata"
            )
        return None

    def _counts(self) -> str:
        """Runs computed and read, and claim instances executed and replayed."""
        workers = self.training.workers if self.training else 0
        where = f" in {workers} processes" if workers > 1 else ""
        once = ""
        if self.cache.computed:  # a key computed twice would leave fewer keys than computations
            once = (
                " (each once)" if self.cache.computed == len(self.cache.fresh) else " (SOME TWICE)"
            )
        return (
            f"training runs: {self.cache.computed} computed{where}{once}, {self.cache.read} "
            f"read from cache; claim tests: {self.executed} executed, {len(self.replays)} "
            "reused (unchanged since they last ran)"
        )

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.claims and self.results_path is not None:
            shard = "/".join(map(str, self.config.getoption("shard")))
            terminalreporter.write_line(
                f"shard {shard} holds none of the selected claim instances; its empty results: "
                f"{self.results_path} (merge it with the others)"
            )
        if not self.claims:
            return
        tr = terminalreporter
        tr.section("claimbook verdicts")
        for line in verdict_table(self.claims, width=max(tr._tw.fullwidth, 120)):
            tr.write_line(line)
        replays = [(c["id"], i) for c in self.claims for i in c["instances"] if i.get("replay")]
        if replays:
            tr.write_line("")
            tr.write_line("failing instances (each replays alone with the command below it):")
            errata = {c["id"] for c in self.claims if c["verdict"] == "erratum"}
            for claim_id, inst in replays:
                outcome = "failed as declared: erratum" if claim_id in errata else inst["outcome"]
                tr.write_line(f"  {claim_id} [{outcome}] {inst['message'][:200]}")
                tr.write_line(f"    {inst['replay']}")
        tr.write_line("")
        tr.write_line(self._counts())
        for line in self.claim_cache.problems:
            tr.write_line(line)
        tr.write_line(f"results: {self.results_path}")
        if self.partial:
            tr.write_line(
                "partial run (a -k subset, node ids, or fewer seeds than the default): the gate "
                "judges it, the site keeps showing the last full run"
            )
        for line in self.messages:
            tr.write_line(line)
        if self.comparison and self.comparison.get("error"):
            tr.write_line(f"BASELINE UNREADABLE: {self.comparison['error']}", red=True, bold=True)
        elif self.comparison:
            accepted = " (accepted: --update-baseline)" if self.comparison["accepted"] else ""
            tr.section(f"claimbook regressions against {self.comparison['baseline']}{accepted}")
            lines = diff_table(self.comparison, width=max(tr._tw.fullwidth, 120))
            for line in lines[:-1]:
                tr.write_line(line)
            bad = self.comparison["regressions"] and not self.comparison["accepted"]
            tr.write_line(lines[-1], red=bool(bad), bold=bool(bad), green=not bad)
        gating = [c for c in self.claims if c["gates"]]
        if gating:
            names = ", ".join(f"{c['id']} ({c['verdict']})" for c in gating)
            tr.write_line(f"GATE FAILED: {names}", red=True, bold=True)
        else:
            tr.write_line(
                f"gate passed: {len(self.claims)} claims, none refuted or errored", green=True
            )
