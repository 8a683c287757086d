"""The results file: schema-versioned JSON, one per run, written atomically.

Layout (schema ``claimbook.results/1``)::

    {"schema": ..., "run": {provenance}, "claims": [{spec, verdict, instances: [...]}],
     "comparison": {against the baseline: seeds, notes, regressions, ...} or null}

Rendering reads only these files, so the site can be rebuilt without
re-running an experiment.
"""

from __future__ import annotations

import json
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from claimbook.atomic import write_json

SCHEMA = "claimbook.results/1"


class ResultsError(ValueError):
    """A results file is missing, unreadable, or of another schema."""


def _git(*args: str, cwd: Path) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _torch_version() -> str:
    import torch  # a pytest run has loaded it; render and gate never need it

    return torch.__version__


def provenance(root: Path, started: datetime, seeds: list[int], argv: list[str]) -> dict:
    """Where and how a run happened: commit, times, versions, platform, seeds."""
    finished = datetime.now(UTC)
    return {
        "git_commit": _git("rev-parse", "HEAD", cwd=root) or None,
        "git_dirty": bool(_git("status", "--porcelain", cwd=root)),
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "wall_s": round((finished - started).total_seconds(), 3),
        "python": platform.python_version(),
        "torch": _torch_version(),
        "platform": platform.platform(),
        "seeds": seeds,
        "argv": argv,
    }


def write_results(
    directory: Path, run: dict, claims: list[dict], comparison: dict | None = None
) -> Path:
    """Write one run's results to ``directory/run-<time>-<commit>.json``; return the path.

    ``comparison`` is the run against the baseline (claimbook.baseline.compare),
    or None when there is no baseline.
    """
    # a merged run is named by when it was merged, so that it is the newest file
    when = run.get("merged_at") or run["started"]
    stamp = when.replace(":", "").replace("-", "").replace("+00:00", "Z").replace("+0000", "Z")
    commit = (run.get("git_commit") or "nogit")[:8]
    shard = run.get("shard")
    suffix = f"-shard{shard['index']}of{shard['count']}" if shard else ""
    suffix += "-merged" if run.get("merged_at") else ""
    path = Path(directory) / f"run-{stamp}-{commit}{suffix}.json"
    data = {"schema": SCHEMA, "run": run, "claims": claims, "comparison": comparison}
    write_json(path, data)
    return path


def load_results(path: Path) -> dict:
    """Read a results file.

    Raises:
        ResultsError: if the file cannot be read or parsed, or its schema is
            not ``claimbook.results/1`` (re-run ``nox -s claims`` to refresh it).
    """
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsError(f"cannot read results file {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise ResultsError(
            f"{path} has schema {found!r}, this claimbook reads {SCHEMA!r}; "
            "re-run `nox -s claims` to write a current one"
        )
    return data


def _is_full(path: Path) -> bool:
    try:
        return not json.loads(path.read_text())["run"].get("partial", False)
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return False


def latest_results(directory: Path, full: bool = False) -> Path:
    """The newest results file in ``directory``.

    With ``full``, the newest run of the whole suite is preferred over newer
    partial runs (a replayed test, a ``-k`` subset), so that the site shows
    every claim. Raises ResultsError if there is no results file.
    """
    runs = sorted(Path(directory).glob("run-*.json"))
    if not runs:
        raise ResultsError(f"no results in {directory}; run `nox -s claims` first")
    if full:
        complete = [p for p in runs if _is_full(p)]
        return complete[-1] if complete else runs[-1]
    return runs[-1]


def previous_results(directory: Path, current: Path) -> Path | None:
    """The newest full run in ``directory`` older than ``current``, if any."""
    older = [p for p in sorted(Path(directory).glob("run-*.json")) if p.name < Path(current).name]
    older = [p for p in older if _is_full(p)]
    return older[-1] if older else None
