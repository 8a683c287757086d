"""What a claim declares, validated: its id, evidence level, source and printed values.

A claim test carries ``@claim(...)`` (:mod:`claimbook.declare.marker`); the plugin turns
the marker into a :class:`ClaimSpec` at collection (:func:`validate`), so a malformed
declaration fails before any experiment runs, naming the test.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from claimbook.declare.design import Rule, rule_to_dict
from claimbook.declare.fresh import resolve
from claimbook.declare.ids import id_problem
from claimbook.declare.source import Source
from claimbook.declare.training import Training

LEVELS = ("established", "likely", "speculative")
ERROR_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FIELDS = {
    "id", "level", "source", "section", "printed", "scope", "erratum", "figure", "remark",
    "drift", "trains", "env", "rule", "at", "cited", "error", "known_refuted", "place",
    "stand_in",
}  # fmt: skip
WHOLE_TEXT = "the whole text"  # place= of a check of the text against itself as a whole


class ClaimDeclarationError(ValueError):
    """A claim marker is malformed; the message names the test and the fault."""


FIGURE_KINDS = ("lines", "band", "heatmap", "scatter")


@dataclass(frozen=True)
class Figure:
    """How the renderer plots a claim's measures that carry an ``x``.

    Series are named by the part of a measure's name after ":" ("val loss:
    LSTM" is series "LSTM").

    Attributes:
        title: the figure's title, also its alt text's start.
        xlabel, ylabel: axis labels with units.
        kind: "lines" (one line per series and seed), "band" (per series the
            mean over seeds with a +-1 sd band), "heatmap" (a list-of-lists
            value, lowest seed; ``x`` labels its columns) or "scatter" (scalar
            values at a scalar ``x``, one point per series and seed).
        hlines: reference lines, label -> y value (e.g. {"chance": 1/16}).
        invert_x: draw the x axis from high to low.
        log: logarithmic x and y axes, for growth with size (a power law is a
            straight line whose slope is its exponent).
    """

    title: str
    xlabel: str
    ylabel: str
    kind: str = "lines"
    hlines: dict = field(default_factory=dict)
    invert_x: bool = False
    log: bool = False


@dataclass(frozen=True)
class ClaimSpec:
    """A validated claim declaration (see :func:`claim`)."""

    id: str
    level: str
    source: Source
    section: str
    printed: dict = field(default_factory=dict)
    scope: str = ""
    erratum: str = ""
    figure: Figure | None = None
    remark: str = ""
    drift: dict = field(default_factory=dict)
    trains: list = field(default_factory=list)  # labels of the declared training runs
    env: list = field(default_factory=list)  # environment variables the claim reads
    rule: dict | None = None  # the statistical design (declare.design), as plain JSON
    at: list = field(default_factory=list)  # anchors: exact snippets of the source it tests
    cited: str = ""  # a literature result not reproducible here: reference, what it would take
    error: str = ""  # the source error an erratum shows; errata sharing it are one error
    known_refuted: str = ""  # refuted at the stated setup, seen and kept by the author: why
    place: str = ""  # where the source page lists it: a snippet, WHOLE_TEXT, or "" (first at=)
    stand_in: str = ""  # run on a model that cannot show the sentence: why (never "refuted")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> ClaimSpec:
        figure = data.get("figure")
        return cls(
            **{k: v for k, v in data.items() if k not in ("source", "figure")},
            source=Source(**data["source"]),
            figure=Figure(**figure) if figure else None,
        )


def validate(
    nodeid: str,
    args: tuple,
    kwargs: dict,
    sources: dict[str, Source] | None = None,
    trainings: list[Training] | tuple[Training, ...] = (),
) -> ClaimSpec:
    """Turn a claim marker's arguments (see :func:`declared`) into a :class:`ClaimSpec`,
    checking each field as it is read (who the claim is; its values; its runs and rule;
    where it sits in the text; what kind of claim it is).

    ``sources``: the book's declared sources by id, which the id's prefix names;
    ``trainings``: the runs the test's training fixtures read (besides ``trains=``).

    Raises:
        ClaimDeclarationError: on positional arguments, unknown or missing
            keys, an unknown level, a malformed id, or an id whose prefix is
            not its source's id. The message starts with ``nodeid``.
    """

    def fail(why: str) -> ClaimDeclarationError:
        return ClaimDeclarationError(f"{nodeid}: claim marker: {why}")

    if args:
        raise fail(f"takes keyword arguments only, got positional {args!r}")
    unknown = sorted(set(kwargs) - _FIELDS)
    if unknown:
        raise fail(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_FIELDS))}")
    for key in ("section", "scope", "erratum", "remark"):  # prose: a page prints it as given
        if not isinstance(kwargs.get(key) or "", str):
            raise fail(f"{key!r} must be a string, got {kwargs[key]!r}")
    claim_id, level, source = _identity(kwargs, sources or {}, fail)
    printed, figure, drift = _values(kwargs, fail)
    trains, env, rule = _runs(kwargs, trainings, claim_id, fail)
    at, place = _places(kwargs, fail)
    kinds = _kind(kwargs, rule, trains, fail)
    return ClaimSpec(
        id=claim_id,
        level=level,
        source=source,
        section=str(kwargs.get("section") or ""),
        printed=printed,
        scope=str(kwargs.get("scope") or ""),
        erratum=str(kwargs.get("erratum") or ""),
        figure=figure,
        remark=str(kwargs.get("remark") or ""),
        drift=dict(drift),
        trains=[t.label() for t in trains],
        env=list(env),
        rule=rule_to_dict(rule),
        at=list(at),
        place=place,
        **kinds,
    )


def _identity(kwargs: dict, sources: dict[str, Source], fail) -> tuple[str, str, Source]:
    """The claim's id, level and source."""
    for key in ("id", "level"):
        if not kwargs.get(key):
            raise fail(f"missing {key!r}")
    level, claim_id = kwargs["level"], kwargs["id"]
    if level not in LEVELS:
        raise fail(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    if not isinstance(claim_id, str) or id_problem(claim_id):
        raise fail(f"id {id_problem(claim_id) if isinstance(claim_id, str) else repr(claim_id)}")
    source = kwargs.get("source") or sources.get(claim_id.split(".")[0])
    if source is None:
        known = ", ".join(sorted(sources)) or "none"
        raise fail(f"id {claim_id!r}: no source {claim_id.split('.')[0]!r} is declared in "
                   f"[[tool.claimbook.sources]] (declared: {known})")  # fmt: skip
    if not isinstance(source, Source):
        raise fail(f"'source' must be a claimbook.Source, got {type(source).__name__}")
    if claim_id.split(".")[0] != source.id:
        raise fail(f"id {claim_id!r} does not start with its source's id {source.id!r}")
    return claim_id, level, source


def _values(kwargs: dict, fail) -> tuple[dict, Figure | None, dict]:
    """The printed values, the figure and the drift tolerances."""
    printed = kwargs.get("printed") or {}
    if not isinstance(printed, dict):
        raise fail(f"'printed' must be a dict of label -> value, got {type(printed).__name__}")
    figure = kwargs.get("figure")
    if figure is not None and not isinstance(figure, Figure):
        raise fail(f"'figure' must be a claimbook.Figure, got {type(figure).__name__}")
    if figure is not None and figure.kind not in FIGURE_KINDS:
        raise fail(f"figure kind {figure.kind!r} is not one of {', '.join(FIGURE_KINDS)}")
    drift = kwargs.get("drift") or {}
    if not isinstance(drift, dict):
        raise fail(f"'drift' must be a dict of measure name -> tolerance, got {drift!r}")
    for name, tolerance in drift.items():
        relative = isinstance(tolerance, str) and re.fullmatch(r"\d+(\.\d+)?%", tolerance)
        number = isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool)
        if not (relative or (number and tolerance >= 0)):
            raise fail(f"drift of {name!r} must be a number >= 0 or a share like '5%'")
    return printed, figure, drift


