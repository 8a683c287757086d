"""Both texts, general check: every code comment against what its code computes.

Each text's code blocks run on their glue (tests/claims/code_comment_runs.py) with every
statement's values recorded; every ``#`` comment is read at run time, tied to the statements
it annotates, and each checkable statement in it (a shape, a shape change, rows summing to
1, a causal pattern, a residual or pre-norm sum, a count, a token range or layout, a formula,
an example row: tests/claims/code_comment_readers.py) is judged on every recorded execution.
A comment the code contradicts is an error; each error is an erratum of its own claim, named
below, so the check passes only when it finds exactly those. A checkable comment that no run
reaches fails the check too. Training is cut to one update per run: nothing needs a trained
model. The chapter's notebook runs in about 6 s, the article's blocks in about 3 s.
"""

from __future__ import annotations

from claimbook import WHOLE_TEXT, claim, source_text

from tests.claims import code_comment_runs as runs
from tests.claims.sources import CH04, DD2

SCOPE = "every comment of the code as it runs, read at run time; each checkable statement "
SCOPE += "judged on up to 8 recorded executions of the statements it annotates"
# the comments each text gets wrong (kind: comment), each shown by the erratum claim named
DD2_KNOWN: dict[str, str] = {}
CH04_KNOWN: dict[str, str] = {}


def check(text: str, blocks, known: dict, measure) -> None:
    units, steps, outside = blocks(text)
    verdicts, descriptive = runs.judge(units, steps)
    comments = [c for b in units for c in b.comments]
    measure("comments read", len(comments))
    measure("comment lines outside the blocks read", outside)
    measure("comments with a checkable statement", len({id(v.comment) for v in verdicts}))
    measure("checkable statements", len(verdicts))
    checked = [v for v in verdicts if v.status != "not run"]
    measure("checkable statements checked", len(checked))
    for v in verdicts:
        measure(f"L{v.comment.line} {v.kind}: {v.comment.text[:60]}", f"{v.status} ({v.detail})")
    measure("descriptive comments", [f"L{c.line}: {c.text[:60]}" for c in descriptive])
    wrong = {v.key: v.detail for v in verdicts if v.status == "wrong"}
    for key in wrong.keys() & known.keys():
        measure(f"error shown by {known[key]}", key)
    assert outside == 0, "comment lines outside every block this check runs"
    assert len(checked) == len(verdicts), [v.key for v in verdicts if v.status == "not run"]
    assert wrong.keys() == known.keys(), f"comments the code contradicts: {wrong}"


@claim("ch04.code-comments-match-the-code", "established",
       at=("In\u00a0[3]:", "In\u00a0[6]:", "In\u00a0[7]:", "In\u00a0[9]:", "In\u00a0[11]:"),
       place=WHOLE_TEXT,
       scope=SCOPE + "; the chapter's cells run in order as a notebook, mlexp stood in for by "
       "this repository's modules, each training run cut to one update",
       remark="No comment is contradicted; two hold through one reading. 'softmax(QK^T / "
       "sqrt(d)) V' leaves out the causal mask that the same line sets (is_causal=True): with "
       "d the heads' width and that mask it is what the line computes. 'tokens between the "
       "query and the key of each pair' gives, per pair, the number of positions from the key "
       "to the query (20 down to 2), as the prose's '2 tokens for the last pair' does; "
       "strictly between them lie one fewer token. Seven comments are descriptive (they name "
       "a step), among them 'position enters only through the rotation', which the causal "
       "mask qualifies.")  # fmt: skip
def test_every_ch04_code_comment_matches_its_code(measure):
    """Every comment in the chapter's code cells that states something checkable (a shape, a
    count, a token range or layout, causality, a residual, a formula) agrees with what the
    statements it annotates compute when the cells run; the ones that do not are exactly
    the errors the named erratum claims show."""
    check(source_text(CH04), runs.ch04_blocks, CH04_KNOWN, measure)


@claim("dd2.code-comments-match-the-code", "established",
       at=("Q_h = X_norm · W_Q_h # Shape [3, 64]", "# Shape [3, 3], rows sum to 1",
           "# Reshape for multi-head: [batch, n_heads, seq, d_head]",
           "hidden = x @ W_fc1 # Expand: [d] → [4d]"),
       place=WHOLE_TEXT,
       scope=SCOPE + "; the Part 7 trace for one head (3 tokens, width 512, head 64), the GPT-2 "
       "shape trace at GPT-2 small's sizes, the Python layer and its usage example, the MLP "
       "box at width 64 and hidden 256, random weights; the Flash loop's comments are read "
       "(all descriptive), its block is run by dd2.code-flash-loop",
       remark="No comment is contradicted. The trace's per-head shapes are those of one head "
       "(its Concat of eight heads is run as eight copies of that head); its 'Typically: "
       "Linear → GELU → Linear' describes the MLP the trace leaves undefined, and is not "
       "checked. The Flash loop's comments name steps.")  # fmt: skip
def test_every_dd2_code_comment_matches_its_code(measure):
    """Every comment in the article's code and pseudocode that states something checkable (a
    shape, a shape change, rows summing to 1, a causal mask, a residual or pre-norm sum, an
    example row) agrees with what the statements it annotates compute; the ones that do not
    are exactly the errors the named erratum claims show."""
    check(source_text(DD2), runs.dd2_blocks, DD2_KNOWN, measure)
