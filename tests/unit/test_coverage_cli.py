"""Cited claims through the plugin, the catalog a run records, and the coverage commands."""

from __future__ import annotations

import json
from pathlib import Path

from claimbook.__main__ import main
from claimbook.judge.verdicts import POSITIVE, VERDICTS, Instance, decide
from claimbook.render.table import verdict_table

from tests.unit.conftest import claim_of

CLAIMS = """
@claim(id="doc.sum", level="established", source=DOC, section="1", at="two and two")
def test_sum(seed, measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2, printed=4) == 4

@claim(id="doc.paper", level="established", source=DOC, section="1", at="a paper found",
       cited="Someone et al. (2020), a result on a cluster: 1000 GPU-days")
def test_paper():
    '''A paper found something we cannot run.'''
    open("cited-body-ran", "w").write("it ran")
    raise AssertionError("a cited claim's body must never run")
"""

TEXT = "A tiny text.\nIt says two and two make four.\nAnd a paper found a thing.\n"

MAP = """
source = "doc"

[[statement]]
id = "sum"
at = "two and two make four"
kind = "number"
values = ["four"]
claims = ["doc.sum"]
checked = "asserted"

[[statement]]
id = "paper"
at = "a paper found a thing"
kind = "model"
claims = ["doc.paper"]
"""


def project(pytester, text=TEXT, coverage=MAP) -> dict:
    """The source text and the map beside the pytester project; their paths."""
    texts = pytester.path / "texts"
    texts.mkdir(exist_ok=True)
    (texts / "doc.txt").write_text(text)
    maps = pytester.path / "coverage"
    maps.mkdir(exist_ok=True)
    (maps / "doc.toml").write_text(coverage)
    return {"texts": str(texts), "maps": str(maps)}


def newest(pytester) -> str:
    return str(sorted(Path(pytester.path, "reports", "results").glob("run-*.json"))[-1])


def with_path(body: str) -> str:
    """The claims with a source that names its text's file (Source.path)."""
    return '\nDOC = Source(id="doc", title="A test document", path="doc.txt")\n' + body


def test_a_cited_claim_is_never_run_never_gates_and_never_counts_as_holding(
    claims_project, pytester
):
    result, data = claims_project(CLAIMS)
    assert result.ret == 0, result.stdout.str()
    paper = claim_of(data, "doc.paper")
    assert paper["verdict"] == "cited" and paper["gates"] is False
    assert "1000 GPU-days" in paper["note"]
    assert not (pytester.path / "cited-body-ran").exists()  # no setup, no body
    assert [i["outcome"] for i in paper["instances"]] == ["skipped"]
    assert "cited" in VERDICTS and "cited" not in POSITIVE
    lines = verdict_table(data["claims"])
    assert lines[-1] == "verdicts: 1 holds; 1 cited (not run here, never counted as holding)"
    assert decide("established", [Instance(0, {}, "failed")], cited="x").gates is False


def test_a_claim_moving_between_holds_and_cited_is_a_change_not_a_regression(claims_project):
    holding = CLAIMS.replace(
        'cited="Someone et al. (2020), a result on a cluster: 1000 GPU-days")',
        ")"
    ).replace('    open("cited-body-ran"', '    return\n    open("cited-body-ran"')  # fmt: skip
    result, _ = claims_project(holding, "--claimbook-update-baseline")
    assert result.ret == 0, result.stdout.str()
    result, data = claims_project(CLAIMS)
    assert result.ret == 0, result.stdout.str()
    assert data["comparison"]["regressions"] == []
    changes = [(c["claim"], c["before"], c["after"]) for c in data["comparison"]["changes"]]
    assert changes == [("doc.paper", "holds", "cited")]
    result, _ = claims_project(CLAIMS, "--claimbook-update-baseline")
    result, data = claims_project(holding)
    assert result.ret == 0 and data["comparison"]["regressions"] == []
    assert data["comparison"]["changes"][0]["after"] == "holds"


