"""Operating characteristics of a rule as the product runs it: the planned looks, the
per-look level, futility and the cap, applied by :func:`claimbook.judge.sequential.judge_rule`
itself to simulated seeds, one path at a time.

A path is a seed-by-seed column of values (normal, or 0/1 successes); each path starts at
the first look and takes the next look whenever the record asks for one, as the session
does when the budget allows. The outcome: how often each decision is reached, and the mean
number of seeds read.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from claimbook.judge.sequential import judge_rule
from claimbook.lazy import lazy

pd = lazy("pandas")


def as_run(rule, level: str, path: np.ndarray, columns: dict) -> tuple[str | None, int]:
    """The decision ``judge_rule`` reaches on one path, and the seeds it read.
    ``columns`` maps each measure the rule reads to a function of the path."""
    n = rule.looks[0]
    while True:
        frame = pd.DataFrame({name: f(path[:n]) for name, f in columns.items()})
        record = judge_rule(rule, level, frame, rule.looks)
        if record["decision"] or not record["next_look"]:
            return record["decision"], n
        n = record["next_look"]


def characteristics(rule, level: str, paths: np.ndarray, columns: dict) -> dict:
    """Shares of each outcome over ``paths`` (rows), and the mean seeds read."""
    outcomes = [as_run(rule, level, path, columns) for path in paths]
    counts = Counter(d or "inconclusive" for d, _ in outcomes)
    return {
        **{k: v / len(paths) for k, v in counts.items()},
        "mean_seeds": float(np.mean([n for _, n in outcomes])),
    }
