"""The short spelling of a claim: id and level first, the source named by the id, the
section found from the anchor, module defaults, and a training run as a fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BOOK = """
[tool.claimbook]
claims = "."
sources_dir = "text"

[[tool.claimbook.sources]]
id = "doc"
title = "A test document"
path = "doc.md"
"""
TEXT = "# A test document\\n\\n## Gains\\n\\nThe gain of two is four.\\n"


@pytest.fixture
def book(pytester, monkeypatch):
    """A book with one declared source; ``run(body, *args)`` -> (result, results or None)."""
    monkeypatch.delenv("CLAIMBOOK_CACHE_DIR", raising=False)
    monkeypatch.delenv("CLAIMBOOK_SOURCES_DIR", raising=False)
    pytester.makefile(".toml", pyproject=BOOK)
    (pytester.path / "text").mkdir()
    (pytester.path / "text" / "doc.md").write_text(TEXT.replace("\\n", "\n"))

    def run(body: str, *args: str):
        pytester.makepyfile(test_claims=body)
        result = pytester.runpytest("-p", "no:cacheprovider", *args)
        files = sorted(Path(pytester.path, "reports", "results").glob("run-*.json"))
        return result, json.loads(files[-1].read_text()) if files else None

    return run


SHORT = """
from claimbook import Typical, claim, defaults, training
from tests.unit.cached_fns import square

pytestmark = defaults(scope="a one-line doubling")
doubled = training(square, {"x": 2})

@claim("doc.gain", "established", at="The gain of two is four")
def test_gain(measure):
    '''Two doubled is four.'''
    measure("gain", 2 * 2, printed=4)

@claim("doc.trained", "likely", at="The gain of two", rule=Typical("v", above=0))
def test_trained(doubled, seed, measure):
    '''The doubling run gives a positive value in a typical seed.'''
    measure("v", doubled["value"] + 1)
"""


def test_the_short_spelling_gives_the_full_declaration(book):
    result, data = book(SHORT)
    assert result.ret == 0, result.stdout.str()
    claims = {c["id"]: c for c in data["claims"]}
    gain, trained = claims["doc.gain"], claims["doc.trained"]
    assert gain["source"]["id"] == "doc" and gain["source"]["title"] == "A test document"
    assert gain["scope"] == trained["scope"] == "a one-line doubling"  # the module's default
    assert trained["trains"] == ["square(x=2)"]  # the fixture, found and trained
    assert trained["verdict"] in ("supported", "inconclusive")
    assert "ClaimSpellingWarning" not in result.stdout.str()


def test_a_claims_own_field_wins_over_the_modules_default(book):
    body = SHORT.replace('at="The gain of two is four")', 'at="The gain of two is four", '
                         'scope="its own")')  # fmt: skip
    result, data = book(body)
    assert result.ret == 0, result.stdout.str()
    assert {c["id"]: c["scope"] for c in data["claims"]}["doc.gain"] == "its own"


def test_an_id_whose_prefix_names_no_source_fails_collection_naming_the_test(book):
    result, _ = book(SHORT.replace('"doc.gain"', '"other.gain"'))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_claims.py::test_gain: claim marker: id 'other.gain'*"
                                 "no source 'other' is declared*(declared: doc)*"])  # fmt: skip


def test_a_training_fixture_without_a_seed_fails_naming_the_test(book):
    body = (
        SHORT
        + """
@claim("doc.seedless", "established", at="The gain of two")
def test_seedless(doubled, measure):
    '''Reads a run without a seed.'''
    measure("v", doubled["value"])
"""
    )
    result, _ = book(body)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_seedless*takes neither 'seed' nor 'seeds'*"])


def test_the_old_spelling_still_works_and_names_the_new_one(book):
    old = """
from claimbook import Training, Typical, claim, source
from tests.unit.cached_fns import square

DOC = source("doc")

@claim(id="doc.trained", level="likely", source=DOC, section="Gains", at="The gain of two",
       trains=[Training(square, {"x": 2})], rule=Typical("v", above=0))
