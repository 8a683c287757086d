"""The plugin end to end, in throwaway projects run by pytester."""

from __future__ import annotations

from tests.unit.conftest import claim_of

SEEDED_LIKELY = """
@claim(id="doc.sometimes", level="likely", source=DOC, section="1")
def test_sometimes(seed, measure):
    '''Holds except in seed 1.'''
    measure("value", seed, printed=0)
    assert seed != 1
"""


def test_unknown_level_fails_collection_naming_the_test(claims_project):
    result, data = claims_project("""
@claim(id="doc.x", level="certain", source=DOC, section="1")
def test_bad_level():
    '''A claim.'''
""")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*test_claims.py::test_bad_level: claim marker: unknown level 'certain'*"]
    )
    assert data is None


def test_missing_id_fails_collection(claims_project):
    result, _ = claims_project("""
@pytest.mark.claim(level="likely", source=DOC, section="1")
def test_no_id():
    '''A claim.'''
""")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*test_no_id: claim marker: missing 'id'*"])


def test_duplicated_id_fails_collection_naming_both_tests(claims_project):
    result, _ = claims_project("""
@claim(id="doc.same", level="likely", source=DOC, section="1")
def test_one():
    '''A claim.'''

@claim(id="doc.same", level="likely", source=DOC, section="1")
def test_two():
    '''Another.'''
""")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*test_two: claim marker: id 'doc.same' is already used by *test_one*"]
    )


def test_id_must_carry_its_source_prefix(claims_project):
    result, _ = claims_project("""
@claim(id="other.thing", level="likely", source=DOC, section="1")
def test_prefix():
    '''A claim.'''
""")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*does not start with its source's id 'doc'*"])


def test_malformed_seeds_is_a_usage_error(claims_project):
    result, _ = claims_project(SEEDED_LIKELY, "--claimbook-seeds", "3-1")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--claimbook-seeds*range '3-1' ends before it starts*"])


def test_a_deterministic_likely_claim_failing_in_one_seed_is_refuted(claims_project):
    # without a rule a claim is deterministic: a majority of seeds proves nothing
    result, data = claims_project(SEEDED_LIKELY)
    assert result.ret == 1
    claim = claim_of(data, "doc.sometimes")
    assert (claim["verdict"], claim["seeds_passed"], claim["seeds_total"]) == ("refuted", 2, 3)
    result.stdout.fnmatch_lines(
        [
            "*doc.sometimes*likely*refuted*deterministic, 2/3 inputs*value 0/1/2 (printed 0)*",
            "*claimbook: FAILED: gating verdicts: doc.sometimes (refuted)*",
        ]
    )


def test_established_claim_failing_in_one_seed_fails_the_gate(claims_project):
    result, data = claims_project(SEEDED_LIKELY.replace("likely", "established"))
    assert result.ret == 1
    claim = claim_of(data, "doc.sometimes")
    assert claim["verdict"] == "refuted" and "seed(s) 1" in claim["note"]
    failing = [i for i in claim["instances"] if i["outcome"] == "failed"]
    assert [i["seed"] for i in failing] == [1]
    replay = 'python -m pytest "test_claims.py::test_sometimes[seed1]" --claimbook-seeds 1'
    assert failing[0]["replay"] == replay
    assert f"    {replay}" in result.stdout.lines
    result.stdout.fnmatch_lines(["*claimbook: FAILED: gating verdicts: doc.sometimes (refuted)*"])


def test_a_crashing_experiment_is_an_error_not_a_refutation(claims_project):
    result, data = claims_project("""
@claim(id="doc.crash", level="speculative", source=DOC, section="1")
def test_crash(seed):
    '''The experiment raises.'''
    raise RuntimeError("out of memory")
""")
    assert result.ret == 1  # any error fails the session, whatever the level
    claim = claim_of(data, "doc.crash")
    assert claim["verdict"] == "error"
    assert {i["outcome"] for i in claim["instances"]} == {"error"}
    assert "RuntimeError: out of memory" in claim["instances"][0]["message"]


