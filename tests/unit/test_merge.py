"""Shards run apart, merged into the verdicts of the whole run; mismatched files refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claimbook.__main__ import main
from claimbook.merge import merge_shards
from claimbook.storage.results import ResultsError
from claimbook.storage.shards import JUDGED

SUITE = """
from claimbook import Training
from tests.unit.cached_fns import square

def A():
    return Training(square, {"x": 2})


@claim(id="doc.seeded", level="likely", source=DOC, section="1", trains=[A()])
def test_seeded(runs, seed, measure):
    '''Holds in every default seed.'''
    measure("value", runs(square, {"x": 2}, seed)["value"])
    assert seed != 7


@claim(id="doc.pooled", level="established", source=DOC, section="1", trains=[A()])
def test_pooled(runs, seeds, measure):
    '''Reads every seed's run.'''
    assert sum(runs(square, {"x": 2}, s)["value"] for s in seeds) == 12 + sum(seeds)


@claim(id="doc.free", level="established", source=DOC, section="2")
def test_free(measure):
    '''Reads no run.'''
    measure("v", 1)


@claim(id="doc.wrong", level="established", source=DOC, section="2", erratum="it is 1")
def test_wrong():
    '''Two is one.'''
    assert 2 == 1
"""


def _verdicts(data: dict) -> dict:
    return {c["id"]: (c["verdict"], c["seeds_passed"], c["seeds_total"]) for c in data["claims"]}


@pytest.fixture(scope="module")
def once() -> dict:
    """This module's runs of SUITE and VERIFIED, made by the first test that needs them: the
    tests only read their files (a changed copy goes to the test's own tmp_path)."""
    return {}


@pytest.fixture
def sharded(once, claims_project, pytester):
    """Run SUITE whole, then as shards 1/2 and 2/2; returns (whole, [shard files]). The
    folder of their results files is ``once["sharded"]``."""
    if "sharded" not in once:
        _, whole = claims_project(SUITE)
        results, files = Path(pytester.path, "reports", "results"), []
        for index in (1, 2):
            claims_project(SUITE, f"--claimbook-shard={index}/2", "--claimbook-no-cache")
            files.append(max(results.glob(f"*shard{index}of2.json")))
            data = json.loads(files[-1].read_text())
            assert data["run"]["shard"] == {"index": index, "count": 2}
        once["sharded"], once["sharded-runs"] = results, (whole, files)
    return once["sharded-runs"]


def test_merged_shards_give_the_verdicts_of_the_unsharded_run(sharded, tmp_path, capsys):
    whole, files = sharded
    parts = [json.loads(f.read_text()) for f in files]
    ids = [{c["id"] for c in part["claims"]} for part in parts]
    assert {"doc.seeded", "doc.pooled"} <= ids[0] | ids[1]
    # the run of every seed is read by doc.pooled: all claims on it land in one shard
    assert sum("doc.pooled" in i for i in ids) == 1
    assert sum(part["run"]["runs_computed"] for part in parts) == 3  # each run trained once
    out = tmp_path / "reports" / "results"
    options = ["--results-dir", str(out), "--baseline", str(tmp_path / "none.json")]
    code = main(["merge", *map(str, files), *options, "--history", str(tmp_path / "h.sqlite")])
    assert code == 0
    merged = json.loads(max(out.glob("*-merged.json")).read_text())
    assert _verdicts(merged) == _verdicts(whole)
    assert not merged["run"]["partial"] and merged["run"]["runs_computed"] == 3
    assert "merged 2 shards" in capsys.readouterr().out


def _rewrite(path: Path, tmp_path: Path, change) -> Path:
    data = json.loads(path.read_text())
    change(data)
    out = tmp_path / f"changed-{path.name}"
    out.write_text(json.dumps(data))
    return out


def test_shards_of_other_commits_seeds_or_schemas_are_refused(sharded, tmp_path):
    _, (one, two) = sharded

    def commit(d):
        d["run"]["git_commit"] = "0" * 40

    def seeds(d):
        d["run"]["seeds"] = [0, 1]

    def schema(d):
        d["schema"] = "claimbook.results/0"

    for change, why in ((commit, "differ in commit"), (seeds, "differ in seeds"),
                        (schema, "schema 'claimbook.results/0'")):  # fmt: skip
        with pytest.raises(ResultsError, match=why):
            merge_shards([one, _rewrite(two, tmp_path, change)])


def test_a_missing_or_repeated_shard_is_refused(sharded, once):
    _, (one, two) = sharded
    with pytest.raises(ResultsError, match=r"shard\(s\) 2/2 missing"):
        merge_shards([one])
    with pytest.raises(ResultsError, match=r"shard\(s\) 1/2 given twice"):
        merge_shards([one, one, two])
    unsharded = min(once["sharded"].glob("run-*.json"))
    with pytest.raises(ResultsError, match="not a shard's results"):
        merge_shards([one, two, unsharded])


def test_the_merge_command_says_why_it_refuses(sharded, capsys):
    _, (one, _) = sharded
    assert main(["merge", str(one)]) == 2
    assert "cannot merge: shard(s) 2/2 missing" in capsys.readouterr().err


def test_an_empty_shard_writes_empty_results_and_merges(claims_project, pytester):
    _, whole = claims_project(SUITE)
    results = Path(pytester.path, "reports", "results")
    for index in range(1, 5):  # three groups of instances: the fourth shard is empty
        result, _ = claims_project(SUITE, f"--claimbook-shard={index}/4")
        assert result.ret == 0
    result.stdout.fnmatch_lines(["shard 4/4 holds none of the selected claim instances*"])
    files = [max(results.glob(f"*shard{i}of4.json")) for i in range(1, 5)]
    assert json.loads(files[3].read_text())["claims"] == []
    assert _verdicts(merge_shards(files)) == _verdicts(whole)


def test_shards_of_different_selections_are_refused(claims_project, pytester):
    results = Path(pytester.path, "reports", "results")
    claims_project(SUITE, "--claimbook-shard=1/2", "-k", "seeded or pooled")
    claims_project(SUITE, "--claimbook-shard=2/2", "-k", "free")
    files = [max(results.glob(f"*shard{i}of2.json")) for i in (1, 2)]
    with pytest.raises(ResultsError, match="differ in selection"):
        merge_shards(files)


def test_a_shards_unresolved_anchor_survives_the_merge():
    """A claim whose at= snippet one shard found missing from its text fails the merged run
    too: the merge pools every list of facts a shard reports, anchors included."""
    from claimbook.judge.outcome import Facts
    from claimbook.merge import _merged_facts

    bad = "doc.x: at= 'no such words' not found in doc.txt"
    shards = [
        {"facts": Facts(suite=["a"], selected=["a"], reported=["a"]).to_dict()},
        {"facts": Facts(suite=["a"], selected=["b"], unresolved_anchors=[bad]).to_dict()},
    ]
    assert _merged_facts(shards).unresolved_anchors == [bad]


VERIFIED = """
from claimbook import Typical

@claim(id="doc.count", level="established", source=DOC, section="1")
def test_count(seed, measure):
    '''Counts to its seed.'''
    measure("count", seed, printed="1")
    assert seed != 2


@claim(id="doc.gain", level="likely", source=DOC, section="2", rule=Typical("gain", above=0))
def test_gain(seed, measure):
    '''The gain is positive on average over seeds.'''
    measure("gain", [0.3, 0.35, 0.32, 0.31, 0.33][seed % 5])
"""


@pytest.fixture
def verified_shards(once, claims_project, pytester, tmp_path):
    """VERIFIED's two shards; returns a function that merges them after ``change(one, two)``."""
    if "verified" not in once:
        results, files = Path(pytester.path, "reports", "results"), []
        for index in (1, 2):
            claims_project(VERIFIED, f"--claimbook-shard={index}/2", "--claimbook-no-cache")
            files.append(max(results.glob(f"*shard{index}of2.json")))
        once["verified"] = files
    files = once["verified"]

    def merged(change=None):
        data = [json.loads(f.read_text()) for f in files]
        if change:
            change(*data)
        paths = [tmp_path / f"s{n}.json" for n in (1, 2)]
        for path, one in zip(paths, data, strict=True):
            path.write_text(json.dumps(one))
        return merge_shards(paths)

    return merged


def _claim(shards, claim_id):
    return next(c for s in shards for c in s["claims"] if c["id"] == claim_id)


def _seed(claim, seed):
    return next(i for i in claim["instances"] if i["seed"] == seed)


def test_genuine_shards_pass_the_merges_checks(verified_shards):
    merged = verified_shards()
    assert {c["id"]: c["verdict"] for c in merged["claims"]}["doc.count"] == "refuted"


def test_a_failing_instance_edited_to_passed_is_refused(verified_shards):
    def passed(*shards):
        _seed(_claim(shards, "doc.count"), 2)["outcome"] = "passed"

    with pytest.raises(ResultsError, match=r"count\[seed2\] is marked passed but holds a fail"):
        verified_shards(passed)


def test_shard_files_carry_instances_and_facts_never_verdicts(verified_shards, pytester):
    """The merge judges once: a shard's file holds no verdict, seed count, statistic,
    comparison or outcome to re-check, and the merge's verdicts come from the instances."""
    for path in Path(pytester.path, "reports", "results").glob("*shard*.json"):
        data = json.loads(path.read_text())
        assert data["comparison"] is None and "outcome" not in data["run"]
        for claim in data["claims"]:
            assert claim["instances"] and not set(JUDGED) & set(claim), claim["id"]
    merged = {c["id"]: c for c in verified_shards()["claims"]}
    assert (merged["doc.count"]["verdict"], merged["doc.count"]["seeds_passed"]) == ("refuted", 2)
    assert merged["doc.gain"]["verdict"] == "supported"


def test_a_shard_that_carries_a_verdict_is_refused_naming_the_claim(verified_shards):
    """A doctored (or older claimbook's) verdict cannot reach the merged result: a shard file
    that carries one is refused, whatever it says."""

    def holds(*shards):
        _claim(shards, "doc.count").update(verdict="holds", seeds_passed=3, seeds_total=3)

    with pytest.raises(ResultsError, match=r"doc\.count carries verdict, seeds_passed, seeds_tot"):
        verified_shards(holds)

    def compared(one, two):
        one["comparison"] = {"regressions": []}

    with pytest.raises(ResultsError, match="carries a comparison with the baseline"):
        verified_shards(compared)


def test_a_deleted_failing_seed_still_reported_is_refused(verified_shards):
    def deleted(*shards):
        claim = _claim(shards, "doc.count")
        claim["instances"].remove(_seed(claim, 2))

    with pytest.raises(ResultsError, match=r"reports 1 instances its claims lack: .*seed2"):
        verified_shards(deleted)


def test_an_edited_measured_value_is_refused_or_judged_afresh(verified_shards):
    def printed(*shards):  # 1 reproduces the printed 1; 7 does not, whatever the record says
        _seed(_claim(shards, "doc.count"), 1)["measures"][0]["value"] = 7

    with pytest.raises(ResultsError, match=r"value 'count' \(7\) does not give its recorded"):
        verified_shards(printed)

    def rule(*shards):  # a value a rule reads: the merge judges the value it is given
        _seed(_claim(shards, "doc.gain"), 0)["measures"][0]["value"] = -3.0

    gain = {c["id"]: c for c in verified_shards(rule)["claims"]}["doc.gain"]
    assert gain["verdict"] != "supported"
