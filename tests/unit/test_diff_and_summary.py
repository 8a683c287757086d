"""``python -m claimbook diff`` between two runs, and the gate's GitHub step summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claimbook.__main__ import main
from claimbook.judge.diff import diff_claims, md

from tests.unit.conftest import gate

SEEDS = ("--claimbook-seeds", "0,1,2")  # one fixed look: the rules decide on these three

OLD = """
from claimbook import Typical, Universal

@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(seed):
    '''Two and two make four.'''
    assert 2 + 2 == 4

@claim(id="doc.flaky", level="speculative", source=DOC, section="1")
def test_flaky(seed):
    '''Holds in every seed.'''
    assert seed not in FAILING

@claim(id="doc.err", level="established", source=DOC, section="1")
def test_err(seed):
    '''The text says three.'''
    assert WRONG == 0

@claim(id="doc.every", level="likely", source=DOC, section="1", rule=Universal("v", above=0.1))
def test_every(seed, measure):
    '''Every seed's value is above 0.1.'''
    measure("v", EVERY[seed])

@claim(id="doc.open", level="likely", source=DOC, section="1", rule=Typical("g", above=0))
def test_open(seed, measure):
    '''The gain is positive on average.'''
    measure("g", GAIN[seed])
"""
GONE = """
@claim(id="doc.old", level="likely", source=DOC, section="1")
def test_old(seed):
    '''An old claim.'''
"""
ADDED = """
@claim(id="doc.new", level="likely", source=DOC, section="1")
def test_new(seed):
    '''A new claim.'''
