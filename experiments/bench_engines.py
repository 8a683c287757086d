"""The book's bench step for the training engines: one real training run (the chapter's
recall task with convolution, seed 0, about 20 s) trained through the local pool, a Dask
LocalCluster and submitit's local executor, each into a cache of its own; the entries
must be bit-identical (key and result; only the seconds and the host may differ).

python -m experiments.bench_engines --into reports/bench.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from claimbook.config import find
from claimbook.runs.cache import RunCache, Training
from claimbook.runs.pool import plan, train_missing
from claimbook.storage.atomic import write_json

from experiments.modules import CONV
from experiments.recall import RecallConfig, train_recall

ENGINES = ("local", "dask", "submitit-local")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench_engines")
    parser.add_argument("--into", type=Path, required=True, help="the bench record to extend")
    args = parser.parse_args(argv)
    run = (Training(train_recall, RecallConfig(CONV)), 0)
    entries = {}
    with tempfile.TemporaryDirectory() as scratch:
        for engine in ENGINES:
            folder = Path(scratch) / engine
            cache = RunCache(folder, report=lambda _: None, packages=find().packages)
            done = train_missing(cache, plan(cache, {run}, {}, 60.0), 1, print, engine)
            if done.failed:
                raise SystemExit(f"{engine}: {done.failed}")
            key = cache.key(run[0].fn, run[0].config, run[1])
            entries[engine] = json.loads(cache.path(run[0].fn, key).read_text())
    first = entries[ENGINES[0]]
    same = {e: entries[e]["key"] == first["key"] and entries[e]["result"] == first["result"]
            for e in ENGINES}  # fmt: skip
    record = json.loads(args.into.read_text()) if args.into.exists() else {}
    record["engines"] = {"run": run[0].label(run[1]), "key": first["key"],
                         "seconds": {e: round(entries[e]["seconds"], 1) for e in ENGINES},
                         "identical": same, "all_identical": all(same.values())}  # fmt: skip
    write_json(args.into, record)
    print(json.dumps(record["engines"], indent=1))
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
