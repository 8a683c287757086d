"""Fresh seeds for a rule declared after data: a block of its own, and proof it was unseen.

A rule declared after its author saw data (``fresh=..., seen=...``) is judged on fresh seeds
alone. ``fresh=True`` gives it the block of ``BLOCK`` seeds its claim id hashes to (from
``FIRST`` on), so adding or removing a claim never moves another claim's block; an explicit
first seed (``fresh=1000``) is kept as written. Two after-data rules whose blocks overlap on a
training both read are refused at collection, naming both, unless the record shows they first
read those seeds in the same run (neither saw the other's values before it was declared).

The record of a rule's first read (``FreshRecord`` as a dict) says what the training cache, the
run history and the baseline held of its block's trainings when it first read them; a rule
whose block was already there, with no such record, is refused (:mod:`claimbook.runs.fresh`).
"""

from __future__ import annotations

import dataclasses
import hashlib

BLOCK = 20  # seeds per block: the largest cap of a rule (looks 3, 5, 8, 12 and 20)
FIRST = 2000  # derived blocks start past 1000-1019, the block the first after-data rules share
SLOTS = 49_000  # blocks 2000-2019 ... up to seed 981,999
PLACES = ("cache", "history", "baseline")
WORDS = {"cache": "training cache", "history": "run history", "baseline": "baseline"}


class FreshSeedError(ValueError):
    """An after-data rule whose fresh seeds are not provably fresh (collision, seen before)."""


def block_of(claim_id: str) -> int:
    """The first seed of the block the claim id hashes to (stable: sha256 of the id)."""
    slot = int(hashlib.sha256(claim_id.encode()).hexdigest()[:12], 16) % SLOTS
    return FIRST + BLOCK * slot


def resolve(rule, claim_id: str):
    """The rule with ``fresh=True`` replaced by its claim's block; any other rule as it is."""
    if rule is not None and rule.fresh is True:
        return dataclasses.replace(rule, fresh=block_of(claim_id))
    return rule


def seeds_of(rule: dict | None) -> range:
    """Every seed an after-data rule may read (its block up to its cap); empty for others."""
    if not rule or not rule.get("fresh"):
        return range(0)
    cap = 20 if rule.get("look20") else 12
    return range(rule["fresh"], rule["fresh"] + cap)


def span(seeds) -> str:
    seeds = sorted(seeds)
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"


def shared(a: dict, b: dict) -> list[str]:
    """The (training, seed range) two after-data specs (plain dicts) both read, as words."""
    seeds = set(seeds_of(a["rule"])) & set(seeds_of(b["rule"]))
    trains = sorted(set(a["trains"]) & set(b["trains"]))
    return [f"{t} {span(seeds)}" for t in trains] if seeds else []


def collisions(specs: list[dict], records: dict[str, dict]) -> list[str]:
    """One error line per pair of after-data rules reading the same fresh trainings, unless
    both records show one first read (the same run). ``specs``: spec dicts in collection order."""
    after = [s for s in specs if seeds_of(s["rule"])]
    errors = []
    for i, a in enumerate(after):
        for b in after[i + 1 :]:
            both = shared(a, b)
            first = [(records.get(s["id"]) or {}).get("first_read") for s in (a, b)]
            if both and not (first[0] and first[0] == first[1]):
                errors.append(
                    f"claims {a['id']} and {b['id']} both read the fresh trainings "
                    f"{'; '.join(both)}: one would be judged on values the other's page prints; "
                    "give one its own block (fresh=True)"
                )
    return errors


def read_with(claim_id: str, specs: list[dict], records: dict[str, dict]) -> list[str]:
    """The other rules whose records show the same first read of trainings this one reads."""
    mine = next((s for s in specs if s["id"] == claim_id), None)
    when = (records.get(claim_id) or {}).get("first_read")
    return [
        s["id"] for s in specs
        if mine and s["id"] != claim_id and when
        and (records.get(s["id"]) or {}).get("first_read") == when and shared(mine, s)
    ]  # fmt: skip


def seen_error(claim_id: str, seeds: range, found: list[str]) -> str:
    """The refusal of a rule whose fresh trainings existed before it first read them."""
    return (
        f"claim {claim_id}: its fresh {span(seeds)} are not fresh: before this rule first read "
        f"them, {'; '.join(found)}. Give it another block (fresh=True derives one from the id), "
        "or remove those trainings if this rule's own earlier run made them"
    )


def sentence(claim_id: str, record: dict, others: list[str] = ()) -> str:
    """What the record shows, in words: the block, when it was first read, what was there."""
    seeds = span(range(record["block"][0], record["block"][1] + 1))
    checked = [WORDS[p] for p in PLACES if p in record.get("checked", PLACES)]
    unchecked = [WORDS[p] for p in PLACES if WORDS[p] not in checked]
    when = record.get("first_read") or "?"
    if record.get("found"):
        said = f"when this rule first read them ({when}): {'; '.join(record['found'])}"
    else:
        said = (
            f"no training of them was in the {_join(checked)} when this rule first read them "
            f"({when})"
        )
    if unchecked:
        said += f"; what the {_join(unchecked, 'and')} held then was not recorded"
    if others:
        said += f"; first read in the same run by {_join(others, 'and')} too (the same trainings)"
    return f"{seeds}: {said}"


def _join(words: list[str], conj: str = "or") -> str:
    words = list(words)
    return ", ".join(words[:-1]) + f" {conj} {words[-1]}" if len(words) > 1 else "".join(words)
