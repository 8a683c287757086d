"""The evidence of claims decided over seeds, on their pages, figures and the home page.

The inputs are claim records copied from a real results file (``reports/results``, the
``--claimbook-seeds 0,1,2`` run and the adaptive run that went to 5 seeds), their seeds extended by
the same judge the plugin runs (:func:`claimbook.judge.sequential.judge_rule`).
"""

# ruff: noqa: E501  (the claim records below are copied verbatim from a results file)
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from claimbook.declare.design import rule_from_dict
from claimbook.judge.outlook import outlook
from claimbook.judge.sequential import judge_rule, other_level
from claimbook.judge.tidy import per_seed, tidy
from claimbook.judge.verdicts import Instance, decide_statistical
from claimbook.render.evidence import rule_panels
from claimbook.render.figures import evidence_plot, strip_figure
from claimbook.render.site import render_site
from claimbook.render.views import claim_view
from claimbook.storage.results import SCHEMA

from tests.unit.conftest import strict_build

ROOT = Path(__file__).resolve().parents[2]

RUN = {
    "git_commit": "880a43a24937fce0e77eed72a4111e6895d4ad5e",
    "git_dirty": True,
    "started": "2026-12-01T10:31:23.741819+00:00",
    "finished": "2026-12-01T10:33:55.442580+00:00",
    "wall_s": 151.701,
    "python": "3.11.7",
    "torch": "2.13.0+cpu",
    "platform": "Linux-6.18.44-fc-v657-x86_64-with-glibc2.36",
    "machine": "AMD EPYC x 2, x86_64 AVX512",
    "seeds": [0, 1, 2],
    "runs_computed": 7,
    "runs_read": 21,
    "workers": 2,
    "training_wall_s": 74.265,
    "claims_executed": 16,
    "claims_replayed": 0,
    "shard": None,
    "adaptive": True,
    "looks": {
        "budget_cpu_s": 1260.0,
        "base_runs": 21,
        "base_committed_s": 1260.0,
        "extra_runs": 7,
        "extra_committed_s": 420.0,
        "extra_trained": 7,
        "extra_cpu_s": 251.0,
        "rounds": [
            {
                "claims": ["dd2.previous-token-heads", "dd2.mqa-quality-loss"],
                "instances": 4,
                "trained": 4,
                "cpu_s": 141.3,
            },
            {"claims": ["dd2.previous-token-heads"], "instances": 3, "trained": 3, "cpu_s": 109.7},
        ],
        "over_budget": [],
        "extra_instances": 7,
        "base_cpu_s": 326.9,
        "budget": 1.0,
    },
    "partial": True,
    "outcome": {
        "complete": False,
        "partial_reasons": ["197 tests deselected (-k mqa_loses or previous_token_head)"],
        "failed": False,
        "failure_reasons": [],
        "baseline_update": None,
    },
    "exit_status": 0,
}
MQA = {
    "id": "dd2.mqa-quality-loss",
    "level": "likely",
    "source": {
        "id": "dd2",
        "title": "Attention mechanisms in large language models: a deep dive, part 2",
        "document": "an article on attention internals; text: 001_4c9decde5873da15.txt",
    },
    "section": "Part 8 · Grouped-query attention",
    "printed": {"claim": "MQA: some quality loss from sharing one key-value head"},
    "scope": "4-block width-64 attention models of the chapter (about 205k parameters), 600 AdamW steps of 32 x 64 characters of TinyShakespeare, the chapter's recipe; one CPU thread. Says nothing about models orders of magnitude larger. The chapter's MHA and MQA runs, paired by seed; both estimators.",
    "erratum": "",
    "figure": None,
    "remark": "",
    "drift": {},
    "trains": ["train_lm(attention, 4 heads, 4 kv)", "train_lm(attention, 4 heads, 1 kv)"],
    "env": [],
    "rule": {
        "rule": "Beats",
        "look20": False,
        "a": "MHA full-split loss",
        "b": "MQA full-split loss",
        "lower": True,
        "margin": 0.0,
        "bimodal": False,
    },
    "sentence": "Multi-query attention ends with a higher validation loss than MHA on the whole validation split, on average over seeds, paired by seed.",
    "test": "tests/claims/test_dd2_attention_deep_dive.py::test_mqa_loses_some_quality",
    "file": "tests/claims/test_dd2_attention_deep_dive.py",
    "line": 828,
    "verdict": "supported",
    "gates": False,
    "seeds_passed": None,
    "seeds_total": 5,
    "note": "",
    "statistics": {
        "kind": "paired comparison",
        "rule": {
            "rule": "Beats",
            "look20": False,
            "a": "MHA full-split loss",
            "b": "MQA full-split loss",
            "lower": True,
            "margin": 0.0,
            "bimodal": False,
        },
        "words": "MHA full-split loss is lower than MQA full-split loss: mean per-seed difference MQA full-split loss − MHA full-split loss above 0 (paired t)",
        "alpha": 0.05,
        "looks_planned": [3, 5, 8, 12],
        "seeds_available": 5,
        "values": {
            "seed": [0, 1, 2, 3, 4],
            "MHA full-split loss": [
                1.8482672727477536,
                1.8342435105386201,
                1.8324517492038102,
                1.8472352701268158,
                1.8420966747297074,
            ],
            "MQA full-split loss": [
                1.859993090448916,
                1.8707070936428556,
                1.846772477492673,
                1.8811001805021896,
                1.8631370021062386,
            ],
            "difference": [
                0.011725817701162322,
                0.036463583104235475,
                0.014320728288862883,
                0.03386491037537387,
                0.021040327376531165,
            ],
        },
        "per_look_level": 0.017154220829604855,
        "interval": 0.9656915583407903,
        "looks": [
            {
                "n": 3,
                "decision": None,
                "estimate": 0.020836709698086892,
                "low": -0.020441809441424975,
                "high": 0.06211522883759876,
                "p": 0.05871472565795275,
                "needed": 7,
            },
            {
                "n": 5,
                "decision": "supported",
                "estimate": 0.023483073369233144,
                "low": 0.007632313527744905,
                "high": 0.03933383321072138,
                "p": 0.0047380450099101645,
                "needed": None,
            },
        ],
        "decision": "supported",
        "decided_at": 5,
        "seeds_used": 5,
        "estimate": {
            "n": 5,
            "decision": "supported",
            "estimate": 0.023483073369233144,
            "low": 0.007632313527744905,
            "high": 0.03933383321072138,
            "p": 0.0047380450099101645,
            "needed": None,
        },
        "reversal": "",
        "futile": False,
        "next_look": None,
        "p": 0.0047380450099101645,
        "needed": None,
        "counterexamples": [],
        "other_level": "",
        "adaptive": True,
    },
    "printed_reproduced": None,
    "instances": [
        {
            "nodeid": "tests/claims/test_dd2_attention_deep_dive.py::test_mqa_loses_some_quality[seed0]",
            "seed": 0,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0012264710003364598,
            "measures": [
                {"name": "MHA val loss", "value": 1.8420405626296996, "unit": "nats"},
                {"name": "MHA full-split loss", "value": 1.8482672727477536, "unit": "nats"},
                {"name": "MQA val loss", "value": 1.8561685919761657, "unit": "nats"},
                {"name": "MQA full-split loss", "value": 1.859993090448916, "unit": "nats"},
            ],
            "message": "",
        },
        {
            "nodeid": "tests/claims/test_dd2_attention_deep_dive.py::test_mqa_loses_some_quality[seed1]",
            "seed": 1,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0011855699976877077,
            "measures": [
                {"name": "MHA val loss", "value": 1.835742712020874, "unit": "nats"},
                {"name": "MHA full-split loss", "value": 1.8342435105386201, "unit": "nats"},
                {"name": "MQA val loss", "value": 1.8788427591323853, "unit": "nats"},
                {"name": "MQA full-split loss", "value": 1.8707070936428556, "unit": "nats"},
            ],
            "message": "",
        },
        {
            "nodeid": "tests/claims/test_dd2_attention_deep_dive.py::test_mqa_loses_some_quality[seed2]",
            "seed": 2,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.001196375002109562,
            "measures": [
                {"name": "MHA val loss", "value": 1.8379451513290406, "unit": "nats"},
                {"name": "MHA full-split loss", "value": 1.8324517492038102, "unit": "nats"},
                {"name": "MQA val loss", "value": 1.853598427772522, "unit": "nats"},
                {"name": "MQA full-split loss", "value": 1.846772477492673, "unit": "nats"},
            ],
            "message": "",
        },
        {
            "nodeid": "tests/claims/test_dd2_attention_deep_dive.py::test_mqa_loses_some_quality[seed3]",
            "seed": 3,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0011656679980660556,
            "measures": [
                {"name": "MHA val loss", "value": 1.852206254005432, "unit": "nats"},
                {"name": "MHA full-split loss", "value": 1.8472352701268158, "unit": "nats"},
                {"name": "MQA val loss", "value": 1.8858795881271362, "unit": "nats"},
                {"name": "MQA full-split loss", "value": 1.8811001805021896, "unit": "nats"},
            ],
            "message": "",
        },
        {
            "nodeid": "tests/claims/test_dd2_attention_deep_dive.py::test_mqa_loses_some_quality[seed4]",
            "seed": 4,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0011274640000920044,
            "measures": [
                {"name": "MHA val loss", "value": 1.8428500294685364, "unit": "nats"},
                {"name": "MHA full-split loss", "value": 1.8420966747297074, "unit": "nats"},
                {"name": "MQA val loss", "value": 1.8713149785995484, "unit": "nats"},
                {"name": "MQA full-split loss", "value": 1.8631370021062386, "unit": "nats"},
            ],
            "message": "",
        },
    ],
}
GQA = {
    "id": "dd2.gqa-beats-mqa",
    "level": "likely",
    "source": {
        "id": "dd2",
        "title": "Attention mechanisms in large language models: a deep dive, part 2",
        "document": "an article on attention internals; text: 001_4c9decde5873da15.txt",
    },
    "section": "Part 8 · Grouped-query attention",
    "printed": {"claim": "GQA: better quality than MQA"},
    "scope": "4-block width-64 attention models of the chapter (about 205k parameters), 600 AdamW steps of 32 x 64 characters of TinyShakespeare, the chapter's recipe; one CPU thread. Says nothing about models orders of magnitude larger. The chapter's GQA (2 kv heads) and MQA runs, paired by seed; both estimators.",
    "erratum": "",
    "figure": None,
    "remark": "",
    "drift": {},
    "trains": ["train_lm(attention, 4 heads, 2 kv)", "train_lm(attention, 4 heads, 1 kv)"],
    "env": [],
    "rule": {
        "rule": "Beats",
        "look20": False,
        "a": "GQA full-split loss",
        "b": "MQA full-split loss",
        "lower": True,
        "margin": 0.0,
        "bimodal": False,
    },
    "sentence": "Grouped-query attention (2 kv heads for 4 query heads) ends with a lower validation loss than multi-query attention on the whole validation split, on average over seeds, paired by seed.",
    "test": "tests/claims/test_dd2_attention_deep_dive.py::test_gqa_has_better_quality_than_mqa",
    "file": "tests/claims/test_dd2_attention_deep_dive.py",
    "line": 848,
    "verdict": "inconclusive",
    "gates": False,
    "seeds_passed": None,
    "seeds_total": 3,
    "note": "",
    "statistics": {
        "kind": "paired comparison",
        "rule": {
            "rule": "Beats",
            "look20": False,
            "a": "GQA full-split loss",
            "b": "MQA full-split loss",
            "lower": True,
            "margin": 0.0,
            "bimodal": False,
        },
        "words": "GQA full-split loss is lower than MQA full-split loss: mean per-seed difference MQA full-split loss − GQA full-split loss above 0 (paired t)",
        "alpha": 0.05,
        "looks_planned": [3],
        "seeds_available": 3,
        "values": {
            "seed": [0, 1, 2],
            "GQA full-split loss": [1.8396290112308191, 1.837350845336914, 1.8478754877907264],
            "MQA full-split loss": [1.859993090448916, 1.8707070936428556, 1.846772477492673],
            "difference": [0.020364079218096798, 0.03335624830594153, -0.0011030102980533751],
        },
        "per_look_level": 0.05,
        "interval": 0.9,
        "looks": [
            {
                "n": 3,
                "decision": None,
                "estimate": 0.017539105741994982,
                "low": -0.011798902694114089,
                "high": 0.04687711417810406,
                "p": 0.11149374239917888,
                "needed": 8,
            }
        ],
        "decision": None,
        "decided_at": None,
        "seeds_used": 3,
        "estimate": {
            "n": 3,
            "decision": None,
            "estimate": 0.017539105741994982,
            "low": -0.011798902694114089,
            "high": 0.04687711417810406,
            "p": 0.11149374239917888,
            "needed": 8,
        },
        "reversal": "",
        "futile": True,
        "next_look": None,
        "p": 0.11149374239917888,
        "needed": 8,
        "counterexamples": [],
        "other_level": "",
        "adaptive": False,
    },
    "printed_reproduced": None,
    "instances": [
        {
            "nodeid": "tests/claims/test_dd2_attention_deep_dive.py::test_gqa_has_better_quality_than_mqa[seed0]",
            "seed": 0,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0011703870004566852,
            "measures": [
                {"name": "GQA val loss", "value": 1.8297224640846252, "unit": "nats"},
                {"name": "GQA full-split loss", "value": 1.8396290112308191, "unit": "nats"},
                {"name": "MQA val loss", "value": 1.8561685919761657, "unit": "nats"},
                {"name": "MQA full-split loss", "value": 1.859993090448916, "unit": "nats"},
            ],
            "message": "",
        },
        {
            "nodeid": "tests/claims/test_dd2_attention_deep_dive.py::test_gqa_has_better_quality_than_mqa[seed1]",
            "seed": 1,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0011094069996033795,
            "measures": [
                {"name": "GQA val loss", "value": 1.8390760540962219, "unit": "nats"},
                {"name": "GQA full-split loss", "value": 1.837350845336914, "unit": "nats"},
                {"name": "MQA val loss", "value": 1.8788427591323853, "unit": "nats"},
                {"name": "MQA full-split loss", "value": 1.8707070936428556, "unit": "nats"},
            ],
            "message": "",
        },
        {
            "nodeid": "tests/claims/test_dd2_attention_deep_dive.py::test_gqa_has_better_quality_than_mqa[seed2]",
            "seed": 2,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.001129114001741982,
            "measures": [
                {"name": "GQA val loss", "value": 1.857417142391205, "unit": "nats"},
                {"name": "GQA full-split loss", "value": 1.8478754877907264, "unit": "nats"},
                {"name": "MQA val loss", "value": 1.853598427772522, "unit": "nats"},
                {"name": "MQA full-split loss", "value": 1.846772477492673, "unit": "nats"},
            ],
            "message": "",
        },
    ],
}
QUIZ = {
    "id": "ch04.conv-reach-quiz",
    "level": "established",
    "source": {
        "id": "ch04",
        "title": "Token mixing: from convolution and recurrence to attention (chapter 4)",
        "document": "chapter 4 of a Transformer book (Part II); text: 000_6d944b984c8dab64.txt",
    },
    "section": "Step 1 · Convolution",
    "printed": {"positions": 13},
    "scope": "random width-8 kernel-3 convolutions with residuals (the recap's question)",
    "erratum": "",
    "figure": None,
    "remark": "",
    "drift": {},
    "trains": [],
    "env": [],
    "rule": None,
    "sentence": "Six stacked causal convolutions of kernel 3 see 6 x 2 + 1 = 13 positions.",
    "test": "tests/claims/test_ch04_token_mixing.py::test_six_kernel3_convolutions_see_13_positions",
    "file": "tests/claims/test_ch04_token_mixing.py",
    "line": 145,
    "verdict": "holds",
    "gates": False,
    "seeds_passed": 3,
    "seeds_total": 3,
    "note": "",
    "statistics": None,
    "printed_reproduced": [3, 3],
    "instances": [
        {
            "nodeid": "tests/claims/test_ch04_token_mixing.py::test_six_kernel3_convolutions_see_13_positions[seed0]",
            "seed": 0,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0015714849996584235,
            "measures": [{"name": "reach", "value": 13, "printed": 13, "reproduced": True}],
            "message": "",
        },
        {
            "nodeid": "tests/claims/test_ch04_token_mixing.py::test_six_kernel3_convolutions_see_13_positions[seed1]",
            "seed": 1,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0015793579987075645,
            "measures": [{"name": "reach", "value": 13, "printed": 13, "reproduced": True}],
            "message": "",
        },
        {
            "nodeid": "tests/claims/test_ch04_token_mixing.py::test_six_kernel3_convolutions_see_13_positions[seed2]",
            "seed": 2,
            "params": {},
            "outcome": "passed",
            "duration_s": 0.0016786449996288866,
            "measures": [{"name": "reach", "value": 13, "printed": 13, "reproduced": True}],
            "message": "",
        },
    ],
}


