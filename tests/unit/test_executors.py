"""The contract every training engine keeps (``--claimbook-train-on``), on each installed one.

Toy training functions (:mod:`tests.unit.cached_fns`) keep it fast: the same runs give the
same entries on every engine; claimbook keeps no more runs in flight than the engine's
slots, longest first; a crash is recorded once and never retried or cached; a lost
worker is retried, and lost for good after two retries; a worker whose key differs
refuses; a killed driver loses only what was in flight; a session splits into legs and a
claims phase that agrees with the one-process session.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from claimbook.runs import executors
from claimbook.runs.cache import RunCache, RunCrashedError, Training
from claimbook.runs.plan import split_runs
from claimbook.runs.pool import plan, train_missing

from tests.unit.cached_fns import counted, logged, square

ENGINES = executors.names()
ROOT = Path(__file__).resolve().parents[2]


def runs_of(fn, configs, seeds=(0,)):
    return {(Training(fn, config), seed) for config in configs for seed in seeds}


def train(cache, runs, engine, workers=2, recorded=None):
    lines = []
    todo = plan(cache, runs, recorded or {}, 60.0)
    done = train_missing(cache, todo, workers, lines.append, engine)
    return done, lines


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    if request.param == "submitit-local":
        import submitit.core.core

        # submitit waits up to 15 s for a lost job's result file to appear, for slow shared
        # file systems; here the files are local and the wait only delays each loss
        monkeypatch.setattr(submitit.core.core.Job, "_results_timeout_s", 1)
    return request.param


def test_the_installed_engines_include_dask_and_submitit():
    assert ENGINES == ["local", "dask", "submitit-local"]  # the test extra installs both


def test_every_engine_returns_the_same_entries_and_the_driver_writes_them(engine, tmp_path):
    runs = runs_of(square, [{"x": x} for x in range(3)], seeds=(0, 1))
    cache = RunCache(tmp_path / engine, report=[].append)
    done, _ = train(cache, runs, engine)
    assert len(done.computed) == 6 and not done.failed
    for training, seed in runs:
        key = cache.key(training.fn, training.config, seed)
        entry = json.loads(cache.path(training.fn, key).read_text())
        assert entry["key"] == key and entry["label"] == training.label(seed)
        value = training.config["x"] ** 2 + seed
        assert cache(training.fn, training.config, seed) == {"value": value}
    again, _ = train(cache, runs, engine)
    assert again.computed == {}  # all cached now


def test_no_more_runs_in_flight_than_slots_and_the_longest_first(engine, tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    sleeps = {0: 0.2, 1: 1.2, 2: 0.4, 3: 1.0, 4: 0.3}
    runs = runs_of(logged, [{"x": x, "sleep": s, "dir": str(log)} for x, s in sleeps.items()])
    labels = {t.label(0): t.config["sleep"] for t, _ in runs}
    cache = RunCache(tmp_path / "cache", report=[].append)
    done, _ = train(cache, runs, engine, workers=2, recorded=labels)
    assert len(done.computed) == 5
    spans = [json.loads(p.read_text()) for p in log.glob("*.json")]
    for span in spans:  # when each started, at most one other was running
        assert sum(o["start"] <= span["start"] < o["end"] for o in spans) <= 2
    started = [s["x"] for s in sorted(spans, key=lambda s: s["start"])]
    assert set(started[:2]) == {1, 3}  # the two longest were submitted first


def test_a_crash_is_recorded_once_never_retried_never_cached(engine, tmp_path):
    log = tmp_path / "calls"
    runs = runs_of(counted, [{"log": str(log), "cue": "raise"}]) | runs_of(square, [{"x": 2}])
    cache = RunCache(tmp_path / "cache", report=[].append)
    done, lines = train(cache, runs, engine)
    assert log.read_text() == "0\n"  # called once
    label = Training(counted, {"log": str(log), "cue": "raise"}).label(0)
    assert done.failed == {label: "ValueError: a bug in the training"}
    assert list(done.computed) == ["square(x=2) seed 0"]
    assert any("CRASHED (ValueError: a bug in the training)" in line for line in lines)
    config = {"log": str(log), "cue": "raise"}
    with pytest.raises(RunCrashedError, match="a bug in the training"):
        cache(counted, config, 0)
    key = cache.key(counted, config, 0)
    assert not cache.path(counted, key).exists()  # never cached: the next session tries again
    assert cache.failure_of(key) == "ValueError: a bug in the training"


def test_a_lost_worker_is_retried_and_lost_for_good_after_two_retries(engine, tmp_path):
    once, always = tmp_path / "once", tmp_path / "always"
    configs = [{"log": str(once), "cue": "die-once"}, {"log": str(always), "cue": "die"}]
    runs = runs_of(counted, configs) | runs_of(square, [{"x": 3}])
    cache = RunCache(tmp_path / "cache", report=[].append)
    done, _ = train(cache, runs, engine)
    survivor = Training(counted, {"log": str(once), "cue": "die-once"}).label(0)
    assert sorted(done.computed) == sorted([survivor, "square(x=3) seed 0"])
    assert once.read_text() == "0\n0\n"  # died, then trained on its second try
    # three tries, then reported (a try the engine lost before it started runs nothing)
    assert 2 <= always.read_text().count("\n") <= 4
    dead = Training(counted, {"log": str(always), "cue": "die"}).label(0)
    assert list(done.failed) == [dead]
    assert "the infrastructure lost it 3 times" in done.failed[dead]


def test_a_worker_whose_key_differs_refuses_and_names_what_differs(engine, tmp_path):
    cache = RunCache(tmp_path / "cache", report=[].append)
    real = cache.payload
    cache.payload = lambda fn, config, seed: {**real(fn, config, seed), "torch": "0.0.1"}
    done, _ = train(cache, runs_of(square, [{"x": 4}]), engine)
    (why,) = done.failed.values()
    assert "the worker refused" in why and "torch ('0.0.1' on the driver" in why
    assert done.computed == {}


DRIVER = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from claimbook.runs.cache import RunCache, Training
from claimbook.runs.pool import plan, train_missing
from tests.unit.cached_fns import slow_square
if __name__ == "__main__":  # the local pool spawns processes that import this file
    cache = RunCache(Path({cache!r}), report=print)
    runs = {{(Training(slow_square, {{"x": x, "sleep": 1.5}}), 0) for x in range(6)}}
    todo = plan(cache, runs, {{}}, 60.0)
    print("PLANNED", len(todo.specs), flush=True)
    train_missing(cache, todo, 2, lambda line: print(line, flush=True), {engine!r})
"""