def _runs(kwargs: dict, trainings, claim_id: str, fail) -> tuple[list, tuple, Rule | None]:
    """The training runs (``trains=`` and the fixtures'), the environment and the rule."""
    trains = kwargs.get("trains") or ()
    if not isinstance(trains, (list, tuple)) or not all(isinstance(t, Training) for t in trains):
        raise fail(f"'trains' must be a list of claimbook.Training, got {trains!r}")
    trains = list(trains) + [t for t in trainings if t not in trains]
    env = kwargs.get("env") or ()
    if isinstance(env, str) or not all(isinstance(name, str) and name for name in env):
        raise fail(f"'env' must be a list of environment variable names, got {env!r}")
    rule = kwargs.get("rule")
    if rule is not None and not isinstance(rule, Rule):
        raise fail(f"'rule' must be a claimbook rule (e.g. Beats(...)), got {rule!r}")
    rule = resolve(rule, claim_id)  # fresh=True: the block the claim id hashes to
    if rule is not None and rule.check():
        raise fail(f"rule: {rule.check()}")
    fresh = rule.fresh if rule is not None else 0
    if (fresh or (rule is not None and rule.seen)) and (
        not isinstance(fresh, int) or fresh < 20 or not str(rule.seen).strip()
    ):
        raise fail(
            "rule: a rule declared after data is judged on fresh seeds: give both "
            f"fresh= (True: a block of its own, or its first seed, >= 20) and seen= (what was "
            f"seen before it was declared); got fresh={rule.fresh!r}, seen={rule.seen!r}"
        )
    return trains, env, rule


