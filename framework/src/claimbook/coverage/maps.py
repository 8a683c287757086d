"""Coverage maps: ``coverage/<source id>.toml``, read and validated.

A map lists every checkable statement of one source text (see docs/claims.md, "Coverage
map")::

    source = "ch04"

    [[statement]]
    id = "conv-recall-by-distance"       # kebab-case, unique in the file
    at = "It scores 0.98 when the key"   # an exact snippet of one line, unique in the text
    # occurrence = 2                     # ... or its n-th occurrence, for a repeated line
    kind = "number"                      # "tagged" | "number" | "model" | "formula"
    values = ["0.98", "0.58"]            # number: the printed quantities, as printed
    says = "conv recall by distance"     # our words
    claims = ["ch04.recall-conv"]        # covered by these claims ...
    checked = "asserted"                 # with claims: "asserted" | "recorded" | "construction"
    # ... or, without claims: status = "cited" | "hardware" | "not-a-claim", reason = "..."

A statement with neither claims nor a status is *uncovered*: allowed, and reported. A
malformed map raises :class:`CoverageMapError` naming the file and every faulty statement.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from claimbook.declare.spec import LEVELS

# tagged: an evidence-tagged statement; number: printed quantities; model: a fact about a
# named model; formula: an untagged formula or definition ("LayerNorm over d has 2d ...")
KINDS = ("tagged", "number", "model", "formula")
STATUSES = ("cited", "hardware", "not-a-claim")
# how the named claims check a statement: a claim fails if it is false ("asserted"), only
# measures and shows it ("recorded"), or checks it only by construction ("construction")
CHECKED = ("asserted", "recorded", "construction")
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_KEYS = {
    "id", "at", "occurrence", "kind", "values", "says", "claims", "checked", "status", "reason",
    "level",
}  # fmt: skip
_TOP = {"source", "statement"}


class CoverageMapError(ValueError):
    """A coverage map is malformed; the message names the file and each faulty statement."""


@dataclass(frozen=True)
class Statement:
    """One checkable statement of a source, as its map declares it."""

    id: str
    at: str
    kind: str
    says: str = ""
    occurrence: int = 0  # n: the anchor's n-th occurrence in the text; 0: its only one
    values: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    checked: str = ""
    status: str = ""
    reason: str = ""
    level: str = ""

    @property
    def weight(self) -> int:
        """How many items it counts for: a number statement's values one by one, else 1."""
        return len(self.values) if self.kind == "number" else 1


@dataclass(frozen=True)
class CoverageMap:
    source: str
    path: Path
    statements: list[Statement] = field(default_factory=list)


