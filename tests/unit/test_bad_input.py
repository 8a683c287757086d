"""Bad input is named before anything runs (issue 25, findings 9 and 10): a rule field of the
wrong type, a setting naming nothing real, a seed list past its bounds, and a baseline,
shard or durations file of the right schema and the wrong shape."""

from __future__ import annotations

import argparse
import json
import time
from fnmatch import fnmatch
from pathlib import Path

import pytest
from claimbook import AllOf, Beats, Diff, Matches, MostSeeds, Ranking, Slower, Typical, Universal
from claimbook import config as book_config
from claimbook.__main__ import main
from claimbook.config import ConfigError
from claimbook.declare.seeds import MAX_SEEDS, parse_seeds
from claimbook.declare.spec import ClaimDeclarationError, Source, validate
from claimbook.storage import durations
from claimbook.storage.baseline import SCHEMA as BASELINE_SCHEMA
from claimbook.storage.baseline import BaselineError, load_baseline
from claimbook.storage.results import ResultsError, load_results

from tests.unit.conftest import HEADER

USAGE = pytest.ExitCode.USAGE_ERROR
DOC = Source(id="doc", title="A test document")

PASSING = """
@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(seed, measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2) == 4
"""


def _declare(rule):
    return validate("test_x.py::test_x", (), dict(id="doc.x", level="likely", source=DOC,
                                                  section="1", rule=rule))  # fmt: skip


# --- rule fields -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Typical("x", above="0"),
            'above= must be a finite number, got the text "0"',
        ),
        (lambda: Matches("a", "b", margin="0.1"), "Matches margin= must be a finite number"),
        (
            lambda: Typical("x", below=float("nan")),
            "Typical below= must be a finite number, got NaN",
        ),
        (lambda: Universal("x", above=float("inf")), "got infinity"),
        (
            lambda: Beats("a", "b", lower="no"),
            'lower= must be True or False, got the text "no"',
        ),
        (lambda: Beats("a", "b", margin=True), "Beats margin= must be a finite number, got True"),
        (lambda: MostSeeds("x", above=0, share="0.5"), "MostSeeds share= must be a finite number"),
        (lambda: Typical(3, above=0), "Typical x= must be a measure's name or Diff(a, b)"),
        (lambda: Typical(Diff("a", 2), above=0), "Typical x= must be a measure's name"),
        (lambda: Ranking("abc"), "Ranking order= must be a list of measure names"),
        (lambda: Slower("r", factor=1, at_most=float("nan")), "Slower at_most= must be a finite"),
        (lambda: Typical("x", above=0, look20="yes"), "Typical look20= must be True or False"),
        (
            lambda: AllOf((Typical("x", above=0), Typical("y", above=float("nan")))),
            "Typical above= must be a finite number, got NaN",
        ),
    ],
)
def test_a_mistyped_rule_field_fails_its_declaration_naming_test_field_and_value(make, message):
    with pytest.raises(ClaimDeclarationError) as caught:
        _declare(make())
    assert str(caught.value).startswith("test_x.py::test_x: claim marker: rule: ")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"erratum": "x", "error": "Two Words"}, "'error' must be a kebab-case key"),
        ({"erratum": "x", "error": 3}, "'error' must be a kebab-case key"),
        ({"error": "gqa-cache"}, "'error' names the source error an erratum shows"),
    ],
)
def test_a_malformed_error_key_fails_its_declaration(fields, message):
    kwargs = dict(id="doc.x", level="established", source=DOC, section="1", **fields)
    with pytest.raises(ClaimDeclarationError, match=message):
        validate("test_x.py::test_x", (), kwargs)
    ok = validate("t.py::t", (), {**kwargs, "erratum": "x", "error": "gqa-cache"})
    assert ok.error == "gqa-cache"


@pytest.mark.parametrize("key", ["section", "scope", "erratum", "remark"])
def test_prose_that_is_not_a_string_fails_its_declaration(key):
    kwargs = dict(id="doc.x", level="established", source=DOC, section="1")
    with pytest.raises(ClaimDeclarationError, match=f"test_x: claim marker: '{key}' must be a"):
        validate("test_x.py::test_x", (), {**kwargs, key: 42})
    assert validate("test_x.py::test_x", (), {**kwargs, key: "words"})  # the control


