"""``python -m claimbook export``: a run's measurements as one tidy table, CSV or Parquet.

Without ``--results`` it exports the newest complete run that holds measurements, else
the newest partial one that does, and says which file it took and each newer file it
passed over, with why (a run stopped by collection errors measured nothing). A file named
with ``--results`` that holds no measurement is refused (exit 2), with why.
"""

from __future__ import annotations

import sys
from pathlib import Path

from claimbook.judge.tidy import tidy
from claimbook.storage.atomic import staged
from claimbook.storage.results import ResultsError, load_results, runs_in


def measured(data: dict):
    """A results file's measurements (claimbook.judge.tidy), and why it holds none ("" when
    it holds some)."""
    frame = tidy(data["claims"])
    if not frame.empty:
        return frame, ""
    reasons = (data["run"].get("outcome") or {}).get("failure_reasons") or []
    what = "judged no claim" if not data["claims"] else "measured no number"
    return frame, f"its run {what}" + (f" ({'; '.join(reasons)})" if reasons else "")


def newest_measured(directory: Path):
    """(path, measurements) of the file to export by default (see the module docstring),
    said on the terminal. Raises ResultsError if no file holds a measurement."""
    passed, chosen = [], None
    for path in reversed(runs_in(directory)):
        try:
            data = load_results(path)
        except ResultsError as exc:
            passed.append(str(exc))
            continue
        frame, why = measured(data)
        if why:
            passed.append(f"{path.name}: {why}")
        elif not data["run"].get("partial", True):
            chosen = (path, frame, list(passed), "the newest complete run with measurements")
            break
        elif chosen is None:
            kind = "no complete run has measurements: the newest partial run that has"
            chosen = (path, frame, list(passed), kind)
            passed.append(f"{path.name}: a partial run")
    if chosen is None:
        where = "; ".join(passed) or "there is none"
        raise ResultsError(f"no results file in {directory} holds a measurement ({where})")
    path, frame, newer, kind = chosen
    over = f"; newer, passed over: {'; '.join(newer)}" if newer else ""
    print(f"claimbook: exporting {path} ({kind}{over})")
    return path, frame


def export(args) -> int:
    """Write the tidy measurements table of one results file (see the module docstring)."""
    if args.results:
        frame, why = measured(load_results(args.results))
        if why:
            raise ResultsError(f"{args.results} holds no measurement to export: {why}")
    else:
        _, frame = newest_measured(args.results_dir)
    target = args.csv or args.parquet
    with staged(target) as temporary:  # atomic: a reader never sees half a table
        if args.csv:
            frame.to_csv(temporary, index=False)
        else:
            try:
                frame.to_parquet(temporary, index=False)
            except ImportError as exc:
                temporary.unlink()  # nothing written: the target stays as it was
                print(f"claimbook: --parquet needs pyarrow ({exc}); use --csv", file=sys.stderr)
                return 2
    print(f"claimbook: {len(frame)} measurements of {frame['claim'].nunique()} claims -> {target}")
    return 0