"""
SUM = OLD[OLD.index("@claim") : OLD.index('@claim(id="doc.flaky')]
# values for up to 21 seeds: complete runs take the planned looks (more seeds for open rules)
BEFORE = "FAILING, WRONG, EVERY, GAIN = (0,), 0, [1] * 21, [0.5, 0.5, 0.6] * 7\n"
AFTER = "FAILING, WRONG, EVERY, GAIN = (0, 1), 1, [1, 0] + [1] * 19, [0.3, -0.2, 0.1] * 7\n"


def _two_runs(claims_project, pytester) -> tuple[Path, Path]:
    claims_project(BEFORE + OLD + GONE, *SEEDS)
    new = (OLD + ADDED).replace("assert 2 + 2 == 4", "assert 2 + 2 == 5")
    new = new.replace('id="doc.err",', 'id="doc.err", erratum="it is three, not zero",')
    claims_project(AFTER + new, *SEEDS)
    old_file, new_file = sorted((pytester.path / "reports" / "results").glob("run-*.json"))
    return old_file, new_file


def _out(capsys) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_diff_prints_each_kind_of_change_between_two_runs(claims_project, pytester, capsys):
    old, new = _two_runs(claims_project, pytester)
    capsys.readouterr()
    assert main(["diff", str(old), str(new)]) == 0
    lines = _out(capsys).splitlines()
    assert lines[0] == f"claimbook: {old.name} -> {new.name}"
    text = "\n".join(lines)
    assert "verdicts changed (" in text and "  doc.sum: holds -> refuted" in lines
    assert "      Two and two make four." in lines
    assert "claims added (1):" in lines and "  doc.new: holds" in lines
    assert "claims gone (1):" in lines and "  doc.old: was holds" in lines
    assert "new errata (1):" in lines and "      it is three, not zero" in lines
    # a universal rule newly refuted by seed 1, deterministic claims failing in more seeds
    assert "new counterexamples (3):" in lines
    assert "      seed 1 now fails its every-seed rule" in lines
    assert "  doc.flaky: refuted" in lines and "      newly failing: seed 1" in lines
    assert "      newly failing: seed 0; seed 1; seed 2" in lines  # doc.sum
    assert f"inconclusive in {new.name} (1):" in lines and "  doc.open: inconclusive" in lines
    # each value that moved, by instance, in claims whose verdict held or changed
    assert "values changed (2):" in lines
    assert "      seed 1: v: 1 -> 0" in lines  # doc.every
    assert any(
        line.startswith("      seed 0: g: 0.5 -> 0.3; seed 1: g: 0.5 -> -0.2;") for line in lines
    )


def test_diff_of_a_run_with_itself_says_none_everywhere(claims_project, pytester, capsys):
    old, _ = _two_runs(claims_project, pytester)
    capsys.readouterr()
    assert main(["diff", str(old), str(old)]) == 0
    lines = _out(capsys).splitlines()
    assert lines[1].startswith(f"{old.name} is a partial run (--claimbook-seeds 0,1,2: ")
    assert lines[2:8] == [
        "verdicts changed: none", "values changed: none", "claims added: none",
        "claims gone: none", "new errata: none", "new counterexamples: none",
    ]  # fmt: skip


def test_diff_reads_the_baseline_as_its_older_side(claims_project, pytester, capsys):
    claims_project(BEFORE + OLD, "--claimbook-update-baseline")  # a complete run
    _, data = claims_project(AFTER + OLD)
    new = sorted((pytester.path / "reports" / "results").glob("run-*.json"))[-1]
    capsys.readouterr()
    assert main(["diff", str(pytester.path / "reports" / "baseline.json"), str(new)]) == 0
    out = _out(capsys)
    assert "  doc.every: " in out and "seed 1 now fails its every-seed rule" in out
    assert data["claims"]  # the run the diff read


@pytest.mark.parametrize(
    "content, why",
    [
        (None, "no such file"),
        ("not json", "cannot read results file"),
        ('{"schema": "something/1"}', "has schema 'something/1'"),
        ('{"schema": "claimbook.results/2", "run": {}, "claims": [{"id": "x"}]}', "malformed"),
    ],
)
def test_diff_names_a_file_it_cannot_read_and_exits_2(tmp_path, capsys, content, why):
    good = tmp_path / "good.json"
    good.write_text('{"schema": "claimbook.results/2", "run": {}, "claims": []}')
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    for old, new in ((bad, good), (good, bad)):
        assert main(["diff", str(old), str(new)]) == 2
        err = capsys.readouterr().err
        assert str(bad) in err and why in err and "Traceback" not in err


def test_markdown_shows_sentences_literally():
    assert md("a *b* | c_d [e](f) <g> $x$\n  y") == (r"a \*b\* \| c\_d \[e\](f) \<g\> \$x\$ y")


# --- the gate's GitHub step summary -------------------------------------------------------


def test_the_gate_appends_its_summary_against_the_baseline(
    claims_project, pytester, capsys, monkeypatch, tmp_path
):
    claims_project(BEFORE + OLD, "--claimbook-update-baseline")  # a complete run
    receipt = pytester.path / "receipt.json"
    claims_project(AFTER + OLD, f"--claimbook-receipt={receipt}")
    summary = tmp_path / "summary.md"
    summary.write_text("an earlier step's summary\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _ = gate(["--receipt", str(receipt)], capsys)
    assert code == 1
    text = summary.read_text()
    assert text.startswith("an earlier step's summary\n\n## ")  # appended, never truncated
    assert ": failed\n" in text and "- gating verdicts: " in text
    assert "doc.every (refuted)" in text
    assert "Compared with the baseline reports/baseline.json:" in text
    assert " → refuted**: Every seed's value is above 0.1." in text
    assert "### New counterexamples (3)" in text and "seed 1 now fails its every-seed rule" in text
    assert "### Inconclusive in this run (1)" in text
    assert "- `doc.open` **inconclusive**: The gain is positive on average.<br>" in text
    assert "Results: `run-" in text
    gate(["--receipt", str(receipt)], capsys)  # a second step appends a second summary
    assert summary.read_text().count(": failed\n") == 2


def test_a_passing_gate_without_a_reference_lists_the_inconclusive_claims(
    claims_project, pytester, capsys, monkeypatch, tmp_path
):
    body = OLD.replace("assert WRONG == 0", "pass").replace('level="likely"', 'level="speculative"')
    claims_project(AFTER + body, *SEEDS)
    results = sorted((pytester.path / "reports" / "results").glob("run-*.json"))[-1]
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out = gate(["--results", str(results)], capsys)
    assert code == 0, out
    text = summary.read_text()
    assert ": passed\n" in text and "no gating verdict" in text and "Partial run" not in text
    assert "partial run (--claimbook-seeds 0,1,2" in text
    assert "No baseline or earlier complete run to compare with." in text
    assert "### Inconclusive in this run (1)" in text and "`doc.open`" in text
    assert "Verdicts changed" not in text


def test_the_summary_compares_with_the_previous_run_when_there_is_no_baseline(
    claims_project, pytester, capsys, monkeypatch, tmp_path
):
    claims_project(SUM + GONE)  # complete runs: the planned looks, not --claimbook-seeds
    claims_project(
        SUM.replace('section="1"', 'section="1", erratum="not 4"').replace("== 4", "== 5")
    )
    old, new = sorted((pytester.path / "reports" / "results").glob("run-*.json"))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    gate(["--results", str(new), "--baseline", str(tmp_path / "none.json")], capsys)
    text = summary.read_text()
    assert f"Compared with the previous run {md(old.name)}:" in text
    assert "### Claims gone (1)" in text and "- `doc.old` **was holds**" in text
    assert "### New errata (1)" in text and "Two and two make four.<br>not 4" in text


def test_a_gate_with_no_results_still_says_why_in_the_summary(pytester, capsys, monkeypatch):
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _ = gate(["--receipt", str(pytester.path / "missing.json")], capsys)
    assert code == 1
    assert summary.read_text().startswith("\n## claimbook: failed\n\nthe run wrote no results file")


def test_a_summary_that_cannot_be_written_is_a_warning_not_a_crash(
    claims_project, pytester, capsys, monkeypatch, tmp_path
):
    claims_project(BEFORE + OLD, *SEEDS)
    results = sorted((pytester.path / "reports" / "results").glob("run-*.json"))[-1]
    expected, _ = gate(["--results", str(results)], capsys)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a folder: no file to append to
    code, out = gate(["--results", str(results)], capsys)
    assert code == expected
    assert f"claimbook: warning: the step summary could not be written to {tmp_path}" in out


def test_diff_claims_reads_a_baseline_record_without_sentences():
    baseline = {"claims": {"doc.a": {"verdict": "holds", "instances": [], "rule": False}}}
    results = {"claims": [
        {"id": "doc.b", "verdict": "holds", "sentence": "B.", "instances": [], "note": ""},
    ]}  # fmt: skip
    diff = diff_claims(baseline, results, "base", "run")
    assert [e.claim for e in diff.gone] == ["doc.a"] and diff.gone[0].sentence == ""
    assert [e.claim for e in diff.added] == ["doc.b"]
    assert json.dumps(diff.sections()[0][0]) == '"verdicts changed"'


def test_diff_against_a_k_run_lists_what_it_did_not_select_as_not_in_it(
    claims_project, pytester, capsys
):
    claims_project(BEFORE + OLD)  # complete: the planned looks
    claims_project(BEFORE + OLD, "-k", "test_sum or test_err")  # partial: 2 of 5
    complete, partial = sorted((pytester.path / "reports" / "results").glob("run-*.json"))
    capsys.readouterr()
    assert main(["diff", str(complete), str(partial)]) == 0
    lines = _out(capsys).splitlines()
    assert lines[1].startswith(f"{partial.name} is a partial run (9 tests deselected (-k ")
    assert "claims gone: none" in lines and "values changed: none" in lines
    at = lines.index(f"not in this partial run ({partial.name}) (3):")
    assert lines[at + 1] == "  doc.every, doc.flaky, doc.open"
    assert main(["diff", str(partial), str(complete)]) == 0  # the partial run as the older side
    lines = _out(capsys).splitlines()
    assert "claims added: none" in lines and "new errata: none" in lines
    assert f"not in this partial run ({partial.name}) (3):" in lines


def _run(claims: list[str], catalog: list[str] | None, partial: bool) -> dict:
    run = {"partial": partial, "outcome": {"complete": not partial, "partial_reasons": ["-k x"]}}
    if catalog is not None:
        run["catalog"] = [{"id": c} for c in catalog]
    return {"run": run, "claims": [
        {"id": c, "verdict": "erratum", "sentence": c, "instances": [], "note": ""} for c in claims
    ]}  # fmt: skip


def test_a_partial_side_tells_claims_it_left_out_from_claims_gone_or_added():
    full = _run(["doc.a", "doc.b", "doc.gone"], ["doc.a", "doc.b", "doc.gone"], partial=False)
    part = _run(["doc.a", "doc.new"], ["doc.a", "doc.b", "doc.new"], partial=True)
    diff = diff_claims(full, part, "full", "part")
    assert [e.claim for e in diff.not_in_new] == ["doc.b"]  # its suite has it: not selected
    assert [e.claim for e in diff.gone] == ["doc.gone"]  # not even in its suite: gone
    assert [e.claim for e in diff.added] == ["doc.new"] and not diff.not_in_old
    assert diff.partial == ["part is a partial run (-k x): a claim it did not select is listed "
                            "as not in this partial run, not as gone or added"]  # fmt: skip
    back = diff_claims(part, full, "part", "full")
    assert [e.claim for e in back.not_in_old] == ["doc.b"]
    assert [e.claim for e in back.added] == ["doc.gone"]  # not in the partial run's suite
    assert [e.claim for e in back.errata] == ["doc.gone"]  # doc.b: it did not run, not new
    assert [e.claim for e in back.gone] == ["doc.new"]
    # an older partial file without a catalog: every claim it lacks may be left out
    assert [e.claim for e in diff_claims(full, _run(["doc.a"], None, True)).not_in_new] == [
        "doc.b", "doc.gone"]  # fmt: skip
    # a run of one node id (or path) collected only its file: its catalog is of that part,
    # so a claim it lacks was left out, not gone (the site's single-claim commands)
    alone = _run(["doc.a"], ["doc.a"], partial=True)
    alone["run"]["facts"] = {"restrictions": ["node id tests/claims/test_doc.py::test_a"]}
    left_out = diff_claims(full, alone)
    assert [e.claim for e in left_out.not_in_new] == ["doc.b", "doc.gone"] and not left_out.gone
    # complete sides: no such section, "gone" as before
    assert not diff_claims(full, _run(["doc.a"], None, False)).unselected()


def test_a_verdict_a_partial_side_judged_on_fewer_instances_says_so():
    full = _run(["doc.a"], ["doc.a"], partial=False)
    full["claims"][0]["instances"] = [
        {"seed": s, "params": {}, "outcome": "passed"} for s in (0, 1, 2)
    ]
    one = _run(["doc.a"], ["doc.a"], partial=True)
    one["claims"][0].update(verdict="holds", instances=full["claims"][0]["instances"][:1])
    [entry] = diff_claims(full, one, "full", "one").changed
    assert (entry.before, entry.after) == ("erratum", "holds")
    assert entry.detail == "judged on 1 instances in one, 3 in full"
    assert not diff_claims(full, {**full, "run": dict(full["run"])}).changed  # control