def test_well_typed_rules_still_pass():
    for rule in (Typical("x", above=0), Beats("a", "b", lower=False, margin=0.1),
                 Matches("a", value=1, margin=1), MostSeeds(Diff("a", "b"), below=1, share=0.6),
                 Ranking(["a", "b"]), Slower("r", factor=1.1, at_most=2)):  # fmt: skip
        assert _declare(rule).rule["rule"] == type(rule).__name__


MISTYPED = """
from claimbook import Training, Typical
from tests.unit.cached_fns import square

@claim(id="doc.gain", level="likely", source=DOC, section="1",
       rule=Typical("gain", above="0"), trains=[Training(square, {"x": 2})])
def test_gain(runs, seed, measure):
    '''The gain is positive on average over seeds.'''
    measure("gain", runs(square, {"x": 2}, seed)["value"])
"""


def test_a_mistyped_rule_stops_collection_before_training(claims_project):
    result, _ = claims_project(MISTYPED)
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(
        ["*test_claims.py::test_gain*: claim marker: rule: Typical above= must be a finite number*"]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert not Path(".claimbook-cache").exists()  # nothing trained


# --- settings and seeds ----------------------------------------------------------------------


def _settings(tmp_path: Path, table: str):
    (tmp_path / "pyproject.toml").write_text(f"[tool.claimbook]\n{table}\n")
    book_config.load.cache_clear()
    return book_config.load(tmp_path / "pyproject.toml")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('claims = "tests/claim"', "claims names the folder *tests/claim, which does not exist"),
        ('seeds = "abc"', "seeds: 'abc' is not a seed or a range like 0-4"),
        ('seeds = "-1"', "seeds: seed -1 is negative"),
        ('seeds = "0-20000"', f"seeds: '0-20000' lists 20001 seeds; at most {MAX_SEEDS:,}"),
    ],
)
def test_a_setting_naming_nothing_usable_is_refused_naming_file_and_setting(
    tmp_path, table, message
):
    with pytest.raises(ConfigError) as caught:
        _settings(tmp_path, table)
    text = str(caught.value)
    assert text.startswith(f"{tmp_path / 'pyproject.toml'}: [tool.claimbook] ")
    assert fnmatch(text, f"*{message}*"), text


def test_a_results_setting_naming_a_file_is_refused_naming_the_setting(tmp_path):
    (tmp_path / "out").write_text("not a folder\n")
    with pytest.raises(ConfigError, match=r"\[tool.claimbook\] results names .*out, a file"):
        _settings(tmp_path, 'results = "out"')
    (tmp_path / "tests" / "claims").mkdir(parents=True)
    assert _settings(tmp_path, 'claims = "tests/claims"\nresults = "new"').claims == "tests/claims"


