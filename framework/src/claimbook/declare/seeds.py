"""The ``--claimbook-seeds`` option's grammar: comma-separated seeds and inclusive ranges."""

from __future__ import annotations

import argparse
import re

MAX_SEEDS = 10_000  # seeds in one list: each is at least one test instance, often a training run
SEED_LIMIT = 2**31  # every seed lies below it: torch, numpy and the pool take it as a 32-bit int
_ITEM = re.compile(r"(\d+)(?:-(\d+))?")


def _bounds(part: str, text: str) -> tuple[int, int]:
    """The first and last seed of one item (``7`` or ``0-4``), checked against the limits."""
    match = _ITEM.fullmatch(part)
    if not match:
        if part.startswith("-") and part[1:].isdigit():
            raise argparse.ArgumentTypeError(
                f"seed {part} is negative: seeds are whole numbers from 0 (in {text!r})"
            )
        raise argparse.ArgumentTypeError(
            f"{part!r} is not a seed or a range like 0-4 (in {text!r})"
        )
    start = int(match[1])
    stop = int(match[2]) if match[2] else start
    if max(start, stop) >= SEED_LIMIT:
        raise argparse.ArgumentTypeError(
            f"seed {max(start, stop)} is too large: seeds lie below 2**31 = {SEED_LIMIT}"
        )
    if stop < start:
        raise argparse.ArgumentTypeError(f"range {part!r} ends before it starts")
    return start, stop


def parse_seeds(text: str) -> list[int]:
    """Parse ``"0,1,2"``, ``"0-4"`` or ``"0-2,7"`` into a sorted list of distinct seeds.

    Every item is checked before any seed is listed: at most :data:`MAX_SEEDS` seeds, each
    a whole number from 0 and below :data:`SEED_LIMIT`.

    Raises:
        argparse.ArgumentTypeError: on an empty list, a non-integer, a
            negative seed, a seed past the limit, more seeds than the limit, a
            range whose end is below its start, or a seed given twice
            (``1,10,1``: a typo would silently drop a seed).
    """
    items = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise argparse.ArgumentTypeError(f"empty item in seed list {text!r}")
        items.append(_bounds(part, text))
    count = sum(stop - start + 1 for start, stop in items)
    if count > MAX_SEEDS:
        raise argparse.ArgumentTypeError(
            f"{text!r} lists {count} seeds; at most {MAX_SEEDS:,} are allowed in one run"
        )
    seeds: set[int] = set()
    for start, stop in items:
        twice = seeds & set(range(start, stop + 1))
        if twice:
            raise argparse.ArgumentTypeError(
                f"seed {min(twice)} given twice in {text!r}; each seed may appear once"
            )
        seeds.update(range(start, stop + 1))
    return sorted(seeds)
