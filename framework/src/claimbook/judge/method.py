"""The method, as run: for each design the product uses, its planned looks, per-look level,
and its simulated false-decision rate and power (:mod:`claimbook.judge.operating`: the
judge's own tests and levels, vectorised over paths and checked path by path against
``judge_rule``), for the site's Method page.

Each design is simulated on ``PATHS`` paths of normal seeds (or 0/1 successes read off
them), once under the null its alpha is about and once under a stated alternative; each
rate is given at the cap and as it stands at every planned look ("by_look"), so the page
can show it at the look a run's budget reached, with its Monte-Carlo standard error. The
table is a pure function of the judge's code: it is committed with claimbook (``TABLE``),
stamped with a digest of that code, written by ``python -m claimbook method`` and checked by
the unit tests, which compute it again and compare; rendering only reads it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from claimbook.declare.design import Beats, Matches, MostSeeds, Rule, Universal, rule_to_dict
from claimbook.judge import stats
from claimbook.judge.operating import characteristics
from claimbook.judge.sequential import ALPHA, COVERAGE, family
from claimbook.lazy import lazy
from claimbook.storage.atomic import write_json

scipy_stats = lazy("scipy.stats")

PATHS = 100_000  # per hypothesis and row: the standard error at alpha 0.01 is 0.03 points
SEED = 20261204
TABLE = Path(__file__).parents[1] / "templates" / "method.json"
VALUE = {"x": lambda p: p}
PAIRED = {"a": lambda p: p, "b": lambda p: 0 * p}


@dataclass(frozen=True)
class Design:
    name: str  # what the page calls it
    rule: Rule
    level: str
    columns: dict
    null: float  # the per-seed mean (sd 1) at which a decision would be false
    null_words: str
    alternative: float  # a per-seed mean at which the design should decide
    alternative_words: str
    false: str  # the decision that is false under the null
    true: str  # the decision power counts


def designs() -> list[Design]:
    t, eq = Beats("a", "b", lower=False), Matches("x", value=0.0, margin=1.27)
    eq20 = Matches("x", value=0.0, margin=1.27, look20=True)
    share = MostSeeds("x", above=0, share=0.5, look20=True)
    out = []
    for level in ("likely", "established"):
        cover = COVERAGE[level]
        out += [
            Design("typical value, paired comparison (t)", t, level, PAIRED, 0.0,
                   "true mean difference 0", 1.0, "true difference 1 sd", "supported",
                   "supported"),
            Design("in every seed (tolerance bound)", Universal("x", above=0), level, VALUE,
                   float(scipy_stats.norm.ppf(cover)), f"exactly {cover:.0%} of seeds pass",
                   3.0 if level == "likely" else 4.0,
                   f"mean {3 if level == 'likely' else 4} sd above the threshold",
                   "supported", "supported"),
            Design("in most seeds (success rate)", share, level, VALUE, 0.0,
                   "half the seeds succeed", float(scipy_stats.norm.ppf(0.9)),
                   "90% of seeds succeed",
                   "supported", "supported"),
            Design("matches within a margin (two one-sided tests)", eq, level, VALUE, 1.27,
                   "true difference at the margin (1.27 sd)", 0.0, "true difference 0",
                   "equivalent", "equivalent"),
            Design("matches within a margin, looks to 20", eq20, level, VALUE, 1.27,
                   "true difference at the margin (1.27 sd)", 0.0, "true difference 0",
                   "equivalent", "equivalent"),
        ]  # fmt: skip
    return out


def test_of(rule: dict) -> str:
    """Which test a rule (as plain JSON, ``rule_to_dict``) is judged by: "t", "tolerance",
    "success" or "tost"; how the Method page matches a run's claims to its rows."""
    kind = rule["rule"]
    if kind == "Matches":
        return "tost"
    if kind == "Universal":
        return "tolerance"
    return "success" if kind == "MostSeeds" or rule.get("bimodal") else "t"


def _se(rate: float) -> float:
    """The Monte-Carlo standard error of a simulated share."""
    return math.sqrt(rate * (1 - rate) / PATHS)


def simulate(design: Design, index: int) -> dict:
    """One design's row: its looks, per-look level and simulated rates, at the cap and by
    each look, each with its Monte-Carlo standard error."""
    fam, param = family(design.rule, design.level)
    looks = design.rule.looks
    a = stats.per_look_level(fam, ALPHA[design.level], looks, param)
    rng = np.random.default_rng([SEED, index])
    null, alt = (
        characteristics(design.rule, design.level,
                        rng.standard_normal((PATHS, looks[-1])) + mean, design.columns)
        for mean in (design.null, design.alternative)
    )  # fmt: skip
    by_look = [
        {"look": n["look"], "false_rate": n[design.false], "false_se": _se(n[design.false]),
         "power": t[design.true], "power_se": _se(t[design.true]),
         "mean_seeds_null": n["mean_seeds"], "mean_seeds_alternative": t["mean_seeds"]}
        for n, t in zip(null["by_look"], alt["by_look"], strict=True)
    ]  # fmt: skip
    alpha = ALPHA[design.level]
    return {
        "design": design.name, "level": design.level, "alpha": alpha, "looks": list(looks),
        "test": test_of(rule_to_dict(design.rule)), "per_look_level": a, "null": design.null_words,
        "false_decision": design.false, "alternative": design.alternative_words,
        "true_decision": design.true, **{k: v for k, v in by_look[-1].items() if k != "look"},
        "by_look": by_look, "paths": PATHS, "se_at_alpha": math.sqrt(alpha * (1 - alpha) / PATHS),
    }  # fmt: skip


def digest() -> str:
    """A digest of the code the table is a function of."""
    here = Path(__file__).parent
    files = ["method.py", "operating.py", "power.py", "sequential.py", "stats.py",
             "../declare/design.py"]  # fmt: skip
    return hashlib.sha256(b"".join((here / f).read_bytes() for f in files)).hexdigest()[:16]


def compute() -> dict:
    """The whole table, with the digest of the code that computed it."""
    return {"digest": digest(), "paths": PATHS,
            "rows": [simulate(d, i) for i, d in enumerate(designs())]}  # fmt: skip


def load_table(path: Path = TABLE) -> tuple[list[dict], bool]:
    """The committed table's rows, and whether this code computed them (False: the judge
    changed since; ``python -m claimbook method`` computes it again)."""
    data = json.loads(Path(path).read_text())
    return data["rows"], data.get("digest") == digest()


def write_table(path: Path = TABLE) -> dict:
    data = compute()
    write_json(path, data)
    return data