def test_a_killed_driver_loses_only_the_runs_in_flight(engine, tmp_path):
    script = tmp_path / "driver.py"
    script.write_text(DRIVER.format(root=str(ROOT), cache=str(tmp_path / "cache"), engine=engine))
    cmd = [sys.executable, str(script)]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, start_new_session=True) as driver:
        for line in driver.stdout:  # kill -9 the driver (and its workers) after two entries
            if "computed in" in line and "[2/6 runs]" in line:
                os.killpg(driver.pid, signal.SIGKILL)
                break
    written = list((tmp_path / "cache" / "slow_square").glob("*.json"))
    assert 2 <= len(written) < 6
    again = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert f"PLANNED {6 - len(written)}" in again


def test_the_plan_is_the_same_in_every_process_and_under_any_hash_seed(tmp_path):
    code = (
        (
            "import sys; sys.path.insert(0, ROOT)\n"
            "from claimbook.runs.cache import RunCache, Training\n"
            "from claimbook.runs.pool import plan\n"
            "from tests.unit.cached_fns import square\n"
            "runs = {(Training(square, {'x': x % 5}), x // 5) for x in range(20)}\n"
            "recorded = {Training(square, {'x': x}).label(0): 10.0 * (x % 3) for x in range(5)}\n"
            "specs = plan(RunCache(CACHE), runs, recorded, 60.0, (2, 3)).specs\n"
            "print([(s['label'], s['estimate']) for s in specs])\n"
        )
        .replace("ROOT", repr(str(ROOT)))
        .replace("CACHE", repr(str(tmp_path)))
    )
    outputs = {
        subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": h},
                       capture_output=True, text=True, check=True).stdout
        for h in ("0", "1", "12345")
    }  # fmt: skip
    assert len(outputs) == 1 and "[]" not in outputs


def test_longest_processing_time_parts_are_near_the_lower_bound():
    rng = random.Random(0)
    for _ in range(200):
        parts = rng.randint(2, 6)
        seconds = {f"run{i}": rng.uniform(10, 120) for i in range(rng.randint(parts, 60))}
        loads = [sum(seconds[k] for k in part) for part in split_runs(seconds, seconds, parts)]
        bound = max(sum(seconds.values()) / parts, max(seconds.values()))
        assert max(loads) <= (4 / 3 - 1 / (3 * parts)) * bound + 1e-9  # Graham's bound for LPT
        assert sorted(k for p in split_runs(seconds, seconds, parts) for k in p) == sorted(seconds)