def with_seeds(claim: dict, n: int) -> dict:
    """``claim`` measured in seeds 0 to n - 1: each new seed's instance is a measured one's
    with its values nudged, and the statistics are judged again from all of them."""
    claim = copy.deepcopy(claim)
    measured = list(claim["instances"])
    have = {i["seed"] for i in measured}
    for seed in range(n):
        if seed in have:
            continue
        inst = copy.deepcopy(measured[seed % len(measured)])
        inst["seed"] = seed
        inst["nodeid"] = re.sub(r"\[seed\d+\]", f"[seed{seed}]", inst["nodeid"])
        for m in inst["measures"]:
            if isinstance(m["value"], float):
                m["value"] += 0.002 * ((seed * 7) % 5 - 2)
        claim["instances"].append(inst)
    claim["seeds_total"] = n
    if claim.get("rule"):
        rule = rule_from_dict(claim["rule"])
        frame = per_seed(tidy([claim]), claim["id"], rule.measures())
        stats = judge_rule(rule, claim["level"], frame, rule.looks)
        stats.update(
            other_level=other_level(rule, claim["level"], frame, rule.looks, stats["decision"]),
            adaptive=True,
        )
        claim["statistics"] = stats
        outcomes = [Instance(i["seed"], i["params"], i["outcome"]) for i in claim["instances"]]
        verdict = decide_statistical(claim["level"], outcomes, stats, claim["erratum"])
        claim["verdict"], claim["gates"] = verdict.verdict, verdict.gates
        claim["seeds_total"] = stats["seeds_used"]
    return claim


