"""A stochastic claim's statistical design, declared in its marker before anything runs.

The sentence's quantifier picks the kind; the test's source shows it as ``rule=...``:

| sentence says                     | rule                                  | statistic        |
| --------------------------------- | ------------------------------------- | ---------------- |
| "about", "typically", "far below" | ``Typical(x, above=t)``               | mean, t bound    |
| "in every seed"                   | ``Universal(x, above=t)``             | tolerance bound  |
| "in most seeds", bimodal metrics  | ``MostSeeds(x, above=t, share=0.5)``  | Clopper-Pearson  |
| "A beats B (by at least m)"       | ``Beats(a, b, lower=True, margin=m)`` | paired mean diff |
| "A < B < C"                       | ``Ranking((a, b, c), lower=True)``    | adjacent pairs   |
| "X and Y"                         | ``AllOf((rule_x, rule_y))``           | every part       |
| "matches", "as good as", "about v"| ``Matches(a, b, margin=d)``           | TOST             |
| "slower", "about 15% faster"      | ``Slower(ratios, factor=f)``          | median ratio     |

``x`` is a measure's name, or ``Diff(a, b)`` (a - b, paired by seed). A claim without a rule
is deterministic: every instance must pass. Margins are fixed here, never fitted to the runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from claimbook.declare.fields import mistyped

LOOKS = (3, 5, 8, 12)  # planned looks; a rule may add a look at 20 (``look20=True``)


@dataclass(frozen=True)
class Diff:
    """The per-seed difference of two measures, ``a - b``, paired by seed."""

    a: str
    b: str

    def words(self) -> str:
        return f"{self.a} − {self.b}"


def _name(x: str | Diff) -> str:
    return x.words() if isinstance(x, Diff) else x


def _names(x: str | Diff) -> list[str]:
    return [x.a, x.b] if isinstance(x, Diff) else [x]


@dataclass(frozen=True)
class Rule:
    """The common part: a cap on the seeds and the planned looks up to it. A rule declared
    after data is judged on seeds ``fresh``, ``fresh + 1``, ... alone; ``seen``: what was seen."""

    look20: bool = field(default=False, kw_only=True)
    fresh: int = field(default=0, kw_only=True)
    seen: str = field(default="", kw_only=True)

    kind = "rule"
    stochastic = True

    @property
    def looks(self) -> tuple[int, ...]:
        return (*LOOKS, 20) if self.look20 else LOOKS

    @property
    def cap(self) -> int:
        return self.looks[-1]

    def measures(self) -> list[str]:  # the measure names the rule reads from every seed
        raise NotImplementedError

    def words(self) -> str:  # the rule in plain words, for the pages
        raise NotImplementedError

    def check(self) -> str:  # an empty string, or what is malformed: a mistyped field first
        return mistyped(self, Diff) or self.malformed()

    def malformed(self) -> str:  # what is wrong with well-typed fields, or ""
        return ""


@dataclass(frozen=True)
class _Threshold(Rule):
    x: str | Diff = ""
    above: float | None = None
    below: float | None = None

    def measures(self) -> list[str]:
        return _names(self.x)

    @property
    def threshold(self) -> float:
        return self.above if self.above is not None else self.below

    @property
    def sign(self) -> int:
        """+1 when the claim says "above", -1 for "below"."""
        return 1 if self.above is not None else -1

    def side(self) -> str:
        return f"above {self.above:g}" if self.above is not None else f"below {self.below:g}"

    def malformed(self) -> str:
        one = (self.above is None) != (self.below is None)
        return "" if one else f"{type(self).__name__} needs exactly one of above= or below="


@dataclass(frozen=True)
class Typical(_Threshold):
    """The typical value (mean over seeds) lies above/below a threshold: one-sided t bound."""

    kind = "typical value"

    def words(self) -> str:
        return f"the mean over seeds of {_name(self.x)} is {self.side()} (one-sided t bound)"


@dataclass(frozen=True)
class Universal(_Threshold):
    """In every seed the value lies above/below a threshold: a failing seed refutes it; it is
    supported when every seed passes and a tolerance bound covers 99% (90% likely) of seeds."""

    kind = "universal"

    def words(self) -> str:
        return (
            f"{_name(self.x)} is {self.side()} in every seed (a failing seed refutes; a normal "
            "tolerance bound must cover 99% of seeds if established, 90% if likely)"
        )


@dataclass(frozen=True)
class MostSeeds(_Threshold):
    """Each seed succeeds or fails against the threshold; the success rate exceeds ``share``
    (Clopper-Pearson). For bimodal metrics and "in most seeds"."""

    share: float = 0.5
    kind = "success rate"

    def words(self) -> str:
        return (
            f"{_name(self.x)} is {self.side()} in more than {self.share:.0%} of seeds "
            "(Clopper-Pearson bound on the success rate)"
        )

    def malformed(self) -> str:
        ok = 0 < self.share < 1
        return super().malformed() if ok else "MostSeeds share must lie strictly between 0 and 1"


@dataclass(frozen=True)
class Beats(Rule):
    """``a`` beats ``b``, paired by seed: the mean per-seed difference, oriented so that
    positive means the claim holds, exceeds ``margin`` (t interval). ``bimodal`` metrics use
    win/loss per seed instead (a sign test on the seeds' winners)."""

    a: str = ""
    b: str = ""
    lower: bool = True  # lower is better (a loss); False for accuracies
    margin: float = 0.0
    bimodal: bool = False
    kind = "paired comparison"

    @property
    def diff(self) -> Diff:
        return Diff(self.b, self.a) if self.lower else Diff(self.a, self.b)

    def measures(self) -> list[str]:
        return [self.a, self.b]

    def words(self) -> str:
        better = "lower" if self.lower else "higher"
        by = f" by more than {self.margin:g}" if self.margin else ""
        how = (
            "wins in more than half of the seeds (sign test on the per-seed winner)"
            if self.bimodal
            else f"mean per-seed difference {self.diff.words()} above {self.margin:g} (paired t)"
        )
        return f"{self.a} is {better} than {self.b}{by}: {how}"


@dataclass(frozen=True)
class Ranking(Rule):
    """``order[0]`` beats ``order[1]`` beats ... : every adjacent pair a :class:`Beats` at the
    claim's full alpha (an intersection-union test needs no correction)."""

    order: tuple[str, ...] = ()
    lower: bool = True
    kind = "ranking"

    def pairs(self) -> list[Beats]:
        pairs = zip(self.order, self.order[1:], strict=False)
        return [Beats(a=a, b=b, lower=self.lower, look20=self.look20) for a, b in pairs]

    def measures(self) -> list[str]:
        return list(self.order)

    def words(self) -> str:
        sign = " < " if self.lower else " > "
        return f"{sign.join(self.order)}: each adjacent pair a paired comparison, all must hold"

    def malformed(self) -> str:
        return "" if len(self.order) >= 2 else "Ranking needs at least two measures"


@dataclass(frozen=True)
class AllOf(Rule):
    """A conjunction ("solved by two layers and not by one"): every part at the claim's full
    alpha, supported only when all are, refuted when any is (intersection-union)."""

    parts: tuple[Rule, ...] = ()
    kind = "conjunction"

    def measures(self) -> list[str]:
        return list(dict.fromkeys(m for part in self.parts for m in part.measures()))

    def words(self) -> str:
        return "all of: " + "; ".join(part.words() for part in self.parts)

    def malformed(self) -> str:
        if len(self.parts) < 2:
            return "AllOf needs at least two rules"
        bad = [
            p for p in self.parts
            if not isinstance(p, Rule) or not p.stochastic or isinstance(p, AllOf | Ranking)
        ]  # fmt: skip
        if bad:
            return f"AllOf parts must be rules over seeds, got {bad!r}"
        return next((p.check() for p in self.parts if p.check()), "")

    @property
    def looks(self) -> tuple[int, ...]:
        return max((p.looks for p in self.parts), key=len)


@dataclass(frozen=True)
class Matches(Rule):
    """``a`` matches ``b`` (or the number ``value``) within ``margin``: two one-sided tests on
    the paired difference; the margin is fixed here (e.g. the source's printed seed sd)."""

    a: str = ""
    b: str | None = None
    value: float | None = None
    margin: float = 0.0
    kind = "equivalence"

    def measures(self) -> list[str]:
        return [self.a] + ([self.b] if self.b else [])

    def words(self) -> str:
        other = self.b if self.b else f"{self.value:g}"
        return f"{self.a} matches {other} within ±{self.margin:g} (two one-sided tests)"

    def malformed(self) -> str:
        if (self.b is None) == (self.value is None):
            return "Matches needs exactly one of b= (a measure) or value= (a number)"
        return "" if self.margin > 0 else "Matches needs a margin > 0, fixed before running"


@dataclass(frozen=True)
class Slower(Rule):
    """Timing: ``ratios``, a list measure of per-pair time ratios (interleaved repetitions in
    one process), has a median whose distribution-free lower bound exceeds ``factor`` (with
    ``at_most``, a band). No seeds: the noise is the machine's, so timing verdicts are per
    machine class; ``noise`` names a control, identical work timed twice (judge/timing.py)."""

    ratios: str = ""
    factor: float = 1.0
    at_most: float | None = None
    noise: str = ""
    kind = "timing ratio"
    stochastic = False  # one instance, many repetitions: no seeds to add

    @property
    def looks(self) -> tuple[int, ...]:
        return (1,)

    def measures(self) -> list[str]:
        return [self.ratios, self.noise] if self.noise else [self.ratios]

    def words(self) -> str:
        if self.at_most is not None:
            band = f"between {self.factor:g} and {self.at_most:g}"
        else:
            band = f"above {self.factor:g}"
        return f"the median of {self.ratios} is {band} (order-statistic interval)"

    def malformed(self) -> str:
        wide = self.at_most is None or self.at_most > self.factor
        return "" if wide else "Slower at_most must exceed factor"


RULES = (Typical, Universal, MostSeeds, Beats, Ranking, AllOf, Matches, Slower)


def rule_to_dict(rule: Rule | None) -> dict | None:
    """The rule as plain JSON (its class name under "rule")."""
    if rule is None:
        return None
    data = {"rule": type(rule).__name__}
    for key, value in vars(rule).items():
        if value or key not in ("fresh", "seen"):  # a rule on seeds from 0: as it always read
            data[key] = {"a": value.a, "b": value.b} if isinstance(value, Diff) else value
    if isinstance(rule, Ranking):
        data["order"] = list(rule.order)
    if isinstance(rule, AllOf):
        data["parts"] = [rule_to_dict(p) for p in rule.parts]
    return data


def rule_from_dict(data: dict | None) -> Rule | None:
    if not data:
        return None
    fields = {k: v for k, v in data.items() if k != "rule"}
    if isinstance(fields.get("x"), dict):
        fields["x"] = Diff(**fields["x"])
    if "order" in fields:
        fields["order"] = tuple(fields["order"])
    if "parts" in fields:
        fields["parts"] = tuple(rule_from_dict(p) for p in fields["parts"])
    return {cls.__name__: cls for cls in RULES}[data["rule"]](**fields)
