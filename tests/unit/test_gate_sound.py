"""Every way found to turn CI falsely green, each closed: a red exit that names the cause."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from claimbook.__main__ import main
from claimbook.judge.baseline import summarize
from claimbook.storage.results import write_results

from tests.unit.conftest import HEADER, claim_of, gate

PASSING = """
@claim(id="doc.sum", level="established", source=DOC, section="1", printed={"sum": 4})
def test_sum(seed, measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2, printed=4) == 4
"""


# --- one decision: a failing non-claim test, a dead process, a failed write, a crash -------


def test_a_failing_test_that_is_not_a_claim_fails_the_run_and_the_gate(claims_project, pytester):
    body = PASSING + "\ndef test_helper():\n    assert 1 == 2\n"
    result, data = claims_project(body)
    assert result.ret == 1
    assert data["run"]["outcome"]["failed"] is True
    result.stdout.fnmatch_lines(
        ["claimbook: FAILED: 1 test that is not a claim failed: test_claims.py::test_helper"]
    )
    assert main(["gate", "--results", str(_newest(pytester))]) == 1


def test_a_pytest_process_that_dies_leaves_no_receipt_and_the_gate_fails(pytester, capsys):
    pytester.makepyfile(
        test_claims=HEADER + PASSING + "\ndef test_dies():\n    import os\n    os._exit(1)\n"
    )
    receipt = pytester.path / "receipt.json"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--claimbook-receipt={receipt}"
    )
    assert result.ret == 1 and not receipt.exists()
    code, out = gate(["--receipt", str(receipt)], capsys)
    assert code == 1
    assert "the run wrote no results file" in out


def test_a_run_that_dies_removes_the_receipt_an_earlier_run_left(pytester, capsys):
    # a noxfile that keeps its receipt in one place (the scaffold's: .nox/claims/tmp) must
    # not have the gate judge the earlier, passing run when this one dies
    pytester.makepyfile(test_claims=HEADER + PASSING)
    receipt = pytester.path / "receipt.json"
    args = ("-p", "no:cacheprovider", f"--claimbook-receipt={receipt}")
    assert pytester.runpytest_subprocess(*args).ret == 0 and receipt.exists()
    pytester.makepyfile(
        test_claims=HEADER + PASSING + "\ndef test_dies():\n    import os\n    os._exit(1)\n"
    )
    assert pytester.runpytest_subprocess(*args).ret == 1 and not receipt.exists()
    assert gate(["--receipt", str(receipt)], capsys)[0] == 1


def test_a_crash_in_end_of_session_code_leaves_no_receipt(pytester, capsys):
    pytester.makeconftest(
        "import pytest\n\n@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_sessionfinish(session):\n    raise RuntimeError('boom')\n"
    )
    pytester.makepyfile(test_claims=HEADER + PASSING)
    receipt = pytester.path / "receipt.json"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--claimbook-receipt={receipt}"
    )
    assert result.ret != 0 and not receipt.exists()
    # whatever pytest's code, the gate cannot pass
    assert gate(["--receipt", str(receipt)], capsys)[0] == 1


def test_a_results_file_that_cannot_be_written_fails_the_run(claims_project, pytester, capsys):
    (pytester.path / "blocked").write_text("a file where the results folder should be")
    receipt = pytester.path / "receipt.json"
    result, _ = claims_project(
        PASSING, "--claimbook-results-dir", "blocked/results", f"--claimbook-receipt={receipt}"
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(["claimbook: FAILED: the results file could not be written*"])
    assert gate(["--receipt", str(receipt)], capsys)[0] == 1


def test_a_baseline_that_cannot_be_written_fails_the_update(claims_project, pytester):
    (pytester.path / "blocked").write_text("not a folder")
    result, data = claims_project(
        PASSING, "--claimbook-update-baseline", "--claimbook-baseline", "blocked/b.json"
    )
    assert result.ret == 1
    assert data["run"]["outcome"]["baseline_update"].startswith(
        "--claimbook-update-baseline failed"
    )
    assert main(["gate", "--results", str(_newest(pytester))]) == 1


def _newest(pytester) -> Path:
    return max((pytester.path / "reports" / "results").glob("run-*.json"))


def test_the_gate_judges_the_file_its_run_wrote_never_the_newest(claims_project, pytester, capsys):
    claims_project(PASSING)  # an older, passing run
    receipt = pytester.path / "receipt.json"
    result, _ = claims_project(PASSING.replace("== 4", "== 5"), f"--claimbook-receipt={receipt}")
    assert result.ret == 1
    code, out = gate(["--receipt", str(receipt)], capsys)
    assert code == 1 and "gating verdicts: doc.sum (refuted)" in out


def test_two_runs_in_one_second_get_two_results_files(tmp_path):
    run = {"started": "2026-12-01T10:00:00.000000+00:00", "git_commit": "abc", "shard": None}
    first, second = write_results(tmp_path, run, []), write_results(tmp_path, run, [])
    assert first != second and first.exists() and second.exists()


# --- complete is decided from facts -------------------------------------------------------


def _suite(pytester, files: dict[str, str]) -> None:
    for name, body in files.items():
        path = pytester.path / "tests" / "claims" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADER + body)


def test_one_file_of_the_claims_folder_is_partial_and_cannot_update_the_baseline(pytester):
    other = PASSING.replace("doc.sum", "doc.other").replace("test_sum", "test_other")
    _suite(pytester, {"test_a.py": PASSING, "test_b.py": other})
    assert pytester.runpytest("-p", "no:cacheprovider", "--claimbook-update-baseline").ret == 0
    before = (pytester.path / "reports" / "baseline.json").read_text()
    result = pytester.runpytest("-p", "no:cacheprovider", "tests/claims/test_a.py",
                                "--claimbook-update-baseline")  # fmt: skip
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "claimbook: FAILED: --claimbook-update-baseline refused: the run is partial"
            " (path tests/claims/*"
        ]
    )
    assert (pytester.path / "reports" / "baseline.json").read_text() == before


def test_a_run_stopped_by_x_is_partial_and_failed(claims_project):
    body = PASSING + SEEDED_FAILS
    result, data = claims_project(body, "-x", "--claimbook-update-baseline")
    assert result.ret == 1
    outcome = data["run"]["outcome"]
    assert not outcome["complete"] and outcome["baseline_update"].startswith(
        "--claimbook-update-baseline"
    )
    assert any("stopped early" in r for r in outcome["failure_reasons"])


SEEDED_FAILS = """
@claim(id="doc.flaky", level="likely", source=DOC, section="1")
def test_flaky(seed):
    '''Fails in seed 0 only.'''
    assert seed != 0
