"""The results file: schema-versioned JSON, one per run, written atomically.

Layout (schema ``claimbook.results/2``)::

    {"schema": ..., "run": {provenance}, "claims": [{spec, verdict, instances: [...]}],
     "comparison": {against the baseline: seeds, notes, regressions, ...} or null}

Rendering reads only these files, so the site can be rebuilt without
re-running an experiment.
"""

from __future__ import annotations

import json
import platform
import re
import secrets
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from claimbook.runs import keys
from claimbook.storage import shape
from claimbook.storage.atomic import read_json, write_json

SCHEMA = "claimbook.results/2"
RECEIPT = "claimbook.receipt/1"
_TEXT = (str, shape.NONE)
_INSTANCE = {"nodeid": str, "seed": shape.SEED_OR_NONE, "params": dict, "outcome": _TEXT}
_SOURCE = {"id": shape.SOURCE_ID}
_RECORD = {"id": shape.CLAIM_ID, "level": str, "source": _SOURCE, "instances": [_INSTANCE]}
_RUN = {"seeds": [shape.SEED], "argv": [str], "started": str, "finished": str}
_CATALOG = {"id": shape.CLAIM_ID, "source?": _SOURCE}  # every claim collected
SHAPE = {  # what every reader reads; ids and seeds pass the rules they were declared by
    "run": {**{f"{key}?": kind for key, kind in _RUN.items()}, "catalog?": [_CATALOG]},
    "claims": [{**_RECORD, "verdict": str}],
    "comparison?": (dict, shape.NONE),
}
_SHARD_CLAIM = {  # a shard's records carry no verdict (claimbook.storage.shards)
    **_RECORD, "sentence": str, "test": str, "file": str, "line": int, "source_code": str,
    **{name: object for name in ("section", "printed", "scope", "erratum", "figure", "remark",
                                 "drift", "trains", "env", "rule", "at", "cited")},
    "error?": str,
    "known_refuted?": str,
    "place?": str,
    "stand_in?": str,
}  # fmt: skip
SHARD = {  # and what the merge reads of a shard's
    "run": {**_RUN, "shard": {"index": int, "count": int}, "facts": {"suite": list},
            "catalog?": [_CATALOG],
            "wall_s": shape.NUMBER, "git_dirty": bool},
    "claims": [_SHARD_CLAIM],
}  # fmt: skip


class ResultsError(ValueError):
    """A results file is missing, unreadable, or of another schema."""


def _git(*args: str, cwd: Path) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def machine_class() -> str:
    return keys.machine()


def _torch_version() -> str | None:
    torch = keys.torch_module()  # a pytest run has loaded it, where the book uses torch
    return torch.__version__ if torch else None


def provenance(root: Path, started: datetime, seeds: list[int], argv: list[str]) -> dict:
    """Where and how a run happened: commit, times, versions, platform, seeds."""
    finished = datetime.now(UTC)
    return {
        "git_commit": _git("rev-parse", "HEAD", cwd=root) or None,
        "git_dirty": bool(_git("status", "--porcelain", cwd=root)),
        "started": started.isoformat(timespec="microseconds"),
        "finished": finished.isoformat(timespec="microseconds"),
        "wall_s": round((finished - started).total_seconds(), 3),
        "python": platform.python_version(),
        "torch": _torch_version(),
        "platform": platform.platform(),
        "machine": machine_class(),
        "host": keys.host(),
        "seeds": seeds,
        "argv": argv,
    }


def results_name(run: dict, sequence: int) -> str:
    """A results file name no other run can have: the run's place in its folder, the start
    time to the microsecond, commit, a random token, and the shard
    (``run-s000042-20261201T101500.123456Z-47d8d6d2-3f9a1c-shard1of3.json``).

    The newest run is the one with the highest place (:func:`sequence_of`), whatever the
    clock said: a clock stepped back never makes a new run look old.
    """
    when = run.get("merged_at") or run["started"]
    stamp = datetime.fromisoformat(when).astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    commit = (run.get("git_commit") or "nogit")[:8]
    shard = run.get("shard")
    suffix = f"-shard{shard['index']}of{shard['count']}" if shard else ""
    suffix += "-merged" if run.get("merged_at") else ""
    return f"run-s{sequence:06d}-{stamp}-{commit}-{secrets.token_hex(3)}{suffix}.json"


_PLACE = re.compile(r"run-s(\d+)-")
_SHARD_FILE = re.compile(r"-shard\d+of\d+\.json$")


def sequence_of(path: Path) -> int:
    """A results file's place in its folder (0 for a name of an older claimbook's)."""
    match = _PLACE.match(Path(path).name)
    return int(match[1]) if match else 0


