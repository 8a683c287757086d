"""The plan: which training runs a claim instance reads, and how the suite splits into shards.

A claim declares its training runs (``@claim(trains=[...])``); an instance of the test
needs each of them at its ``seed`` (or at every seed of the session when it takes
``seeds``). Shards split the suite so that every claim instance reading a run lands in
the shard that trains it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claimbook.declare.training import Training


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


def shard_of(instances: dict[str, set], count: int, run_seconds: float = 60.0) -> dict[str, int]:
    """Assign each instance (node id -> the runs it reads) to one of ``count`` shards (0-based).

    Instances that share a run are one group, and a group stays in one shard, so no
    run is trained by two shards. Groups go, largest first, to the least loaded shard
    (load = ``run_seconds``, the book's setting, per run + 1 per instance, a claim test's
    second; ties to the lower index). The result
    depends only on the collected tests and seeds, so every shard computes the same split.
    """
    parent = {node: node for node in instances}

    def find(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    owner: dict = {}
    for node, runs in instances.items():
        for run in runs:
            key = (run[0].ident, run[1])
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


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` (1-based) -> (I, N).

    Raises:
        ValueError: not of the form I/N with 1 <= I <= N.
    """
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"--claimbook-shard expects I/N, e.g. 2/3, got {text!r}") from None
    if not 1 <= index <= count:
        raise ValueError(f"--claimbook-shard {text}: I must be between 1 and N")
    return index, count