"""


def test_a_keyboard_interrupt_leaves_a_failed_partial_run(pytester):
    body = (
        PASSING
        + "\n@claim(id='doc.stop', level='likely', source=DOC, section='1')\n"
        + ("def test_stop(seed):\n    '''Stops.'''\n    raise KeyboardInterrupt\n")
    )
    pytester.makepyfile(test_claims=HEADER + body)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")  # not in this process
    data = json.loads(_newest(pytester).read_text())
    assert result.ret == 2  # pytest's "interrupted"
    assert data["run"]["outcome"]["failed"] and not data["run"]["outcome"]["complete"]
    assert "interrupted" in data["run"]["facts"]["stopped"]


def test_a_merge_of_shards_from_different_suites_is_refused(claims_project, pytester, capsys):
    other = PASSING.replace("doc.sum", "doc.more").replace("test_sum", "test_more")
    claims_project(PASSING + SEEDED_FAILS, "--claimbook-shard=1/2")
    claims_project(PASSING + SEEDED_FAILS + other, "--claimbook-shard=2/2")  # another checkout
    files = sorted((pytester.path / "reports" / "results").glob("*shard*.json"))
    assert main(["merge", *map(str, files)]) == 2
    assert "the shards collected different suites" in capsys.readouterr().err


def test_a_merge_missing_an_instance_is_partial_and_failed(claims_project, pytester, capsys):
    body = PASSING + SEEDED_FAILS
    claims_project(body, "--claimbook-shard=1/2")
    claims_project(body, "--claimbook-shard=2/2")
    files = sorted((pytester.path / "reports" / "results").glob("*shard*.json"))
    data = json.loads(files[1].read_text())  # a shard that lost an instance on the way
    lost = data["run"]["facts"]["reported"].pop()
    for claim in data["claims"]:
        claim["instances"] = [i for i in claim["instances"] if i["nodeid"] != lost]
    files[1].write_text(json.dumps(data))
    receipt = pytester.path / "merged.json"
    # shards carry no verdict to contradict: the merge judges what the shards reported, and
    # the merged run lacks that instance of the suite, so it is partial and its gate fails
    assert main(["merge", "--receipt", str(receipt), *map(str, files)]) == 0
    merged = json.loads(Path(json.loads(receipt.read_text())["results"]).read_text())
    assert merged["run"]["partial"] and merged["run"]["outcome"]["failed"]
    capsys.readouterr()
    assert main(["gate", "--receipt", str(receipt)]) == 1
    assert "partial run" in capsys.readouterr().out


def test_the_gate_refuses_a_shards_file(claims_project, pytester, capsys):
    claims_project(PASSING, "--claimbook-shard=1/2")
    [shard] = (pytester.path / "reports" / "results").glob("*shard1of2.json")
    assert main(["gate", "--results", str(shard)]) == 1
    assert "is a shard's: gate the merge of the shards" in capsys.readouterr().err


# --- numbers: non-finite values -----------------------------------------------------------

NAN = """
@claim(id="doc.loss", level="established", source=DOC, section="1", printed={"loss": 1.0})
def test_loss(seed, measure):
    '''A loss that is a number.'''
    value = float(os.environ.get("CLAIMBOOK_TEST_LOSS", "1.0"))
    measure("loss", value, printed=1.0)