def test_the_run_records_the_whole_catalog_so_a_subset_still_resolves(
    claims_project, pytester, capsys
):
    paths = project(pytester)
    _, data = claims_project(with_path(CLAIMS), "-k", "paper")
    assert data["run"]["partial"] is True
    assert [c["id"] for c in data["claims"]] == ["doc.paper"]
    assert [c["id"] for c in data["run"]["catalog"]] == ["doc.sum", "doc.paper"]
    assert data["run"]["catalog"][0]["at"] == ["two and two"]
    capsys.readouterr()
    args = ["coverage", "--maps", paths["maps"], "--sources-dir", paths["texts"]]
    written = pytester.path / "coverage.json"
    assert (
        main([*args, "--results", newest(pytester), "--fail-under", "100", "--json", str(written)])
        == 0
    )
    out = capsys.readouterr().out
    totals = json.loads(written.read_text())["totals"]["doc"]
    assert totals["model"]["cited"] == 1 and totals["model"]["accounted_pct"] == 100.0
    assert "0 error(s), 0 warning(s)" in out, out
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in out.splitlines()}
    # total, tested, recorded, construction, skipped, cited, stand-in, hardware, not-a-claim,
    # uncovered
    assert rows["doc", "number"] == ["1", "1", *"00000000", "100.0%", "100.0%"]
    # the claim not run (-k) still tests its statement; the cited one accounts for its own
    assert rows["doc", "model"] == ["1", "0", "0", "0", "0", "1", *"0000", "0.0%", "100.0%"]


def test_coverage_fail_under_exits_1_and_a_malformed_map_exits_2(claims_project, pytester, capsys):
    paths = project(pytester, coverage=MAP.replace('values = ["four"]', 'values = ["five"]'))
    claims_project(with_path(CLAIMS))
    args = ["coverage", "--maps", paths["maps"], "--sources-dir", paths["texts"]]
    capsys.readouterr()
    assert main([*args, "--results", newest(pytester)]) == 0  # reported, no threshold asked
    assert main([*args, "--results", newest(pytester), "--fail-under", "0"]) == 1
    out = capsys.readouterr().out
    assert "statement 'sum': value 'five' does not occur in its anchored line 2" in out
    assert "coverage FAILED (--fail-under 0): 1 coverage finding(s) are errors" in out
    project(pytester, coverage=MAP.replace('kind = "model"', 'kind = "paper"'))
    assert main([*args, "--results", newest(pytester)]) == 2
    err = capsys.readouterr().err
    assert "doc.toml: malformed coverage map" in err and "statement 'paper': kind 'paper'" in err


def test_the_gate_fails_on_coverage_only_when_asked_and_only_with_maps(
    claims_project, pytester, capsys
):
    paths = project(pytester, coverage=MAP.replace('claims = ["doc.paper"]\n', ""))
    claims_project(with_path(CLAIMS))
    gate = ["gate", "--results", newest(pytester), "--sources-dir", paths["texts"]]
    capsys.readouterr()
    assert main(gate) == 0  # no threshold: coverage not judged
    assert main([*gate, "--maps", paths["maps"], "--coverage-fail-under", "95"]) == 1
    out = capsys.readouterr().out
    assert "doc model: accounted 0.0% < 95%" in out
    assert "FAILED: coverage (--coverage-fail-under 95): doc model: accounted 0.0% < 95%" in out
    absent = str(pytester.path / "no-maps")
    assert main([*gate, "--maps", absent, "--coverage-fail-under", "95"]) == 0
    assert f"no coverage maps in {absent}/: not checked" in capsys.readouterr().out
    project(pytester)
    assert main([*gate, "--maps", paths["maps"], "--coverage-fail-under", "95"]) == 0


def test_the_results_file_stays_standard_json_with_the_catalog(claims_project, pytester):
    claims_project(CLAIMS)
    text = Path(newest(pytester)).read_text()
    assert json.loads(text)["run"]["catalog"][1]["cited"].startswith("Someone et al.")


def test_a_run_of_some_files_or_node_ids_is_not_held_to_coverage(claims_project, pytester, capsys):
    """Its catalog lacks the claims it did not collect (a -k run collects them all): the
    gate says coverage was not checked, and a claim page's single-claim command exits 0."""
    paths = project(pytester)
    _, data = claims_project(with_path(CLAIMS), "test_claims.py::test_paper")
    assert [c["id"] for c in data["run"]["catalog"]] == ["doc.paper"]
    gate = ["gate", "--results", newest(pytester), "--sources-dir", paths["texts"],
            "--maps", paths["maps"], "--coverage-fail-under", "95"]  # fmt: skip
    capsys.readouterr()
    assert main(gate) == 0
    out = capsys.readouterr().out
    assert "coverage: not checked: this run collected part of the claims folder (node id" in out