def test_trained(runs, seed, measure):
    '''The doubling run gives a positive value in a typical seed.'''
    measure("v", runs(square, {"x": 2}, seed)["value"] + 1)
"""
    result, data = book(old)
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert "source= is deprecated: the id's prefix names the source" in out
    assert "NAME = claimbook.training(fn, config), and take NAME as an argument" in out
    assert out.count("trains= is deprecated") == 1  # once per test, not per seed
    (trained,) = data["claims"]
    assert trained["trains"] == ["square(x=2)"] and trained["section"] == "Gains"


def test_defaults_take_only_what_a_module_shares():
    from claimbook import defaults

    with pytest.raises(TypeError, match="takes level, scope, env, section; got at"):
        defaults(at="x")


KNOWN = """
from claimbook import claim

@claim("doc.gain", "likely", at="The gain of two is four", KNOWN_HERE)
def test_gain(measure):
    '''Two doubled is five.'''
    assert measure("gain", 2 * 2) == 5
"""


def test_a_known_refutation_is_listed_as_refuted_and_only_the_undeclared_one_fails(book):
    result, data = book(KNOWN.replace("KNOWN_HERE", 'known_refuted="four here; five elsewhere"'))
    assert result.ret == 0, result.stdout.str()
    (gain,) = data["claims"]
    assert gain["verdict"] == "refuted" and not gain["gates"]
    assert "refuted, and known: four here; five elsewhere" in gain["note"]
    result, data = book(KNOWN.replace(", KNOWN_HERE", ""))
    assert result.ret == 1 and data["claims"][0]["gates"]


def test_a_failing_stand_in_is_not_observed_and_does_not_fail_the_run(book):
    """A claim tried on a stand-in that cannot show the sentence: its failing test is "not
    observed", never refuted, and the gate passes; undeclared, the same test fails the run."""
    result, data = book(KNOWN.replace("KNOWN_HERE", 'stand_in="a toy for a large model"'))
    assert result.ret == 0, result.stdout.str()
    (gain,) = data["claims"]
    assert (gain["verdict"], gain["gates"]) == ("not observed", False)
    assert gain["stand_in"] == "a toy for a large model"
    assert "the rule fails on a stand-in: a toy for a large model" in gain["note"]
    assert "verdicts: 1 not observed" in result.stdout.str()
    result, data = book(KNOWN.replace(", KNOWN_HERE", ""))
    assert result.ret == 1 and data["claims"][0]["verdict"] == "refuted"
    both = 'stand_in="a toy", known_refuted="four here"'
    result, _ = book(KNOWN.replace("KNOWN_HERE", both))
    result.stderr.fnmatch_lines(["*'stand_in' is for a claim whose run cannot show*"])


def test_a_stand_in_that_stops_showing_its_behaviour_is_a_change_not_a_regression(book):
    """Against the baseline, a stand-in's move from observed to not observed is evidence about
    the stand-in: reported as a change, never failing the gate."""
    declared = KNOWN.replace("KNOWN_HERE", 'stand_in="a toy for a large model"')
    result, data = book(declared.replace("== 5", "== 4"), "--claimbook-update-baseline")
    assert result.ret == 0 and data["claims"][0]["verdict"] == "observed", result.stdout.str()
    result, data = book(declared)
    assert result.ret == 0, result.stdout.str()
    assert data["comparison"]["regressions"] == []
    moved = [(c["claim"], c["before"], c["after"]) for c in data["comparison"]["changes"]]
    assert moved == [("doc.gain", "observed", "not observed")]


def test_a_training_fixture_whose_run_is_missing_is_an_error_that_fails_the_run(book):
    """--claimbook-no-train on an empty cache: the fixture cannot read its run, so each
    instance errors in setup; the claim is an error (never refuted) and the run fails."""
    result, data = book(SHORT, "--claimbook-no-train")
    assert result.ret == 1, result.stdout.str()
    trained = {c["id"]: c for c in data["claims"]}["doc.trained"]
    assert trained["verdict"] == "error" and trained["gates"]
    assert all(i["outcome"] == "error" for i in trained["instances"])
