"""Values as a reader reads them (issue 38): years as years, measure names without "name="
labels or reprs, a claim's sentence marked as our paraphrase, each verdict line's estimate
from the seeds it names, the unsettled list's lean, and no bookkeeping words left unsaid."""

from __future__ import annotations

import copy
import json

import pandas as pd
from claimbook.declare.design import Beats, Matches, MostSeeds, Ranking, Typical, rule_to_dict
from claimbook.judge.evidence import summary
from claimbook.judge.outlook import outlook
from claimbook.judge.sequential import judge_rule
from claimbook.render.errata import erratum_rows
from claimbook.render.evidence_view import evidence_view
from claimbook.render.lean import lean
from claimbook.render.trends import trend_rows
from claimbook.render.values import as_year, shown_names, value_rows

from tests.unit.test_render_evidence import GQA, render


def claim(instances: list[dict], **extra) -> dict:
    """A deterministic claim record from ``(params, nodeid id, measures)`` instances."""
    return {
        "id": "doc.x",
        "instances": [
            {"seed": None, "params": params, "outcome": "passed",
             "nodeid": f"t.py::test_x[{given}]" if given else "t.py::test_x", "measures": ms}
            for params, given, ms in instances
        ],
        **extra,
    }  # fmt: skip


# years -------------------------------------------------------------------------------------


def test_a_year_reads_as_a_year_and_a_count_keeps_its_separator():
    assert as_year(1989, "1989") and not as_year(2048, "2,048")  # as the source writes it
    assert as_year(2019, None, "year of release") and not as_year(2048, None, "units")
    assert as_year(1024.0, "1024") and not as_year(999, "999") and not as_year(True, "1")
    rows = value_rows(claim([({}, "", [
        {"name": "LeCun et al., 1989", "value": 1989, "printed": "1989", "reproduced": True},
        {"name": "hidden units", "value": 2048, "printed": "2,048", "reproduced": True},
        {"name": "params", "value": 2048},
        {"name": "release year", "value": 2019},
    ])]))[1]  # fmt: skip
    assert [(r.name, r.printed, r.cells) for r in rows] == [
        ("LeCun et al., 1989", "1989", ["1989"]),
        ("hidden units", "2,048", ["2,048"]),
        ("params", "", ["2,048"]),
        ("release year", "", ["2019"]),
    ]


def test_in_a_table_of_years_an_unprinted_year_reads_as_a_year_too():
    forks = claim([({}, "", [
        {"name": "fork 1: earliest", "value": 2020, "printed": "2020", "reproduced": True},
        {"name": "fork 1: latest (at most 2022)", "value": 2022},
        {"name": "forks found", "value": 3},
    ])])  # fmt: skip
    assert [r.cells for r in value_rows(forks)[1]] == [["2020"], ["2022"], ["3"]]
    trend = [{"started": "2026-12-05T11:10", "commit": "8d6602e2", "partial": False,
              "verdict": "holds", "seeds": "-", "values": {"fork 1: latest (at most 2022)": 2022,
                                                             "LeCun": 1989}}]  # fmt: skip
    rows = trend_rows(trend, ["fork 1: latest (at most 2022)", "LeCun"], {"LeCun": "1989"}, True)
    assert rows[0].values == ["2022", "1989"]
    trend[0]["values"]["fork 1: latest (at most 2022)"] = 2022.0  # as the history stores it
    assert trend_rows(trend, ["fork 1: latest (at most 2022)"], {}, True)[0].values == ["2022"]
    assert trend_rows(trend, ["fork 1: latest (at most 2022)"])[0].values == ["2,022"]


def test_an_erratum_row_shows_a_year_as_a_year_under_the_name_a_page_shows():
    wrong = claim([({"kind": "who and when"}, "who and when", [
        {"name": "Shazeer, 2018", "value": 2019, "printed": "2018", "reproduced": False},
    ]), ({"kind": "titles"}, "titles", [{"name": "titles found", "value": 15}])])  # fmt: skip
    wrong["instances"][0]["outcome"] = "failed"
    [row] = erratum_rows(wrong)
    assert (row.name, row.printed, row.measured) == ("Shazeer, 2018", "2018", "2019")