def test_a_failing_fixture_is_an_error(claims_project):
    result, data = claims_project("""
@pytest.fixture
def corpus():
    raise FileNotFoundError("no corpus")

@claim(id="doc.fixture", level="likely", source=DOC, section="1")
def test_uses_corpus(corpus):
    '''Needs data.'''
""")
    assert result.ret == 1
    assert claim_of(data, "doc.fixture")["verdict"] == "error"


def test_speculative_refutation_is_reported_but_does_not_gate(claims_project):
    result, data = claims_project(
        SEEDED_LIKELY.replace("seed != 1", "seed > 5").replace("likely", "speculative")
    )
    assert result.ret == 0
    assert claim_of(data, "doc.sometimes")["verdict"] == "refuted"


def test_erratum_does_not_gate_until_it_stops_failing(claims_project):
    erratum = SEEDED_LIKELY.replace('section="1"', 'section="1", erratum="prints 0 but it is 1"')
    result, data = claims_project(erratum.replace("likely", "established"))
    assert result.ret == 0
    assert claim_of(data, "doc.sometimes")["verdict"] == "erratum"
    result.assert_outcomes(passed=2, xfailed=1)  # pytest counts the declared failure as expected
    result, data = claims_project(erratum.replace("seed != 1", "True"))
    assert result.ret == 1
    assert claim_of(data, "doc.sometimes")["verdict"] == "fixed"


def test_seed_ranges_and_the_seeds_fixture(claims_project):
    result, data = claims_project(
        """
@claim(id="doc.all", level="likely", source=DOC, section="1")
def test_all_seeds(seeds, measure):
    '''Every seed at once.'''
    for s in seeds:
        measure("twice", 2 * s, seed=s)
    assert seeds == [0, 1, 2, 3, 4]

@claim(id="doc.each", level="established", source=DOC, section="1")
def test_each(seed):
    '''One per seed.'''
""",
        "--claimbook-seeds",
        "0-4",
    )
    assert result.ret == 0
    assert data["run"]["seeds"] == [0, 1, 2, 3, 4]
    assert len(claim_of(data, "doc.each")["instances"]) == 5
    twice = claim_of(data, "doc.all")["instances"][0]["measures"]
    assert [(m["seed"], m["value"]) for m in twice] == [(s, 2 * s) for s in range(5)]


def test_results_file_has_schema_provenance_and_timings(claims_project):
    _, data = claims_project(SEEDED_LIKELY)
    assert data["schema"] == "claimbook.results/2"
    run = data["run"]
    for key in (
        "git_commit",
        "started",
        "finished",
        "wall_s",
        "python",
        "torch",
        "platform",
        "seeds",
    ):
        assert key in run
    from claimbook.runs.keys import cpu_facts

    assert run["machine"].startswith(cpu_facts().get("model name", "")) and " x " in run["machine"]
    assert "family" in run["host"] or not cpu_facts()  # the host within its class, recorded
    claim = claim_of(data, "doc.sometimes")
    assert claim["sentence"] == "Holds except in seed 1."
    assert all(i["duration_s"] >= 0 for i in claim["instances"])
    assert claim["instances"][0]["measures"] == [
        {"name": "value", "value": 0, "printed": 0, "reproduced": True}
    ]


def test_runs_without_claims_write_nothing(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == 0
    assert not (pytester.path / "reports").exists()


def test_help_documents_the_options(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps help to the terminal width
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "claimbook: claims tested across seeds:",
            "*--claimbook-seeds=LIST",
            "*a fixed sample of seeds for every seeded claim, e.g.*",
            "*--claimbook-budget=SHARE",
            "*training CPU the planned looks may spend on further*",
            "*--claimbook-results-dir=DIR",
            "*where the run's results JSON is written (default: the*",
            "*--claimbook-no-cache*recompute every training run and execute every claim",
            "*--claimbook-workers=N",
            "*processes that train runs at once, one thread each*",
            "*--claimbook-shard=I/N",
            "*run part I of N of the claims: a fixed split in which*",
            "*--claimbook-train-part=I/N",
            "*phase 1 only, as a CI training leg: train part I of N*",
            "*--claimbook-no-train*phase 2 only: run the claims against the cache and*",
            "*--claimbook-train-on=ENGINE",
            "*where runs are trained: local (a process pool, the*",
        ]
    )


