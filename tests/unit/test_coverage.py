"""Coverage maps: reading, anchors in the text, the categories, the totals and the gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from claimbook.coverage.anchors import Text, normalise, value_in_line
from claimbook.coverage.catalog import catalog_of
from claimbook.coverage.check import ERROR, WARNING, check
from claimbook.coverage.maps import CoverageMapError, read_map, read_maps
from claimbook.coverage.totals import fail_under, pct, table_lines

TEXT = """\
# A tiny source
The conv   scores\t0.98 at distance 2 and 0.58 at 4 [likely].
Attention recalls everything [established].
It has 1,115,394 characters and A loss of 0.5.
A loss of 0.5 again, with 600 steps.
GPT-2 small has 124M parameters.
Ainslie et al. found GQA close to MHA.
"""


def spec(claim_id, at=(), cited="", verdict="holds", note=""):
    return {
        "id": claim_id, "level": "likely", "at": list(at), "cited": cited, "verdict": verdict,
        "note": note, "source": {"id": "doc", "title": "D", "document": "", "path": "doc.txt"},
    }  # fmt: skip


def results(*claims, catalog=None, restrictions=()):
    run = {"facts": {"restrictions": list(restrictions)}, "partial": bool(restrictions)}
    if catalog is not None:
        run["catalog"] = catalog
    return {"run": run, "claims": list(claims)}


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


MAP = """
source = "doc"

[[statement]]
id = "conv-recall"
at = "The conv scores 0.98"
kind = "number"
values = ["0.98", "0.58"]
claims = ["doc.conv"]
checked = "asserted"

[[statement]]
id = "conv-tag"
at = "at 4 [likely]"
kind = "tagged"
level = "likely"
claims = ["doc.conv"]

[[statement]]
id = "attention-tag"
at = "recalls everything"
kind = "tagged"
level = "established"

[[statement]]
id = "corpus-size"
at = "It has 1,115,394 characters"
kind = "number"
values = ["1,115,394"]
claims = ["doc.size"]
checked = "recorded"

[[statement]]
id = "steps"
at = "with 600 steps"
kind = "number"
values = ["600", "0.5"]
status = "not-a-claim"
reason = "set-up input"

[[statement]]
id = "gpt2-size"
at = "124M parameters"
kind = "model"
claims = ["doc.gpu"]