def runs_in(directory: Path) -> list[Path]:
    """The results files of ``directory``, oldest first by their place; a file that is a
    link leading out of the folder is no run of it (named, and left out), nor is a shard's,
    which carries no verdicts (only its merge is a run to show)."""
    root = Path(directory).resolve()
    runs = []
    for path in Path(directory).glob("run-*.json"):
        if _SHARD_FILE.search(path.name):
            continue
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            print(f"claimbook: warning: {path} links out of {directory}: not read", file=sys.stderr)
            continue
        runs.append(path)
    return sorted(runs, key=lambda p: (sequence_of(p), p.name))


def write_results(
    directory: Path, run: dict, claims: list[dict], comparison: dict | None = None
) -> Path:
    """Write one run's results into ``directory`` under a fresh :func:`results_name`.

    ``comparison`` is the run against the baseline (claimbook.judge.baseline.compare),
    or None when there is none. Never overwrites a file.

    Raises:
        OSError: the file could not be written (nothing half-written is left).
        ValueError: the data holds a non-finite float (not standard JSON).
    """
    data = {"schema": SCHEMA, "run": run, "claims": claims, "comparison": comparison}
    sequence = 1 + max((sequence_of(p) for p in Path(directory).glob("run-*.json")), default=0)
    for _ in range(5):
        path = Path(directory) / results_name(run, sequence)
        try:
            write_json(path, data, exclusive=True)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free results file name in {directory}")


def _results_named(name: str) -> bool:
    """Whether ``name`` is as :func:`results_name` makes them: ``run-``, ASCII letters,
    digits, dots and dashes, ``.json``."""
    kept = name.removeprefix("run-").removesuffix(".json").replace(".", "").replace("-", "")
    return name.startswith("run-") and name.endswith(".json") and kept.isascii() and kept.isalnum()


def read_receipt(receipt: Path) -> Path:
    """The results file a run wrote, from its receipt.

    Raises:
        ResultsError: there is no receipt (the run wrote no results file: it died, crashed
            or failed to write), it is unreadable, or what it names is not named as a
            results file is (``run-*.json``): the gate writes its decision beside that file.
    """
    try:
        data = json.loads(Path(receipt).read_text())
        if data.get("schema") != RECEIPT:
            raise ValueError(f"schema {data.get('schema')!r}, not {RECEIPT!r}")
        path = Path(data["results"])
        if not _results_named(path.name):
            raise ValueError(f"it names {str(path)!r}, which is not a results file (run-*.json)")
        return path
    except FileNotFoundError:
        raise ResultsError(
            f"the run wrote no results file (no receipt at {receipt}): it died, crashed or "
            "could not write; see its output above"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ResultsError(f"unreadable receipt {receipt}: {exc}") from exc


def load_results(path: Path) -> dict:
    """Read a results file.

    Raises:
        ResultsError: if the file cannot be read or parsed, its schema is not
            ``claimbook.results/2`` (re-run the claims to refresh it), or it lacks an
            entry its readers need (named, with its path in the file).
    """
    advice = "re-run the claims to write a current one"
    data = read_json(path, SCHEMA, "results file", advice, ResultsError)
    run = data.get("run")
    if isinstance(run, dict) and run.get("shard"):
        return shape.check(data, SHARD, path, "shard results file", advice, ResultsError)
    return shape.check(data, SHAPE, path, "results file", advice, ResultsError)


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
    runs = runs_in(directory)
    if not runs:
        raise ResultsError(f"no results in {directory}; run the claims first")
    if not full:
        return runs[-1]
    with_claims = None
    for path in reversed(runs):  # newest first: most sites stop at the first file read
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not data.get("run", {}).get("partial", True):
            return path
        if with_claims is None and data.get("claims"):
            with_claims = path
    return with_claims or runs[-1]


def previous_results(directory: Path, current: Path) -> Path | None:
    """The newest full run in ``directory`` older than ``current``, if any."""
    runs = runs_in(directory)
    names = [p.name for p in runs]
    older = runs[: names.index(Path(current).name)] if Path(current).name in names else []
    older = [p for p in older if _is_full(p)]
    return older[-1] if older else None


def measures(claim: dict) -> list[dict]:
    """Every measured value of a claim record, each tagged with its seed (the instance's, or
    its own); an erratum's correction (``measure.correct``) is a sentence, not a measure."""
    return [
        {**m, "seed": m.get("seed", inst["seed"]), "params": inst["params"]}
        for inst in claim["instances"]
        for m in inst["measures"]
        if not m.get("correction")
    ]


def label(m: dict) -> str:
    """A measure's name with its test parameters, e.g. "reach (layers=4)"."""
    params = ", ".join(f"{k}={v}" for k, v in m["params"].items())
    return f"{m['name']} ({params})" if params and params not in m["name"] else m["name"]