# measure names -----------------------------------------------------------------------------


def test_a_parameter_shows_only_where_it_tells_rows_apart_and_never_as_name_equals():
    conv = [{"name": "summary", "value": 0.98}, {"name": "conv recall: output", "value": 1}]
    quoted = claim([
        ({"quantity": "conv recall"}, "conv recall", conv),
        ({"quantity": "LSTM recall"}, "LSTM recall", [{"name": "summary", "value": 0.22}]),
        ({"kind": "who and when"}, "who and when", [{"name": "LeCun et al., 1989", "value": 1989}]),
    ])  # fmt: skip
    shown = set(shown_names(quoted).values())
    assert shown == {"summary (conv recall)", "summary (LSTM recall)", "conv recall: output",
                     "LeCun et al., 1989"}  # fmt: skip
    repeated = claim([({"quantity": "years from 2019"}, "", [{"name": "years from 2019",
                                                              "value": 5}])])  # fmt: skip
    assert list(shown_names(repeated).values()) == ["years from 2019"]
    spec = "MixerSpec(kind='attention', kernel=4, n_heads=4, n_kv_heads=4)"
    one = claim([({"spec": spec}, "spec0", [{"name": "parameters", "value": 204_992}])])
    words = "attention, kernel 4, 4 heads, 4 kv heads"
    assert list(shown_names(one).values()) == [f"parameters ({words})"]


def test_a_trend_table_is_headed_by_the_names_a_page_shows_never_a_repr(tmp_path):
    from claimbook.render.site import render_site
    from claimbook.storage.history import History

    from tests.unit.test_render_evidence import write_results

    spec = "MixerSpec(kind='lstm', kernel=4, n_heads=4, n_kv_heads=None)"
    record = claim(
        [({"spec": spec}, "LSTM", [{"name": "parameters", "value": 204_976}]),
         ({"spec": spec.replace("lstm", "conv")}, "convolution",
          [{"name": "parameters", "value": 204_992}])],
        sentence="Both have about 205,000 parameters.", level="established", verdict="holds",
        note="", scope="", section="S", erratum="", test="t.py::test_x", file="t.py", line=1,
        printed={}, source={"id": "doc", "title": "Doc", "document": "d", "path": ""},
        seeds_total=None, seeds_passed=None, rule=None, statistics=None,
    )  # fmt: skip
    results = write_results(tmp_path / "run-20261201T103123.741819Z-880a43a2-abcdef.json",
                            [record])  # fmt: skip
    history = History(tmp_path / "history.sqlite")
    run = json.loads(results.read_text())
    run["run"]["partial"] = False  # a trend shows complete runs only
    history.append(run)
    history.close()
    docs = tmp_path / "reports"
    render_site(results, docs, tmp_path / "none", history_path=tmp_path / "history.sqlite")
    page = (docs / "claims" / "doc.x.md").read_text()
    header = next(line for line in page.splitlines() if line.startswith("| run |"))
    assert "parameters (LSTM)" in header and "parameters (convolution)" in header
    assert "MixerSpec" not in header and "spec=" not in header


# the claim's sentence ----------------------------------------------------------------------


def test_a_sentence_shown_in_full_is_marked_as_our_paraphrase_not_a_quotation(tmp_path):
    long = copy.deepcopy(GQA)
    long["sentence"] = "Grouped-query attention beats multi-query attention. " * 5
    docs = render(tmp_path, [long])
    for page in (docs / "claims" / "dd2.gqa-beats-mqa.md", docs / "sources" / "dd2.md"):
        text = page.read_text()
        assert "**In our words** (a paraphrase, not a quotation of the text):" in text
        assert not [line for line in text.splitlines() if line.startswith("> ")]


