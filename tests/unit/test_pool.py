"""Which runs an instance reads, shards that keep a run's claims together, and the pool."""

from __future__ import annotations

import pytest
from claimbook.runs.cache import RunCache, Training
from claimbook.runs.plan import instance_runs, parse_shard, shard_of
from claimbook.runs.pool import plan, train_missing

from tests.unit import cached_fns
from tests.unit.cached_fns import square

A, B, C = (Training(square, {"x": x}) for x in (1, 2, 3))


def test_an_instance_reads_its_trainings_at_its_seed_or_at_every_seed():
    assert instance_runs([A, B], {"seed": 2}, ["seed"], [0, 1, 2]) == {(A, 2), (B, 2)}
    assert instance_runs([A], {}, ["seeds"], [0, 1]) == {(A, 0), (A, 1)}
    assert instance_runs([], {}, [], [0]) == set()
    with pytest.raises(ValueError, match="neither 'seed' nor 'seeds'"):
        instance_runs([A], {}, ["measure"], [0])


def test_trainings_are_equal_by_function_and_config():
    assert Training(square, {"x": 1}) == A and hash(Training(square, {"x": 1})) == hash(A)
    assert A != B
    assert A.label(3) == "square(x=1) seed 3"


def test_shards_keep_instances_that_share_a_run_together_and_cover_everything():
    instances = {
        "t::a[seed0]": {(A, 0)},
        "t::b[seed0]": {(A, 0), (B, 0)},  # joins a and c through A and B
        "t::c[seed0]": {(B, 0)},
        "t::d[seed1]": {(A, 1)},
        "t::e[seed2]": {(C, 2)},
        "t::f": set(),
        "t::g": set(),
    }
    for count in (1, 2, 3, 5):
        shards = shard_of(instances, count)
        assert set(shards) == set(instances) and set(shards.values()) <= set(range(count))
        assert shards["t::a[seed0]"] == shards["t::b[seed0]"] == shards["t::c[seed0]"]
        assert shard_of(dict(instances), count) == shards  # deterministic
    three = shard_of(instances, 3)
    # the largest group (2 runs) first, then one run each, each to the least loaded shard
    assert three["t::a[seed0]"] == 0 and three["t::d[seed1]"] == 1 and three["t::e[seed2]"] == 2


def test_a_run_lands_in_exactly_one_shard():
    instances = {f"t::x{i}[seed{i % 3}]": {(A, i % 3), (B, i % 2)} for i in range(12)}
    shards = shard_of(instances, 3)
    owners = {}
    for node, runs in instances.items():
        for run in runs:
            owners.setdefault((run[0].ident, run[1]), set()).add(shards[node])
    assert all(len(s) == 1 for s in owners.values())


@pytest.mark.parametrize("text", ["3", "0/3", "4/3", "a/b", "1/0"])
def test_a_malformed_shard_is_refused(text):
    with pytest.raises(ValueError, match="--claimbook-shard"):
        parse_shard(text)


def _train(cache, runs, workers=2, report=None):
    return train_missing(cache, plan(cache, runs, {}, 60.0), workers, report or [].append)


def test_missing_runs_are_trained_once_in_worker_processes_then_read(tmp_path):
    cache = RunCache(tmp_path, report=[].append)
    cache(square, {"x": 1}, 0)  # already cached: not trained again
    done = _train(cache, {(A, 0), (B, 0), (B, 1), (C, 0)})
    assert len(done.computed) == 3 and done.workers == 2
    cached_fns.CALLS.clear()
    assert cache(square, {"x": 2}, 1) == {"value": 5}
    assert cached_fns.CALLS == []  # computed by a worker process, read here
    again = _train(cache, {(A, 0), (B, 0)})
    assert again.computed == {} and again.workers == 0


def test_without_the_cache_every_run_is_trained_once_this_session(tmp_path):
    RunCache(tmp_path, report=[].append)(square, {"x": 1}, 0)
    fresh = RunCache(tmp_path, report=[].append, enabled=False)
    done = _train(fresh, {(A, 0)})
    assert len(done.computed) == 1
    cached_fns.CALLS.clear()
    fresh(square, {"x": 1}, 0)  # trained above, in this session: read, not trained twice
    assert cached_fns.CALLS == [] and fresh.computed == 1


def test_a_worker_that_dies_fails_only_its_own_run(tmp_path):
    from tests.unit.cached_fns import dies, slow_square

    cache = RunCache(tmp_path, report=[].append)
    dying = Training(dies, {"code": 7, "after": 0.5})
    healthy = [(Training(slow_square, {"x": x, "sleep": 1.0}), 0) for x in range(4)]
    lines = []
    done = _train(cache, {(dying, 0), *healthy}, report=lines.append)
    assert sorted(done.computed) == [f"slow_square(x={x}, sleep=1.0) seed 0" for x in range(4)]
    assert list(done.failed) == ["dies(code=7, after=0.5) seed 0"]
    assert "the infrastructure lost it 3 times" in done.failed["dies(code=7, after=0.5) seed 0"]
    assert any("a worker was lost; each run it may have held is tried alone next" in line
               for line in lines)  # fmt: skip
