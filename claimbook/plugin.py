"""The pytest plugin: options, the claim marker, fixtures, and the end-of-run gate.

Registered through the ``pytest11`` entry point, so any pytest run in an
environment with claimbook installed knows ``@claim``, ``seed``, ``seeds``,
``measure`` and ``runs``. A run that collects no claim test behaves like
plain pytest and writes nothing.
"""

from __future__ import annotations

import inspect
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from claimbook.cache import RunCache
from claimbook.measure import Measure
from claimbook.results import provenance, write_results
from claimbook.seeds import DEFAULT_SEEDS, parse_seeds
from claimbook.session import CLAIM_KEY, CRASH_KEY, INSTANCE_KEY, XFAIL_KEY, ClaimCollector
from claimbook.spec import ClaimDeclarationError, validate
from claimbook.table import verdict_table

_SESSION = pytest.StashKey["ClaimSession"]()


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
        help="recompute every experiment run instead of reading the run cache",
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


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[_SESSION].total = len(session.items)  # after -k deselection


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    excinfo = call.excinfo
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
        cache_dir = os.environ.get("CLAIMBOOK_CACHE_DIR") or config.rootpath / ".claimbook-cache"
        self.cache = RunCache(Path(cache_dir), self.say, enabled=not config.getoption("no_cache"))

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
        partial = (
            bool(self.deselected)
            or any("::" in a for a in self.config.args)
            or not set(parse_seeds(DEFAULT_SEEDS)) <= set(seeds)
        )
        self.claims = self.collector.claims(complete=not partial)
        if not self.claims:
            return
        config = self.config
        run = provenance(config.rootpath, self.started, seeds, sys.argv[1:])
        run["exit_status"] = 1 if any(c["gates"] for c in self.claims) else 0
        run["partial"] = partial
        run["runs_computed"], run["runs_read"] = self.cache.computed, self.cache.read
        results_dir = config.rootpath / config.getoption("results_dir")
        self.results_path = write_results(results_dir, run, self.claims)
        if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            failed = run["exit_status"] or self.collector.other_failures
            session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter) -> None:
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
            for claim_id, inst in replays:
                tr.write_line(f"  {claim_id} [{inst['outcome']}] {inst['message'][:200]}")
                tr.write_line(f"    {inst['replay']}")
        tr.write_line("")
        tr.write_line(
            f"experiment runs: {self.cache.computed} computed, {self.cache.read} read from cache"
        )
        tr.write_line(f"results: {self.results_path}")
        gating = [c for c in self.claims if c["gates"]]
        if gating:
            names = ", ".join(f"{c['id']} ({c['verdict']})" for c in gating)
            tr.write_line(f"GATE FAILED: {names}", red=True, bold=True)
        else:
            tr.write_line(
                f"gate passed: {len(self.claims)} claims, none refuted or errored", green=True
            )