def _places(kwargs: dict, fail) -> tuple[tuple, str]:
    """The anchors in the text (``at=``) and the place among them (``place=``)."""
    at = kwargs.get("at") or ()
    at = (at,) if isinstance(at, str) else at
    if not isinstance(at, (list, tuple)) or not all(isinstance(a, str) and a.strip() for a in at):
        raise fail(f"'at' must be a source snippet or a list of them, got {at!r}")
    place = kwargs.get("place", "")
    if not isinstance(place, str) or (place and not place.strip()):
        raise fail(f"'place' must be one source snippet (where the claim's result is argued) "
                   f"or claimbook.WHOLE_TEXT, got {place!r}")  # fmt: skip
    if place and not at:
        raise fail("'place' says where the page lists a claim among its at= anchors: give at= too")
    return at, place


def _kind(kwargs: dict, rule, trains: list, fail) -> dict[str, str]:
    """What kind of claim it is, beside a plain one: cited, an erratum's error, known
    refuted, or a stand-in; each excludes the others as the docs say."""
    cited = kwargs.get("cited") or ""
    if not isinstance(cited, str):
        raise fail(f"'cited' must be a string (reference; what it would take), got {cited!r}")
    if cited and (rule is not None or trains):
        raise fail("a cited claim is not run here: it takes no rule and no trains")
    error = kwargs.get("error") or ""
    if error and (not isinstance(error, str) or not ERROR_PATTERN.fullmatch(error)):
        raise fail(f"'error' must be a kebab-case key such as 'gqa-70b-cache', got {error!r}")
    if error and not kwargs.get("erratum"):
        raise fail("'error' names the source error an erratum shows: give 'erratum' too")
    known = kwargs.get("known_refuted") or ""
    if not isinstance(known, str):
        raise fail(f"'known_refuted' must be a sentence (what the runs showed, why the text "
                   f"keeps it), got {known!r}")  # fmt: skip
    if known and (kwargs.get("erratum") or cited):
        raise fail("'known_refuted' is for a claim the runs refute at the text's setup: an "
                   "erratum or a cited claim takes none")  # fmt: skip
    stand = kwargs.get("stand_in") or ""
    if not isinstance(stand, str) or (stand and not stand.strip()):
        raise fail(f"'stand_in' must be a sentence (why this model cannot show what the "
                   f"sentence says), got {stand!r}")  # fmt: skip
    if stand and (kwargs.get("erratum") or cited or known):
        raise fail("'stand_in' is for a claim whose run cannot show the sentence: an erratum, "
                   "a cited or a known_refuted claim takes none")  # fmt: skip
    return {"cited": cited, "error": error, "known_refuted": known, "stand_in": stand}
