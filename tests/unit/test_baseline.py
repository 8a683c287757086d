"""The baseline, each regression rule, and the run history, end to end through pytest."""

from __future__ import annotations

import json
import sqlite3

from claimbook.__main__ import main
from claimbook.storage.history import History
from claimbook.storage.results import latest_results

from tests.unit.conftest import HEADER

ACCEPTED = """
@claim(id="doc.sum", level="established", source=DOC, section="1", printed={"sum": 4})
def test_sum(seed, measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2, printed=4) == 4

@claim(id="doc.loss", level="likely", source=DOC, section="1", drift={"loss": 0.05})
def test_loss(seed, measure):
    '''A loss that moves a little with the seed.'''
    measure("loss", 1.0 + seed / 100, unit="nats")

@claim(id="doc.shaky", level="likely", source=DOC, section="1")
def test_shaky(seed, measure):
    '''Holds for the default seeds, fails from seed 5 on.'''
    assert measure("seed", seed) < 5
"""


def baseline_of(pytester) -> dict:
    return json.loads((pytester.path / "reports" / "baseline.json").read_text())


def accept(claims_project, body=ACCEPTED):
    result, _ = claims_project(body, "--claimbook-update-baseline")
    assert result.ret == 0, result.stdout.str()
    return result


def test_update_baseline_then_an_unchanged_run_says_no_regression(claims_project, pytester):
    result = accept(claims_project)
    result.stdout.fnmatch_lines(["baseline updated: *baseline.json (3 claims)"])
    assert "no baseline at" not in result.stdout.str()  # it is writing the first one
    base = baseline_of(pytester)
    assert base["schema"] == "claimbook.baseline/3" and base["seeds"] == [0, 1, 2]
    assert base["claims"]["doc.shaky"]["verdict"] == "holds"
    assert base["claims"]["doc.shaky"]["seeds_passed"] == 3
    # only what a rule judges: drift-declared values, at a tenth of their tolerance
    assert base["claims"]["doc.loss"]["values"] == {"loss": {"0": 1.0, "1": 1.01, "2": 1.02}}
    assert base["claims"]["doc.shaky"]["values"] == {}
    assert base["claims"]["doc.shaky"]["measured"] == ["seed"]
    assert base["claims"]["doc.sum"]["printed"] == {"sum": {"0": True, "1": True, "2": True}}
    result, data = claims_project(ACCEPTED)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*no regression against the baseline*"])
    assert data["comparison"]["regressions"] == [] and data["comparison"]["seeds"] == [0, 1, 2]


def test_each_rule_names_the_claim_and_fails_the_run(claims_project):
    accept(claims_project)
    broken = (
        ACCEPTED.replace("2 + 2, printed=4) == 4", "2 + 3, printed=4) == 5")  # printed-lost
        .replace("1.0 + seed / 100", "1.2 + seed / 100")  # value-drift (0.2 > 0.05)
        .replace("< 5", "== 5")  # verdict-worse: now fails in every seed
        .replace('id="doc.sum"', 'id="doc.total"')  # claim-missing, and a new claim
    )
    broken += """
@claim(id="doc.new", level="established", source=DOC, section="2")
def test_new(seed):
    '''A new claim that fails.'''
    assert False
"""
    result, data = claims_project(broken)
    assert result.ret == 1
    rules = {(r["claim"], r["rule"]) for r in data["comparison"]["regressions"]}
    assert rules == {
        ("doc.sum", "claim-missing"),
        ("doc.loss", "value-drift"),
        ("doc.shaky", "verdict-worse"),
        ("doc.new", "new-claim-refuted"),
    }
    assert ("doc.total", "holds") in {
        (f["claim"], f["after"]) for f in data["comparison"]["improvements"]
    }
    result.stdout.fnmatch_lines(
        [
            "*doc.loss*value-drift*loss: mean 1.01*mean 1.21 (tolerance 0.05)*seed 0: 1 -> 1.2*",
            "*doc.shaky*verdict-worse*holds*refuted*seed 0: passed -> failed*",
            "*4 regressions against the baseline*",
        ]
    )


def test_a_printed_value_that_stops_reproducing_is_a_regression(claims_project):
    accept(claims_project)
    drifted = ACCEPTED.replace(
        'measure("sum", 2 + 2, printed=4) == 4', 'measure("sum", 4.6, printed=4) > 3'
    )
    result, data = claims_project(drifted)
    assert result.ret == 1
    [regression] = data["comparison"]["regressions"]
    assert (regression["claim"], regression["rule"]) == ("doc.sum", "printed-lost")
    assert regression["values"] == "seed 0: now 4.6; seed 1: now 4.6; seed 2: now 4.6"


