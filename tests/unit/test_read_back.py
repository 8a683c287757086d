"""Nothing read back from disk leads out of the project (issue 37, items 3, 7 and 9): a claim
id or a seed in a results file, a shard, the baseline, a receipt or the history passes the
rule it passed when it was declared (:mod:`claimbook.declare.ids`), or the file is refused,
named; a collection meets the same rule; a source id is declared once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claimbook import config as book_config
from claimbook.__main__ import main
from claimbook.config import ConfigError
from claimbook.declare.ids import MAX_ID, id_problem, seed_problem
from claimbook.storage.baseline import SCHEMA as BASELINE_SCHEMA
from claimbook.storage.baseline import BaselineError, load_baseline
from claimbook.storage.history import History

USAGE = pytest.ExitCode.USAGE_ERROR
LONG = "doc." + "a" * 302  # 306 characters: "figures/<id>.evidence.png" is past 255 bytes

TWO = """
@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(seed, measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2) == 4


@claim(id="doc.two", level="established", source=DOC, section="2")
def test_two(measure):
    '''One and one make two.'''
    assert measure("two", 1 + 1) == 2
"""


def _set_id(claim_id: str):
    def doctor(data: dict) -> None:
        data["claims"][0]["id"] = claim_id
        for entry in data["run"].get("catalog") or []:
            if entry["id"] == "doc.sum":
                entry["id"] = claim_id

    return doctor


def _negative_seed(data: dict) -> None:
    data["claims"][0]["instances"][0]["seed"] = -1


DOCTORED = [
    pytest.param(_set_id("../../../../outside/x"), "'../../../../outside/x'", id="dotdot"),
    pytest.param(_set_id(LONG), "(306 characters)", id="306-characters"),
    pytest.param(_set_id("doc.sum\n"), "'doc.sum\\n'", id="newline"),
    pytest.param(_negative_seed, "instances[0].seed: -1 is not a seed", id="negative-seed"),
]


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("doctor", "shown"), DOCTORED)
def test_a_doctored_results_file_is_refused_by_every_command(
    claims_project, pytester, capsys, doctor, shown
):
    results = pytester.path / "reports" / "results"
    shards = []
    for index in (1, 2):
        claims_project(TWO, f"--claimbook-shard={index}/2")
        shards.append(max(results.glob(f"*shard{index}of2.json")))
    assert main(["merge", *map(str, shards)]) == 0  # the genuine shards merge
    merged = max(results.glob("*-merged.json"))
    for path in (merged, shards[0]):
        data = json.loads(path.read_text())
        assert data["claims"][0]["id"] == "doc.sum"
        doctor(data)
        path.write_text(json.dumps(data))
    outside = pytester.path.parent  # the project's folder and those beside it
    before, kept = _files(outside), _files(results)
    capsys.readouterr()
    commands = {
        "render": ["render", "--results", str(merged)],
        "gate": ["gate", "--results", str(merged)],
        "merge": ["merge", *map(str, shards)],
        "diff": ["diff", str(merged), str(merged)],
    }
    for name, argv in commands.items():
        assert main(argv) == (1 if name == "gate" else 2), name
        err = capsys.readouterr().err
        named = shards[0] if name == "merge" else merged
        assert f"{named} is a malformed " in err, (name, err)
        assert shown in err, (name, err)
        assert "Traceback" not in err
    made = {p for p in _files(outside) - before if p.is_relative_to(pytester.path)}
    assert _files(outside) - before == made  # nothing written outside the project
    assert not (pytester.path.parents[1] / "outside").exists()
    assert _files(results) == kept  # no decision, no merged file
    assert not [p for p in made if p.suffix in (".md", ".png")]  # no page, no figure


def test_a_receipt_naming_a_file_not_named_as_results_is_refused(claims_project, pytester, capsys):
    receipt = pytester.path / "receipt.json"
    _, data = claims_project(TWO, f"--claimbook-receipt={receipt}")
    elsewhere = pytester.path.parent / "notes.json"  # the gate writes its decision beside it
    elsewhere.write_text(json.dumps(data))
    bound = json.loads(receipt.read_text())
    receipt.write_text(json.dumps({**bound, "results": str(elsewhere)}))
    capsys.readouterr()
    assert main(["gate", "--receipt", str(receipt)]) == 1
    err = capsys.readouterr().err
    assert f"unreadable receipt {receipt}: it names {str(elsewhere)!r}" in err
    assert not (pytester.path.parent / "gate-notes.json").exists()


@pytest.mark.parametrize(
    ("claims", "seeds", "message"),
    [
        ({"../x": {}}, [0], "claims: key '../x' is not a claim id"),
        ({LONG: {}}, [0], "(306 characters) is not a claim id"),
        ({}, [0, -1], "seeds[1]: -1 is not a seed"),
        ({}, [2**31], f"seeds[0]: {2**31} is not a seed"),
    ],
)
def test_a_doctored_baseline_is_refused_naming_file_and_entry(tmp_path, claims, seeds, message):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"schema": BASELINE_SCHEMA, "seeds": seeds, "claims": claims}))
    with pytest.raises(BaselineError) as caught:
        load_baseline(path)
    assert str(caught.value).startswith(f"{path} is a malformed baseline: ")
    assert message in str(caught.value)


def test_the_history_leaves_out_a_row_whose_claim_id_leads_out(tmp_path):
    lines = []
    history = History(tmp_path / "history.sqlite", lines.append)
    with history.db:
        for run_id, verdict in ((1, "holds"), (2, "refuted")):
            history.db.execute(
                "INSERT INTO runs (id, started, partial, seeds) VALUES (?, '2026', 0, '0')",
                (run_id,),
            )
            for claim_id in ("doc.sum", "../../outside/x"):
                history.db.execute(
                    "INSERT INTO verdicts VALUES (?, ?, 'established', ?, 1, 1)",
                    (run_id, claim_id, verdict),
                )
            checksum = history._checksum(run_id)  # rows as a run writes them: sealed
            history.db.execute("UPDATE runs SET checksum = ? WHERE id = ?", (checksum, run_id))
    changes = history.recent_changes()
    history.close()
    assert [c["claim"] for c in changes] == ["doc.sum"]
    why = id_problem("../../outside/x")
    assert lines == [f"history {tmp_path / 'history.sqlite'}: 1 claim(s) left out: {why}"]


# --- collection: the same rule ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim_id", "shown"), [(LONG, "(306 characters)"), ("doc.sum\n", "'doc.sum\\n'")]
)
def test_a_collected_id_too_long_or_ending_in_a_newline_fails_naming_the_test(
    claims_project, claim_id, shown
):
    body = f"""