[[statement]]
id = "gqa-paper"
at = "Ainslie et al. found"
kind = "model"
claims = ["doc.paper"]
"""


@pytest.fixture
def project(tmp_path):
    """A map, its text, and the results of a run of its claims."""
    maps = tmp_path / "coverage"
    write(maps, "doc.toml", MAP)
    write(tmp_path / "texts", "doc.txt", TEXT)
    data = results(
        spec("doc.conv", at=["The conv scores"]),
        spec("doc.size", at=["1,115,394 characters"]),
        spec("doc.gpu", at=["GPT-2 small has"], verdict="skipped", note="needs a CUDA GPU"),
        spec("doc.paper", at=["Ainslie et al."], cited="Ainslie et al. 2023", verdict="cited"),
        catalog=[],
    )
    return maps, tmp_path / "texts", data


def test_whitespace_normalised_anchors_resolve_to_their_one_line():
    text = Text(TEXT)
    assert normalise(" a \t  b ") == "a b"
    assert text.find("The conv scores 0.98").line == 2  # "conv   scores\t0.98" in the text
    assert text.find("  recalls   everything ").line == 3
    assert text.find("no such words").problem == "not found"
    ambiguous = text.find("A loss of 0.5")
    assert ambiguous.line is None and "lines 4, 5" in ambiguous.problem


def test_a_value_must_occur_as_itself_not_inside_a_longer_number():
    assert value_in_line("0.58", "and 0.58 at 4")
    assert not value_in_line("0.5", "and 0.58 at 4")
    assert not value_in_line("115", "It has 1,115,394 characters")
    assert value_in_line("1,115,394", "It has 1,115,394 characters")
    assert value_in_line("2.6 MB", "takes 2.6  MB per token.")
    assert not value_in_line("85", "85.9 GB")


def test_totals_count_each_category_and_numbers_value_by_value(project):
    maps, texts, data = project
    report = check(read_maps(maps), catalog_of(data), texts)
    assert report.errors == []
    totals = report.totals()["doc"]
    tagged, number, model = totals["tagged"], totals["number"], totals["model"]
    assert (tagged.total, tagged.tested, tagged.uncovered) == (2, 1, 1)
    assert (number.total, number.tested, number.recorded) == (5, 2, 1)  # recorded: not covered
    assert number.not_a_claim == 2 and number.covered_pct == 200 / 3
    assert number.accounted_pct == 100.0
    assert (model.total, model.tested, model.hardware, model.cited) == (2, 0, 1, 1)
    assert model.covered_pct == 0.0 and model.accounted_pct == 100.0
    assert tagged.covered_pct == 50.0 and tagged.accounted_pct == 50.0
    lines = table_lines(report.totals())
    assert lines[1].split()[:4] == ["doc", "tagged", "2", "1"]
    assert lines[2].split()[:5] == ["doc", "number", "5", "2", "1"]
    line = {r.statement.id: r.line for r in report.sources[0].statements}
    assert line == {"conv-recall": 2, "conv-tag": 2, "attention-tag": 3, "corpus-size": 4,
                    "steps": 5, "gpt2-size": 6, "gqa-paper": 7}  # fmt: skip


def test_fail_under_fails_below_the_threshold_on_an_uncovered_tag_or_on_an_error(project):
    maps, texts, data = project
    report = check(read_maps(maps), catalog_of(data), texts)
    reasons = fail_under(report.totals(), 0, 0)
    assert reasons == ["doc: 1 tagged statement(s) uncovered"]  # even at 0%
    assert "doc tagged: accounted 50.0% < 60%" in fail_under(report.totals(), 0, 60)
    assert fail_under(report.totals(), 1, 0)[-1] == "1 coverage finding(s) are errors"
    (maps / "doc.toml").write_text(
        MAP.replace('level = "established"\n', 'level = "established"\nclaims = ["doc.conv"]\n')
    )
    fixed = check(read_maps(maps), catalog_of(data), texts)
    assert fail_under(fixed.totals(), 0, 100) == []
    assert fail_under(fixed.totals(), 0, 100.0001) != []  # the threshold is not rounded
    assert pct(99.96) == "99.9%"  # never shown as 100%


def test_broken_anchors_values_and_claim_ids_are_findings_that_name_them(project):
    maps, texts, data = project
    broken = (
        MAP.replace('at = "recalls everything"', 'at = "recalls nothing"')
        .replace('values = ["0.98", "0.58"]', 'values = ["0.98", "0.59"]')
        .replace('claims = ["doc.size"]', 'claims = ["doc.sise"]')
        .replace('at = "with 600 steps"', 'at = "A loss of 0.5"')
    )
    (maps / "doc.toml").write_text(broken)
    data["claims"][0]["at"] = ["scores 0.99"]
    data["claims"].append(spec("doc.orphan"))
    report = check(read_maps(maps), catalog_of(data), texts)
    errors = {str(f) for f in report.errors}
    assert errors == {
        "error: doc: statement 'attention-tag': anchor 'recalls nothing' not found",
        "error: doc: statement 'conv-recall': value '0.59' does not occur in its anchored line 2",
        "error: doc: statement 'corpus-size': names 'doc.sise', which no test declares",
        "error: doc: statement 'steps': anchor 'A loss of 0.5' ambiguous: occurs 2 times "
        "(lines 4, 5); lengthen it, or give occurrence = N",
        "error: doc: claim doc.conv: at= anchor 'scores 0.99' not found",
    }
    warnings = {str(f) for f in report.findings if f.severity == WARNING}
    assert "warning: doc: claim doc.orphan: declares no at= anchor" in warnings
    assert "warning: doc: claim doc.orphan: no statement of the map names it" in warnings
    assert report.totals()["doc"]["number"].uncovered == 1  # the dangling id covers nothing


def test_an_incomplete_catalog_makes_an_unknown_id_a_warning(project):
    maps, texts, data = project
    partial = results(*data["claims"][1:], restrictions=["path tests/claims/test_a.py"])
    report = check(read_maps(maps), catalog_of(partial), texts)
    unknown = [f for f in report.findings if "doc.conv" in f.message]
    assert unknown and all(f.severity == WARNING for f in unknown)
    assert "collected part of the suite" in unknown[0].message


def test_a_catalog_resolves_claims_a_partial_run_did_not_run(project):
    maps, texts, data = project
    catalog = [{k: c[k] for k in ("id", "level", "source", "at", "cited")} for c in data["claims"]]
    partial = results(data["claims"][1], catalog=catalog, restrictions=["-k size"])
    report = check(read_maps(maps), catalog_of(partial), texts)
    assert report.errors == []
    conv = next(r for r in report.sources[0].statements if r.statement.id == "conv-recall")
    assert conv.category == "tested" and conv.claims[0].verdict == "not run"


def test_without_the_text_the_totals_stand_and_anchors_are_not_checked(project):
    maps, _, data = project
    report = check(read_maps(maps), catalog_of(data), None)
    assert report.errors == []
    text = next(f for f in report.findings if f.subject == "text")
    assert text.severity == WARNING and "CLAIMBOOK_SOURCES_DIR is not set" in text.message
    assert report.totals()["doc"]["number"].tested == 2


def test_a_sources_folder_without_the_text_is_an_error_that_fails_the_gate(project, tmp_path):
    maps, _, data = project
    report = check(read_maps(maps), catalog_of(data), tmp_path / "elsewhere")
    text = next(f for f in report.findings if f.subject == "text")
    assert text.severity == ERROR and "FileNotFoundError" in text.message
    assert "1 coverage finding(s) are errors" in fail_under(report.totals(), len(report.errors), 0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('kind = "model"', 'kind = "modle"'), "statement 'gpt2-size': kind 'modle' is not one of"),
        (('status = "not-a-claim"', 'status = "later"'), "statement 'steps': status 'later'"),
        (('status = "not-a-claim"', 'status = "cited"\nclaims = ["doc.x"]'),
         "statement 'steps': has both 'claims' and 'status'"),
        (('values = ["1,115,394"]\n', ""), "statement 'corpus-size': a number statement needs"),
        (('level = "likely"\n', ""), "statement 'conv-tag': a tagged statement needs 'level'"),
        (('id = "steps"', 'id = "conv-tag"'), "statement 'conv-tag': duplicate id"),
        (('reason = "set-up input"\n', ""), "statement 'steps': status 'not-a-claim' needs"),
        (('checked = "recorded"', 'checked = "maybe"'), "statement 'corpus-size': a number"),
        (('source = "doc"', 'source = "dd2"'), "does not match the file name 'doc.toml'"),
        (('id = "gqa-paper"', 'id = "GQA paper"'), "id 'GQA paper' is not kebab-case"),
        (('kind = "model"', 'kind = "model"\nlines = 3'), "unknown key(s) lines"),
    ],
)  # fmt: skip
def test_a_malformed_map_names_its_file_and_the_statement(tmp_path, change, message):
    path = write(tmp_path, "doc.toml", MAP.replace(*change, 1))
    with pytest.raises(CoverageMapError) as error:
        read_map(path)
    assert str(path) in str(error.value)
    assert message in str(error.value)


def test_a_statement_with_neither_claims_nor_status_is_uncovered_not_malformed(tmp_path):
    path = write(tmp_path, "doc.toml", MAP)
    statement = next(s for s in read_map(path).statements if s.id == "attention-tag")
    assert statement.claims == () and statement.status == ""


def test_every_malformed_file_is_named_and_no_folder_means_no_maps(tmp_path):
    write(tmp_path / "m", "a.toml", 'source = "a"\n[[statement]]\nid = "x"\n')
    write(tmp_path / "m", "b.toml", "source = \n")
    with pytest.raises(CoverageMapError) as error:
        read_maps(tmp_path / "m")
    text = str(error.value)
    assert "a.toml: malformed coverage map" in text and "statement 'x': needs 'at'" in text
    assert "b.toml: not valid TOML" in text
    assert read_maps(tmp_path / "absent") == []
    assert ERROR == "error"


def test_an_untagged_formula_is_a_kind_of_its_own_that_claims_cover(tmp_path):
    """ "LayerNorm over d features has 2d parameters": untagged, no printed number, yet a
    claim asserts it; the map counts it as a formula, covered or not."""
    text = "# Notes\nLayerNorm over d features has 2d parameters.\nSoftmax sums to one.\n"
    write(tmp_path / "texts", "doc.txt", text)
    formulas = """
