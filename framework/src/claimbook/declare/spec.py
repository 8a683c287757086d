"""What a claim declares: its source, evidence level, id and printed values.

A claim test carries ``@claim(...)`` (a ``pytest.mark.claim``); the plugin
validates the marker at collection, so a malformed declaration fails before
any experiment runs, naming the test.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

import pytest

from claimbook.declare.design import Rule, rule_to_dict
from claimbook.declare.ids import id_problem
from claimbook.declare.training import Training

LEVELS = ("established", "likely", "speculative")
ERROR_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FIELDS = {
    "id", "level", "source", "section", "printed", "scope", "erratum", "figure", "remark",
    "drift", "trains", "env", "rule", "at", "cited", "error",
}  # fmt: skip


class ClaimDeclarationError(ValueError):
    """A claim marker is malformed; the message names the test and the fault."""


@dataclass(frozen=True)
class Source:
    """A source document whose claims are tested.

    Attributes:
        id: the catalog prefix of its claims, e.g. "ch04".
        title: the document's title as a reader knows it.
        document: where the text lives (file name or URL).
        path: the text's file name, relative to the sources folder
            (``CLAIMBOOK_SOURCES_DIR``); read at run time for the coverage map and
            page, never copied into the project.
    """

    id: str
    title: str
    document: str = ""
    path: str = ""


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


def claim(
    id: str | None = None,
    level: str | None = None,
    *,
    at: str | list[str] | tuple[str, ...] = (),
    rule: Rule | None = None,
    printed: dict | None = None,
    scope: str = "",
    erratum: str = "",
    error: str = "",
    remark: str = "",
    figure: Figure | None = None,
    cited: str = "",
    drift: dict | None = None,
    env: list[str] | tuple[str, ...] = (),
    section: str = "",
    source: Source | None = None,
    trains: list[Training] | tuple[Training, ...] = (),
) -> pytest.MarkDecorator:
    """Mark a test as the claim ``id`` of ``source`` at evidence ``level``.

    ``@claim("intro.softmax-shift", "established", at="unchanged when the same constant")``:
    the id and the level first, then what the claim needs. Fields a whole module shares
    (scope, env, level) can be set once with ``pytestmark = claimbook.defaults(...)``.

    Args:
        id: catalog id, ``<source id>.<kebab-case-name>``, unique in the suite; its prefix
            names the source (declared in ``[[tool.claimbook.sources]]``).
        level: "established" (every instance must pass), "likely" (a strict
            majority of seeds, for every parameter combination) or
            "speculative" (reported, never gating).
        at: where in the source the claim comes from: one or more anchors, each an exact
            snippet of one line of the source text (a few words, unique in the text), so
            the location survives small edits; the coverage map resolves them to lines,
            and the source page places the claim under the heading of the first.
        rule: how a stochastic claim is decided over seeds, from the sentence's quantifier
            (:mod:`claimbook.declare.design`: Typical, Universal, MostSeeds, Beats,
            Ranking, Matches, Slower). Without one the claim is deterministic: every
            instance must pass. A claim with a rule takes no parameter besides ``seed``;
            its test measures and asserts only sanity checks, and the rule decides.
        printed: what the source prints that no ``measure(..., printed=...)`` states (a
            sentence, a qualitative result), label -> value. A printed number is given where
            it is measured, once.
        scope: the scale it was tested at (parameters, steps, data, hardware).
        erratum: why the printed claim is known to be false; the claim is then
            expected to be refuted, and the run says so if it ever holds.
        error: with ``erratum``, a short kebab-case key naming the one error in the source
            this claim shows (default: the claim's id). Claims that show the same error
            share it: the errata page lists one entry per error with every claim that
            shows it, and the counts are of errors. The correction is recorded by the test
            (``measure.correct("...")``, computed from what it measured).
        remark: shown under the claim: a reading, a caveat, why a digit does not reproduce.
        figure: how to plot the claim's list-valued measures.
        cited: for a literature result that cannot run here: the reference and what
            reproducing it would take. The test is not run; its verdict is ``cited``,
            never counted as holding and never gating.
        drift: measure name -> how far its mean over seeds may move from the
            baseline's before the run fails (rule ``value-drift``): an absolute
            number (0.02) or a share of the baseline mean ("5%").
        env: names of environment variables the test reads (besides those claimbook
            always keys on, see :mod:`claimbook.runs.keys`): a stored outcome is reused
            only while they keep their values.
        section: where the source page lists the claim when the text cannot be read
            (with the text, the heading above the first ``at`` anchor places it).
        source: deprecated (the id's prefix names the source).
        trains: deprecated: declare each run once as a fixture
            (``name = claimbook.training(fn, config)``) and take it as an argument.

    Validation happens at collection (:func:`validate`), so that the error can
    name the test.
    """
    given = dict(id=id, level=level, source=source, section=section, printed=printed or {})
    given.update(scope=scope, erratum=erratum, figure=figure, remark=remark, drift=drift or {})
    given.update(trains=tuple(trains), env=tuple(env), rule=rule, at=at, cited=cited, error=error)
    # only what the claim states: a module's defaults (:func:`defaults`) fill the rest
    return pytest.mark.claim(**{k: v for k, v in given.items() if v not in (None, "", (), {})})


DEFAULTABLE = ("level", "scope", "env", "section")


def defaults(**fields) -> pytest.MarkDecorator:
    """Fields every claim of a module (or class) shares: ``pytestmark = defaults(scope=...)``.

    A claim's own value wins. Allowed: level, scope, env, section."""
    unknown = sorted(set(fields) - set(DEFAULTABLE))
    if unknown:
        raise TypeError(f"claimbook.defaults() takes {', '.join(DEFAULTABLE)}; "
                        f"got {', '.join(unknown)}")  # fmt: skip
    return pytest.mark.claim_defaults(**fields)


def declared(node) -> tuple[tuple, dict]:
    """The claim marker's arguments of a test ``node``, over its module's and class's
    :func:`defaults` (nearest wins); ((), {}) when it carries no claim marker."""
    marker = node.get_closest_marker("claim")
    if marker is None:
        return (), {}
    merged: dict = {}
    for shared in reversed(list(node.iter_markers("claim_defaults"))):
        merged.update(shared.kwargs)
    return marker.args, {**merged, **marker.kwargs}


SPEC = pytest.StashKey[ClaimSpec]()  # on a claim test item: its validated declaration


def spec_of(item) -> ClaimSpec | None:
    """The validated declaration of a claim test item (None for any other test)."""
    return item.stash.get(SPEC, None)


class ClaimSpellingWarning(DeprecationWarning):
    """A claim uses a spelling kept for one release; the message names the new one."""


def old_spellings(kwargs: dict, sources: dict[str, Source]) -> list[str]:
    """What to write instead of each deprecated field a claim marker uses (``source=`` only
    where the book declares that source, so that the id's prefix can name it)."""
    out = []
    if kwargs.get("source") and getattr(kwargs["source"], "id", None) in sources:
        out.append("source= is deprecated: the id's prefix names the source")
    if kwargs.get("trains"):
        out.append(
            "trains= is deprecated: declare each run once as a fixture, "
            "NAME = claimbook.training(fn, config), and take NAME as an argument"
        )
    return out


def validate(
    nodeid: str,
    args: tuple,
    kwargs: dict,
    sources: dict[str, Source] | None = None,
    trainings: list[Training] | tuple[Training, ...] = (),
) -> ClaimSpec:
    """Turn a claim marker's arguments (see :func:`declared`) into a :class:`ClaimSpec`.

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
    for key in ("id", "level"):
        if not kwargs.get(key):
            raise fail(f"missing {key!r}")
    level, claim_id = kwargs["level"], kwargs["id"]
    if level not in LEVELS:
        raise fail(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    if not isinstance(claim_id, str) or id_problem(claim_id):
        raise fail(f"id {id_problem(claim_id) if isinstance(claim_id, str) else repr(claim_id)}")
    source = kwargs.get("source") or (sources or {}).get(claim_id.split(".")[0])
    if source is None:
        known = ", ".join(sorted(sources or {})) or "none"
        raise fail(f"id {claim_id!r}: no source {claim_id.split('.')[0]!r} is declared in "
                   f"[[tool.claimbook.sources]] (declared: {known})")  # fmt: skip
    if not isinstance(source, Source):
        raise fail(f"'source' must be a claimbook.Source, got {type(source).__name__}")
    if claim_id.split(".")[0] != source.id:
        raise fail(f"id {claim_id!r} does not start with its source's id {source.id!r}")
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
    if rule is not None and rule.check():
        raise fail(f"rule: {rule.check()}")
    fresh = rule.fresh if rule is not None else 0
    if (fresh or (rule is not None and rule.seen)) and (
        not isinstance(fresh, int) or fresh < 20 or not str(rule.seen).strip()
    ):
        raise fail(
            "rule: a rule declared after data is judged on fresh seeds: give both "
            f"fresh= (its first seed, past every planned look's, >= 20) and seen= (what was "
            f"seen before it was declared); got fresh={rule.fresh!r}, seen={rule.seen!r}"
        )
    at = kwargs.get("at") or ()
    at = (at,) if isinstance(at, str) else at
    if not isinstance(at, (list, tuple)) or not all(isinstance(a, str) and a.strip() for a in at):
        raise fail(f"'at' must be a source snippet or a list of them, got {at!r}")
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
        cited=cited,
        error=error,
    )
