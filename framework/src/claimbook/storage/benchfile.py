"""The bench record on disk: a bench run of some steps merged into the file's earlier record."""

from __future__ import annotations

import json
from pathlib import Path


def kept(path: Path, bench: dict, steps: tuple[str, ...]) -> dict:
    """``bench`` with the records of the steps it did not run kept from the file at ``path``
    (each step's record says when and at which commit: ``measured``)."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return bench
    stamp = {"started": bench["started"], "git_commit": bench["git_commit"],
             "machine": bench.get("machine", {}).get("cpu")}  # fmt: skip
    for step in ("shards", "looks", "balance", "legs"):
        if step in bench:
            bench[step]["measured"] = stamp
        elif step in old:
            bench[step] = old[step]
    if not set(bench["steps"]) & {"cold", "warm", "touch", "edit"}:  # the timed runs: old
        for key in ("runs", "ratios", "targets"):
            bench[key] = old.get(key, bench[key])
        bench["runs_measured"] = old.get("runs_measured") or {
            "started": old.get("started"), "git_commit": old.get("git_commit")}  # fmt: skip
    order = {step: i for i, step in enumerate(old.get("steps", []) + list(steps))}
    bench["steps"] = sorted(set(bench["steps"]) | set(old.get("steps", [])), key=order.get)
    return {**old, **bench}
