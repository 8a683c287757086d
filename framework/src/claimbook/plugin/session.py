"""One pytest session's claims, stage by stage: collect, select, prepare, record, finish.

The session only sequences the stages; each decision lives in its own module:
which runs an instance reads and the shards (:mod:`claimbook.runs.plan`), training
(:mod:`claimbook.runs.pool`), reuse (:mod:`claimbook.runs.claimcache`), verdicts
(:mod:`claimbook.judge.claims`), completeness and failure (:mod:`claimbook.judge.outcome`),
regressions (:mod:`claimbook.judge.baseline`), files (:mod:`claimbook.storage`) and the
terminal (:mod:`claimbook.plugin.report`, and :mod:`claimbook.plugin.counts` for its counts).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from claimbook.config import for_pytest
from claimbook.declare.design import rule_from_dict
from claimbook.declare.marker import SPEC, ClaimSpellingWarning, declared, old_spellings
from claimbook.declare.spec import ClaimDeclarationError, validate
from claimbook.declare.training import fixture_trainings
from claimbook.plugin.collector import (
    ClaimCollector,
    Record,
    junit_properties,
    plain_param,
    sentence_of,
    source_of,
)
from claimbook.plugin.counts import counts_lines
from claimbook.plugin.looks import PlannedLooks, check_rule
from claimbook.plugin.options import adaptive, base_seeds, first_look, option
from claimbook.plugin.phases import new_leg, train_phase
from claimbook.plugin.reuse import Reuse
from claimbook.plugin.selection import Selection
from claimbook.runs.cache import RunCache
from claimbook.runs.keys import forget_module_names
from claimbook.runs.plan import instance_runs

_RUNS = pytest.StashKey[set]()  # the (Training, seed) runs a claim instance reads


class ClaimSession:
    """The claims of one pytest session (registered as a plugin for its own hooks)."""

    RUNS = _RUNS

    def __init__(
        self,
        config: pytest.Config,
        started: datetime,
        recorded: dict[str, float],
        collection_errors: list[str],
    ):
        self.config = config
        self.started = started  # when pytest configured the run
        forget_module_names()  # as this session's paths find them (in-process runs share one)
        self.catalog: dict[str, dict] = {}  # every claim collected, id -> catalog entry
        self.specs: dict[str, dict] = {}  # id -> its rule and trainings (fresh-seed checks)
        self.fresh: dict[str, dict] = {}  # id -> the record of an after-data rule's first read
        self.collected_files: set[Path] = set()  # the modules those claims live in
        self.selection = Selection()  # the suite, what runs of it, and how far the run got
        self.executed = 0
        self.skips = 0  # of the executed: skips, which are never stored (they run every time)
        self.collection_errors = collection_errors  # node ids, noted from the start of collection
        self.stopped = ""
        self.results_path: Path | None = None
        self.claims: list[dict] = []
        self.comparison: dict | None = None
        self.outcome = None  # judge.outcome.Outcome, once finished
        self.messages: list[str] = []  # printed in the terminal summary
        self.state = None  # plugin.isolation.ProcessState, from the first test on
        self.settings = for_pytest(config)  # the book's [tool.claimbook]
        self.collector = ClaimCollector()
        cache_dir = self.settings.cache_dir()
        fresh = option(config, "no_cache")
        # a leg's claims only find the next look: like the claims phase, they train nothing
        trains = not (option(config, "no_train") or option(config, "train_part"))
        self.cache = RunCache(cache_dir, self.say, not fresh, self.settings.packages, trains)
        self.recorded = recorded  # seconds each run took, by label (read at the start)
        self.leg = new_leg(config)  # a training leg's record (--claimbook-train-part), or None
        self.reuse = Reuse(config, self.settings, cache_dir / "claims", not fresh, self.started)
        self.claim_cache = self.reuse.cache
        self.replays = self.reuse.replays  # node id -> stored outcome, for unchanged instances
        self.training = None  # what phase 1 trained (runs.distribute.Trained)
        self.looks = PlannedLooks(self)  # the seeds past the first look, and what they cost

    # collect -----------------------------------------------------------------------------

    def collect(self, items: list) -> None:
        """Validate every claim marker (a malformed one fails collection naming its test,
        and the run's outcome names it), attach each instance's record, note the suite."""
        try:
            self._collect(items)
        except pytest.UsageError as exc:
            self.collection_errors.append(str(exc).split(": claim marker", 1)[0])
            raise

    def _collect(self, items: list) -> None:
        if not any(item.get_closest_marker("claim") for item in items):
            return  # no claim here: a plain pytest session
        from claimbook.coverage.catalog import catalog_entry  # on use: a run with no claim
        from claimbook.judge.sequential import by_design  # pays for neither

        owners: dict[str, str] = {}  # claim id -> its test
        sources = {source.id: source for source in self.settings.sources}
        described: dict[object, tuple[str, str]] = {}  # function -> (sentence, source)
        seeds, later = base_seeds(self.config), adaptive(self.config)
        named = {arg for arg in self.config.args if "[" in arg}  # named instances always run
        for item in items:
            if item.get_closest_marker("claim") is None:
                continue
            first = item.function not in described
            spec, trainings = self._declaration(item, sources, owners, first)
            self.catalog.setdefault(spec.id, catalog_entry(spec.to_dict()))
            self.specs.setdefault(spec.id, {"id": spec.id, "rule": spec.rule,
                                            "trains": spec.trains})  # fmt: skip
            item.extra_keyword_matches.add(spec.id)  # -k selects by claim id too: -k conv-reach
            if spec.cited:  # a literature result: never set up, never run (verdict "cited")
                item.add_marker(pytest.mark.skip(reason=f"cited, not run here: {spec.cited}"))
            seed, rule = self._open(item, spec, trainings, described, seeds)
            if rule is not None and spec.id not in self.looks.flagged:
                self.looks.flag(spec.id, by_design(rule, spec.level))
            if (
                later
                and rule
                and rule.stochastic
                and seed not in first_look(self.config, rule)
                and item.nodeid not in named
            ):
                self.looks.hold(spec.id, seed, item)  # runs only if asked for
                continue
            self.selection.suite.append(item.nodeid)
        self.looks.hold_back(items)

    def _declaration(self, item, sources: dict, owners: dict[str, str], first: bool) -> tuple:
        """The instance's validated spec (kept in its stash) and its trainings; a malformed
        marker, an old spelling where warnings are errors, or an id two tests use fails
        collection naming the test. ``first``: the test's first instance (warned once)."""
        marker = item.get_closest_marker("claim")
        args, kwargs = declared(item)
        trainings = list(kwargs.get("trains") or ()) + fixture_trainings(item)
        try:
            spec = validate(item.nodeid, args, kwargs, sources, trainings)
        except ClaimDeclarationError as exc:
            raise pytest.UsageError(str(exc)) from None
        item.stash[SPEC] = spec
        test = item.nodeid.split("[")[0]
        for why in old_spellings(marker.kwargs, sources) if first else ():
            try:
                item.warn(ClaimSpellingWarning(f"{test}: {why}"))
            except ClaimSpellingWarning:  # warnings are errors here: name the test
                raise pytest.UsageError(f"{test}: claim marker: {why}") from None
        owner = owners.setdefault(spec.id, test)
        if owner != test:
            raise pytest.UsageError(
                f"{test}: claim marker: id {spec.id!r} is already used by {owner}"
            )
        return spec, trainings

    def _open(self, item, spec, trainings: list, described: dict, seeds: list[int]) -> tuple:
        """Open the instance's record (its facts: seed, parameters, sentence, code, place)
        and key the runs it reads; returns its seed and its rule."""
        test = item.nodeid.split("[")[0]
        if item.function not in described:  # once per test, not per instance
            described[item.function] = (sentence_of(item.function), source_of(item.function))
        sentence, source_code = described[item.function]
        if not sentence:
            raise pytest.UsageError(f"{test}: claim marker: the test needs a docstring")
        all_params = item.callspec.params if hasattr(item, "callspec") else {}
        params = dict(all_params)
        seed = params.pop("seed", None)
        rule = check_rule(test, rule_from_dict(spec.rule), item, seed, params)
        path, line, _ = item.location
        instance = {
            "seed": seed,
            "params": {k: plain_param(v) for k, v in params.items()},
            "sentence": sentence,
            "test": test,
            "file": path,
            "line": (line or 0) + 1,
            "source_code": source_code,
            "replay_form": self.settings.replay,
        }
        self.collector.open(item, Record(spec.to_dict(), instance))
        try:
            item.stash[_RUNS] = instance_runs(trainings, all_params, item.fixturenames, seeds)
        except ValueError as exc:
            raise pytest.UsageError(f"{test}: claim marker: {exc}") from None
        instance["train_s"] = round(sum(map(self.looks.cost, item.stash[_RUNS])), 1)
        self.collected_files.add(Path(item.path))
        return seed, rule

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list) -> None:
        """After -k and -m: keep this shard's whole claims, each with its planned looks'
        seeds (see :meth:`Selection.shard`)."""
        if not option(self.config, "shard"):
            return
        self.selection.shard(self.config, items, self.looks, self.settings)

    def select(self, session: pytest.Session) -> None:
        ids = self.selection.select(session.items)  # after deselection
        self.looks.keep(ids)  # after -k, -m
        if any(s["rule"] and s["rule"].get("fresh") for s in self.specs.values()):
            self.fresh = fresh_records(self, ids)

    def pytest_deselected(self, items) -> None:
        self.selection.deselected += len(items)

    def pytest_keyboard_interrupt(self, excinfo) -> None:
        if excinfo.typename == "Interrupted" and self.collection_errors:
            return  # pytest stops after collection errors: they are the reason, named as such
        self.stopped = f"interrupted ({excinfo.typename})"

    # prepare -----------------------------------------------------------------------------

    def declared(self, item) -> set | None:
        return item.stash.get(_RUNS, set()) if item.get_closest_marker("claim") else None

    def _has_runs(self, item) -> bool:
        return self.cache.has_all(item.stash.get(_RUNS, ()))

    def prepare(self, items: list, first: bool = False) -> None:
        """Key claim instances, find unchanged ones, train the runs the rest read (``first``:
        the first look, whose runs set the planned looks' budget)."""
        if self.plain():
            return
        seeds = base_seeds(self.config)
        claim_items = [i for i in items if i.get_closest_marker("claim") and hasattr(i, "function")]
        uncacheable = self.reuse.find(claim_items, seeds, self.collected_files, self._has_runs)
        needed = set().union(*(item.stash.get(_RUNS, set()) for item in claim_items
                               if item.nodeid not in self.replays))  # fmt: skip
        for error, count in uncacheable.items():
            self.messages.append(f"{count} claim tests executed without a stored outcome: {error}")
        if self.replays:
            self.say(
                f"reusing {len(self.replays)} claim test outcomes: nothing they depend on changed"
            )
        train_phase(self, needed)
        if first:
            self.looks.first_look_paid(claim_items, self.training.computed)

    # record ------------------------------------------------------------------------------

    def remember(self, item, call, report) -> None:
        """Count an executed claim instance; store a pass or a failure for reuse."""
        self.executed += 1
        if call.excinfo is not None and call.excinfo.errisinstance(pytest.skip.Exception):
            self.skips += 1
        self.reuse.store(item, call, report)

    def say(self, line: str) -> None:
        from claimbook.plugin.report import progress

        done, total = self.selection.done, self.selection.total
        progress(self.config, f"[claimbook {done}/{total} tests done] {line}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report) -> None:
        self.collector.add(report)
        if report.when == "teardown":
            self.selection.done += 1
            record = self.collector.record(report.nodeid)
            if record is not None and option(self.config, "junit_values"):
                report.user_properties += junit_properties(record)  # JUnit XML reads teardown's

    # finish and report -------------------------------------------------------------------

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):  # an xdist worker: the controller reports
            return
        if session.shouldstop or session.shouldfail:
            self.stopped = self.stopped or str(session.shouldstop or session.shouldfail)
        if not self.plain():
            from claimbook.plugin.finish import finish  # a run with no claim pays nothing for it

            finish(self, session)

    def plain(self) -> bool:
        """No claim test, no training leg, and nothing asked of the plugin: plain pytest."""
        asked = option(self.config, "receipt") or option(self.config, "shard")
        return (
            not self.selection.suite
            and not self.collection_errors
            and self.leg is None
            and not asked
        )

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.plain():
            return
        self.messages += counts_lines(self)  # why pytest's counts differ from these
        self.messages += self.state.lines() if self.state is not None else []
        from claimbook.plugin.report import terminal_summary

        terminal_summary(self, terminalreporter)


def fresh_records(claims: ClaimSession, ids: set[str]) -> dict[str, dict]:
    """The first-read records of the selected after-data rules (see :mod:`claimbook.runs.fresh`);
    a collision, or a block already seen, stops the run here, naming the claims and seeds."""
    from claimbook.declare.fresh import FreshSeedError
    from claimbook.plugin.options import path_option
    from claimbook.runs.fresh import settle
    from claimbook.storage.baseline import BaselineError, load_baseline

    try:
        baseline = load_baseline(path_option(claims.config, "baseline"))
    except BaselineError:
        baseline = None
    history = path_option(claims.config, "history")
    now = f"the run started {claims.started:%Y-%m-%d %H:%M} UTC"
    try:
        return settle(list(claims.specs.values()), ids, claims.settings.cache_dir(), history,
                      baseline, now)  # fmt: skip
    except FreshSeedError as exc:
        claims.collection_errors.append(str(exc).splitlines()[0])
        raise pytest.UsageError(str(exc)) from None
