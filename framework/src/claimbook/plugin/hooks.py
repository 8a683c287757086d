"""The pytest plugin's hooks and fixtures: thin, each handing its event to the session.

Registered through the ``pytest11`` entry point, so any pytest run in an
environment with claimbook installed knows ``@claim``, ``seeds``, ``measure`` and
``runs``, and parametrizes the ``seed`` of tests marked ``@claim``. A run that
collects no claim test behaves like plain pytest: nothing is parametrized, trained,
printed or written (unless it was asked for a receipt: then it records that it ran
no claim). The options are all ``--claimbook-*``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claimbook.config import ConfigError
from claimbook.declare.design import Rule
from claimbook.declare.fresh import resolve
from claimbook.declare.measure import Measure
from claimbook.plugin.collector import CRASH_KEY, XFAIL_KEY
from claimbook.plugin.isolation import ProcessState
from claimbook.plugin.looks import deepen
from claimbook.plugin.options import add_options, base_seeds, option, seeds_for
from claimbook.plugin.session import ClaimSession
from claimbook.plugin.workers import XdistGuard
from claimbook.runs.cache import RunCache

_SESSION = pytest.StashKey[ClaimSession]()


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
    try:
        engine = option(config, "train_on")
    except ConfigError as exc:  # names the file and the setting
        raise pytest.UsageError(str(exc)) from None
    if engine != "local":  # the default needs no check (nor the engines' imports)
        from claimbook.runs import executors

        try:
            executors.check(engine)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    try:
        session = ClaimSession(config)
    except ConfigError as exc:  # names the file and the setting
        raise pytest.UsageError(str(exc)) from None
    config.stash[_SESSION] = session
    config.pluginmanager.register(session, "claimbook-session")
    config.pluginmanager.register(XdistGuard(config), "claimbook-xdist-guard")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize a claim test's ``seed``; a test without the claim marker is left alone
    (another project's ``seed`` fixture or parametrization stays theirs)."""
    marker = metafunc.definition.get_closest_marker("claim")
    if marker is not None and "seed" in metafunc.fixturenames:
        rule = marker.kwargs.get("rule")
        claim_id = marker.args[0] if marker.args else marker.kwargs.get("id")
        rule = resolve(rule, claim_id) if isinstance(rule, Rule) and claim_id else rule
        seeds = seeds_for(metafunc.config, rule if isinstance(rule, Rule) else None)
        metafunc.parametrize("seed", seeds, ids=[f"seed{s}" for s in seeds])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    """Validate every claim marker and record the suite, before -k or -m deselect."""
    config.stash[_SESSION].collect(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[_SESSION].select(session)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session):
    """Before the first test: decide which instances replay, and train what the rest read.
    After the last: the planned looks, for stochastic claims their rule has not decided."""
    claims = session.config.stash[_SESSION]
    if session.config.option.collectonly:
        return (yield)
    claims.state = ProcessState()  # what every claim instance starts from
    claims.prepare(session.items, first=True)
    if claims.leg and claims.leg["stopped"]:  # a training leg: this look's claims wait
        session.items[:] = []
    result = yield
    if not (claims.leg and claims.leg["stopped"]):
        deepen(claims, session)
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """A claim instance starts from the saved process state, whatever ran before it."""
    state = item.config.stash[_SESSION].state
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
        claims = item.config.stash[_SESSION]
        if claims.state is not None and item.get_closest_marker("claim"):
            changed = claims.state.restore()
            if changed:
                claims.state.note(item.nodeid, changed)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem) -> bool | None:
    """Replay an unchanged claim instance instead of calling it (raises as the test did)."""
    claims = pyfuncitem.config.stash[_SESSION]
    entry = claims.replays.get(pyfuncitem.nodeid)
    if entry is None:
        return None
    claims.reuse.replay(pyfuncitem, entry)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Hold a claim test to the training runs it declares."""
    claims = item.config.stash[_SESSION]
    claims.cache.declared = claims.declared(item)
    try:
        return (yield)
    finally:
        claims.cache.declared = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    excinfo = call.excinfo
    claims = item.config.stash[_SESSION]
    marker = item.get_closest_marker("claim")
    if call.when == "call" and marker and item.nodeid not in claims.replays:
        claims.remember(item, call, report)
    expected = (AssertionError, pytest.fail.Exception, pytest.skip.Exception)
    if call.when == "call" and excinfo is not None and not excinfo.errisinstance(expected):
        # a crash is an error, never a refutation
        report.user_properties.append((CRASH_KEY, f"{excinfo.typename}: {excinfo.value}"[:500]))
    elif call.when == "call" and report.failed and marker and marker.kwargs.get("erratum"):
        # failing as declared: pytest counts it as xfailed, the verdict as failed
        report.outcome, report.wasxfail = "skipped", f"erratum: {marker.kwargs['erratum']}"
        report.user_properties.append((XFAIL_KEY, True))
    return report


@pytest.fixture(scope="session")
def seeds(pytestconfig) -> list[int]:
    """Every seed of this run (``--claimbook-seeds``), for claims about all seeds at once."""
    return base_seeds(pytestconfig)


@pytest.fixture
def measure(request) -> Measure:
    """Record measured values: ``measure(name, value, printed=None, unit=None, x=None)``."""
    return Measure(request.node.user_properties)


@pytest.fixture(scope="session")
def runs(pytestconfig) -> RunCache:
    """Cached experiment runs: ``runs(fn, config, seed)`` computes ``fn(config, seed)`` once."""
    return pytestconfig.stash[_SESSION].cache