def _is_text(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _statement_faults(raw: dict) -> list[str]:
    """What is wrong with one ``[[statement]]`` table (empty when nothing)."""
    faults = []
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        faults.append(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KEYS))}")
    if not _is_text(raw.get("at")):
        faults.append("needs 'at', an exact snippet of one line of the text")
    occurrence = raw.get("occurrence")
    if occurrence is not None and (
        not isinstance(occurrence, int) or isinstance(occurrence, bool) or occurrence < 1
    ):
        faults.append(f"occurrence {occurrence!r} is not a whole number from 1 (the n-th "
                      "occurrence of 'at' in the text)")  # fmt: skip
    kind = raw.get("kind")
    if kind not in KINDS:
        faults.append(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    values = raw.get("values")
    if kind == "number":
        if not isinstance(values, list) or not values or not all(_is_text(v) for v in values):
            faults.append("a number statement needs 'values', the printed quantities as strings")
    elif values is not None:
        faults.append(f"'values' belongs to number statements, not to kind {kind!r}")
    level = raw.get("level")
    if kind == "tagged" and level not in LEVELS:
        faults.append(f"a tagged statement needs 'level', one of {', '.join(LEVELS)}")
    elif kind != "tagged" and level is not None:
        faults.append("'level' belongs to tagged statements")
    claims, status = raw.get("claims"), raw.get("status")
    if claims is not None and (
        not isinstance(claims, list) or not claims or not all(_is_text(c) for c in claims)
    ):
        faults.append("'claims' must be a non-empty list of claim ids")
    if claims is not None and status is not None:
        faults.append("has both 'claims' and 'status': covered by claims, or statused, not both")
    if status is not None and status not in STATUSES:
        faults.append(f"status {status!r} is not one of {', '.join(STATUSES)}")
    if status is not None and not _is_text(raw.get("reason")):
        faults.append(f"status {status!r} needs a 'reason'")
    checked = raw.get("checked")
    if kind == "number" and claims is not None and checked not in CHECKED:
        faults.append(
            f"a number statement with claims needs 'checked', one of {', '.join(CHECKED)}"
        )
    elif checked is not None and claims is None:
        faults.append("'checked' belongs to statements covered by claims")
    elif checked is not None and checked not in CHECKED:
        faults.append(f"checked {checked!r} is not one of {', '.join(CHECKED)}")
    if checked == "construction" and not _is_text(raw.get("reason")):
        faults.append("checked 'construction' needs a 'reason': why the check cannot fail")
    if raw.get("says") is not None and not isinstance(raw["says"], str):
        faults.append("'says' must be a string")
    return faults


def parse_map(data: dict, path: Path) -> CoverageMap:
    """Validate a parsed map; raise CoverageMapError listing every fault (file, statement)."""
    faults = []
    unknown = sorted(set(data) - _TOP)
    if unknown:
        faults.append(f"unknown top-level key(s) {', '.join(unknown)}")
    source = data.get("source")
    if not _is_text(source):
        faults.append("needs 'source', the source's id (e.g. source = \"ch04\")")
    elif source != path.stem:
        faults.append(f"source {source!r} does not match the file name {path.name!r}")
    raws = data.get("statement", [])
    if not isinstance(raws, list):
        faults.append("'statement' must be an array of tables ([[statement]])")
        raws = []
    statements, seen = [], set()
    for number, raw in enumerate(raws, 1):
        sid = raw.get("id") if isinstance(raw, dict) else None
        name = f"statement {sid!r}" if _is_text(sid) else f"statement #{number} (no id)"
        if not isinstance(raw, dict):
            faults.append(f"{name}: not a table")
            continue
        problems = _statement_faults(raw)
        if not (isinstance(sid, str) and _ID.match(sid)):
            problems.insert(0, f"id {sid!r} is not kebab-case (e.g. 'conv-recall-by-distance')")
        elif sid in seen:
            problems.insert(0, "duplicate id (ids are unique in a map)")
        seen.add(sid)
        faults += [f"{name}: {p}" for p in problems]
        if problems:
            continue
        statements.append(
            Statement(
                id=sid,
                at=raw["at"],
                kind=raw["kind"],
                says=raw.get("says", ""),
                occurrence=raw.get("occurrence", 0),
                values=tuple(raw.get("values") or ()),
                claims=tuple(raw.get("claims") or ()),
                checked=raw.get("checked", ""),
                status=raw.get("status", ""),
                reason=raw.get("reason", ""),
                level=raw.get("level", ""),
            )
        )
    if faults:
        raise CoverageMapError(f"{path}: malformed coverage map:\n  " + "\n  ".join(faults))
    return CoverageMap(source=source, path=path, statements=statements)


def read_map(path: Path) -> CoverageMap:
    """Read and validate one map. Raises CoverageMapError (unreadable, not TOML, malformed)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CoverageMapError(f"{path}: cannot read coverage map: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CoverageMapError(f"{path}: not valid TOML: {exc}") from exc
    return parse_map(data, path)


def read_maps(folder: Path) -> list[CoverageMap]:
    """Every ``*.toml`` map in ``folder``, by file name; [] when the folder does not exist.

    Raises CoverageMapError naming each malformed file (all of them, not only the first).
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    maps, errors = [], []
    for path in sorted(folder.glob("*.toml")):
        try:
            maps.append(read_map(path))
        except CoverageMapError as exc:
            errors.append(str(exc))
    if errors:
        raise CoverageMapError("\n".join(errors))
    return maps