"""


def test_a_nan_measurement_is_an_error_that_names_it(claims_project, monkeypatch):
    monkeypatch.setenv("CLAIMBOOK_TEST_LOSS", "nan")
    result, data = claims_project("import os\n" + NAN)
    assert result.ret == 1
    claim = claim_of(data, "doc.loss")
    assert claim["verdict"] == "error"
    assert claim["instances"][0]["message"].endswith(
        "NonFiniteValueError: measured value 'loss' is NaN"
    )
    assert claim["instances"][0]["measures"][0]["value"] == {"nonfinite": "NaN"}


def test_an_infinity_keeps_every_file_standard_json_and_fires_its_rule(
    claims_project, pytester, monkeypatch
):
    assert claims_project("import os\n" + NAN, "--claimbook-update-baseline")[0].ret == 0
    monkeypatch.setenv("CLAIMBOOK_TEST_LOSS", "inf")
    result, data = claims_project("import os\n" + NAN)
    assert result.ret == 1
    text = _newest(pytester).read_text()
    json.loads(text, parse_constant=lambda name: pytest.fail(f"bare {name} in the results"))
    rules = {(r["claim"], r["rule"]) for r in data["comparison"]["regressions"]}
    assert ("doc.loss", "value-nonfinite") in rules and ("doc.loss", "verdict-worse") in rules


# --- sound reuse ----------------------------------------------------------------------------

ENV_CLAIM = """
import os

@claim(id="doc.env", level="established", source=DOC, section="1", env=["MY_FLAG"])
def test_env(measure):
    '''Reads two environment variables.'''
    measure("flag", os.environ.get("MY_FLAG", "") + os.environ.get("CLAIMBOOK_MODE", ""))
"""


def test_a_changed_environment_variable_re_executes_the_claim(claims_project, monkeypatch):
    claims_project(ENV_CLAIM)
    result, _ = claims_project(ENV_CLAIM)
    result.stdout.fnmatch_lines(["*claim tests: 0 executed, 1 reused*"])
    monkeypatch.setenv("MY_FLAG", "on")  # declared by the claim
    claims_project(ENV_CLAIM)[0].stdout.fnmatch_lines(["*claim tests: 1 executed, 0 reused*"])
    monkeypatch.setenv("CLAIMBOOK_MODE", "x")  # always keyed
    claims_project(ENV_CLAIM)[0].stdout.fnmatch_lines(["*claim tests: 1 executed, 0 reused*"])


def test_a_skip_is_never_replayed(claims_project):
    body = """