BOOK = """
from claimbook import Training, Typical
from tests.unit.cached_fns import square

GAINS = [0.9, 1.4, 0.2, 1.1, 1.3, 0.8, 1.2, 1.0, 0.7, 1.5, 0.6, 1.25]

@claim(id="doc.looks", level="likely", source=DOC, section="1",
       trains=[Training(square, {"x": 2})], rule=Typical("gain", above=0))
def test_looks(runs, seed, measure):
    '''Reads one training run per seed; undecided at 3 seeds, so it takes more looks.'''
    measure("gain", GAINS[seed] * runs(square, {"x": 2}, seed)["value"] / (4 + seed))

@claim(id="doc.pooled", level="established", source=DOC, section="2",
       trains=[Training(square, {"x": x}) for x in (3, 4, 5)])
def test_pooled(runs, seeds):
    '''Every seed's runs of three configs: each value is x squared plus its seed.'''
    for x in (3, 4, 5):
        assert [runs(square, {"x": x}, s)["value"] for s in seeds] == [x * x + s for s in seeds]
"""


def verdicts(data: dict) -> dict:
    """Each claim's verdict and measured values, as the unsharded and merged runs must agree."""
    return {c["id"]: (c["verdict"], [(i["seed"], i.get("measures")) for i in c["instances"]])
            for c in data["claims"]}  # fmt: skip


def session(pytester, cache: Path, *args: str):
    """A pytest session on the cache folder ``cache``, in this process (its training workers
    are processes of their own on every engine); returns (result, its results or None)."""
    os.environ["CLAIMBOOK_CACHE_DIR"] = str(cache)
    try:
        result = pytester.runpytest("-p", "no:cacheprovider", *args)
    finally:
        del os.environ["CLAIMBOOK_CACHE_DIR"]
    files = sorted(Path(pytester.path, "reports", "results").glob("run-*.json"))
    return result, (json.loads(files[-1].read_text()) if files else None)


