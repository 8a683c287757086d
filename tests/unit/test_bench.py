"""The benchmark's arithmetic and its one edit; the timed runs themselves are `nox -s bench`."""

from __future__ import annotations

import ast

from claimbook.bench import _edit, ratios


def test_ratios_and_targets_from_the_timed_runs():
    runs = {
        "cold, every core": {"wall_s": 600.0},
        "cold, one worker": {"wall_s": 1000.0},
        "warm, nothing changed": {"wall_s": 31.0},
    }
    found, targets = ratios(runs)
    assert found == {
        "cold, every core / one worker": 0.6,
        "warm, nothing changed / cold, every core": round(31 / 600, 4),
    }
    met = {t["target"]: t["met"] for t in targets}
    assert met == {
        "cold, every core / one worker": True,
        "warm re-run, nothing changed (s)": False,
        "re-run after touching one claim test's file (s)": None,
        "re-run after editing one claim test (s)": None,
    }


def test_the_edit_changes_that_test_alone(tmp_path):
    path = tmp_path / "test_x.py"
    path.write_text("def test_a():\n    '''A.'''\n    assert 1\n\n\ndef test_b():\n    assert 2\n")
    original = _edit(path, "test_a")
    edited = path.read_text()
    a, b = (ast.dump(f) for f in ast.parse(edited).body)  # still valid Python
    a0, b0 = (ast.dump(f) for f in ast.parse(original).body)
    assert a != a0 and b == b0  # test_a changed, test_b did not
    assert "edited_by_the_benchmark" in edited.split("def test_b")[0]
