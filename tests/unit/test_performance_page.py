"""The Performance page states the figures of the run it shows (the CPU-seconds of the runs it
trained, from its results file) and labels the benchmark record as an earlier measurement,
with its date, commit and suite size, never as this run's."""

from __future__ import annotations

import json
from pathlib import Path

from claimbook.render.site import render_site

from tests.unit.test_render import BENCH, ROOT
from tests.unit.test_render_evidence import GQA, MQA, QUIZ, RUN, write_results


def page(tmp_path: Path, run: dict = RUN, bench: dict | str | None = None) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    results = write_results(tmp_path / "run-20261201T103123.741819Z-880a43a2-abc.json",
                            [MQA, GQA, QUIZ], run)  # fmt: skip
    path = None
    if bench is not None:
        path = tmp_path / "bench.json"
        path.write_text(bench if isinstance(bench, str) else json.dumps(bench))
    render_site(results, tmp_path / "reports", ROOT / "templates", bench_path=path)
    return (tmp_path / "reports" / "performance.md").read_text()


def test_the_run_states_the_cpu_seconds_of_every_run_it_trained(tmp_path):
    text = page(tmp_path)
    # 326.9 CPU-s for the first look and 251.0 for the planned looks (RUN's looks record);
    # the 74 s of training_wall_s is only the last phase's clock, never shown as the total
    assert "It trained 7 runs: **578 CPU-seconds** in all" in text
    assert "327 for the first look, 251 for the planned looks" in text
    assert "152 s of pytest by the clock" in text
    assert "74 s" not in text and "trained runs in" not in text
    cached = {**RUN, "runs_computed": 0, "looks": {**RUN["looks"], "base_cpu_s": 0.0}}
    assert "It trained no run: every training run its claims read was in the cache" in page(
        tmp_path / "cached", cached
    )
    old = {k: v for k, v in RUN.items() if k != "looks"}
    assert "predates the record of the CPU-seconds" in page(tmp_path / "old", old)


def test_the_benchmark_is_labelled_an_earlier_record_of_its_own_suite(tmp_path):
    text = page(tmp_path, bench=BENCH)
    mark = text.index('!!! note "An earlier record, not this run"')
    assert mark < text.index("### Targets")  # said before any of its figures
    note = text[mark:].split("\n\n")[0]
    assert "on 2026-11-30 12:00 UTC (23 hours before this run)" in note
    assert "at commit `01234567` (not this run's commit)" in note
    assert "on a suite of 4 claim instances" in note  # its first timed run's
    assert "this run has 11 claim instances of 3 claims" in note
    assert "| cold, every core / one worker | 0.6 | 0.556 | met |" in text  # its own figures
    assert "### Targets, as that record measured them" in text
    shards = {"claims": 65, "shards": [], "same_verdicts": True, "differences": [],
              "merged": "merged.json", "compared_with": "whole.json"}  # fmt: skip
    same = {**BENCH, "git_commit": RUN["git_commit"], "shards": shards}
    note = page(tmp_path / "same", bench=same)
    assert "(this run's commit too)" in note and "4 claim instances (65 claims)" in note
    assert "for all 65 claims of that record's suite" in note


def test_an_unreadable_benchmark_is_said_not_hidden(tmp_path):
    text = page(tmp_path, bench="{not json")
    assert "No benchmark shown: bench.json could not be read" in text
    assert "No benchmark recorded yet" in page(tmp_path / "none")
