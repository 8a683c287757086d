"""The claims a coverage map may name, from a run's results file.

The plugin records the whole collected catalog (every claim marker it validated, before
``-k``, ``-m`` or a shard narrowed the run) in ``run["catalog"]``, so a partial run still
resolves every claim id: a claim that is in the catalog but did not run has the verdict
``not run``. A results file without a catalog (older files) gives only the claims it
holds; a run narrowed by path or node id collected only part of the suite. In both cases
the catalog is *incomplete*, and a claim id it lacks is reported as unknown (a warning),
not as dangling (an error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NOT_RUN = "not run"
# a skipped claim counts as "hardware" when its skip reason names missing hardware
_HARDWARE = re.compile(r"\b(gpu|cuda|tpu|accelerator|hardware|vram)\b", re.IGNORECASE)
NARROWED = ("node id ", "path ", "the claims folder ")  # restrictions that collect less


def narrowed(run: dict) -> list[str]:
    """The restrictions of a results file's run that collected only part of the claims
    folder (a node id, a path, another folder): its catalog lacks what it did not collect."""
    facts = run.get("facts") or {}
    return [r for r in facts.get("restrictions") or [] if r.startswith(NARROWED)]


@dataclass(frozen=True)
class ClaimInfo:
    """One claim as the coverage needs it: its spec's anchors and cited mark, its verdict."""

    id: str
    source: str
    level: str
    at: tuple[str, ...] = ()
    cited: str = ""
    stand_in: str = ""  # run on a model that cannot show the sentence: why
    place: str = ""  # the snippet that places it on the source page (or WHOLE_TEXT), if any
    verdict: str = NOT_RUN
    note: str = ""
    source_path: str = ""
    has_page: bool = False  # the results hold it, so the site has its page

    @property
    def role(self) -> str:
        """How it covers a statement: "cited" (a literature result, not run), "hardware"
        (skipped for lack of hardware), "skipped" (skipped for another reason), "stand-in"
        (run on a model that cannot show the sentence: never tested) or "tested" (a claim
        that ran and can fail, whatever its verdict, or that this run left out)."""
        if self.cited:
            return "cited"
        if self.verdict == "skipped":
            return "hardware" if _HARDWARE.search(self.note) else "skipped"
        if self.stand_in:
            return "stand-in"
        return "tested"


@dataclass
class Catalog:
    claims: dict[str, ClaimInfo] = field(default_factory=dict)
    complete: bool = True
    why_incomplete: str = ""

    def of_source(self, source: str) -> list[ClaimInfo]:
        return [c for c in self.claims.values() if c.source == source]

    def source_path(self, source: str) -> str:
        """The text's file name (Source.path) that the source's claims declare."""
        return next((c.source_path for c in self.of_source(source) if c.source_path), "")


def _info(spec: dict, verdict: str = NOT_RUN, note: str = "", page: bool = False) -> ClaimInfo:
    source = spec.get("source") or {}
    return ClaimInfo(
        id=spec["id"],
        source=source.get("id", spec["id"].split(".")[0]),
        level=spec.get("level", ""),
        at=tuple(spec.get("at") or ()),
        cited=spec.get("cited") or "",
        stand_in=spec.get("stand_in") or "",
        place=spec.get("place") or "",
        verdict=verdict,
        note=note or "",
        source_path=source.get("path", ""),
        has_page=page,
    )


def catalog_entry(spec: dict) -> dict:
    """What the plugin records of one claim spec in ``run["catalog"]`` (kept small)."""
    keep = ("id", "level", "source", "at", "cited", "place", "stand_in")
    return {k: spec.get(k) for k in keep}


def catalog_of(results: dict) -> Catalog:
    """The catalog of a results file: its recorded catalog and its claims' verdicts."""
    run = results.get("run") or {}
    recorded = run.get("catalog")
    claims = {c["id"]: c for c in results.get("claims") or []}
    found = {}
    for spec in recorded or []:
        found[spec["id"]] = _info(spec)
    for claim_id, c in claims.items():
        found[claim_id] = _info(c, c["verdict"], c.get("note", ""), page=True)
    why = ""
    if recorded is None:
        why = "the results file records no catalog (an older run): only its claims are known"
        if not run.get("partial"):
            why = ""  # a complete run holds every claim of the suite
    facts = run.get("facts") or {}
    if narrowed(run):
        why = f"the run collected part of the suite ({'; '.join(narrowed(run))})"
    if facts.get("collection_errors"):
        why = f"collection errors in {', '.join(facts['collection_errors'][:3])}"
    return Catalog(found, complete=not why, why_incomplete=why)