def test_improvements_are_reported_and_pass(claims_project):
    hunch = """
@claim(id="doc.hunch", level="speculative", source=DOC, section="2")
def test_hunch(seed):
    '''A hunch that does not hold yet.'''
    assert seed > 5
"""
    accept(claims_project, ACCEPTED + hunch)  # a refuted speculative claim does not gate
    extra = """
@claim(id="doc.extra", level="established", source=DOC, section="2")
def test_extra(seed):
    '''A new claim that holds.'''
"""
    result, data = claims_project(ACCEPTED + hunch.replace("seed > 5", "seed < 5") + extra)
    assert result.ret == 0
    assert data["comparison"]["regressions"] == []
    improved = {(f["claim"], f["before"], f["after"]) for f in data["comparison"]["improvements"]}
    assert improved == {("doc.hunch", "refuted", "holds"), ("doc.extra", "(new)", "holds")}
    result.stdout.fnmatch_lines(["*doc.hunch*improvement*refuted*holds*", "*no regression*"])


def test_a_refuted_run_cannot_become_the_baseline(claims_project, pytester):
    accept(claims_project)
    before = baseline_of(pytester)
    result, _ = claims_project(ACCEPTED.replace("< 5", "== 7"), "--claimbook-update-baseline")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "claimbook: FAILED: gating verdicts: doc.shaky (refuted); "
            "--claimbook-update-baseline refused: the run failed*"
        ]
    )
    assert "baseline updated" not in result.stdout.str()
    assert baseline_of(pytester) == before


def test_a_subset_is_compared_on_the_seeds_both_have(claims_project, pytester):
    accept(claims_project)
    result, data = claims_project(ACCEPTED, "--claimbook-seeds", "1", "-k", "shaky or sum")
    # seed 1 alone: compared with the baseline on the one seed both have
    assert [r["rule"] for r in data["comparison"]["regressions"]] == []
    assert data["comparison"]["seeds"] == [1]
    note = "note: this run has seeds [1], the baseline [0, 1, 2]: compared on seeds [1] only"
    assert note in result.stdout.str()
    # a partial run never reports the claims it did not select as missing
    result, data = claims_project(ACCEPTED, "--claimbook-update-baseline", "-k", "sum")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "claimbook: FAILED: --claimbook-update-baseline refused: the run is partial"
            " (6 tests deselected*"
        ]
    )
    # the gate nox runs after rendering reads the results file: it fails too
    newest = latest_results(pytester.path / "reports" / "results")
    assert main(["gate", "--results", str(newest)]) == 1


def test_an_unreadable_baseline_stops_the_run_at_its_start_with_its_path(pytester):
    (pytester.path / "reports").mkdir(exist_ok=True)
    (pytester.path / "reports" / "baseline.json").write_text("{not json")
    pytester.makepyfile(test_claims=HEADER + ACCEPTED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")  # exit 2: not in-process
    assert result.ret == 2  # refused before anything was collected or run
    result.stderr.fnmatch_lines(
        ["*refused before any training: cannot read baseline *baseline.json*"]
    )
    assert not (pytester.path / "reports" / "results").exists()


def test_history_keeps_every_run_and_survives_corruption(claims_project, pytester):
    claims_project(ACCEPTED)
    claims_project(ACCEPTED.replace("< 5", "== 7"))
    path = pytester.path / "reports" / "history.sqlite"
    history = History(path)
    trend = history.trend("doc.shaky")
    assert [t["verdict"] for t in trend] == ["holds", "refuted"]
    assert trend[0]["values"] == {"seed": 1.0}  # mean of seeds 0, 1, 2
    assert [(c["claim"], c["before"], c["after"]) for c in history.recent_changes()] == [
        ("doc.shaky", "holds", "refuted")
    ]
    history.close()
    path.write_bytes(b"this is not a database" * 100)
    result, _ = claims_project(ACCEPTED)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["history *history.sqlite is unusable (*); kept as *.corrupt-*"])
    assert len(list(path.parent.glob("history.sqlite.corrupt-*"))) == 1
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


def test_a_history_row_edited_in_place_is_never_shown_as_a_run(claims_project, pytester):
    claims_project(ACCEPTED)
    claims_project(ACCEPTED.replace("< 5", "== 7"))
    path = pytester.path / "reports" / "history.sqlite"
    with sqlite3.connect(path) as db:  # the second run's verdict rewritten by hand
        db.execute("UPDATE verdicts SET verdict = 'holds' WHERE run_id = 2")
    said = []
    history = History(path, said.append)
    assert [t["verdict"] for t in history.trend("doc.shaky")] == ["holds"]  # run 1 only
    assert history.recent_changes() == []
    assert len(said) == 1 and "(row 2) fails its checksum" in said[0]
    history.close()


def test_a_malformed_drift_declaration_fails_collection(claims_project):
    result, _ = claims_project(ACCEPTED.replace('drift={"loss": 0.05}', 'drift={"loss": "lots"}'))
    assert result.ret == 4  # usage error
    result.stderr.fnmatch_lines(["*test_loss*drift of 'loss' must be a number >= 0 or a share*"])


