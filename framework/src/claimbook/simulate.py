"""The CI workflow's training legs and claims job, simulated on one machine (bench steps).

- :func:`balance`: the recorded durations split into N parts (as the legs split them):
  each part's seconds and the longest part over the mean.
- :func:`legs`: from an empty cache, rounds of N legs (``--claimbook-train-part I/N``),
  one after another, each into a cache folder of its own holding the union of the rounds
  before; then the claims once on the union, training nothing
  (``--claimbook-no-train``), compared claim by claim (verdict and every measured value)
  with an unsharded run's results (on a selection, such as ``-k recall``, the claims it
  ran); then the claims again without one leg's entries, which must name the missing
  runs and exit non-zero.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from claimbook.judge.baseline import TIMING_UNITS
from claimbook.runs.plan import split_runs
from claimbook.storage import durations
from claimbook.storage.results import load_results

ROUNDS = 6  # the planned looks (3, 5, 8, 12, 20 seeds) and a round that finds nothing to do


def balance(path: Path, parts: int = 3) -> dict:
    """How the recorded durations at ``path`` split into ``parts`` legs."""
    seconds = durations.load(path)
    split = split_runs(seconds, seconds, parts, {k: k for k in seconds})
    loads = [round(sum(seconds[k] for k in part), 1) for part in split]
    mean = sum(loads) / parts
    return {"runs": len(seconds), "total_s": round(sum(seconds.values()), 1),
            "parts": [{"runs": len(p), "seconds": s} for p, s in zip(split, loads, strict=True)],
            "max_over_mean": round(max(loads) / mean, 4) if mean else None}  # fmt: skip


def _files(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and p.suffix != ".lock"}


def _union(sources: list[tuple[Path, set[Path]]], into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    for folder, names in sources:
        for name in names:
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / name, into / name)


def values(results: dict) -> dict:
    """Each claim's verdict and every instance's measured values (what must agree), but for
    durations a claim times itself: they move on every run, so, as in the baseline, their
    units (``TIMING_UNITS``) are left out; the verdict they decide still counts."""

    def instance(i: dict) -> str:
        kept = [m for m in i.get("measures") or [] if m.get("unit") not in TIMING_UNITS]
        return json.dumps([i.get("seed"), i.get("params"), kept], sort_keys=True)

    return {c["id"]: (c["verdict"], sorted(map(instance, c["instances"])))
            for c in results["claims"]}  # fmt: skip


def legs(job: Callable, work: Path, reference: Path, count: int = 3) -> dict:
    """The simulation (see the module); ``job(args, cache, name)`` runs the book's main job
    and returns its record (exit status, wall time, results file)."""
    root = work / "legs"
    shutil.rmtree(root, ignore_errors=True)
    merged, wrote, rounds = root / "merged", {}, []
    merged.mkdir(parents=True)
    for number in range(1, ROUNDS + 1):
        records, finished = [], 0
        for index in range(1, count + 1):
            name = f"round{number}-leg{index}"
            folder = root / name
            shutil.copytree(merged, folder)
            before = _files(folder)
            receipt = root / f"{name}.json"
            record = job([f"--claimbook-train-part={index}/{count}",
                          f"--claimbook-receipt={receipt}"], folder, name)  # fmt: skip
            leg = json.loads(receipt.read_text()) if receipt.exists() else {"stopped": True}
            wrote[name] = (folder, _files(folder) - before)
            finished += not leg["stopped"]
            looks = leg.get("looks", [])
            records.append({"leg": name, "exit_status": record["exit_status"],
                            "wall_s": record["wall_s"], "new_files": len(wrote[name][1]),
                            "trained": sum(look["computed"] for look in looks),
                            "expected_s": sum(look["expected_s"] for look in looks)})  # fmt: skip
        rounds.append(records)
        _union([wrote[r["leg"]] for r in records], merged)
        if finished == count:
            break
    claims = job(["--claimbook-no-train"], merged, "claims-on-merged")
    out = {"legs": count, "rounds": rounds, "claims": claims}
    if claims.get("results"):
        merged_run = load_results(Path(claims["results_path"]))
        mine, reference_run = values(merged_run), load_results(reference)
        theirs = values(reference_run)
        reasons = merged_run["run"].get("outcome", {}).get("partial_reasons", [])
        selection = [r for r in reasons if "deselected" in r or r.startswith(("node id", "path"))]
        compared = set(mine) if selection else set(mine) | set(theirs)  # a -k subset: its own
        out["reference"], out["compared_claims"] = reference.name, len(compared)
        out["selection"] = selection
        out["timings_left_out"] = sorted(
            c["id"]
            for c in reference_run["claims"]
            if c["id"] in compared
            and any(m.get("unit") in TIMING_UNITS for i in c["instances"] for m in i["measures"])
        )
        out["differences"] = sorted(c for c in compared if mine.get(c) != theirs.get(c))
        out["same_verdicts_and_values"] = not out["differences"] and claims["exit_status"] == 0
    dropped = "round1-leg2"
    partial = root / "without-one-leg"
    _union([wrote[n] for n in wrote if n != dropped], partial)
    lost = job(["--claimbook-no-train"], partial, "claims-without-one-leg")
    out["without_one_leg"] = {"dropped": dropped, "dropped_files": len(wrote[dropped][1]),
                              "exit_status": lost["exit_status"],
                              "missing_named": lost.get("missing_named")}  # fmt: skip
    return out
