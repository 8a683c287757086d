import json

from claimbook.runs.cache import RunCache, describe, source_hash

from tests.unit import cached_fns
from tests.unit.cached_fns import square


def make_cache(tmp_path, lines=None):
    return RunCache(tmp_path, report=(lines if lines is not None else []).append)


def test_a_run_is_computed_once_then_read(tmp_path):
    cached_fns.CALLS.clear()
    lines = []
    first = make_cache(tmp_path, lines)
    assert first(square, {"x": 3}, 1) == {"value": 10}
    second = make_cache(tmp_path, lines)  # a later session of the suite
    assert second(square, {"x": 3}, 1) == {"value": 10}
    assert cached_fns.CALLS == [(3, 1)]
    assert (first.computed, second.read) == (1, 1)
    assert any("computing" in line for line in lines)


def test_config_and_seed_are_part_of_the_key(tmp_path):
    cache = make_cache(tmp_path)
    keys = {
        cache.key(square, {"x": 3}, 1),
        cache.key(square, {"x": 3}, 2),
        cache.key(square, {"x": 4}, 1),
    }
    assert len(keys) == 3


def test_a_corrupt_entry_is_reported_and_recomputed(tmp_path):
    cache = make_cache(tmp_path)
    cache(square, {"x": 2}, 0)
    (entry,) = (tmp_path / "square").glob("*.json")
    entry.write_text('{"key": "trunc')
    lines = []
    again = make_cache(tmp_path, lines)
    assert again(square, {"x": 2}, 0) == {"value": 4}
    assert again.computed == 1 and any("corrupt" in line for line in lines)
    assert json.loads(entry.read_text())["result"] == {"value": 4}


def test_disabled_cache_recomputes(tmp_path):
    cache = make_cache(tmp_path)
    cache(square, {"x": 2}, 0)
    fresh = RunCache(tmp_path, report=[].append, enabled=False)
    fresh(square, {"x": 2}, 0)
    assert fresh.computed == 1 and fresh.read == 0


def test_code_hash_follows_imports_within_the_package():
    # the recall task does not import the language-model module, so editing one
    # leaves the other's runs cached
    assert source_hash("experiments.recall") != source_hash("experiments.lm")
    assert source_hash("experiments.lm") == source_hash("experiments.lm")


def test_run_labels_name_the_settings_off_their_defaults():
    from experiments.induction import InductionConfig, train_induction
    from experiments.lm import LMConfig, train_lm
    from experiments.modules import CONV, GQA

    assert describe(train_lm, LMConfig(CONV), 1) == "train_lm(conv) seed 1"
    assert (
        describe(train_lm, LMConfig(GQA, norm="layer"), 0)
        == "train_lm(attention, n_kv_heads=2, norm=layer) seed 0"
    )
    assert describe(train_induction, InductionConfig(2), 2) == "train_induction(n_layers=2) seed 2"
