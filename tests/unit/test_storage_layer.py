"""Storage sits below the judge: it stores what it is given, judges nothing, and one
persist() saves a run for both session end and merge."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from claimbook.storage.baseline import StagedBaseline
from claimbook.storage.persist import PersistError, persist
from claimbook.storage.results import runs_in

STORAGE = Path(__file__).resolve().parents[2] / "framework" / "src" / "claimbook" / "storage"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):  # function-level imports too
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_storage_imports_nothing_of_the_judge_or_the_layers_above():
    above = ("claimbook.judge", "claimbook.plugin", "claimbook.render", "claimbook.merge",
             "claimbook.gate")  # fmt: skip
    wrong = {
        path.name: sorted(m for m in _imports(path) if m.startswith(above))
        for path in STORAGE.glob("*.py")
    }
    assert not {name: mods for name, mods in wrong.items() if mods}


RUN = {
    "started": "2026-12-01T10:00:00.000000+00:00",
    "git_commit": "abc",
    "run_id": "r1",
    "seeds": [0],
}


def test_persist_writes_results_receipt_baseline_then_history(tmp_path):
    base = tmp_path / "baseline.json"
    staged = StagedBaseline(base, {"commit": "abc", "seeds": [0], "claims": {}})
    results = {"run": dict(RUN), "claims": [], "comparison": None}
    path = persist(results, tmp_path / "results", receipt=tmp_path / "r.json", baseline=staged,
                   history=tmp_path / "h.sqlite", say=print)  # fmt: skip
    assert json.loads((tmp_path / "r.json").read_text())["results"] == str(path)
    assert json.loads(base.read_text())["schema"] == "claimbook.baseline/3"
    assert (tmp_path / "h.sqlite").exists()


def test_a_failed_write_commits_nothing_after_it(tmp_path):
    base = tmp_path / "baseline.json"
    staged = StagedBaseline(base, {"commit": "abc", "seeds": [0], "claims": {}})
    (tmp_path / "results").write_text("a file, not a folder")
    results = {"run": dict(RUN), "claims": [], "comparison": None}
    with pytest.raises(PersistError, match="the results file could not be written") as caught:
        persist(results, tmp_path / "results", receipt=tmp_path / "r.json", baseline=staged,
                history=tmp_path / "h.sqlite")  # fmt: skip
    assert caught.value.path is None
    assert not base.exists() and not (tmp_path / "r.json").exists()
    assert not (tmp_path / "h.sqlite").exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "results"]  # the staged baseline dropped


def test_a_shards_file_is_no_run_of_its_folder(tmp_path):
    """Shards carry no verdicts: only their merge is a run the site, export or gate reads."""
    for name in ("run-s000001-x-abc-1-shard1of2.json", "run-s000002-x-abc-2.json",
                 "run-s000003-x-abc-3-merged.json"):  # fmt: skip
        (tmp_path / name).write_text("{}")
    assert [p.name for p in runs_in(tmp_path)] == [
        "run-s000002-x-abc-2.json",
        "run-s000003-x-abc-3-merged.json",
    ]
