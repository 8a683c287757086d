"""Fresh seeds checked at collection against what the cache, the history and the baseline hold.

Each after-data rule (see :mod:`claimbook.declare.fresh`) carries a record of its first read:
its block, when it was first read, the places checked and what they held of its trainings. A
record comes from the baseline (accepted with the claim) or from this machine's cache folder
(``<cache>/fresh/<id>.json``, written when a rule first reads its block here). A rule with no
record is checked now: if any training of its block is already in the training cache, or a
claim sharing its trainings has values at those seeds in the history or the baseline, it is
refused; else its record is written, with nothing found. Collisions between rules are refused
first (:func:`claimbook.declare.fresh.collisions`), judged on the records kept before this run.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from claimbook.declare.fresh import PLACES, FreshSeedError, collisions, seeds_of, seen_error
from claimbook.declare.fresh import span as seed_span

LABEL = re.compile(r'"label":\s*"((?:[^"\\]|\\.)*)"')


def _labels(cache_dir: Path, trains: list[str]) -> set[str]:
    """The run labels (``train_lm(...) seed 3``) of every entry the training cache holds
    under the trained functions' folders, whatever code version made them."""
    labels = set()
    for folder in {t.split("(")[0] for t in trains}:
        for path in sorted((cache_dir / folder).glob("*.json")):
            with path.open(encoding="utf-8", errors="replace") as f:
                head = LABEL.search(f.read(2000))
            if head:
                labels.add(json.loads(f'"{head.group(1)}"'))
    return labels


def _history(path: Path, ids: list[str], seeds: range) -> dict[str, set[int]]:
    """Claim id -> the seeds of ``seeds`` at which the history holds values of it."""
    if not path.exists() or not ids:
        return {}
    marks = ",".join("?" * len(ids))
    query = (
        f"SELECT DISTINCT claim_id, seed FROM measures WHERE claim_id IN ({marks}) "
        "AND seed BETWEEN ? AND ?"
    )
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = con.execute(query, [*ids, seeds[0], seeds[-1]]).fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return {}
    found: dict[str, set[int]] = {}
    for claim_id, seed in rows:
        found.setdefault(claim_id, set()).add(int(seed))
    return found


def found_before(
    spec: dict, specs: list[dict], cache_dir: Path, history: Path, baseline: dict | None
) -> list[str]:
    """What the cache, history and baseline hold of ``spec``'s fresh trainings, in words."""
    seeds = seeds_of(spec["rule"])
    trains = spec["trains"]
    found = []
    labels = _labels(cache_dir, trains)
    for train in trains:
        there = [s for s in seeds if f"{train} seed {s}" in labels]
        if there:
            found.append(f"the training cache held {train} {seed_span(there)}")
    readers = [s["id"] for s in specs if s["id"] == spec["id"] or set(s["trains"]) & set(trains)]
    for claim_id, there in sorted(_history(history, readers, seeds).items()):
        found.append(f"the history held values of {claim_id} at {seed_span(there)}")
    for claim_id in readers:
        entry = ((baseline or {}).get("claims") or {}).get(claim_id) or {}
        there = [i["seed"] for i in entry.get("instances", []) if i.get("seed") in seeds]
        if there:
            found.append(f"the baseline held {claim_id} at {seed_span(there)}")
    return found


def _local(cache_dir: Path, claim_id: str) -> Path:
    return cache_dir / "fresh" / f"{claim_id}.json"


def _matching(record: dict | None, seeds: range) -> dict | None:
    if record and list(record.get("block") or []) == [seeds[0], seeds[-1]]:
        return record
    return None


def settle(
    specs: list[dict],
    selected: set[str],
    cache_dir: Path,
    history: Path,
    baseline: dict | None,
    now: str,
) -> dict[str, dict]:
    """Claim id -> the record of its first read, for every selected after-data rule; raises
    :class:`FreshSeedError` naming every collision and every rule whose block was seen."""
    base = (baseline or {}).get("claims") or {}
    kept: dict[str, dict] = {}
    for spec in specs:
        seeds = seeds_of(spec["rule"])
        if not seeds:
            continue
        record = _matching(base.get(spec["id"], {}).get("fresh"), seeds)
        path = _local(cache_dir, spec["id"])
        if record is None and path.exists():
            record = _matching(json.loads(path.read_text(encoding="utf-8")), seeds)
        if record is not None:
            kept[spec["id"]] = record
    errors = collisions(specs, kept)
    records = {}
    for spec in specs:
        seeds = seeds_of(spec["rule"])
        if not seeds or spec["id"] not in selected:
            continue
        if spec["id"] in kept:
            records[spec["id"]] = kept[spec["id"]]
            continue
        found = found_before(spec, specs, cache_dir, history, baseline)
        if found:
            errors.append(seen_error(spec["id"], seeds, found))
            continue
        record = {"block": [seeds[0], seeds[-1]], "first_read": now, "checked": list(PLACES),
                  "found": []}  # fmt: skip
        records[spec["id"]] = record
    if errors:
        raise FreshSeedError("fresh seeds refused:\n  " + "\n  ".join(errors))
    for claim_id, record in records.items():
        if claim_id not in kept:
            path = _local(cache_dir, claim_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return records
