"""The ``--claimbook-seeds`` option's grammar: comma-separated seeds and inclusive ranges."""

from __future__ import annotations

import argparse

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


def parse_seeds(text: str) -> list[int]:
    """Parse ``"0,1,2"``, ``"0-4"`` or ``"0-2,7"`` into a sorted list of distinct seeds.

    Raises:
        argparse.ArgumentTypeError: on an empty list, a non-integer, a
            negative seed, a range whose end is below its start, or a seed
            given twice (``1,10,1``: a typo would silently drop a seed).
    """
    seeds: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise argparse.ArgumentTypeError(f"empty item in seed list {text!r}")
        low, sep, high = part.partition("-")
        try:
            start = int(low)
            stop = int(high) if sep else start
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not a seed or a range like 0-4 (in {text!r})"
            ) from None
        if stop < start:
            raise argparse.ArgumentTypeError(f"range {part!r} ends before it starts")
        twice = seeds & set(range(start, stop + 1))
        if twice:
            raise argparse.ArgumentTypeError(
                f"seed {min(twice)} given twice in {text!r}; each seed may appear once"
            )
        seeds.update(range(start, stop + 1))
    return sorted(seeds)
