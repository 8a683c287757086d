"""Rendering from a results file alone, then a real MkDocs build."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from claimbook.render.site import md_escape, render_site
from claimbook.storage.results import latest_results

from tests.unit.conftest import strict_build

ROOT = Path(__file__).resolve().parents[2]

ODD_CLAIM = """
@claim(
    id="doc.odd", level="established", source=DOC, section="Tricky | section",
    printed={"a|b": "<b>1</b>"},
    figure=Figure(title="curve", xlabel="step", ylabel="loss", hlines={"chance": 0.5}),
)
def test_odd(seed, measure):
    '''A sentence with a pipe | an <b>angle</b> and *stars* stays literal.'''
    measure("loss", 1.0 + seed, printed=1.0)
    measure("curve: model", [3.0, 2.0, 1.0 + seed], x=[0, 1, 2])

@claim(id="doc.fails", level="likely", source=DOC, section="Other")
def test_fails(seed):
    '''Refuted in every seed.'''
    assert False
"""


def test_markdown_specials_are_escaped():
    assert md_escape("a | b <i>*x*</i>") == r"a \| b &lt;i&gt;\*x\*&lt;/i&gt;"


def test_site_renders_from_results_and_builds_strictly(claims_project, pytester, tmp_path):
    claims_project(ODD_CLAIM)
    docs = tmp_path / "reports"
    written = render_site(
        latest_results(pytester.path / "reports" / "results"), docs, ROOT / "templates"
    )
    names = {p.relative_to(docs).as_posix() for p in written}
    assert {
        "index.md",
        "tags.md",
        "errata.md",
        "sources/doc.md",
        "claims/doc.odd.md",
        "claims/doc.fails.md",
    } <= names
    assert {"figures/doc.odd.png", "figures/doc.odd.seeds.png", "assets/claimbook.css"} <= names

    page = (docs / "sources" / "doc.md").read_text()
    assert r"a pipe \| an &lt;b&gt;angle&lt;/b&gt; and \*stars\* stays literal" in page
    assert '<span class="cb-badge cb-refuted">refuted</span>' in page
    assert '<span class="cb-badge cb-holds">holds</span>' in page
    assert "| loss | 1 | 1 | 2 | 3 | 2 ± 1 | no (2 of 3) |" in page  # printed, seeds, mean ± sd
    assert 'python -m pytest "test_claims.py::test_odd"' in page  # replays the whole claim
    assert "--claimbook-seeds 0" in page  # the failing instances' replay commands
    front = (docs / "claims" / "doc.odd.md").read_text().split("---\n")[1]
    # the title reaches <title> and the tags index as it stands: escaped once, here
    title = (
        "doc.odd: A sentence with a pipe | an &lt;b&gt;angle&lt;/b&gt; and *stars* stays literal."
    )
    assert yaml.safe_load(front) == {"title": title, "tags": ["established", "holds", "doc"]}

    build = strict_build(docs, tmp_path)
    assert build.returncode == 0, build.stderr
    site = tmp_path / "site"
    assert (site / "index.html").exists() and (site / "figures" / "doc.odd.png").exists()
    tags = (site / "tags.html").read_text()  # pages as page.html: the site opens from disk
    assert "doc.odd" in tags and "established" in tags and "refuted" in tags
    assert "<b>angle</b>" not in tags and "&lt;b&gt;angle&lt;/b&gt;" in tags
    html = (site / "sources" / "doc.html").read_text()
    assert "a pipe | an &lt;b&gt;angle&lt;/b&gt; and *stars* stays literal" in html


def test_every_figure_kind_draws_from_results(claims_project, pytester, tmp_path):
    claims_project("""
@claim(id="doc.band", level="likely", source=DOC, section="1",
       figure=Figure(kind="band", title="t", xlabel="x", ylabel="y"))
def test_band(seed, measure):
    '''Curves over seeds.'''
    measure("curve: a", [1.0, 0.5 + seed / 10], x=[0, 1])

