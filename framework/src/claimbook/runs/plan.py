"""The plan: which training runs a claim instance reads, how the suite splits into shards,
and how runs are ordered and split by their expected seconds.

A claim declares its training runs (``@claim(trains=[...])``); an instance of the test
needs each of them at its ``seed`` (or at every seed of the session when it takes
``seeds``). Shards split the suite into whole claims, so that a shard takes a claim's
planned looks itself and every claim instance reading a run lands in the shard that
trains it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claimbook.declare.training import Training


def available_cores() -> int:
    """Cores this process may use (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def instance_runs(trains: Iterable[Training], params: dict, fixtures: Iterable[str], seeds) -> set:
    """The (Training, seed) runs one test instance reads.

    Raises:
        ValueError: trainings are declared but the test takes neither ``seed`` nor ``seeds``.
    """
    trains = list(trains)
    if not trains:
        return set()
    if "seed" in params:
        run_seeds = [params["seed"]]
    elif "seeds" in fixtures:
        run_seeds = list(seeds)
    else:
        raise ValueError("declares trains= but takes neither 'seed' nor 'seeds'")
    return {(t, s) for t in trains for s in run_seeds}


def shard_of(
    instances: dict[str, set],
    count: int,
    run_seconds: float = 60.0,
    claims: dict[str, str] | None = None,
    later: dict[str, set] | None = None,
) -> dict[str, int]:
    """Assign each instance (node id -> the runs it reads) to one of ``count`` shards (0-based).

    One group stays in one shard: the instances of one claim (``claims``: node id -> claim
    id), with every run its planned looks may read (``later``: claim id -> runs), so a
    shard can take a claim's looks itself; and instances that share a run, so no run is
    trained by two shards. Groups go, largest first, to the least loaded shard (load =
    ``run_seconds``, the book's setting, per first-look run + 1 per instance, a claim
    test's second; ties to the lower index). The result depends only on the collected
    tests and seeds, so every shard computes the same split.
    """
    claims, later = claims or {}, later or {}
    parent = {node: node for node in instances}

    def find(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    owner: dict = {}
    for node, runs in instances.items():
        keys = [("run", r[0].ident, r[1]) for r in runs | later.get(claims.get(node), set())]
        if node in claims:
            keys.append(("claim", claims[node]))
        for key in keys:
            if key in owner:
                parent[find(node)] = find(owner[key])
            else:
                owner[key] = node
    groups: dict[str, list[str]] = {}
    for node in instances:  # collection order, so the first member names the group
        groups.setdefault(find(node), []).append(node)

    def weight(members: list[str]) -> float:
        runs = {(r[0].ident, r[1]) for m in members for r in instances[m]}
        return run_seconds * len(runs) + len(members)

    order = sorted(groups.values(), key=lambda members: -weight(members))  # stable
    load = [0] * count
    assigned = {}
    for members in order:
        target = min(range(count), key=lambda i: (load[i], i))
        load[target] += weight(members)
        assigned.update(dict.fromkeys(members, target))
    return assigned


def parse_shard(text: str, name: str = "--claimbook-shard") -> tuple[int, int]:
    """``"I/N"`` (1-based) -> (I, N).

    Raises:
        ValueError: not of the form I/N with 1 <= I <= N.
    """
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"{name} expects I/N, e.g. 2/3, got {text!r}") from None
    if not 1 <= index <= count:
        raise ValueError(f"{name} {text}: I must be between 1 and N")
    return index, count


def estimate(label: str, function: str, recorded: dict[str, float], default: float) -> float:
    """A run's expected seconds: its own recorded duration (by label, whatever code version
    recorded it), else the mean recorded for its configuration at other seeds, else for its
    function, else ``default``."""
    if label in recorded:
        return recorded[label]
    config = label.rsplit(" seed ", 1)[0] + " seed "
    for prefix in (config, function + "("):
        same = [s for name, s in recorded.items() if name.startswith(prefix)]
        if same:
            return sum(same) / len(same)
    return default


def longest_first(keys: Iterable[str], seconds: dict[str, float], names=None) -> list[str]:
    """``keys`` by expected seconds, longest first, ties by ``names[key]`` (a run's label:
    a key also hashes the environment, hash seed included), then by key: the same order in
    every process and under any hash seed."""
    names = names or {}
    return sorted(keys, key=lambda k: (-seconds[k], names.get(k, ""), k))


def split_runs(
    keys: Iterable[str], seconds: dict[str, float], parts: int, names=None
) -> list[list[str]]:
    """Longest-processing-time bin packing: each run, longest first, to the part with the
    least expected seconds so far (ties to the part with fewer runs, then the lower part).
    Deterministic, as above."""
    load, assigned = [0.0] * parts, [[] for _ in range(parts)]
    for key in longest_first(keys, seconds, names):
        target = min(range(parts), key=lambda i: (load[i], len(assigned[i]), i))
        load[target] += seconds[key]
        assigned[target].append(key)
    return assigned


def pack_runs(
    keys: list[str], seconds: dict[str, float], target: float, slots: int = 1
) -> list[list[str]]:
    """Bins of about ``target`` expected seconds (for engines whose jobs are costly to
    start), longest bin first: the LPT split into as many bins as the total needs, and at
    least as many as there are ``slots`` to run them (never more than the runs)."""
    total = sum(seconds[k] for k in keys)
    wanted = round(total / target) if target > 0 else len(keys)
    count = max(1, min(len(keys), max(wanted, slots)))
    bins = [b for b in split_runs(keys, seconds, count) if b]
    return sorted(bins, key=lambda b: -sum(seconds[k] for k in b))
