"""The claim marker as an author writes it: ``@claim(id, level, at=..., ...)``.

``claim()`` makes a ``pytest.mark.claim`` holding only what the claim states; a module's
:func:`defaults` (``pytestmark = defaults(scope=...)``) fill the rest; :func:`declared`
reads both back for the plugin, which validates them once per test
(:func:`claimbook.declare.spec.validate`) and keeps the result on the item (:func:`spec_of`).
"""

from __future__ import annotations

import pytest

from claimbook.declare.design import Rule
from claimbook.declare.spec import ClaimSpec, Figure, Source
from claimbook.declare.training import Training


def claim(
    id: str | None = None,
    level: str | None = None,
    *,
    at: str | list[str] | tuple[str, ...] = (),
    place: str = "",
    rule: Rule | None = None,
    printed: dict | None = None,
    scope: str = "",
    erratum: str = "",
    error: str = "",
    remark: str = "",
    figure: Figure | None = None,
    cited: str = "",
    known_refuted: str = "",
    stand_in: str = "",
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
        place: where the source page lists the claim, when the first ``at`` anchor is not
            where its result is argued (a summary card at the top of the text): one exact
            snippet of one line, resolved like an anchor; its heading places the claim.
            ``claimbook.WHOLE_TEXT``: a check of the text against itself as a whole (printed
            twice and agreeing, attributions against a record), listed on the source's page
            of such checks and linked from each section its anchors fall in.
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
        known_refuted: for a tendency the runs refute at the setup the text states, which the
            author has seen and keeps (the text's claim is about other scales, or is under
            review): what the runs showed and why the sentence stays. The verdict stays
            ``refuted`` and is listed with what the runs refute, with this reason; it does not
            fail the gate while it stays refuted, and fails it once a complete run no longer
            refutes it, until the declaration is removed (see docs/claims.md).
        stand_in: the test runs on a stand-in that cannot show what the sentence says (a
            small model for a statement about large pretrained ones): why. Its verdict is
            ``observed`` where the rule holds and ``not observed`` where it fails, never
            ``refuted``; neither gates, nor counts as holding or as tested in the coverage.
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
    given.update(known_refuted=known_refuted, place=place, stand_in=stand_in)
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
