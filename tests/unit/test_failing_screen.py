"""The last screen of a failing run: each failing claim's reason in one line, one replay
command per claim, right above the closing line (the terminal's and the gate's)."""

from __future__ import annotations

from claimbook.__main__ import main

BOOK = """
from claimbook import Typical

@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(seed):
    '''Two and two make five.'''
    assert 2 + 2 == 5, "two and two make four"

@claim(id="doc.gain", level="established", source=DOC, section="1", rule=Typical("g", above=0.5))
def test_gain(seed, measure):
    '''The gain is above 0.5 on average.'''
    measure("g", [0.1, 0.2, 0.15, 0.12, 0.11, 0.13, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1][seed])

@claim(id="doc.fine", level="established", source=DOC, section="1")
def test_fine(seed):
    '''Two and two make four.'''
    assert 2 + 2 == 4
"""
HEAD = "failing claims (why, in one line; below it, one command that replays the claim afresh):"
SUM = (
    "doc.sum [established] refuted: 3 of 3 instances failed (seed 0, seed 1, seed 2): "
    "AssertionError: two and two make four"
)
SUM_REPLAY = 'python -m pytest "test_claims.py::test_sum" --claimbook-seeds 0,1,2'
GAIN = (
    "doc.gain [established] refuted: refuted at 99% (typical value, 5 seeds, decided at 5): "
    "0.136 [0.038, 0.234] (99.4% interval, widened for the repeated looks); the rule: the mean "
    "over seeds of g is above 0.5"
)
GAIN_REPLAY = 'python -m pytest "test_claims.py::test_gain" --claimbook-seeds 0,1,2,3,4'
FAILED = "claimbook: FAILED: gating verdicts: doc.sum (refuted), doc.gain (refuted)"


def test_the_terminal_ends_with_each_failing_claims_reason_and_one_replay(claims_project):
    result, _ = claims_project(BOOK)
    lines = result.stdout.lines
    last = lines.index(FAILED)
    assert lines[last - 5 : last] == [
        HEAD, SUM, f"    {SUM_REPLAY}", GAIN, f"    {GAIN_REPLAY}",
    ]  # fmt: skip
    start = next(i for i, line in enumerate(lines) if "claimbook verdicts" in line)
    claimbook_part = "\n".join(lines[start:last])  # after pytest's tracebacks
    assert claimbook_part.count("python -m pytest") == 2  # one per claim, not one per seed
    assert "test_sum[seed" not in claimbook_part


def test_the_gate_ends_the_same_way(claims_project, pytester, capsys):
    receipt = pytester.path / "receipt.json"
    claims_project(BOOK, f"--claimbook-receipt={receipt}")
    capsys.readouterr()
    assert main(["gate", "--receipt", str(receipt)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-6:] == [
        f"claimbook: {HEAD}", f"    {SUM}", f"        {SUM_REPLAY}", f"    {GAIN}",
        f"        {GAIN_REPLAY}", FAILED,
    ]  # fmt: skip