def test_the_site_shows_trends_and_recent_changes_after_two_runs(claims_project, pytester):
    from pathlib import Path

    from claimbook.render.site import render_site
    from claimbook.storage.results import latest_results

    claims_project(ACCEPTED)
    claims_project(ACCEPTED.replace("< 5", "== 7"))
    docs = pytester.path / "docs"
    root = Path(__file__).resolve().parents[2]
    written = render_site(
        latest_results(pytester.path / "reports" / "results"),
        docs,
        root / "templates",
        history_path=pytester.path / "reports" / "history.sqlite",
    )
    assert docs / "figures" / "doc.shaky.trend.png" in written
    # doc.loss is the same in both runs at the same commit: one point, no trend plot
    assert docs / "figures" / "doc.loss.trend.png" not in written
    page = (docs / "claims" / "doc.shaky.md").read_text()
    assert "## Trend" in page and "| refuted | 0/3 | 1 |" in page and "| holds | 3/3 | 1 |" in page
    home = (docs / "index.md").read_text()
    assert "| [`doc.shaky`](claims/doc.shaky.md) | holds | refuted |" in home


def test_a_claim_the_history_names_but_this_run_lacks_is_not_linked(claims_project, pytester):
    """A claim added, run, then deleted: the history's rows about it name it without a link
    (its page is gone; a link would fail the site's strict build)."""
    from pathlib import Path

    from claimbook.render.site import render_site
    from claimbook.storage.results import latest_results

    without = ACCEPTED.split('@claim(id="doc.shaky"')[0]
    for body in (without, ACCEPTED, without):  # doc.shaky: new, then deleted
        claims_project(body)
    docs = pytester.path / "docs"
    root = Path(__file__).resolve().parents[2]
    history = pytester.path / "reports" / "history.sqlite"
    newest = latest_results(pytester.path / "reports" / "results")
    render_site(newest, docs, root / "templates", history_path=history)
    home = (docs / "index.md").read_text()
    assert "| `doc.shaky` | (new) | holds |" in home  # named, not linked
    assert "| `doc.shaky` | holds | (gone) |" in home
    assert "claims/doc.shaky.md" not in home


def test_a_partial_run_is_no_point_of_a_trend(claims_project, pytester):
    """A replay of one seed judges fewer seeds than the claim's looks: its verdict and means
    are not the claim's, so the claim page's trend shows complete runs only."""
    claims_project(ACCEPTED)
    moved = ACCEPTED.replace("1.0 + seed / 100", "2.0 + seed / 100")
    result, data = claims_project(moved, "test_claims.py::test_loss[seed0]")
    assert data["run"]["partial"], result.stdout.str()
    history = History(pytester.path / "reports" / "history.sqlite", print)
    [point] = history.trend("doc.loss")
    assert point["values"]["loss"] == 1.01 and not point["partial"]  # the complete run's mean
    history.close()


def test_replaying_one_instance_compares_only_that_instance(claims_project):
    body = (
        ACCEPTED
        + """
@claim(id="doc.sizes", level="established", source=DOC, section="2", printed={"n": 1})
@pytest.mark.parametrize("n", [1, 2])
def test_sizes(n, measure):
    '''Each size is itself.'''
    assert measure("size", n, printed=n) == n
"""
    )
    accept(claims_project, body)
    result, data = claims_project(body, "test_claims.py::test_sizes[1]")
    assert result.ret == 0, result.stdout.str()
    assert data["run"]["partial"] and data["comparison"]["regressions"] == []


def test_replaying_one_seed_compares_only_that_seed(claims_project):
    """A node id of one seed (the replay of one failing case) is compared on that seed: the
    baseline's other seeds are not lost printed digits (it failed the gate before)."""
    accept(claims_project)
    result, data = claims_project(ACCEPTED, "test_claims.py::test_sum[seed0]")
    assert result.ret == 0, result.stdout.str()
    assert data["run"]["partial"] and data["comparison"]["regressions"] == []
    broken = ACCEPTED.replace(
        'measure("sum", 2 + 2, printed=4) == 4', 'measure("sum", 4.6, printed=4) > 3'
    )
    result, data = claims_project(broken, "test_claims.py::test_sum[seed0]")
    assert result.ret == 1  # the seed it ran still counts
    [regression] = data["comparison"]["regressions"]
    assert (regression["rule"], regression["values"]) == ("printed-lost", "seed 0: now 4.6")


def test_a_claim_turning_supported_after_a_redraw_is_said_not_silent():
    from claimbook.judge.baseline import _compare_statistical

    claim = {"verdict": "supported", "level": "likely", "erratum": "", "statistics": {}}
    found = _compare_statistical("doc.x", {"verdict": "inconclusive"}, claim, complete=True)
    assert found["improvements"][0]["rule"] == "support-gained"
    assert "inconclusive -> supported against the baseline" in found["warnings"][0]
    assert not found["regressions"]
