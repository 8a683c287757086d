"""Issue 25: receipts bound to their run, writes ordered so a failed run commits nothing,
unique temporary names, pytest-xdist refused, and what the terminal and a reused instance
show (findings 2, 5, 12 and 13)."""

from __future__ import annotations

import json
from pathlib import Path

from claimbook.__main__ import main
from claimbook.render.site import FigureStore
from claimbook.render.table import verdict_table
from claimbook.storage.atomic import staged

from tests.unit.conftest import HEADER, claim_of, gate, noxfile_module

ROOT = Path(__file__).resolve().parents[2]
PASSING = """
@claim(id="doc.sum", level="established", source=DOC, section="1", printed={"sum": 4})
def test_sum(seed, measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2, printed=4) == 4
"""
REFUTED = PASSING.replace("== 4", "== 5")


# --- finding 2: a receipt names its run's results file, never another run's ---------------


def test_the_gate_refuses_a_results_file_another_run_wrote(claims_project, pytester, capsys):
    ours, theirs = pytester.path / "ours.json", pytester.path / "theirs.json"
    claims_project(REFUTED, f"--claimbook-receipt={ours}")  # this run failed
    claims_project(PASSING, f"--claimbook-receipt={theirs}")  # another one, at once, passed
    assert gate(["--receipt", str(theirs)], capsys)[0] == 0
    other = json.loads(theirs.read_text())["results"]
    data = json.loads(ours.read_text())  # our receipt made to name the other run's file
    ours.write_text(json.dumps({**data, "results": other}))
    code, out = gate(["--receipt", str(ours)], capsys)
    assert code == 1
    assert f"the receipt {ours} is of run {data['run_id']}" in " ".join(out.split())
    assert Path(other).name in out and "not this run's results" in out


def test_the_run_id_is_in_both_the_receipt_and_the_results_file(claims_project, pytester):
    receipt = pytester.path / "receipt.json"
    _, data = claims_project(PASSING, f"--claimbook-receipt={receipt}")
    assert json.loads(receipt.read_text())["run_id"] == data["run"]["run_id"]


def test_a_merges_receipt_is_bound_to_the_merged_results(claims_project, pytester, capsys):
    claims_project(PASSING, "--claimbook-shard=1/2")
    claims_project(PASSING, "--claimbook-shard=2/2")
    shards = sorted((pytester.path / "reports" / "results").glob("*shard*.json"))
    receipt = pytester.path / "merged.json"
    assert main(["merge", "--receipt", str(receipt), *map(str, shards)]) == 0
    bound = json.loads(receipt.read_text())
    merged = json.loads(Path(bound["results"]).read_text())
    assert bound["run_id"] == merged["run"]["run_id"]
    assert gate(["--receipt", str(receipt)], capsys)[0] == 0
    receipt.write_text(json.dumps({**bound, "results": str(shards[0])}))  # another run's file
    code, out = gate(["--receipt", str(receipt)], capsys)
    assert code == 1 and "not this run's results" in out


def _noxfile(path: Path):
    return noxfile_module(path)


class _Session:
    """What receipt() asks of a nox session: its temporary folder."""

    def __init__(self, tmp: Path):
        self.tmp = tmp

    def create_tmp(self) -> str:
        return str(self.tmp)


def test_two_nox_sessions_in_one_checkout_get_two_receipts(tmp_path):
    receipt = _noxfile(ROOT / "noxfile.py").receipt
    first, second = receipt(_Session(tmp_path)), receipt(_Session(tmp_path))
    assert first != second and first.parent.parent == second.parent.parent == tmp_path
    assert not first.exists()  # the run writes it: absent, the gate fails


def test_the_scaffold_and_the_example_draw_their_receipt_in_a_folder_of_their_own():
    for path in (ROOT / "framework/src/claimbook/scaffold/noxfile.py",
                 ROOT / "examples/little-book/noxfile.py"):  # fmt: skip
        text = path.read_text()
        assert "tempfile.mkdtemp(" in text and 'create_tmp()}/receipt.json"' not in text


# --- finding 5: --update-baseline commits nothing for a run that fails ----------------------