def test_printed_numbers_that_reproduce_are_counted_per_claim(claims_project):
    result, data = claims_project(
        """
@claim(id="doc.digits", level="established", source=DOC, section="1")
def test_digits(seed, measure):
    '''Two printed numbers, one reproduced.'''
    measure("loss", 1.7076, printed="1.708")
    measure("accuracy", 0.369, printed="0.36")
""",
        "--claimbook-seeds",
        "0",
    )
    assert claim_of(data, "doc.digits")["printed_reproduced"] == [1, 2]
    result.stdout.fnmatch_lines(["*doc.digits*established*holds*1/1*1/2*"])


def test_subsets_are_marked_partial(claims_project):
    _, data = claims_project(SEEDED_LIKELY, "-k", "sometimes")
    assert data["run"]["partial"] is False
    _, data = claims_project(SEEDED_LIKELY, "--claimbook-seeds", "0-4")  # a fixed sample, no looks
    assert data["run"]["partial"] is True
    _, data = claims_project(SEEDED_LIKELY, "-k", "not seed1")
    assert data["run"]["partial"] is True
    _, data = claims_project(SEEDED_LIKELY, "--claimbook-seeds", "0,1")
    assert data["run"]["partial"] is True


def test_k_selects_claims_by_their_id_as_well_as_their_test_name(claims_project):
    two = (
        SEEDED_LIKELY
        + """
@claim(id="doc.always-true", level="established", source=DOC, section="1")
def test_other(measure):
    '''Holds.'''
    measure("value", 1)
"""
    )
    _, data = claims_project(two, "-k", "always-true")  # an id, hyphen and all
    assert [c["id"] for c in data["claims"]] == ["doc.always-true"]
    _, data = claims_project(two, "-k", "doc.sometimes")
    assert [c["id"] for c in data["claims"]] == ["doc.sometimes"]


def test_an_erratum_holding_in_a_subset_of_seeds_is_not_called_fixed(claims_project):
    erratum = SEEDED_LIKELY.replace('section="1"', 'section="1", erratum="fails in seed 1"')
    result, data = claims_project(
        erratum.replace("likely", "established"), "--claimbook-seeds", "0"
    )
    assert result.ret == 0
    claim = claim_of(data, "doc.sometimes")
    assert claim["verdict"] == "erratum" and claim["note"].startswith("holds in this subset")
    assert data["run"]["partial"] is True


def test_a_skipped_claim_says_why(claims_project):
    _, data = claims_project("""
@claim(id="doc.gpu", level="likely", source=DOC, section="1")
def test_gpu(seed):
    '''Needs a GPU.'''
    pytest.skip("needs a CUDA GPU")
""")
    claim = claim_of(data, "doc.gpu")
    assert (claim["verdict"], claim["note"]) == ("skipped", "needs a CUDA GPU")


def test_a_malformed_claim_among_good_ones_is_the_stated_reason(claims_project):
    result, data = claims_project("""
@claim(id="doc.good", level="established", source=DOC, section="1")
def test_good():
    '''A claim.'''


@claim(id="doc.bad", level="established", source=DOC, section="1", at=123)
def test_bad():
    '''A claim.'''
""")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*test_bad: claim marker: 'at' must be a source snippet*"])
    verdict_line = next(x for x in result.stdout.lines if x.startswith("claimbook: FAILED"))
    cause = "claimbook: FAILED: collection errors in test_claims.py::test_bad"
    assert verdict_line.startswith(cause)  # the cause first, before what followed from it
    assert data is None or data["run"]["facts"]["collection_errors"] == ["test_claims.py::test_bad"]


def test_a_module_that_fails_to_import_is_named_not_an_interrupt(claims_project, pytester):
    pytester.makepyfile(test_broken="import no_such_module_here\n")
    result, _ = claims_project("""
@claim(id="doc.good", level="established", source=DOC, section="1")
def test_good():
    '''A claim.'''
""")
    assert result.ret != 0
    out = result.stdout.str()
    assert "collection errors in test_broken.py" in out
    assert "interrupted" not in out.split("claimbook: FAILED", 1)[-1].splitlines()[0]
