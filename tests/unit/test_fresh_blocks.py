"""Fresh seeds provably fresh: a block of its own per after-data rule, derived from its id;
collisions and blocks seen before refused at collection; the page says what the record shows."""

from __future__ import annotations

import json
import sqlite3

import pytest
from claimbook.declare.fresh import (
    BLOCK,
    FIRST,
    FreshSeedError,
    block_of,
    collisions,
    sentence,
)
from claimbook.render.evidence_view import evidence_view
from claimbook.runs.fresh import settle

from tests.unit.conftest import claim_of

LM = "train_lm(attention)"


def spec(claim_id: str, fresh: int, trains=(LM,), look20=False) -> dict:
    rule = {"rule": "Typical", "x": "v", "above": 0, "fresh": fresh, "seen": "s", "look20": look20}
    return {"id": claim_id, "rule": rule, "trains": list(trains)}


def test_each_claim_id_hashes_to_its_own_block_and_a_new_claim_moves_none():
    ids = [f"ch{i:02d}.claim-{j}" for i in range(10) for j in range(20)]
    blocks = {i: block_of(i) for i in ids}
    assert len(set(blocks.values())) == len(ids)  # 200 ids, 200 distinct blocks
    assert all(b >= FIRST and (b - FIRST) % BLOCK == 0 for b in blocks.values())
    assert block_of("ch04.recall-conv-drops-on-average") == blocks.get(
        "ch04.recall-conv-drops-on-average", block_of("ch04.recall-conv-drops-on-average")
    )
    assert {i: block_of(i) for i in ids} == blocks  # adding others changes no block


def test_two_rules_reading_one_training_at_one_seed_are_refused_naming_both():
    a, b = spec("doc.a", 1000), spec("doc.b", 1005)
    (error,) = collisions([a, b], {})
    assert "doc.a and doc.b" in error and f"{LM} seeds 1005-1011" in error
    assert collisions([a, spec("doc.c", 1000, trains=("train_lm(conv)",))], {}) == []
    assert collisions([a, spec("doc.d", 1012)], {}) == []  # adjacent blocks
    together = {"first_read": "2026-12-04, one run"}
    assert collisions([a, b], {"doc.a": together, "doc.b": together}) == []
    assert collisions([a, b], {"doc.a": together}) != []  # b has no record: it came second


def test_collection_refuses_a_rule_whose_fresh_trainings_exist(tmp_path):
    folder = tmp_path / "cache" / "train_lm"
    folder.mkdir(parents=True)
    (folder / "k.json").write_text(
        json.dumps({"format": 2, "key": "k", "label": f"{LM} seed 1003"})
    )
    with pytest.raises(FreshSeedError) as exc:
        settle([spec("doc.a", 1000)], {"doc.a"}, tmp_path / "cache", tmp_path / "h", None, "now")
    assert "claim doc.a: its fresh seeds 1000-1011 are not fresh" in str(exc.value)
    assert f"the training cache held {LM} seed 1003" in str(exc.value)


def test_collection_refuses_a_block_another_claim_has_values_of(tmp_path):
    other = {"id": "doc.other", "rule": None, "trains": [LM]}
    baseline = {"claims": {"doc.other": {"instances": [{"seed": 1001}, {"seed": 1002}]}}}
    history = tmp_path / "history.sqlite"
    con = sqlite3.connect(history)
    con.execute("CREATE TABLE measures (run_id, claim_id, name, seed, value, printed, reproduced)")
    con.execute("INSERT INTO measures VALUES (1, 'doc.other', 'v', 1004, 0.5, NULL, NULL)")
    con.commit()
    con.close()
    with pytest.raises(FreshSeedError) as exc:
        settle([spec("doc.a", 1000), other], {"doc.a"}, tmp_path, history, baseline, "now")
    assert "the history held values of doc.other at seed 1004" in str(exc.value)
    assert "the baseline held doc.other at seeds 1001-1002" in str(exc.value)


def test_a_recorded_first_read_is_kept_and_a_new_one_written_once(tmp_path):
    record = {"block": [1000, 1011], "first_read": "then", "checked": ["baseline"], "found": []}
    baseline = {"claims": {"doc.a": {"instances": [{"seed": 1000}], "fresh": record}}}
    got = settle([spec("doc.a", 1000)], {"doc.a"}, tmp_path, tmp_path / "h", baseline, "now")
    assert got == {"doc.a": record}  # its own seeds in the baseline: it read them first
    first = settle([spec("doc.b", 2040)], {"doc.b"}, tmp_path, tmp_path / "h", None, "run 1")
    assert first["doc.b"]["block"] == [2040, 2051] and first["doc.b"]["found"] == []
    again = settle([spec("doc.b", 2040)], {"doc.b"}, tmp_path, tmp_path / "h", None, "run 2")
    assert again["doc.b"]["first_read"] == "run 1"  # the local record, not a new check


def test_the_page_sentence_says_what_the_record_shows():
    fresh = {"block": [2040, 2059], "first_read": "the run started 2026-12-06 10:00 UTC",
             "checked": ["cache", "history", "baseline"], "found": []}  # fmt: skip
    assert sentence("doc.a", fresh) == (
        "seeds 2040-2059: no training of them was in the training cache, run history or "
        "baseline when this rule first read them (the run started 2026-12-06 10:00 UTC)"
    )
    legacy = {"block": [1000, 1011], "first_read": "2026-12-04", "checked": ["baseline"],
              "found": []}  # fmt: skip
    assert sentence("doc.a", legacy, ["doc.b"]) == (
        "seeds 1000-1011: no training of them was in the baseline when this rule first read "
        "them (2026-12-04); what the training cache and run history held then was not "
        "recorded; first read in the same run by doc.b too (the same trainings)"
    )


AUTO = """
from claimbook import Typical

@claim(id="doc.auto", level="likely", source=DOC, section="1",
       rule=Typical("gain", above=0, fresh=True, seen="seeds 0-2"))
def test_auto(seed, measure):
    '''The gain is positive on average over seeds.'''
    measure("gain", 0.3 + 0.01 * (seed % 5))
"""


def test_fresh_true_reads_the_claims_own_block_and_its_page_says_so(claims_project):
    result, data = claims_project(AUTO)
    assert result.ret == 0, result.stdout.str()
    claim = claim_of(data, "doc.auto")
    first = block_of("doc.auto")
    assert claim["statistics"]["values"]["seed"] == [first, first + 1, first + 2]
    assert claim["fresh"]["block"] == [first, first + 11]
    facts = dict(evidence_view(claim).facts)
    assert f"seeds {first}-{first + 11}: no training of them was in" in facts["declared after data"]