@claim(id="doc.heat", level="likely", source=DOC, section="1",
       figure=Figure(kind="heatmap", title="t", xlabel="x", ylabel="y"))
def test_heat(seed, measure):
    '''A heatmap.'''
    measure("weights: example", [[0.1, 0.9], [0.5, 0.5]], x=["a", "b"])

@claim(id="doc.points", level="likely", source=DOC, section="1",
       figure=Figure(kind="scatter", title="t", xlabel="x", ylabel="y"))
def test_points(seed, measure):
    '''Points.'''
    measure("loss by size: a", 1.0 + seed, x=2)

@claim(id="doc.power", level="likely", source=DOC, section="1",
       figure=Figure(title="t", xlabel="x", ylabel="y", log=True))
def test_power(seed, measure):
    '''A power law on log axes.'''
    measure("cost: a", [1.0, 4.0, 16.0], x=[1, 2, 4])
""")
    docs = tmp_path / "reports"
    written = render_site(
        latest_results(pytester.path / "reports" / "results"), docs, ROOT / "templates"
    )
    pngs = sorted(p.name for p in written if p.suffix == ".png")
    assert pngs == ["doc.band.png", "doc.heat.png", "doc.points.png", "doc.power.png"]
    assert all((docs / "figures" / name).stat().st_size > 1000 for name in pngs)


def test_recently_changed_lists_moved_new_and_gone_claims():
    from claimbook.render.trends import Change, changes_since

    before = {
        "claims": [
            {"id": "a", "verdict": "holds"},
            {"id": "b", "verdict": "holds"},
            {"id": "gone", "verdict": "holds"},
        ]
    }
    after = {
        "claims": [
            {"id": "a", "verdict": "refuted"},
            {"id": "b", "verdict": "holds"},
            {"id": "new", "verdict": "holds"},
        ]
    }
    assert changes_since(before, after) == [
        Change("a", "holds", "refuted"),
        Change("gone", "holds", "(gone)"),
        Change("new", "(new)", "holds"),
    ]


def test_the_site_prefers_full_runs_over_newer_partial_ones(tmp_path):
    import json

    from claimbook.storage.results import latest_results, previous_results

    for stamp, partial in (("20260101", False), ("20260102", False), ("20260103", True)):
        (tmp_path / f"run-{stamp}T000000Z-abc.json").write_text(
            json.dumps({"run": {"partial": partial}})
        )
    newest, full = "run-20260103T000000Z-abc.json", "run-20260102T000000Z-abc.json"
    assert latest_results(tmp_path).name == newest  # what the gate judges
    assert latest_results(tmp_path, full=True).name == full  # what the site shows
    assert previous_results(tmp_path, tmp_path / full).name == "run-20260101T000000Z-abc.json"
    assert previous_results(tmp_path, tmp_path / "run-20260101T000000Z-abc.json") is None


TWO_SOURCES = """
OTHER = Source(id="other", title="Another document", document="other.txt")

@claim(id="doc.share", level="established", source=DOC, section="Part 1",
       printed={"share": "31.1%"}, erratum="31.0%: the printed share does not follow its counts",
       error="share")
def test_share(measure):
    '''A share the document prints wrongly.'''
    share = measure("share (%)", 31.03, printed="31.1")
    measure.correct(f"The share is {share:.1f}%.")
    assert round(share, 1) == 31.1

@claim(id="doc.share-again", level="established", source=DOC, section="Part 1",
       erratum="the same share, printed again in the summary", error="share")
def test_share_again(measure):
    '''The summary repeats the share.'''
    assert measure("share in the summary (%)", 31.03, printed="31.1") == 31.1

@claim(id="doc.layout", level="established", source=DOC, section="Part 2",
       erratum="the model is pre-norm")
def test_layout(measure):
    '''A layout the document gets wrong.'''
    assert measure("placement", "pre-norm", printed="post-norm") == "post-norm"