def write_results(path: Path, claims: list[dict], run: dict | None = None) -> Path:
    path.write_text(
        json.dumps({"schema": SCHEMA, "run": run or RUN, "claims": claims, "comparison": None})
    )
    return path


def render(tmp_path: Path, claims: list[dict], run: dict | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    results = write_results(
        tmp_path / "run-20261201T103123.741819Z-880a43a2-abcdef.json", claims, run
    )
    docs = tmp_path / "reports"
    render_site(results, docs, ROOT / "templates")
    return docs


def table(page: str, header: str) -> list[str]:
    """The rows of the Markdown table whose header line starts with ``header``."""
    lines = page.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]


def test_the_evidence_table_has_one_row_per_seed_at_20_seeds(tmp_path):
    claim = with_seeds(MQA, 20)
    assert claim["statistics"]["values"]["seed"] == list(range(20))
    docs = render(tmp_path, [claim])
    page = (docs / "claims" / "dd2.mqa-quality-loss.md").read_text()
    header = "| seed | MHA full-split loss | MQA full-split loss | difference"
    rows = table(page, header)
    assert [cells(r)[0].split(" ")[0] for r in rows] == [str(s) for s in range(20)]
    assert all(len(cells(r)) == 4 for r in rows)  # seed, the two measures, the difference
    shown = claim["statistics"]["seeds_used"]
    assert cells(rows[shown - 1])[0] == str(shown - 1)
    if shown < 20:  # seeds other claims asked for, after this claim's decision
        assert cells(rows[shown])[0] == f"{shown} (not in the shown look)"
    evidence = page.split("## Evidence")[1].split("## Measured")[0]
    assert (
        "**Rule ([paired comparison](../reading.md#paired-comparison)):** MHA full-split"
        in evidence
    )
    assert "not adjusted for the [planned looks](../reading.md#looks), so no [q-value](" in evidence
    assert "Benjamini" not in evidence
    assert "| seeds | decision | estimate | interval | p |" in evidence
    assert "| seeds used | " in evidence and "of 20 seeds run" in evidence
    assert "![Evidence for dd2.mqa-quality-loss: " in evidence
    assert (docs / "figures" / "dd2.mqa-quality-loss.evidence.png").stat().st_size > 1000


