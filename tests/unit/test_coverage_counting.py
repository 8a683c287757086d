"""Coverage maps: the occurrence index of a repeated line, and "covered" counting only the
statements that a claim which runs can fail on (recorded, by construction, skipped, cited
and hardware apart)."""

from __future__ import annotations

import pytest
from claimbook.coverage.anchors import Text
from claimbook.coverage.catalog import catalog_of
from claimbook.coverage.check import ERROR, check
from claimbook.coverage.maps import CoverageMapError, read_map, read_maps
from claimbook.coverage.totals import table_lines

from tests.unit.test_coverage import results, spec, write

TEXT = """\
# Shapes
Shape: [1, 512, 768]
Params: 1,536
Shape: [1, 512, 768] and again Shape: [1, 512, 768]
Params: 1,536
The model is fast [likely].
It was measured at 3.5 [established].
"""

MAP = """
source = "doc"

[[statement]]
id = "first-shape"
at = "Shape: [1, 512, 768]"
occurrence = 1
kind = "number"
values = ["512"]
claims = ["doc.asserts"]
checked = "asserted"

[[statement]]
id = "third-shape"
at = "Shape: [1, 512, 768]"
occurrence = 3
kind = "number"
values = ["768"]
claims = ["doc.asserts"]
checked = "asserted"

[[statement]]
id = "second-params"
at = "Params: 1,536"
occurrence = 2
kind = "number"
values = ["1,536"]
claims = ["doc.asserts"]
checked = "recorded"

[[statement]]
id = "fast"
at = "The model is fast"
kind = "tagged"
level = "likely"
claims = ["doc.asserts"]
checked = "construction"
reason = "it compares a constant with itself"

[[statement]]
id = "measured"
at = "It was measured at 3.5"
kind = "number"
values = ["3.5"]
claims = ["doc.skipped", "doc.paper"]
checked = "asserted"

[[statement]]
id = "measured-tag"
at = "at 3.5 [established]"
kind = "tagged"
level = "established"
claims = ["doc.gpu", "doc.skipped", "doc.paper"]
"""


@pytest.fixture
def project(tmp_path):
    maps, texts = tmp_path / "coverage", tmp_path / "texts"
    write(maps, "doc.toml", MAP)
    write(texts, "doc.txt", TEXT)
    data = results(
        spec("doc.asserts", at=["# Shapes"]),
        spec("doc.skipped", at=["measured at"], verdict="skipped", note="needs the data"),
        spec("doc.gpu", at=["[established]"], verdict="skipped", note="needs a CUDA GPU"),
        spec("doc.paper", at=["It was measured"], cited="Someone 2020", verdict="cited"),
        catalog=[],
    )
    return maps, texts, data


def report_of(project, text: str | None = None):
    maps, texts, data = project
    if text is not None:
        (maps / "doc.toml").write_text(text)
    return check(read_maps(maps), catalog_of(data), texts)


def test_an_occurrence_index_anchors_the_nth_occurrence_of_a_repeated_line(project):
    report = report_of(project)
    assert report.errors == []
    line = {r.statement.id: r.line for r in report.sources[0].statements}
    # the third "Shape" is the second one on line 4; the second "Params" is on line 5
    assert (line["first-shape"], line["third-shape"], line["second-params"]) == (2, 4, 5)
    assert Text(TEXT).find("Params: 1,536").line is None  # without the index: ambiguous


def test_a_map_without_occurrence_indexes_reads_and_checks_as_before(project):
    plain = MAP.replace("occurrence = 1\n", "").replace("occurrence = 3\n", "")
    plain = plain.replace("occurrence = 2\n", "")
    report = report_of(project, plain)
    errors = {str(f) for f in report.errors}
    assert "error: doc: statement 'second-params': anchor 'Params: 1,536' ambiguous: occurs 2 " \
        "times (lines 3, 5); lengthen it, or give occurrence = N" in errors  # fmt: skip
    assert read_map(project[0] / "doc.toml").statements[0].occurrence == 0