# verdict lines -----------------------------------------------------------------------------


def _judged(rule, columns: dict, level: str = "likely") -> dict:
    frame = pd.DataFrame(columns, index=range(len(next(iter(columns.values())))))
    stats = judge_rule(rule, level, frame, rule.looks)
    verdict = stats["decision"] or "inconclusive"
    return {"id": "doc.x", "verdict": verdict, "rule": rule_to_dict(rule), "statistics": stats,
            "test": "t.py::test_x", "seeds_total": stats["seeds_used"]}  # fmt: skip


def test_a_ranking_line_names_the_seeds_each_part_was_estimated_on():
    ranked = _judged(Ranking(order=("A", "B", "C"), lower=True), {
        "A": [1.0, 1.01, 0.99, 1.0, 1.02], "B": [2.0, 2.01, 1.99, 2.02, 2.0],
        "C": [2.05, 2.03, 2.10, 2.06, 2.07]})  # fmt: skip
    line = summary(ranked)
    assert "(ranking, 5 seeds, decided at 5)" in line
    first, second = line.split("): ", 1)[1].split("; ")
    assert first.endswith("(its first 3 seeds, the look that decided it)")
    assert "first" not in second  # estimated on the 5 seeds the line names


def test_an_interval_is_said_in_plain_words_not_per_look():
    typical = _judged(Typical(x="acc", above=0.5), {"acc": [0.9, 0.91, 0.92]})
    line = summary(typical)
    assert "per-look" not in line and "% interval, widened for the repeated looks)" in line


def test_what_would_decide_a_claim_says_where_its_training_cost_comes_from():
    open_claim = _judged(Typical(x="acc", above=0.5), {"acc": [0.55, 0.45, 0.6]})
    stats = open_claim["statistics"]
    stats["outlook"] = outlook(stats, "likely")
    stats["to_cap"] = {"runs": 9, "cached": 2, "cpu_s": 300.0, "budget": 1.2}
    needed = evidence_view(open_claim).needed
    assert stats["outlook"]["chance"] > 0 and "committed durations" not in needed
    assert "each run's time as recorded in the book's repository" in needed
    assert "for the 7 training runs not in the training cache" in needed


# the lean of an unsettled claim ------------------------------------------------------------


def test_an_undecided_claim_leans_towards_against_or_neither_way():
    assert lean(_judged(Beats(a="A", b="B", lower=False, bimodal=True),
                        {"A": [1.0, 0.19, 1.0], "B": [0.22, 0.22, 0.21]})["statistics"]) == (
        "leans towards the claim (2 of 3 seeds won, all but seed 1; the claim needs more than "
        "half)")  # fmt: skip
    against = lean(_judged(MostSeeds(x="acc", above=0.9), {"acc": [0.2, 0.95, 0.3]})["statistics"])
    assert against == (
        "leans against the claim (1 of 3 seeds succeed, only seed 1; the claim needs more than 50%)"
    )
    typical = _judged(Typical(x="w", above=0.5), {"w": [0.53, 0.49, 0.51, 0.48, 0.495]})
    assert lean(typical["statistics"]).startswith("leans neither way (2 of 5 seeds on its side")
    matches = _judged(Matches(a="x", b="y", margin=0.014),
                      {"x": [1.80, 1.81, 1.79], "y": [1.795, 1.80, 1.80]})  # fmt: skip
    assert lean(matches["statistics"]).endswith("the claim needs within ±0.014)")
    decided = _judged(Typical(x="acc", above=0.5), {"acc": [0.9, 0.91, 0.92]})
    assert lean(decided["statistics"]) == ""


def test_the_home_page_says_which_way_each_unsettled_claim_leans(tmp_path):
    index = (render(tmp_path, [GQA]) / "index.md").read_text()
    unsettled = index.split("## Unsettled", 1)[1].split("## What holds", 1)[0]
    assert "**leans towards the claim (" in unsettled
    assert "per-look" not in index