@claim(id="doc.gpu", level="likely", source=DOC, section="1")
def test_gpu():
    '''Needs a GPU.'''
    pytest.skip("needs a CUDA GPU")
"""
    claims_project(body)
    result, _ = claims_project(body)
    result.stdout.fnmatch_lines(["*claim tests: 1 executed (1 of them skipped*), 0 reused*"])


def test_no_cache_stores_no_outcome(claims_project):
    claims_project(PASSING, "--claimbook-no-cache")
    result, _ = claims_project(PASSING)
    result.stdout.fnmatch_lines(["*claim tests: 3 executed, 0 reused*"])


def test_a_monkeypatching_plugin_in_the_project_is_not_replayed_as_passed(claims_project, pytester):
    body = "import builtins\n" + PASSING.replace("2 + 2", "getattr(builtins, 'FOUR', 4)")
    assert claims_project(body)[0].ret == 0  # stored as passed
    pytester.makepyfile(breaker="import builtins\n\nbuiltins.FOUR = 5\n")
    pytester.syspathinsert()
    result, _ = claims_project(body, "-p", "breaker")
    assert result.ret == 1  # executed under the plugin, not replayed from the clean run
    result.stdout.fnmatch_lines(["*3 executed, 0 reused*"])


def _package(root: Path, name: str, modules: dict[str, str]) -> Path:
    """A package ``name`` under ``root`` with an empty __init__ and the given modules."""
    package = root / name
    package.mkdir()
    for module, source in {"__init__": "", **modules}.items():
        (package / f"{module}.py").write_text(source)
    return package


def test_editing_a_module_a_claim_imports_re_executes_it(claims_project, pytester):
    model = "from . import sizes\n\ndef four():\n    return sizes.FOUR\n"
    package = _package(pytester.path, "mybook", {"model": model, "sizes": "FOUR = 4\n"})
    body = "from mybook import model\n" + PASSING.replace("2 + 2", "model.four()")
    assert claims_project(body)[0].ret == 0
    claims_project(body)[0].stdout.fnmatch_lines(["*0 executed, 3 reused*"])
    (package / "sizes.py").write_text("FOUR = 5\n")  # reached through a relative import only
    result, _ = claims_project(body)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*3 executed, 0 reused*"])


def test_the_run_key_follows_relative_and_from_package_imports(pytester, monkeypatch):
    from claimbook.runs.keys import module_closure

    _package(pytester.path, "toys", {
        "train": "from . import data\nfrom toys import model\n",
        "data": "import json\n",
        "model": "from .layers import Dense\n",
        "layers": "class Dense: ...\n",
    })  # fmt: skip
    monkeypatch.syspath_prepend(pytester.path)
    assert module_closure("toys.train") == [
        "toys", "toys.data", "toys.layers", "toys.model", "toys.train"
    ]  # fmt: skip


def test_a_replay_command_runs_the_test_afresh_with_its_traceback(claims_project):
    failing = PASSING.replace("== 4", "== 5")
    claims_project(failing)
    result, _ = claims_project(failing)
    result.stdout.fnmatch_lines(["*(reused from *; its replay command runs it afresh)*"])
    result, _ = claims_project(failing, "test_claims.py::test_sum[seed0]", "--claimbook-seeds", "0")
    result.stdout.fnmatch_lines(["*claim tests: 1 executed, 0 reused*", "*assert*4 == 5*"])
    assert "(reused from" not in result.stdout.str()


# --- contained failures ---------------------------------------------------------------------


def test_a_locked_history_is_waited_for_reported_and_never_renamed(
    claims_project, pytester, monkeypatch
):
    import claimbook.storage.history as history

    claims_project(PASSING)
    path = pytester.path / "reports" / "history.sqlite"
    monkeypatch.setattr(history, "LOCK_WAIT_S", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result, _ = claims_project(PASSING)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.ret == 0
    result.stdout.fnmatch_lines(["history not updated: *locked by another process*"])
    assert not list(path.parent.glob("history.sqlite.corrupt-*"))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


# --- smaller ----------------------------------------------------------------------------------


def test_a_claim_that_held_and_is_now_skipped_is_one_regression(claims_project, monkeypatch):
    body = "import os\n" + PASSING.replace(
        "    '''Two and two make four.'''\n",
        "    '''Two and two make four.'''\n"
        "    if os.environ.get('CLAIMBOOK_SKIP'):\n        pytest.skip('no GPU here')\n",
    )
    claims_project(body, "--claimbook-update-baseline")
    monkeypatch.setenv("CLAIMBOOK_SKIP", "1")
    result, data = claims_project(body)
    assert result.ret == 1
    assert [(r["claim"], r["rule"]) for r in data["comparison"]["regressions"]] == [
        ("doc.sum", "verdict-worse")  # and no printed-lost for values a skip never measured
    ]
    assert data["comparison"]["regressions"][0]["after"] == "skipped"


def test_the_last_line_after_a_regression_says_failed(claims_project):
    claims_project(PASSING, "--claimbook-update-baseline")
    result, _ = claims_project(PASSING.replace("printed=4) == 4", "printed=4) > 0"), "-k", "x")
    result, _ = claims_project(PASSING.replace("2 + 2, printed=4) == 4", "5, printed=4) > 0"))
    assert result.ret == 1
    last = [line for line in result.stdout.lines if line.startswith("claimbook:")][-1]
    assert last.startswith("claimbook: FAILED: 1 regression against the baseline: doc.sum")
    assert "passed" not in last


def test_a_refused_update_never_says_accepted_or_passed(claims_project):
    result, _ = claims_project(PASSING.replace("== 4", "== 5"), "--claimbook-update-baseline")
    assert result.ret == 1
    out = result.stdout.str()
    assert "(accepted" not in out and "baseline updated" not in out
    assert "claimbook: passed" not in out


def test_option_values_that_name_files_do_not_change_what_is_collected(pytester):
    _suite(pytester, {"test_a.py": PASSING})
    unit = pytester.path / "tests" / "unit"
    unit.mkdir(parents=True)
    (unit / "test_unit.py").write_text("def test_unit():\n    pass\n")
    (pytester.path / "reports").mkdir()
    (pytester.path / "reports" / "baseline.json").write_text(  # read at the start: well formed
        json.dumps({"schema": "claimbook.baseline/3", "seeds": [0, 1, 2], "claims": {}})
    )
    pytester.makepyprojecttoml("[tool.pytest.ini_options]\n")
    shared = pytester.path.parent / f"{pytester.path.name}-shared"  # outside, and existing
    shared.mkdir()
    result = pytester.runpytest_subprocess(  # as nox runs it: config file, testpaths
        "-c", "pyproject.toml", "-p", "no:cacheprovider", "-o", "testpaths=tests/claims",
        "--claimbook-baseline", "reports/baseline.json", "--claimbook-results-dir", str(shared),
    )  # fmt: skip
    result.stdout.fnmatch_lines([f"rootdir: {pytester.path}", "collected 3 items"])
    assert "test_unit" not in result.stdout.str()
    assert list(shared.glob("run-*.json"))


def test_collect_only_judges_and_writes_nothing(claims_project, pytester):
    result, data = claims_project(PASSING, "--co")
    assert result.ret == 0 and data is None
    assert "claimbook: FAILED" not in result.stdout.str()


def test_the_baseline_keeps_only_what_a_rule_judges():
    claim = {
        "id": "doc.x", "level": "likely", "source": {"id": "doc"}, "erratum": "",
        "verdict": "holds", "seeds_passed": 3, "seeds_total": 3, "printed_reproduced": [3, 3],
        "drift": {"loss": 0.02},
        "instances": [
            {"seed": s, "params": {}, "outcome": "passed", "measures": [
                {"name": "loss", "value": 1.7076 + s * 1e-9},
                {"name": "acc", "value": 0.2 + s * 1e-9, "printed": 0.2, "reproduced": True},
                {"name": "time", "value": 3.0 + s, "unit": "s"},
            ]} for s in range(3)
        ],
    }  # fmt: skip
    record = summarize({"run": {}, "claims": [claim]})["doc.x"]
    assert record["values"] == {"loss": {"0": 1.708, "1": 1.708, "2": 1.708}}  # 0.002 resolves
    assert record["measured"] == ["acc", "loss"]  # timings never
    assert record["printed"] == {"acc": {"0": True, "1": True, "2": True}}


def test_hooks_and_modules_stay_small():
    root = Path(__file__).resolve().parents[2] / "framework" / "src" / "claimbook"
    sizes = {p.name: len(p.read_text().splitlines()) for p in root.rglob("*.py")}
    assert max(sizes.values()) <= 320, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def test_reuse_does_not_depend_on_what_else_was_selected(claims_project):
    body = PASSING + SEEDED_FAILS
    claims_project(body, "-k", "sum or flaky")
    result, _ = claims_project(body, "-k", "sum")
    result.stdout.fnmatch_lines(["*claim tests: 0 executed, 3 reused*"])


def test_the_home_page_states_the_gates_outcome(claims_project, pytester, tmp_path):
    from claimbook.render.site import render_site

    claims_project(PASSING + "\ndef test_helper():\n    assert 1 == 2\n")
    docs = tmp_path / "reports"
    root = Path(__file__).resolve().parents[2]
    render_site(_newest(pytester), docs, root / "templates")
    home = (docs / "index.md").read_text()  # before the gate: not gated, the run's own record
    assert '!!! warning "CI result of this run: not gated"' in home and "run: passed" not in home
    assert "The run itself recorded: 1 test that is not a claim failed" in home
    assert main(["gate", "--results", str(_newest(pytester))]) == 1
    render_site(_newest(pytester), docs, root / "templates")
    home = (docs / "index.md").read_text()
    assert '!!! failure "CI result of this run: failed"' in home and "run: passed" not in home
    assert "1 test that is not a claim failed: test\\_claims.py::test\\_helper" in home


def test_printed_digits_are_gated_on_the_baselines_machine_class_only(claims_project, pytester):
    claims_project(PASSING, "--claimbook-update-baseline")
    path = pytester.path / "reports" / "baseline.json"
    base = json.loads(path.read_text())
    drifted = PASSING.replace("2 + 2, printed=4) == 4", "4.6, printed=4) > 3")
    result, data = claims_project(drifted)  # same machine class: a regression
    assert [r["rule"] for r in data["comparison"]["regressions"]] == ["printed-lost"]
    path.write_text(json.dumps({**base, "machine": "another CPU x 64, x86_64 AVX2"}))
    result, data = claims_project(drifted)
    assert result.ret == 0 and data["comparison"]["regressions"] == []
    assert data["comparison"]["changes"][0]["before"] == "sum: reproduced on another machine"
    result.stdout.fnmatch_lines(["*recorded on another CPU x 64*printed-lost is reported, not*"])


def test_a_nan_the_test_swallows_is_still_an_error(claims_project):
    body = (
        PASSING
        + """
@claim(id="doc.swallow", level="likely", source=DOC, section="1")
def test_swallow(seed, measure):
    '''Catches the error a NaN raises.'''
    try:
        measure("loss", float("nan"))
    except ValueError:
        pass
"""
    )
    result, data = claims_project(body)
    assert result.ret == 1
    claim = claim_of(data, "doc.swallow")
    assert claim["verdict"] == "error"
    assert (
        "measured value 'loss' is NaN (the test went on past it)"
        in claim["instances"][0]["message"]
    )
    result, _ = claims_project(body)  # never stored as a pass, so never replayed as one
    result.stdout.fnmatch_lines(["*claim tests: 3 executed, 3 reused*"])


def test_a_lost_baseline_fails_a_run_that_requires_one(claims_project, pytester):
    result, _ = claims_project(PASSING, "--claimbook-require-baseline")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["claimbook: FAILED: baseline unreadable: no baseline at *"])
    result, _ = claims_project(
        PASSING, "--claimbook-require-baseline", "--claimbook-update-baseline"
    )
    assert result.ret == 0 and (pytester.path / "reports" / "baseline.json").exists()
    assert claims_project(PASSING, "--claimbook-require-baseline")[0].ret == 0