@claim(id={claim_id!r}, level="established", source=DOC, section="1")
def test_odd(measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2) == 4
"""
    result, data = claims_project(body)
    assert result.ret == USAGE and data is None
    text = result.stdout.str() + result.stderr.str()
    assert "test_claims.py::test_odd: claim marker: id " in text
    assert f"{shown} is not a claim id of the form 'source.kebab-case-name'" in text
    assert "INTERNALERROR" not in text


def test_the_rule_of_ids_and_seeds():
    assert not id_problem("doc.sum") and not id_problem("ch04." + "a" * (MAX_ID - 5))
    for bad in ("doc.sum\n", "doc." + "a" * (MAX_ID - 3), "doc/../x", "doc..x", "doc.a\x00", 3):
        assert id_problem(bad), bad
    assert not seed_problem(0) and not seed_problem(2**31 - 1)
    for bad in (-1, 2**31, True, 1.0, "1", None):
        assert seed_problem(bad), bad
    # the longest name render makes of an id stays well under 255 bytes
    assert len(f"{'a' * MAX_ID}.evidence.{'0' * 64}.png") < 255 - 50


# --- settings --------------------------------------------------------------------------------


def test_a_source_id_declared_twice_is_refused_naming_file_and_id(tmp_path):
    source = '[[tool.claimbook.sources]]\nid = "{}"\ntitle = "{}"\n'
    file = tmp_path / "pyproject.toml"
    file.write_text(
        "[tool.claimbook]\n"
        + source.format("intro", "One")
        + source.format("ch1", "Two")
        + source.format("intro", "Three")
    )
    book_config.load.cache_clear()
    with pytest.raises(ConfigError) as caught:
        book_config.load(file)
    assert str(caught.value) == (
        f"{file}: [[tool.claimbook.sources]] number 3 has the id 'intro' of number 1: "
        "each source id is declared once"
    )
    book_config.load.cache_clear()
