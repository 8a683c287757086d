"""Messages that name their cause: an errored claim's reason on the FAILED line, an export
that will not silently write an empty table, and an ``at=`` anchor missing from its text."""

from __future__ import annotations

from pathlib import Path

from claimbook.__main__ import main
from claimbook.judge.outcome import gating_reason

TYPO = """
from claimbook import Typical

@claim(id="doc.gain", level="likely", source=DOC, section="1", rule=Typical("gain", above=0))
def test_gain(seed, measure):
    '''The gain is positive on average over seeds.'''
    measure("gian", [0.3, 0.2, 0.4][seed])
"""


def _results(pytester) -> list[Path]:
    return sorted((pytester.path / "reports" / "results").glob("run-*.json"))


def test_a_rule_reading_a_misspelled_measure_says_why_on_the_failed_line(
    claims_project, pytester, capsys
):
    result, _ = claims_project(TYPO)
    assert result.ret == 1
    why = (
        "claimbook: FAILED: gating verdicts: doc.gain (error: a seed did not measure every "
        "value its rule reads (not measured: seed 0: 'gain'; seed 1: 'gain'; seed 2: 'gain'))"
    )
    assert why in result.stdout.lines
    capsys.readouterr()
    assert main(["gate", "--results", str(_results(pytester)[-1])]) == 1
    assert why in capsys.readouterr().out.splitlines()  # the gate's last line: the same words


def test_a_refuted_claim_keeps_its_short_reason_and_a_long_note_is_cut():
    refuted = {"id": "doc.a", "verdict": "refuted", "note": "fails for input seed(s) 1"}
    assert gating_reason(refuted) == "doc.a (refuted)"
    long = {"id": "doc.b", "verdict": "error", "note": "x" * 500}
    assert gating_reason(long) == f"doc.b (error: {'x' * 197}...)"


# --- export -------------------------------------------------------------------------------

MEASURED = """
@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(seed, measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2) == 4
"""


def _collection_error_run(claims_project, pytester) -> Path:
    pytester.makepyfile(test_broken="def broken(:\n")
    result, data = claims_project(MEASURED)
    assert result.ret != 0 and data["claims"] == []
    (pytester.path / "test_broken.py").unlink()
    return _results(pytester)[-1]


def test_export_passes_over_a_run_that_measured_nothing_and_says_so(
    claims_project, pytester, capsys
):
    claims_project(MEASURED)
    good = _results(pytester)[-1]
    broken = _collection_error_run(claims_project, pytester)
    target = pytester.path / "m.csv"
    capsys.readouterr()
    assert main(["export", "--csv", str(target)]) == 0
    out = capsys.readouterr().out
    assert f"claimbook: exporting {good} (the newest complete run with measurements; newer, " in out
    assert f"passed over: {broken.name}: its run judged no claim (" in out
    assert "collection errors in test_broken.py" in out
    assert "3 measurements of 1 claims" in out and target.read_text().count("doc.sum") == 3


def test_export_refuses_a_named_file_or_a_folder_without_measurements(
    claims_project, pytester, capsys
):
    broken = _collection_error_run(claims_project, pytester)
    target = pytester.path / "m.csv"
    capsys.readouterr()
    assert main(["export", "--results", str(broken), "--csv", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"{broken} holds no measurement to export: its run judged no claim (" in err
    assert main(["export", "--csv", str(target)]) == 2
    err = capsys.readouterr().err
    assert "holds a measurement" in err and broken.name in err
    assert not target.exists()


# --- at= anchors against the source text, with or without a coverage map ---------------------

ANCHORED = """
DOC = Source(id="doc", title="A test document", path="doc.txt")

@claim(id="doc.sum", level="established", source=DOC, section="1", at="two and two make")
def test_sum():
    '''Two and two make four.'''

@claim(id="doc.miss", level="established", source=DOC, section="1", at="three and three")
def test_miss():
    '''A claim anchored where the text says nothing.'''

@claim(id="doc.twice", level="established", source=DOC, section="1", at="two")
def test_twice():
    '''A claim anchored on a word the text says twice.'''
"""


def _texts(pytester) -> Path:
    texts = pytester.path / "texts"
    texts.mkdir(exist_ok=True)
    (texts / "doc.txt").write_text("A tiny text.\nIt says two and two make four.\n")
    return texts


def test_an_anchor_not_in_the_text_fails_the_run_naming_claim_and_snippet(
    claims_project, pytester, monkeypatch, capsys
):
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(_texts(pytester)))
    result, data = claims_project(ANCHORED)  # no coverage map anywhere
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "claimbook: FAILED: 2 at= anchors not found once in the source text: "
            'doc.miss: "three and three" not found in doc.txt, doc.twice: "two" ambiguous: '
            "occurs 2 times (lines 2) in doc.txt"
        ]
    )
    assert len(data["run"]["facts"]["unresolved_anchors"]) == 2
    capsys.readouterr()
    assert main(["gate", "--results", str(_results(pytester)[-1])]) == 1
    assert 'doc.miss: "three and three" not found in doc.txt' in capsys.readouterr().out


def test_anchors_are_checked_only_where_the_text_is_at_hand(claims_project, pytester, monkeypatch):
    monkeypatch.delenv("CLAIMBOOK_SOURCES_DIR", raising=False)
    result, _ = claims_project(ANCHORED)
    assert result.ret == 0, result.stdout.str()
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(pytester.path / "nowhere"))
    result, _ = claims_project(ANCHORED)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["at= anchors not checked: doc: cannot read */nowhere/doc.txt*"])
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(_texts(pytester)))
    fixed = ANCHORED.replace('"three and three"', '"A tiny text."').replace('"two"', '"It says"')
    result, _ = claims_project(fixed)
    assert result.ret == 0, result.stdout.str()