def test_a_run_whose_results_cannot_be_written_keeps_the_old_baseline(claims_project, pytester):
    (pytester.path / "blocked").write_text("a file where the results folder should be")
    baseline = pytester.path / "reports" / "baseline.json"
    result, _ = claims_project(
        PASSING, "--claimbook-update-baseline", "--claimbook-results-dir", "blocked/results"
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(["claimbook: FAILED: the results file could not be written*"])
    assert "baseline updated" not in result.stdout.str()
    assert not baseline.exists()
    assert [p.name for p in baseline.parent.iterdir()] == []  # nor a staged file left behind


def test_a_run_that_writes_its_results_then_commits_the_baseline(claims_project, pytester):
    result, data = claims_project(PASSING, "--claimbook-update-baseline")
    assert result.ret == 0 and data["run"]["outcome"]["baseline_update"] == "written"
    baseline = pytester.path / "reports" / "baseline.json"
    assert "doc.sum" in json.loads(baseline.read_text())["claims"]
    assert not [p.name for p in baseline.parent.iterdir() if p.name.startswith(".")]  # no staged


# --- finding 12: unique temporary names ------------------------------------------------------


def test_two_renders_drawing_one_figure_at_once_both_finish(tmp_path):
    first, second = FigureStore(tmp_path / "store"), FigureStore(tmp_path / "store")

    inner = []

    def draw(value, path: Path) -> bool:
        path.write_bytes(b"png " + str(value).encode())
        if not inner:  # while the first render draws, the second draws the same figure
            inner.append(None)
            inner[0] = second.draw(draw, value, tmp_path / "b" / "f.png")
        return True

    assert first.draw(draw, 1, tmp_path / "a" / "f.png") and inner == [True]
    assert (tmp_path / "a" / "f.png").read_bytes() == (tmp_path / "b" / "f.png").read_bytes()
    assert [p.suffix for p in (tmp_path / "store").iterdir()] == [".png"]  # nothing temporary


def test_a_failed_staged_write_leaves_the_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old")
    try:
        with staged(target) as partial:
            partial.write_text("half")
            raise OSError("disk full")
    except OSError:
        pass
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_no_fixed_temporary_name_is_left_in_the_framework():
    for path in (ROOT / "framework/src/claimbook").rglob("*.py"):
        text = path.read_text()
        for fixed in ('with_suffix(".tmp', '+ ".tmp"', '.name}.tmp"'):
            assert fixed not in text, path


# --- finding 13: pytest-xdist ------------------------------------------------------------------


def test_claim_tests_under_xdist_are_a_usage_error_and_write_nothing(pytester):
    pytester.makepyfile(test_claims=HEADER + REFUTED)
    receipt = pytester.path / "receipt.json"
    result = pytester.runpytest_subprocess(
        "-n", "2", "-p", "no:cacheprovider", f"--claimbook-receipt={receipt}"
    )
    assert result.ret == 4
    result.stdout.fnmatch_lines(["claimbook: ERROR: pytest-xdist (-n) was given and *run the*"])
    assert not (pytester.path / "reports").exists() and not receipt.exists()


def test_plain_tests_under_xdist_run_as_usual(pytester):
    pytester.makepyfile(
        test_plain="def test_one():\n    assert 1\n\ndef test_two():\n    assert 2\n"
    )
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.assert_outcomes(passed=2)


def test_claim_tests_deselected_under_xdist_are_no_refusal(pytester):
    pytester.makepyfile(test_claims=HEADER + REFUTED + "\ndef test_plain():\n    assert 1\n")
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "-k", "plain")
    assert result.ret == 0
    result.assert_outcomes(passed=1)


# --- finding 13: control characters, a reused instance's teardown, a repeated seed ----------


def test_the_verdict_table_shows_control_characters_escaped():
    claim = {"id": "doc.\x1b[2Jx", "level": "established", "verdict": "failed", "note": "",
             "seeds_total": 1, "seeds_passed": 0,
             "instances": [{"seed": 0, "params": {}, "outcome": "failed", "measures": [
                 {"name": "word", "value": "a\x00b\x1b[31m", "seed": 0}]}]}  # fmt: skip
    text = "\n".join(verdict_table([claim]))
    assert "\x1b" not in text and "\x00" not in text
    assert "doc.\\x1b[2Jx" in text and "a\\x00b\\x1b[31m" in text


def test_the_failing_claims_show_control_characters_escaped(claims_project):
    body = PASSING.replace(
        "    assert measure", "    pytest.fail('got x\\x1b[31m\\x00')\n    assert measure"
    )
    result, data = claims_project(body)
    assert result.ret == 1 and "\x1b[31m" in claim_of(data, "doc.sum")["instances"][0]["message"]
    summary = result.stdout.str().split("failing claims")[1].split("claimbook: FAILED")[0]
    assert "\x1b" not in summary and "\x00" not in summary
    assert "got x\\x1b[31m\\x00" in summary


TEARDOWN = """
@pytest.fixture
def breaks_on_teardown():
    yield
    raise RuntimeError("the teardown broke")


@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(seed, measure, breaks_on_teardown):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2) == 4
"""


def test_a_reused_instance_keeps_its_teardown_error_message(claims_project):
    claims_project(TEARDOWN)
    _, data = claims_project(TEARDOWN)
    instances = claim_of(data, "doc.sum")["instances"]
    assert all(i.get("replayed") for i in instances)  # the call was reused
    assert {i["outcome"] for i in instances} == {"error"}
    assert all("the teardown broke" in i["message"] for i in instances)


def test_a_repeated_seed_in_the_seeds_setting_is_a_usage_error_naming_it(pytester):
    pytester.makepyprojecttoml('[tool.claimbook]\nseeds = "0,1,0"\n')
    pytester.makepyfile(test_claims=HEADER + PASSING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*pyproject.toml: [[]tool.claimbook[]] seeds: seed 0 given twice*"]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