def test_an_occurrence_beyond_the_texts_is_an_error_naming_the_map_and_the_entry(project):
    maps = project[0]
    report = report_of(project, MAP.replace("occurrence = 3", "occurrence = 4"))
    assert [str(f) for f in report.errors] == [
        f"error: doc: statement 'third-shape': occurrence = 4 in {maps / 'doc.toml'}, but "
        "anchor 'Shape: [1, 512, 768]' has no occurrence 4: it occurs only 3 times "
        "(lines 2, 4)"
    ]
    assert report.errors[0].severity == ERROR
    once = report_of(
        project,
        MAP.replace('at = "The model is fast"\n', 'at = "The model is fast"\noccurrence = 2\n'),
    )
    assert [f.message for f in once.errors] == [
        f"occurrence = 2 in {maps / 'doc.toml'}, but anchor 'The model is fast' has no "
        "occurrence 2: it occurs once (line 6)"
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("occurrence = 3", "occurrence = 0"), "statement 'third-shape': occurrence 0 is not"),
        (("occurrence = 3", 'occurrence = "3"'), "statement 'third-shape': occurrence '3' is not"),
        (("occurrence = 3", "occurrence = true"), "statement 'third-shape': occurrence True"),
        (('reason = "it compares a constant with itself"\n', ""),
         "statement 'fast': checked 'construction' needs a 'reason'"),
        (('checked = "construction"', 'checked = "maybe"'),
         "statement 'fast': checked 'maybe' is not one of asserted, recorded, construction"),
        (('claims = ["doc.asserts"]\nchecked = "construction"', 'checked = "construction"'),
         "statement 'fast': 'checked' belongs to statements covered by claims"),
    ],
)  # fmt: skip
def test_a_malformed_occurrence_or_check_is_refused(tmp_path, change, message):
    path = write(tmp_path, "doc.toml", MAP.replace(*change, 1))
    with pytest.raises(CoverageMapError) as error:
        read_map(path)
    assert str(path) in str(error.value) and message in str(error.value)


def test_covered_counts_only_what_a_claim_that_runs_can_fail_on(project):
    report = report_of(project)
    category = {r.statement.id: r.category for r in report.sources[0].statements}
    assert category == {
        "first-shape": "tested", "third-shape": "tested", "second-params": "recorded",
        "fast": "construction",  # a tagged statement's claim runs, but cannot fail on it
        "measured": "skipped",  # its one runnable claim was skipped (not for hardware)
        "measured-tag": "hardware",  # it would run on a GPU
    }  # fmt: skip
    number, tagged = report.totals()["doc"]["number"], report.totals()["doc"]["tagged"]
    assert (number.total, number.tested, number.recorded, number.skipped) == (4, 2, 1, 1)
    assert number.covered_pct == 50.0 and number.accounted_pct == 100.0
    assert (tagged.total, tagged.tested, tagged.construction, tagged.hardware) == (2, 0, 1, 1)
    assert tagged.covered_pct == 0.0 and tagged.accounted_pct == 100.0
    head, *rows = table_lines(report.totals())
    assert head.split()[3:8] == ["tested", "(can", "fail)", "recorded", "by"]
    assert rows[0].split() == ["doc", "tagged", "2", "0", "0", "1", "0", "0", "0", "1", "0",
                               "0", "0.0%", "100.0%"]  # fmt: skip


def test_a_cited_claim_alone_is_cited_and_a_tested_claim_wins_over_the_others(project):
    data = project[2]
    data["claims"] = [c for c in data["claims"] if c["id"] != "doc.skipped"]
    report = report_of(project, MAP.replace('"doc.skipped", "doc.paper"]', '"doc.paper"]'))
    category = {r.statement.id: r.category for r in report.sources[0].statements}
    assert category["measured"] == "cited"
    both = MAP.replace('"doc.gpu", "doc.skipped", "doc.paper"]', '"doc.gpu", "doc.asserts"]')
    report = report_of(project, both.replace('"doc.skipped", "doc.paper"]', '"doc.paper"]'))
    category = {r.statement.id: r.category for r in report.sources[0].statements}
    assert category["measured-tag"] == "tested"


def test_a_statement_only_a_stand_in_covers_is_accounted_for_never_tested(project):
    """A claim run on a stand-in that cannot show the statement (stand_in=) covers it as
    "stand-in", whatever its verdict: accounted for, never tested or covered. A tested claim
    beside it wins; the catalog a partial run records keeps the declaration."""
    from claimbook.coverage.catalog import catalog_entry

    toy = {**spec("doc.toy", at=["The model is fast"], verdict="not observed"), "stand_in": "why"}
    project[2]["claims"].append(toy)
    fast = MAP.split('id = "fast"')[1].split("[[statement]]")[0]
    claims = fast.split("level")[1].split("\n", 1)[1]  # its claims, check and reason
    alone = MAP.replace(fast, fast.replace(claims, 'claims = ["doc.toy"]\n'))
    both = MAP.replace(fast, fast.replace(claims, 'claims = ["doc.toy", "doc.asserts"]\n'))

    def fast_of(report):
        return next(r for r in report.sources[0].statements if r.statement.id == "fast")

    for verdict in ("not observed", "observed"):  # holding on the stand-in tests it no more
        toy["verdict"] = verdict
        report = report_of(project, alone)
        assert report.errors == [] and fast_of(report).category == "stand-in"
        tagged = report.totals()["doc"]["tagged"]
        assert (tagged.tested, tagged.stand_in) == (0, 1)
        assert (tagged.covered_pct, tagged.accounted_pct) == (0.0, 100.0)
    assert fast_of(report_of(project, both)).category == "tested"
    assert catalog_entry(toy)["stand_in"] == "why"