source = "doc"

[[statement]]
id = "layernorm-params"
at = "LayerNorm over d features"
kind = "formula"
claims = ["doc.ln"]

[[statement]]
id = "softmax-sum"
at = "Softmax sums to one"
kind = "formula"
"""
    write(tmp_path / "coverage", "doc.toml", formulas)
    data = results(spec("doc.ln", at=["LayerNorm over d"]), catalog=[])
    report = check(read_maps(tmp_path / "coverage"), catalog_of(data), tmp_path / "texts")
    assert report.errors == []
    formula = report.totals()["doc"]["formula"]
    assert (formula.total, formula.tested, formula.uncovered) == (2, 1, 1)


def test_a_tagged_sentence_the_map_leaves_out_is_found_in_the_text_and_counted(project):
    """A planted error of its kind: the map forgets the text's [established] line. The check
    reads the text, finds the tag no statement covers, and counts it as uncovered."""
    maps, texts, data = project
    whole = check(read_maps(maps), catalog_of(data), texts)
    assert not any("evidence tag" in str(f) for f in whole.findings)
    forgotten = MAP.replace('id = "attention-tag"', 'id = "attention-tag-gone"').split(
        '[[statement]]\nid = "attention-tag-gone"'
    )
    rest = forgotten[1].split("[[statement]]", 1)[1]
    write(maps, "doc.toml", forgotten[0] + "[[statement]]" + rest)
    report = check(read_maps(maps), catalog_of(data), texts)
    assert [str(f) for f in report.findings if "evidence tag" in str(f)] == [
        "warning: doc: line 3: 1 evidence tag(s) in its paragraph that no tagged statement of "
        "the map covers: counted as uncovered"
    ]
    tagged = report.totals()["doc"]["tagged"]
    assert (tagged.total, tagged.uncovered) == (2, 1)  # the forgotten one, counted again