def test_the_looks_and_estimate_of_the_real_record_are_on_its_page(tmp_path):
    docs = render(tmp_path, [MQA, QUIZ])
    page = (docs / "claims" / "dd2.mqa-quality-loss.md").read_text()
    evidence = page.split("## Evidence")[1].split("## Measured")[0]
    assert "| 3 | open | 0.02084 | \\[-0.02044, 0.06212\\] | 0.05871 |" in evidence
    assert "| 5 | supported | 0.02348 | \\[0.007632, 0.03933\\] | 0.004738 |" in evidence
    assert "96.6% interval" in evidence
    assert (
        "| [p](../reading.md#p-value) | 0.004738: fixed-sample, at the look shown; not adjusted"
        in evidence
    )
    looks = "[planned looks](../reading.md#looks) at 3, 5, 8, 12 seeds"
    assert f"| seeds used | 5 of 5 seeds run; {looks} |" in evidence
    claim = "[`dd2.mqa-quality-loss`](../claims/dd2.mqa-quality-loss.md)"
    assert f"](../reading.md#supported) | {claim} | [[likely]](../reading.md#likely) |" in page
    assert "| 5 seeds |" in page  # the seeds cell of a rule claim
    quiz = (docs / "claims" / "ch04.conv-reach-quiz.md").read_text()
    assert (
        "| [deterministic](../reading.md#deterministic), 3/3 inputs |" in quiz
        and "3/3 seeds" not in quiz
    )
    assert "## Evidence" not in quiz
    assert (
        "**Evidence:** [deterministic](../reading.md#deterministic): holds on 3 fixed input seeds"
        in quiz
    )