@claim(id="other.fine", level="likely", source=OTHER, section="Only")
def test_fine(seed, measure):
    '''Holds in every seed.'''
    measure("x", seed)
"""


def test_errata_page_lists_printed_against_measured(claims_project, pytester, tmp_path):
    result, _ = claims_project(TWO_SOURCES, "--claimbook-seeds", "0-2")
    assert result.ret == 0  # errata are expected failures
    docs = tmp_path / "reports"
    render_site(latest_results(pytester.path / "reports" / "results"), docs, ROOT / "templates")
    errata = (docs / "errata.md").read_text()
    # two checks of one error are one entry, which lists both and the correction they computed
    assert "2 distinct errors,\nshown by 3 checks" in errata
    assert "## 1. 31.0%: the printed share does not follow its counts { #share }" in errata
    assert "**Shown by 2 checks:**" in errata and "(claims/doc.share-again.md)" in errata
    assert '!!! tip "Correction"\n    The share is 31.0%.' in errata
    assert "| share (%) | 31.1 | 31.03 |" in errata
    assert "| share in the summary (%) | 31.1 | 31.03 |" in errata
    assert "## 2. the model is pre-norm { #doc-layout }" in errata  # the page's order
    assert "| placement | post-norm | pre-norm |" in errata
    assert "other.fine" not in errata
    page = (docs / "claims" / "doc.share.md").read_text()
    assert "**Correction:** The share is 31.0%." in page and "| correction |" not in page
    home = (docs / "index.md").read_text()
    assert "| verdict | doc | other | all |" in home
    # every count links to the list of the claims it counts
    assert "## What the sources get wrong: 2 errors" in home
    assert "(errata.md#share) (doc, 2 checks). **Correction:** The share is 31.0%." in home
    erratum = "[3](counts.md#verdict-erratum-doc) | 0 | [3](counts.md#verdict-erratum) |"
    assert (
        f'| [<span class="cb-badge cb-erratum">erratum</span>](reading.md#erratum) | {erratum}'
        in home
    )
    holds = "0 | [1](counts.md#verdict-holds-other) | [1](counts.md#verdict-holds) |"
    assert f'| [<span class="cb-badge cb-holds">holds</span>](reading.md#holds) | {holds}' in home
    likely = "0 | [1](counts.md#level-likely-other) | [1](counts.md#level-likely) |"
    assert f"| [[likely]](reading.md#likely) | {likely}" in home
    counts = (docs / "counts.md").read_text()
    assert "#### A test document: 3 { #verdict-erratum-doc }" in counts
    assert "(claims/doc.share.md) <br><small>`doc.share`</small>" in counts
    assert {p.name for p in (docs / "sources").iterdir()} == {"doc.md", "other.md"}


BENCH = {
    "schema": "claimbook.bench/1",
    "started": "2026-11-30T12:00:00+00:00",
    "finished": "2026-11-30T13:00:00+00:00",
    "git_commit": "0123456789abcdef",
    "machine": {"cpu": "A CPU", "cores": 2, "platform": "Linux"},
    "runs": {
        "cold, every core": {"wall_s": 100.0, "exit_status": 0, "runs_computed": 3,
                             "runs_read": 9, "workers": 2, "claims_executed": 4,
                             "claims_replayed": 0},
        "cold, one worker": {"wall_s": 180.0, "exit_status": 0, "runs_computed": 3,
                             "runs_read": 9, "workers": 1, "claims_executed": 4,
                             "claims_replayed": 0},
    },
    "ratios": {"cold, every core / one worker": 0.5556},
    "targets": [{"target": "cold, every core / one worker", "limit": 0.6, "measured": 0.5556,
                 "met": True}],
    "throughput": {"matmul_flops_per_s": 5.0e10, "mixers": {"conv": {
        "flops_per_step": 2.4e9, "seconds_per_step": 0.5, "steps_per_s": 2.0,
        "flops_per_s": 4.8e9, "share_of_matmul": 0.096}}},
    "balance": {"runs": 4, "total_s": 300.0, "max_over_mean": 1.02,
                "parts": [{"runs": 1, "seconds": 100.0}, {"runs": 2, "seconds": 102.0},
                          {"runs": 1, "seconds": 98.0}]},
    "legs": {"legs": 3, "measured": {"started": "2026-12-01T20:00:00+00:00", "git_commit": "ab",
                                           "machine": "Some CPU x 2"},
             "rounds": [[{"leg": "round1-leg1", "wall_s": 50.0, "exit_status": 0, "trained": 2,
                          "expected_s": 120.0, "new_files": 2}]],
             "claims": {"exit_status": 0}, "reference": "run-x.json", "differences": [],
             "same_verdicts_and_values": True, "timings_left_out": ["doc.timed"],
             "selection": ["40 tests deselected (-k recall)"], "compared_claims": 9,
             "without_one_leg": {"dropped": "round1-leg2", "dropped_files": 2, "exit_status": 1,
                                 "missing_named": "2 training runs are not in the cache"}},
    "engines": {"run": "train(x) seed 0", "key": "0123456789abcdef", "all_identical": True,
                "seconds": {"local": 20.0, "dask": 21.0, "submitit-local": 22.0}},
}  # fmt: skip


def test_the_performance_page_shows_the_run_and_the_benchmark(claims_project, pytester, tmp_path):
    claims_project(ODD_CLAIM)
    claims_project(ODD_CLAIM)  # unchanged: every instance reused
    results = latest_results(pytester.path / "reports" / "results")
    docs = tmp_path / "reports"
    render_site(results, docs, ROOT / "templates")
    assert "No benchmark recorded yet" in (docs / "performance.md").read_text()
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCH))
    render_site(results, docs, ROOT / "templates", bench_path=bench)
    page = (docs / "performance.md").read_text()
    assert "| cold, every core / one worker | 0.6 | 0.556 | met |" in page
    assert "| cold, one worker | 180.0 | 0 | 3 / 9 | 1 | 4 / 0 |" in page
    assert "| conv | 2,400 | 2.00 | 4.80 | 9.6% |" in page
    assert "| 0 | 0 | 0 | 6 |" in page  # this run: nothing trained or executed, 6 reused
    assert "the longest leg holds **1.0200 x the mean** (target: at most 1.15)" in page
    assert "| 2 | 2 | 102.0 |" in page
    assert "**every verdict and every measured value equal to the unsharded run's**" in page
    assert "UTC at `ab` on Some CPU x 2)" in page  # the machine the simulation ran on
    assert "but for the durations doc.timed times itself" in page
    assert (
        "(on a selection of the book: 40 tests deselected (-k recall); 9 claims compared)" in page
    )
    assert "the claims phase exits 1 and says: 2 training runs are not in the cache" in page
    assert "| 1 | round1-leg1 | 50.0 | 0 | 2 | 120 |" in page
    assert "entries **bit-identical** (key `0123456789ab`; local 20.0 s, dask 21.0 s" in page
    claim = (docs / "claims" / "doc.odd.md").read_text()
    assert "3 of 3 instances reused from their execution of" in claim


def test_an_unchanged_figure_is_copied_not_drawn_again(claims_project, pytester, tmp_path):
    claims_project(ODD_CLAIM)
    results = latest_results(pytester.path / "reports" / "results")
    store = tmp_path / "store"
    render_site(results, tmp_path / "a", ROOT / "templates", figure_store=store)
    drawn = {p.name: p.stat().st_mtime_ns for p in store.glob("*.png")}
    assert len(drawn) == 2  # the claim's figure and its per-seed strip
    render_site(results, tmp_path / "b", ROOT / "templates", figure_store=store)
    assert {p.name: p.stat().st_mtime_ns for p in store.glob("*.png")} == drawn
    one, two = (tmp_path / d / "figures" / "doc.odd.png" for d in "ab")
    assert one.read_bytes() == two.read_bytes()