def test_a_missing_claims_folder_stops_pytest_before_any_run(pytester):
    pytester.makepyprojecttoml('[tool.claimbook]\nclaims = "tests/claims"\n')
    pytester.makepyfile(test_claims=HEADER + PASSING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(["*[[]tool.claimbook[]] claims names the folder *tests/claims*"])
    assert not (pytester.path / "reports").exists()  # no partial run recorded


def test_a_malformed_seeds_setting_stops_pytest_naming_file_and_setting(pytester):
    pytester.makepyprojecttoml('[tool.claimbook]\nseeds = "abc"\n')
    pytester.makepyfile(test_claims=HEADER + PASSING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(["*pyproject.toml: [[]tool.claimbook[]] seeds: 'abc' is not a*"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("99999999999999999999", "seed 99999999999999999999 is too large: seeds lie below 2**31"),
        ("2147483648", "is too large"),
        ("0-1000000000", f"lists 1000000001 seeds; at most {MAX_SEEDS:,} are allowed"),
        ("0-9999,20000-20000", "lists 10001 seeds"),
        ("-1", "seed -1 is negative"),
        ("1_000", "'1_000' is not a seed"),
    ],
)
def test_a_seed_list_past_its_bounds_is_refused_before_it_is_built(text, message):
    start = time.perf_counter()
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        parse_seeds(text)
    assert message in str(caught.value)
    assert time.perf_counter() - start < 0.5  # checked before any seed is listed
    assert parse_seeds(f"0-{MAX_SEEDS - 1}")[-1] == MAX_SEEDS - 1
    assert parse_seeds(str(2**31 - 1)) == [2**31 - 1]


@pytest.mark.parametrize("seeds", ["99999999999999999999", "0-1000000000"])
def test_a_seed_option_past_its_bounds_is_a_usage_error(claims_project, seeds):
    result, data = claims_project(PASSING, f"--claimbook-seeds={seeds}")
    assert result.ret == USAGE and data is None
    result.stderr.fnmatch_lines(["*--claimbook-seeds*"])


# --- files of the right schema and the wrong shape -------------------------------------------


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ([], "claims should be an object"),
        ({"doc.x": {"verdict": "holds"}}, "claims.doc.x lacks 'level'"),
        (
            {"doc.x": {"level": "established", "verdict": "holds", "erratum": False,
                       "instances": {}, "printed": {}, "values": {}}},
            "claims.doc.x.instances should be a list",
        ),
    ],
)  # fmt: skip
def test_a_baseline_of_the_wrong_shape_is_refused_naming_file_and_entry(tmp_path, claims, message):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"schema": BASELINE_SCHEMA, "seeds": [0], "claims": claims}))
    with pytest.raises(BaselineError) as caught:
        load_baseline(path)
    assert str(caught.value).startswith(f"{path} is a malformed baseline: ")
    assert message in str(caught.value)


def test_a_run_against_a_baseline_of_the_wrong_shape_names_it(claims_project, pytester):
    claims_project(PASSING, "--claimbook-update-baseline")
    baseline = pytester.path / "reports" / "baseline.json"
    data = json.loads(baseline.read_text())
    del data["claims"]["doc.sum"]["instances"]
    baseline.write_text(json.dumps(data))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")  # exit 2: not in-process
    assert result.ret == 2  # refused at the start, before any training
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines(["*baseline.json is a malformed baseline: *"
                                 "claims.doc.sum lacks 'instances'*"])  # fmt: skip


SHARDED = (
    PASSING
    + """
@claim(id="doc.two", level="established", source=DOC, section="2")
def test_two(measure):
    '''One and one make two.'''
    assert measure("two", 1 + 1) == 2
"""
)


@pytest.mark.parametrize(
    ("doctor", "message"),
    [
        (lambda d: d["claims"][0]["instances"][0].pop("nodeid"), "claims[0].instances[0] lacks"),
        (lambda d: d["run"].update(shard={"index": "1"}), "run.shard.index should be a whole"),
        (lambda d: d["claims"][0].pop("sentence"), "claims[0] lacks 'sentence'"),
        (lambda d: d.update(claims={}), "claims should be a list"),
    ],
)
def test_a_doctored_shard_of_the_wrong_shape_is_refused_by_merge(
    claims_project, pytester, capsys, doctor, message
):
    files = []
    for index in (1, 2):
        claims_project(SHARDED, f"--claimbook-shard={index}/2")
        files.append(max((pytester.path / "reports" / "results").glob(f"*shard{index}of2.json")))
    data = json.loads(files[0].read_text())
    doctor(data)
    files[0].write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="malformed"):
        load_results(files[0])
    capsys.readouterr()
    assert main(["merge", *map(str, files)]) == 2
    err = capsys.readouterr().err
    assert f"{files[0]} is a malformed " in err and message in err


def test_a_durations_file_holding_a_list_is_refused_naming_it(tmp_path, claims_project, pytester):
    path = tmp_path / "durations.json"
    for text in ("[]", '{"schema": "claimbook.durations/1", "seconds": {"a": NaN}}', "{"):
        path.write_text(text)
        with pytest.raises(ValueError, match=f"{path}: not a durations file"):
            durations.load(path)
    (pytester.path / "reports").mkdir()
    (pytester.path / "reports" / "durations.json").write_text("[]")
    result, _ = claims_project(MISTYPED.replace('"0"', "0"))
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(["*the durations setting: *durations.json: not a durations file*"])