def with_outlook(claim: dict) -> dict:
    """``claim`` with the outlook the judge records and the cost to its cap the session adds."""
    stats = {**claim["statistics"], "adaptive": True, "looks_planned": [3, 5, 8, 12],
             "futile": False, "next_look": 5, "stopped_by": "budget",
             "to_cap": {"runs": 6, "cached": 0, "cpu_s": 240.0, "budget": 1.5}}  # fmt: skip
    stats["outlook"] = outlook(stats, claim["level"])
    return {**claim, "statistics": stats}


def test_an_inconclusive_claim_says_what_would_decide_it(tmp_path):
    docs = render(tmp_path, [with_outlook(GQA)])
    page = (docs / "claims" / "dd2.gqa-beats-mqa.md").read_text()
    assert '!!! warning "Inconclusive: what would decide it"' in page  # not a green box
    assert "chance that its remaining planned looks decide it](../reading.md#outlook) by" in page
    assert "about 4.0 CPU-minutes of training, for the 6 training runs" in page
    assert f'`nox -s claims -- "{GQA["test"]}" --budget 1.5`' in page


def test_the_measures_table_stays_narrow_at_20_seeds(tmp_path):
    view = claim_view(with_seeds(MQA, 20), None)
    assert view.wide and view.seed_range == "seeds 0 to 19"
    docs = render(tmp_path, [with_seeds(MQA, 20)])
    page = (docs / "claims" / "dd2.mqa-quality-loss.md").read_text()
    header = "| measured | printed | over seeds | reproduces | values, seeds 0 to 19 |"
    assert header in page and "| seed 19 |" not in page
    rows = table(page, header)
    assert len(rows) == 4 and all(len(cells(r)) == 5 for r in rows)  # 4 measures, 5 columns
    values = cells(next(r for r in rows if r.startswith(r"| MHA val loss \[nats\] |")))[-1]
    assert len(values.split(" / ")) == 20  # one wrapping cell, seeds in order
    # up to 6 seeds: one column per seed, as before
    five = claim_view(MQA, None)
    assert not five.wide and five.seed_columns == [f"seed {s}" for s in range(5)]
    page = (render(tmp_path / "five", [MQA]) / "claims" / "dd2.mqa-quality-loss.md").read_text()
    assert "| measured | printed | seed 0 | seed 1 | seed 2 | seed 3 | seed 4 |" in page


