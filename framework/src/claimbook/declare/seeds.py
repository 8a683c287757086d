"""The ``--claimbook-seeds`` option's grammar: comma-separated seeds and inclusive ranges."""

from __future__ import annotations

import argparse
import re

from claimbook.config import for_pytest


def base_seeds(config) -> list[int]:
    """The seeds every seeded claim runs: ``--claimbook-seeds`` if given, else the book's
    ``seeds`` setting (the first look; rules may ask for more)."""
    return config.getoption("claimbook_seeds") or parse_seeds(for_pytest(config).seeds)


def adaptive(config) -> bool:
    """Seeds follow each rule's planned looks unless ``--claimbook-seeds`` fixes the sample."""
    return config.getoption("claimbook_seeds") is None


def seeds_for(config, rule) -> list[int]:
    """The seeds a test is parametrized with: a stochastic rule's whole seed cap when
    adaptive, from its first fresh seed if it has one (the seeds past the first look run
    only if the claim asks for them)."""
    if adaptive(config) and rule is not None and rule.stochastic:
        return list(range(rule.fresh, rule.fresh + rule.cap))
    return base_seeds(config)


def first_look(config, rule) -> list[int]:
    """The seeds that run before any planned look: the book's seeds, or, for a rule judged
    on fresh seeds, as many from its first fresh seed (0, 1, 2 -> 1000, 1001, 1002)."""
    seeds = base_seeds(config)
    if adaptive(config) and rule is not None and rule.stochastic and rule.fresh:
        return [rule.fresh + i for i in range(len(seeds))]
    return seeds


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
