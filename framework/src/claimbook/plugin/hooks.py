"""The pytest plugin's hooks and fixtures: thin, each handing its event to the session.

Registered through the ``pytest11`` entry point, so any pytest run in an
environment with claimbook installed knows ``@claim``, ``seeds``, ``measure`` and
``runs``, and parametrizes the ``seed`` of tests marked ``@claim``. A run that
collects no claim test behaves like plain pytest: nothing is parametrized, trained,
printed or written (unless it was asked for a receipt: then it records that it ran
no claim). The options are all ``--claimbook-*``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from claimbook.config import ConfigError, for_pytest
from claimbook.plugin.options import add_options, base_seeds, option, seeds_for
from claimbook.plugin.phases import recorded
from claimbook.plugin.workers import XdistGuard

if TYPE_CHECKING:
    from claimbook.declare.measure import Measure
    from claimbook.plugin.session import ClaimSession
    from claimbook.runs.cache import RunCache

_SESSION = pytest.StashKey["ClaimSession"]()
STARTED = pytest.StashKey[datetime]()  # when pytest configured this run
RECORDED = pytest.StashKey[dict]()  # the book's recorded seconds of each run, by label
COLLECTION_ERRORS = pytest.StashKey[list]()  # node ids whose collection failed


def _claims(config: pytest.Config) -> ClaimSession | None:
    """This run's claim session; None while (and, in a run with no claim, after) none is
    needed: the session and every stage it sequences load only then."""
    return config.stash.get(_SESSION, None)


def _start(config: pytest.Config) -> ClaimSession:
    from claimbook.plugin.session import ClaimSession

    try:
        session = ClaimSession(config, config.stash[STARTED], config.stash[RECORDED],
                               config.stash[COLLECTION_ERRORS])  # fmt: skip
    except ConfigError as exc:  # names the file and the setting
        raise pytest.UsageError(str(exc)) from None
    config.stash[_SESSION] = session
    config.pluginmanager.register(session, "claimbook-session")
    return session


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "claim(id, level, at=(), rule=None, printed=None, scope='', erratum='', error='', "
        "remark='', figure=None, cited='', drift=None, env=(), section=''): "
        "the test checks a claim of a source document (see claimbook.claim)",
    )
    config.addinivalue_line(
        "markers",
        "claim_defaults(level, scope, env, section): what every claim of a module "
        "shares (see claimbook.defaults)",
    )
    receipt = config.getoption("claimbook_receipt")
    if receipt and not hasattr(config, "workerinput"):
        # a receipt an earlier run left must never be read: this run writes its own at its
        # end, or none if it dies before (then the gate fails, as it must)
        try:
            Path(receipt).unlink(missing_ok=True)
        except OSError as exc:
            raise pytest.UsageError(f"--claimbook-receipt {receipt}: {exc}") from None
    phases = [n for n in ("train-part", "no-train", "shard")
              if config.getoption("claimbook_" + n.replace("-", "_"))]  # fmt: skip
    if config.getoption("claimbook_no_train") and config.getoption("claimbook_no_cache"):
        phases = ["no-train", "no-cache"]  # nothing could be read, nothing trained
    if len(phases) > 1:
        names = " and ".join(f"--claimbook-{n}" for n in phases)
        raise pytest.UsageError(f"{names} exclude each other")
    try:  # reads the book's [tool.claimbook]: a bad setting stops the run here
        engine = option(config, "train_on")
    except ConfigError as exc:  # names the file and the setting
        raise pytest.UsageError(str(exc)) from None
    if engine != "local":  # the default needs no check (nor the engines' imports)
        from claimbook.runs import executors

        try:
            executors.check(engine)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    config.stash[STARTED] = datetime.now(UTC)
    # the files a run reads or writes, checked before anything is collected or trained
    config.stash[RECORDED] = recorded(for_pytest(config), config)
    config.stash[COLLECTION_ERRORS] = []
    config.pluginmanager.register(CollectionErrors(config), "claimbook-collection-errors")
    config.pluginmanager.register(XdistGuard(config), "claimbook-xdist-guard")
    if any(option(config, n) for n in ("receipt", "shard", "train_part")):
        # a claims run however little it collects: it reports, and a shard filters
        _start(config)


class CollectionErrors:
    """Notes each module (or the session) whose collection failed, from the start: the claim
    session may start only once collection is over."""

    def __init__(self, config: pytest.Config):
        self.errors = config.stash[COLLECTION_ERRORS]

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.errors.append(report.nodeid or "(the session)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize a claim test's ``seed``; a test without the claim marker is left alone
    (another project's ``seed`` fixture or parametrization stays theirs)."""
    marker = metafunc.definition.get_closest_marker("claim")
    if marker is not None and "seed" in metafunc.fixturenames:
        from claimbook.declare.design import Rule
        from claimbook.declare.fresh import resolve

        rule = marker.kwargs.get("rule")
        claim_id = marker.args[0] if marker.args else marker.kwargs.get("id")
        rule = resolve(rule, claim_id) if isinstance(rule, Rule) and claim_id else rule
        seeds = seeds_for(metafunc.config, rule if isinstance(rule, Rule) else None)
        metafunc.parametrize("seed", seeds, ids=[f"seed{s}" for s in seeds])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    """Validate every claim marker and record the suite, before -k or -m deselect."""
    claims = _claims(config)
    if claims is None and (config.stash[COLLECTION_ERRORS]
                           or any(item.get_closest_marker("claim") for item in items)):  # fmt: skip
        claims = _start(config)
    if claims is not None:
        claims.collect(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    if (claims := _claims(session.config)) is not None:
        claims.select(session)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session):
    """Before the first test: decide which instances replay, and train what the rest read.
    After the last: the planned looks, for stochastic claims their rule has not decided."""
    claims = _claims(session.config)
    if claims is None or session.config.option.collectonly:
        return (yield)
    from claimbook.plugin.isolation import ProcessState

    claims.state = ProcessState()  # what every claim instance starts from
    claims.prepare(session.items, first=True)
    if claims.leg and claims.leg["stopped"]:  # a training leg: this look's claims wait
        session.items[:] = []
    result = yield
    if not (claims.leg and claims.leg["stopped"]):
        claims.looks.deepen(session)
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """A claim instance starts from the saved process state, whatever ran before it."""
    claims = _claims(item.config)
    state = claims.state if claims is not None else None
    if state is not None and item.get_closest_marker("claim"):
        state.restore()  # a test that is no claim may have changed it: not reported
        state.refresh()
        params = item.callspec.params if hasattr(item, "callspec") else {}
        state.seed(params.get("seed"))


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After a claim instance: put the process state back, and name what it changed."""
    try:
        return (yield)
    finally:
        claims = _claims(item.config)
        if claims is not None and claims.state is not None and item.get_closest_marker("claim"):
            changed = claims.state.restore()
            if changed:
                claims.state.note(item.nodeid, changed)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem) -> bool | None:
    """Replay an unchanged claim instance instead of calling it (raises as the test did)."""
    claims = _claims(pyfuncitem.config)
    entry = claims.replays.get(pyfuncitem.nodeid) if claims is not None else None
    if entry is None:
        return None
    claims.reuse.replay(pyfuncitem, entry)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Hold a claim test to the training runs it declares."""
    claims = _claims(item.config)
    if claims is None:
        return (yield)
    claims.cache.declared = claims.declared(item)
    try:
        return (yield)
    finally:
        claims.cache.declared = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    excinfo = call.excinfo
    claims = _claims(item.config)
    if claims is None:
        return report
    from claimbook.plugin.collector import RECORD

    marker = item.get_closest_marker("claim")
    if call.when == "call" and marker and item.nodeid not in claims.replays:
        claims.remember(item, call, report)
    record = item.stash.get(RECORD, None)
    expected = (AssertionError, pytest.fail.Exception, pytest.skip.Exception)
    if call.when == "call" and excinfo is not None and not excinfo.errisinstance(expected):
        if record is not None:  # a crash is an error, never a refutation
            record.crash = f"{excinfo.typename}: {excinfo.value}"[:500]
    elif call.when == "call" and report.failed and marker and marker.kwargs.get("erratum"):
        # failing as declared: pytest counts it as xfailed, the verdict as failed
        report.outcome, report.wasxfail = "skipped", f"erratum: {marker.kwargs['erratum']}"
        if record is not None:
            record.erratum_failed = True
    return report


@pytest.fixture(scope="session")
def seeds(pytestconfig) -> list[int]:
    """Every seed of this run (``--claimbook-seeds``), for claims about all seeds at once."""
    return base_seeds(pytestconfig)


@pytest.fixture
def measure(request) -> Measure:
    """Record measured values: ``measure(name, value, printed=None, unit=None, x=None)``."""
    from claimbook.declare.measure import Measure
    from claimbook.plugin.collector import RECORD

    record = request.node.stash.get(RECORD, None)
    return Measure(record.measures if record is not None else [])  # [] outside a claim


@pytest.fixture(scope="session")
def runs(pytestconfig) -> RunCache:
    """Cached experiment runs: ``runs(fn, config, seed)`` computes ``fn(config, seed)`` once."""
    claims = _claims(pytestconfig)
    if claims is None:  # a test outside any claim asked for it: start the session for it
        claims = _start(pytestconfig)
    return claims.cache