def test_the_home_page_counts_inconclusive_claims_apart_and_links_every_count(tmp_path):
    docs = render(tmp_path, [MQA, with_outlook(GQA), QUIZ])
    home = (docs / "index.md").read_text()
    unsettled = home.split("## Unsettled: 1")[1].split("\n## ")[0]
    assert "(claims/dd2.gqa-beats-mqa.md) (dd2.gqa-beats-mqa, " in unsettled
    assert "chance that its planned looks decide it](reading.md#outlook) by its cap" in unsettled
    assert "about 4.0 CPU-minutes of training" in unsettled and "--budget 1.5`" in unsettled
    for verdict in ("supported", "holds"):
        badge = f'[<span class="cb-badge cb-{verdict}">{verdict}</span>](reading.md#{verdict})'
        assert f"[1](counts.md#verdict-{verdict}) {badge}" in home
    row = next(
        line
        for line in home.splitlines()
        if line.startswith('| [<span class="cb-badge cb-inconclusive')
    )
    assert row.endswith(
        "| [1](counts.md#verdict-inconclusive-dd2) | 0 | [1](counts.md#verdict-inconclusive) |"
    ) or row.endswith(
        "| 0 | [1](counts.md#verdict-inconclusive-dd2) | [1](counts.md#verdict-inconclusive) |"
    )
    tables = home.split("## Verdicts")[1].split("## This run")[0].splitlines()
    counted = [line for line in tables if line.startswith("| [") or "cb-badge" in line]
    assert len(counted) == 13 + 3  # a row per verdict (cited, a stand-in's included), per level
    for line in counted:
        for cell in cells(line)[1:]:
            assert cell == "0" or re.fullmatch(r"\[\d+\]\(counts\.md#[a-z0-9-]+\)", cell), cell
    counts = (docs / "counts.md").read_text()
    assert "### inconclusive: 1 { #verdict-inconclusive }" in counts
    section = counts.split("{ #verdict-inconclusive }")[1].split("\n### ")[0]
    assert "(claims/dd2.gqa-beats-mqa.md) <br><small>`dd2.gqa-beats-mqa`</small>" in section
    assert "dd2.mqa-quality-loss" not in section
    build = strict_build(docs, tmp_path)  # every anchor linked to exists
    assert build.returncode == 0, build.stderr
    css = (docs / "assets" / "claimbook.css").read_text()
    assert ".cb-inconclusive" in css and ".cb-not-equivalent" in css


def test_the_evidence_figure_has_one_labelled_row_per_seed(tmp_path):
    import matplotlib.pyplot as plt

    claim = with_seeds(MQA, 20)
    labels, panels = rule_panels(claim)
    assert labels == [f"seed {s}" for s in range(20)]
    assert panels[0]["xlabel"] == "MQA full-split loss − MHA full-split loss"
    assert panels[0]["refs"] == [(0.0, "0: no difference")]
    fig = evidence_plot(claim)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == labels
    assert list(ax.get_yticks()) == list(range(20))  # a row of its own for every seed
    tall = fig.get_size_inches()[1]
    plt.close(fig)
    fig = evidence_plot(MQA)
    assert len(fig.axes[0].get_yticklabels()) == 5 and fig.get_size_inches()[1] < tall
    plt.close(fig)
    assert evidence_plot(QUIZ) is None  # a deterministic claim has no evidence figure


