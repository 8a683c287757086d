"""The book's own bench step: each mixer's training throughput against a matmul's, on one
thread, added to the bench record claimbook's bench wrote (``nox -s bench`` runs it after).

python -m experiments.bench_throughput --into reports/bench.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from claimbook.storage.atomic import write_json

from experiments.lm import LMConfig
from experiments.modules import MIXERS
from experiments.throughput import mixer_throughput


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench_throughput")
    parser.add_argument("--into", type=Path, required=True, help="the bench record to extend")
    args = parser.parse_args(argv)
    record = json.loads(args.into.read_text()) if args.into.exists() else {}
    tp = mixer_throughput({name: LMConfig(spec) for name, spec in MIXERS.items()})
    record["throughput"] = tp
    write_json(args.into, record)
    print(f"matmul ceiling: {tp['matmul_flops_per_s'] / 1e9:.1f} GFLOP/s (one thread)")
    for name, m in tp["mixers"].items():
        rate, share = m["flops_per_s"] / 1e9, m["share_of_matmul"]
        print(f"  {name:<12} {m['steps_per_s']:.2f} steps/s, {rate:.2f} GFLOP/s = {share:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