def union(folders, into: Path) -> None:
    import shutil

    for folder in folders:
        shutil.copytree(folder, into, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.lock"))


def test_legs_then_the_claims_phase_give_the_unsharded_verdicts(engine, pytester, tmp_path):
    import shutil

    from tests.unit.conftest import HEADER

    (pytester.path / "tests" / "unit").mkdir(parents=True)  # the toy training functions
    for name in ("__init__.py", "unit/__init__.py", "unit/cached_fns.py"):
        shutil.copy(ROOT / "tests" / name, pytester.path / "tests" / name)
    pytester.makepyfile(test_claims=HEADER + BOOK)
    whole_result, whole = session(pytester, tmp_path / "whole")
    assert whole_result.ret == 0, whole_result.stdout.str()
    assert whole["claims"][0]["statistics"]["seeds_used"] > 3  # the looks took more seeds
    merged, rounds = tmp_path / "merged", []
    merged.mkdir()
    for _ in range(6):  # each round: two legs on the merged cache, then their union
        legs = []
        for index in (1, 2):
            leg = tmp_path / f"round{len(rounds)}-leg{index}"
            union([merged], leg)
            result, _ = session(pytester, leg, f"--claimbook-train-part={index}/2",
                                f"--claimbook-train-on={engine}")  # fmt: skip
            assert result.ret == 0, result.stdout.str()
            legs.append((leg, result.stdout.str()))
        rounds.append(legs)
        union([leg for leg, _ in legs], merged)
        if all("nothing left to train" in out for _, out in legs):
            break
    assert len(rounds) >= 3  # look 1, then a round per look the claim took, then nothing
    result, split = session(pytester, merged, "--claimbook-no-train")
    assert result.ret == 0, result.stdout.str()
    assert verdicts(split) == verdicts(whole)
    # a lost leg: the claims phase names the missing runs, errs, and exits non-zero
    partial = tmp_path / "partial"
    union([rounds[0][0][0]], partial)
    result, broken = session(pytester, partial, "--claimbook-no-train")
    assert result.ret != 0
    out = result.stdout.str()
    assert "are not in the cache and this session trains nothing" in out
    assert "was every training leg's cache folder merged" in out
    assert {c["verdict"] for c in broken["claims"]} == {"error"}


CRASHING = """
from claimbook import Training
from tests.unit.cached_fns import broken, square

@claim(id="doc.crashing", level="established", source=DOC, section="1",
       trains=[Training(broken, {"x": 1}), Training(square, {"x": 1})])
def test_crashing(runs, seed):
    '''Reads a run whose training raises, and one that trains.'''
    assert runs(square, {"x": 1}, seed)["value"] == 1 + seed
    assert runs(broken, {"x": 1}, seed)
"""


def test_a_leg_whose_run_crashes_exits_non_zero_and_says_which(
    claims_project, tmp_path, monkeypatch
):
    monkeypatch.setenv("CLAIMBOOK_CACHE_DIR", str(tmp_path / "cache"))
    receipt = tmp_path / "leg.json"
    result, data = claims_project(CRASHING, "--claimbook-train-part=1/1",
                                  f"--claimbook-receipt={receipt}")  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED and data is None  # no results file
    result.stdout.fnmatch_lines(["*broken(x=1) seed 0: ValueError: no data for seed 0*",
                                 "merge this round's cache folders and run another*"])  # fmt: skip
    (look,) = json.loads(receipt.read_text())["looks"]
    assert look["computed"] == 3 and len(look["failed"]) == 3  # each seed's square trained
    assert not list((tmp_path / "cache").rglob("broken/*.json"))  # a crash is never cached
    assert len(list((tmp_path / "cache" / "crashes").rglob("*.json"))) == 3  # but recorded
    again, _ = claims_project(CRASHING, "--claimbook-train-part=1/1")  # the next round
    assert again.ret == pytest.ExitCode.OK  # nothing of its part failed: it had none
    out = again.stdout.str()
    assert "computing" not in out  # its claims train nothing
    assert "nothing left to train: every look's runs are in the cache, but for 3 whose " in out


def test_a_leg_that_selects_no_claim_test_says_so_and_fails(claims_project, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAIMBOOK_CACHE_DIR", str(tmp_path / "cache"))
    receipt = tmp_path / "leg.json"
    result, _ = claims_project(CRASHING, "--claimbook-train-part=1/2", "-k", "no_such_claim",
                               f"--claimbook-receipt={receipt}")  # fmt: skip
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    out = result.stdout.str()
    assert "no claim test was selected" in out and "nothing left to train" not in out
    looks = json.loads(receipt.read_text())["looks"]
    assert not any(look["missing"] or look["in_part"] for look in looks)  # nothing to train


def test_a_leg_plans_again_a_run_the_infrastructure_failed_but_not_a_crash(tmp_path):
    cache = RunCache(tmp_path, report=[].append)
    runs = runs_of(square, [{"x": 7}, {"x": 8}])
    key = {t.config["x"]: cache.key(t.fn, t.config, seed) for t, seed in runs}
    cache.record_failure(key[7], "square(x=7) seed 0", "ValueError: a bug")
    cache.record_failure(key[8], "square(x=8) seed 0", "the engine could not start", crashed=False)
    todo = plan(cache, runs, {}, 60.0, (1, 1))
    assert [s["label"] for s in todo.specs] == ["square(x=8) seed 0"] and todo.failed == 1
    assert cache.failure_of(key[8]) == "the engine could not start"  # still named if missing


STORED = """
from claimbook import Training
from tests.unit.cached_fns import square

@claim(id="doc.stored", level="established", source=DOC, section="1",
       trains=[Training(square, {"x": 3})])
def test_stored(runs, seed):
    '''Each seed's run of x = 3 is 9 plus the seed.'''
    assert runs(square, {"x": 3}, seed)["value"] == 9 + seed
"""


def test_a_stored_outcome_is_replayed_only_where_its_runs_are(
    claims_project, tmp_path, monkeypatch
):
    monkeypatch.setenv("CLAIMBOOK_CACHE_DIR", str(tmp_path / "cache"))
    first, _ = claims_project(STORED)
    assert first.ret == 0
    again, _ = claims_project(STORED, "--claimbook-no-train")
    assert again.ret == 0 and "reusing 3 claim test outcomes" in again.stdout.str()
    sorted((tmp_path / "cache" / "square").glob("*.json"))[0].unlink()  # a lost leg's entry
    result, data = claims_project(STORED, "--claimbook-no-train")
    assert result.ret != 0 and "reusing 2 claim test outcomes" in result.stdout.str()
    assert "are not in the cache and this session trains nothing" in result.stdout.str()
    assert data["claims"][0]["verdict"] == "error"


class Garbage(concurrent.futures.Executor):
    """An engine whose workers answer nonsense: an entry without its fields."""

    def submit(self, fn, /, *args, **kwargs):
        future = concurrent.futures.Future()
        future.set_result({"entry": {"key": args[0]["key"]}})
        return future


def garbage(workers: int) -> concurrent.futures.Executor:
    return Garbage()


def test_any_executor_factory_works_and_a_malformed_answer_is_refused(tmp_path):
    cache = RunCache(tmp_path, report=[].append)
    done, _ = train(cache, runs_of(square, [{"x": 5}]), "tests.unit.test_executors:garbage")
    (why,) = done.failed.values()
    assert why.startswith("the worker refused: its entry is malformed")
    assert done.computed == {} and not list(tmp_path.rglob("square/*.json"))


def test_an_engine_that_cannot_start_makes_its_runs_errors_saying_why(tmp_path):
    from claimbook.runs.distribute import Driver

    cache = RunCache(tmp_path, report=[].append)
    todo = plan(cache, runs_of(square, [{"x": 6}]), {}, 60.0)

    def start():
        raise OSError("no scheduler at tcp://10.0.0.1:8786")

    done = Driver(start, todo.specs, cache, [].append).run()
    assert list(done.failed.values()) == [
        "the engine could not start: OSError: no scheduler at tcp://10.0.0.1:8786"
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [("dusk", "expected local, dask, dask://HOST:PORT"), ("nowhere.at_all:f", "No module named")],
)
def test_an_unknown_engine_stops_pytest_before_anything_runs(claims_project, name, message):
    result, data = claims_project("", f"--claimbook-train-on={name}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and data is None
    result.stderr.fnmatch_lines([f"*--claimbook-train-on*{name}*{message}*"])


def test_bins_are_at_least_as_many_as_the_slots():
    from claimbook.runs.plan import pack_runs

    seconds = {f"r{i}": 60.0 for i in range(30)}
    assert len(pack_runs(list(seconds), seconds, 1200, slots=1)) == 2  # 1,800 s in 20 minutes
    assert len(pack_runs(list(seconds), seconds, 1200, slots=8)) == 8
    assert len(pack_runs(list(seconds)[:3], seconds, 1200, slots=8)) == 3


def test_any_cpu_keeps_only_the_architecture_in_the_key(tmp_path, monkeypatch):
    import platform

    from claimbook.runs.keys import machine

    here = RunCache(tmp_path).key(square, {"x": 1}, 0)
    monkeypatch.setenv("CLAIMBOOK_ANY_CPU", "1")
    assert machine() == f"any CPU, {platform.machine()}"
    assert RunCache(tmp_path).key(square, {"x": 1}, 0) != here  # the two scopes never mix


def test_a_malformed_durations_file_is_refused(tmp_path):
    from claimbook.storage import durations

    path = tmp_path / "durations.json"
    for text in ('{"schema": "claimbook.durations/1"}', '{"schema": "x", "seconds": {}}',
                 '{"schema": "claimbook.durations/1", "seconds": {"a": "fast"}}'):  # fmt: skip
        path.write_text(text)
        with pytest.raises(ValueError, match="not a durations file"):
            durations.load(path)
    assert durations.update(path.with_name("new.json"), {"a": 10.0}) == 1
    assert durations.update(path.with_name("new.json"), {"a": 11.0}) == 0  # within a quarter
    assert durations.load(path.with_name("new.json")) == {"a": 10.0}


def test_the_simulation_compares_every_value_but_the_durations_a_claim_times():
    from claimbook.simulate import values

    def results(seconds: float, loss: float, verdict: str = "holds") -> dict:
        measures = [{"name": "seconds per step", "value": seconds, "unit": "s"},
                    {"name": "loss", "value": loss}]  # fmt: skip
        instance = {"seed": 0, "params": {}, "measures": measures}
        return {"claims": [{"id": "a", "verdict": verdict, "instances": [instance]}]}

    assert values(results(0.5, 1.0)) == values(results(0.7, 1.0))  # timed afresh: moves
    assert values(results(0.5, 1.0)) != values(results(0.5, 1.1))
    assert values(results(0.5, 1.0)) != values(results(0.5, 1.0, "refuted"))


def test_a_dask_engine_starts_while_another_cluster_holds_the_dashboard_port(tmp_path):
    """Two Dask clusters on one machine (two sessions, two test workers): the second must
    still start. A dashboard fixed at port 8787 made it fail ("Port 8787 is already in use")."""
    import socket

    held = socket.socket()
    try:
        held.bind(("", 8787))
        held.listen()
    except OSError:
        held.close()
        held = None  # someone already holds it: the collision this test needs is there anyway
    try:
        done, _ = train(RunCache(tmp_path / "cache"), runs_of(square, [{"x": 3}]), "dask", 1)
        assert len(done.computed) == 1 and not done.failed, done.failed
    finally:
        if held is not None:
            held.close()