def test_no_strip_plot_for_integer_values(tmp_path):
    assert all(isinstance(m["value"], int) for i in QUIZ["instances"] for m in i["measures"])
    assert not strip_figure(QUIZ, tmp_path / "quiz.png")
    assert not (tmp_path / "quiz.png").exists()
    counts = copy.deepcopy(MQA)  # the same measures as counts: integers
    for inst in counts["instances"]:
        for m in inst["measures"]:
            m["value"] = round(m["value"] * 1000)
    assert not strip_figure(counts, tmp_path / "counts.png")
    assert strip_figure(MQA, tmp_path / "mqa.png")  # measured losses still get their strip
    docs = render(tmp_path, [MQA, QUIZ])
    assert not (docs / "figures" / "ch04.conv-reach-quiz.seeds.png").exists()
    assert (docs / "figures" / "dd2.mqa-quality-loss.seeds.png").exists()


def test_the_performance_page_shows_what_the_planned_looks_spent(tmp_path):
    docs = render(tmp_path, [MQA, GQA, QUIZ])
    page = (docs / "performance.md").read_text()
    assert "| extra training runs the looks read | 7, 420 committed CPU-s |" in page
    assert "| CPU-seconds they spent in this run | 251.0 s |" in page
    assert "| budget for the planned looks | 1260 committed CPU-s (1 x the base) |" in page
    # 251.0 CPU-s over the 1 stochastic claim decided (gqa-beats-mqa is inconclusive)
    assert "| CPU-seconds per decided claim | 251.0 s |" in page
    assert (
        "divided by the number of stochastic claims whose rule reached a decision (1 of 2)" in page
    )
    # a round names a claim this results file lacks: shown, not linked to a missing page
    assert "<code>dd2.previous-token-heads</code>, [dd2.mqa-quality-loss]" in page
    assert (
        "| [dd2.gqa-beats-mqa](claims/dd2.gqa-beats-mqa.md) | paired comparison | 3 seeds | - |"
        in page
    )
    old = {k: v for k, v in RUN.items() if k not in ("looks", "adaptive")}
    page = (render(tmp_path / "old", [QUIZ], old) / "performance.md").read_text()
    assert "This results file predates the planned looks" in page


def test_a_conjunction_and_a_ranking_get_a_panel_per_part(tmp_path):
    import matplotlib.pyplot as plt
    from claimbook.declare.design import AllOf, Beats, Ranking, Typical, rule_to_dict

    a, b = "MHA full-split loss", "MQA full-split loss"
    for rule, parts in (
        (AllOf(parts=(Typical(x=a, below=1.9), Beats(a=a, b=b, lower=True))), 2),
        (Ranking(order=("MHA val loss", a, b), lower=False), 2),
    ):
        claim = with_seeds({**MQA, "rule": rule_to_dict(rule)}, 20)  # judged as the plugin does
        labels, panels = rule_panels(claim)
        assert len(panels) == parts and labels == [f"seed {s}" for s in range(20)]
        fig = evidence_plot(claim)
        shown = [ax for ax in fig.axes if ax.get_visible()]
        assert len(shown) == parts
        assert all(len(ax.get_yticks()) == 20 for ax in shown)
        plt.close(fig)
    page = (render(tmp_path, [claim]) / "claims" / "dd2.mqa-quality-loss.md").read_text()
    assert "| part | rule | decision | seeds | estimate |" in page
    assert "| seed | MHA val loss | MHA full-split loss | MQA full-split loss | " in page


def test_the_evidence_figure_of_one_seed_says_there_is_no_interval_yet():
    import matplotlib.pyplot as plt
    from claimbook.declare.design import Universal, rule_to_dict

    rule = Universal(x="MQA full-split loss", below=3.0)
    one = {**MQA, "instances": [i for i in MQA["instances"] if i["seed"] == 0]}
    frame = per_seed(tidy([one]), one["id"], rule.measures())
    stats = judge_rule(rule, "likely", frame, (1,))  # as --claimbook-seeds 0 judges it
    assert stats["estimate"]["high"] is None  # one seed bounds one side only
    claim = {**one, "rule": rule_to_dict(rule), "statistics": {**MQA["statistics"], **stats}}
    fig = evidence_plot(claim)
    assert "(no interval)" in fig.axes[0].get_title()
    plt.close(fig)


