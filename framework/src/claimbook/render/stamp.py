"""What a render and a site build read, digested: an unchanged site is neither rendered nor
built again (``python -m claimbook site``).

A render is a function of the results it shows and of what it reads beside them: the
previous complete run (its commit and the verdicts changed since), the gate's decision, the
run history (as the pages show it: trends with repeats collapsed, the recent verdict
changes), the templates, the coverage maps and source texts, bench.json and claimbook's own
rendering code. Of the results, only what changes in every run is left out: the run's id,
its start and end times, its wall times (a replayed or skipped instance's too) and its
command line (on no page). A re-run with nothing changed thus leaves the pages as they are:
they keep naming the first run of that state, which equals it in every other field.

A build is a function of mkdocs.yml and of the docs folder, less the run records MkDocs
excludes (results/, the history): ``site/`` is built again only when one of them changed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

# every run's own; argv is on no page (what it selected is in the run's facts), and the
# receipt it names is a new folder in every invocation
VOLATILE = ("run_id", "started", "finished", "wall_s", "training_wall_s", "argv")
BUILD_STAMP = ".claimbook-build.json"
RUN_RECORDS = ("results", "history.sqlite")  # docs-folder entries MkDocs never publishes


def _files(folder: Path | None, skip=()) -> list[tuple[str, str]]:
    """(relative path, sha256) of every file under ``folder``, sorted; [] if it is absent."""
    if folder is None or not Path(folder).is_dir():
        return []
    found = []
    for path in sorted(Path(folder).rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and not rel.startswith(skip):
            found.append((rel, hashlib.sha256(path.read_bytes()).hexdigest()))
    return found


def _file(path: Path | None) -> str | None:
    """sha256 of the file at ``path``, or None if there is none."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None
    except OSError:
        return None


def content(results: dict | None) -> dict | None:
    """``results`` without the fields that differ between two runs of one state."""
    if results is None:
        return None
    run = {k: v for k, v in results["run"].items() if k not in VOLATILE}
    claims = [{**c, "instances": [_instance(i) for i in c.get("instances", [])]}
              for c in results["claims"]]  # fmt: skip
    return {**results, "run": run, "claims": claims}


def _instance(instance: dict) -> dict:
    """A replayed instance's own wall time is the replay's, and a skipped one's is that of a
    skip: no page shows them (the performance page counts the seconds of the execution a
    replay replays, and none for a skip)."""
    if instance.get("replayed") or instance.get("outcome") == "skipped":
        return {k: v for k, v in instance.items() if k != "duration_s"}
    return instance


def _previous(previous: dict | None, results: dict):
    """What the home page shows of the previous complete run: its commit and the verdicts
    changed since (its start time is provenance, like this run's)."""
    if previous is None:
        return None
    from claimbook.render.views import changes_since

    changes = [vars(change) for change in changes_since(previous, results)]
    return {"commit": previous["run"].get("git_commit"), "changes": changes}


def render_inputs(results: dict, previous: dict | None, decision: dict | None, history,
                  **paths) -> str:  # fmt: skip
    """sha256 of everything a render of ``results`` reads (see the module docstring).

    ``history`` is a :class:`claimbook.storage.history.History` or None; ``paths`` the
    templates, maps and sources folders, bench.json and the repository URL."""
    shown_history = None
    if history is not None:
        trends = {c["id"]: history.trend(c["id"]) for c in results["claims"]}
        shown_history = {"changes": history.recent_changes(), "trends": trends}
    code = Path(__file__).resolve().parents[1]
    payload = {
        "results": content(results),
        "previous": _previous(previous, results),
        "decision": decision,
        "history": shown_history,
        "claimbook": _files(code / "render") + _files(code / "templates"),
        "templates": _files(paths.get("templates")),
        "maps": _files(paths.get("maps")),
        "sources": _files(paths.get("sources_dir")),
        "bench": _file(paths.get("bench")),
        "repo_url": paths.get("repo_url", ""),
    }
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def build_inputs(config: Path, docs: Path) -> str:
    """sha256 of mkdocs.yml and of the docs folder's published files."""
    payload = {"config": Path(config).read_text(), "docs": _files(docs, RUN_RECORDS)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def built(site: Path, inputs: str) -> bool:
    """Whether ``site`` was built from exactly ``inputs`` (its stamp says so)."""
    try:
        return json.loads((Path(site) / BUILD_STAMP).read_text()).get("inputs") == inputs
    except (OSError, ValueError, AttributeError):
        return False