def test_every_badge_a_page_can_show_has_its_entry_on_the_reading_page(tmp_path):
    """A badge links to its word on "How to read a verdict": the coverage pages' "not run"
    (a partial run) too, or a strict build of a partial run fails on a missing anchor."""
    from claimbook.coverage.catalog import NOT_RUN
    from claimbook.judge.verdicts import VERDICTS
    from claimbook.render.trends import slug

    reading = (render(tmp_path, [MQA]) / "reading.md").read_text()
    for verdict in (*VERDICTS, NOT_RUN):
        assert f"{{ #{slug(verdict)} }}" in reading, verdict


def test_one_seed_is_not_called_a_threshold_tie():
    """With one seed there is no spread to size a sample from: the page says so rather than
    blaming an estimate at its threshold (a new user's -- --seeds 0 run)."""
    from claimbook.render.evidence_view import _needed

    one = {"looks_planned": [1], "seeds_used": 1, "needed": None, "adaptive": False}
    assert "one seed has no spread" in _needed(one, one, timing=False)
    five = {**one, "seeds_used": 5, "looks_planned": [3, 5]}
    assert "sits at its threshold" not in _needed(five, five, timing=False)


def test_a_speculative_refutation_is_listed_apart_from_those_that_fail_the_run(tmp_path):
    """Home: a refuted [speculative] claim never gates; it is listed under words saying so,
    apart from the refutations that fail the run (a reader must not take it for an error of
    the source)."""
    guess = {**copy.deepcopy(QUIZ), "id": "ch04.a-guess", "level": "speculative"}
    wrong = {**copy.deepcopy(QUIZ), "id": "ch04.a-fact"}
    for claim in (guess, wrong):
        claim["verdict"] = "refuted"
    home = (render(tmp_path, [guess, wrong]) / "index.md").read_text()
    refuted = home.split("## Refuted by the runs: 2")[1].split("\n## ")[0]
    failing, reported = refuted.split("[Speculative](reading.md#speculative)")
    assert "each fails the run" in failing and "(claims/ch04.a-fact.md)" in failing
    assert "never\ngating" in reported and "(claims/ch04.a-guess.md)" in reported
    assert "ch04.a-guess" not in failing


def test_claims_tried_on_a_stand_in_are_listed_apart_with_their_reason(tmp_path):
    """Home: a claim run on a stand-in that cannot show its sentence is listed under its own
    heading, with why, whatever its verdict; never under what the runs refute, nor (when
    undecided) under what is unsettled, and never counted as holding."""
    toy = {**copy.deepcopy(QUIZ), "id": "ch04.a-toy", "level": "speculative"}
    toy.update(verdict="not observed", stand_in="a toy model for a statement about BERT")
    open_ = {**copy.deepcopy(MQA), "verdict": "inconclusive", "stand_in": "a small stand-in"}
    seen = {**copy.deepcopy(QUIZ), "id": "ch04.a-seen", "verdict": "observed", "stand_in": "s"}
    wrong = {**copy.deepcopy(QUIZ), "id": "ch04.a-fact", "verdict": "refuted"}
    home = (render(tmp_path, [toy, open_, seen, wrong]) / "index.md").read_text()
    section = home.split("## Tried on a stand-in: 3")[1].split("\n## ")[0]
    for claim in (toy, open_, seen):
        assert f"(claims/{claim['id']}.md)" in section
    assert "A stand-in because: a toy model for a statement about BERT" in section
    assert "cb-not-observed" in section and "cb-observed" in section
    refuted = home.split("## Refuted by the runs: 1")[1].split("\n## ")[0]
    assert "ch04.a-fact" in refuted and "ch04.a-toy" not in refuted
    assert "## Unsettled: 0" in home
    holds = home.split("## What holds")[1].split("\n## ")[0]
    assert "cb-observed" not in holds


def test_a_stand_ins_page_says_what_was_seen_on_it_never_supported_or_refuted(tmp_path):
    """A stand-in's page: its verdict line, the look that decided it and the looks table say
    observed (its rule's "supported" on the stand-in), never supported or refuted."""
    seen = {**copy.deepcopy(MQA), "verdict": "observed", "stand_in": "a small stand-in"}
    page = (render(tmp_path, [seen]) / "claims" / f"{MQA['id']}.md").read_text()
    evidence = page.split("**Verdict:**")[1].split("The values the rule reads")[0]
    assert "observed at 95%" in evidence and "| decided | observed at the look at 5" in evidence
    assert "| 5 | observed |" in evidence
    assert "supported" not in evidence and "refuted" not in evidence
    assert seen["statistics"]["decision"] == "supported"  # the record itself is untouched
