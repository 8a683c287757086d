"""``python -m claimbook render`` and ``site``: the newest complete results rendered into the
docs folder, then (``site``) built with MkDocs; each step skipped when what it reads is
unchanged (:mod:`claimbook.render.stamp`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from claimbook.render import stamp
from claimbook.render.owned import Owned
from claimbook.storage.history import History, HistoryLocked
from claimbook.storage.receipts import read_decision
from claimbook.storage.results import (
    ResultsError,
    latest_results,
    load_results,
    previous_results,
)

LOCK = ".claimbook-render.lock"  # in the docs folder: MkDocs skips names starting with "."


def add_site_options(parser) -> None:
    parser.add_argument(
        "--config-file", type=Path, default=Path("mkdocs.yml"),
        help="the MkDocs configuration (default: mkdocs.yml here)",
    )  # fmt: skip
    parser.add_argument(
        "--site-dir", type=Path, default=Path("site"),
        help="build the site here (default: site)",
    )  # fmt: skip


def _inputs(args, path: Path, results: dict, previous: Path | None) -> str | None:
    """The digest of what a render of ``path`` reads, or None where it cannot be taken (a
    history another process holds): then the render runs."""
    history = None
    if args.history is not None and Path(args.history).exists():
        try:
            history = History(Path(args.history))
        except HistoryLocked:
            return None
    try:
        return stamp.render_inputs(
            results, load_results(previous) if previous else None,
            read_decision(path, results), history, templates=args.templates, maps=args.maps,
            sources_dir=args.sources_dir, bench=args.out / "bench.json", repo_url=args.repo_url,
        )  # fmt: skip
    finally:
        if history is not None:
            history.close()


def _warn_unshown(directory: Path, shown: Path, results: dict) -> None:
    """Name the claims that a newer (partial) run collected and the site cannot show: it
    shows the newest complete run, which does not have them yet."""
    newest = latest_results(directory)
    if newest == shown:
        return
    try:
        catalog = load_results(newest)["run"].get("catalog") or []
    except ResultsError:
        return
    ids = {c["id"] for c in results["claims"]}
    missing = sorted({e["id"] for e in catalog if isinstance(e, dict) and e.get("id") not in ids})
    if missing:
        print(f"claimbook: warning: {len(missing)} claims of the newest run ({newest.name}) have "
              f"no page yet, the site shows {shown.name}, the newest complete run: "
              f"{', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}; run every "
              "claim to show them", file=sys.stderr)  # fmt: skip


def _lock(args) -> FileLock:
    """One render or build at a time per docs folder: a second waits for the first, then
    finds the pages it wrote (and usually nothing left to do)."""
    Path(args.out).mkdir(parents=True, exist_ok=True)
    return FileLock(Path(args.out) / LOCK)


def render(args, settings) -> int:
    """Render the chosen results into ``args.out``, unless it already shows them."""
    with _lock(args):
        return _render(args, settings)


def _render(args, settings) -> int:
    path = args.results or latest_results(args.results_dir, full=True)
    results = load_results(path)
    if not args.results:
        _warn_unshown(args.results_dir, path, results)
    previous = previous_results(args.results_dir, path)
    inputs = _inputs(args, path, results, previous)
    if inputs is not None and Owned(args.out).unchanged(inputs):
        print(f"claimbook: {args.out}/ is up to date: {path.name} changes nothing its pages "
              "show")  # fmt: skip
        return 0
    from claimbook.render.site import render_site  # matplotlib: only a render needs it

    written = render_site(
        path, args.out, args.templates, previous, args.repo_url, args.history,
        settings.cache_dir() / "figures", args.out / "bench.json", args.maps, args.sources_dir,
        inputs,
    )  # fmt: skip
    print(f"claimbook: rendered {len(written)} files from {path} into {args.out}/")
    return 0


def site(args, settings) -> int:
    """Render, then ``mkdocs build --strict`` unless the site was built from these files."""
    with _lock(args):
        return _site(args, settings)


def _site(args, settings) -> int:
    code = _render(args, settings)
    if code:
        return code
    inputs = stamp.build_inputs(args.config_file, args.out)
    if stamp.built(args.site_dir, inputs) and (args.site_dir / "index.html").is_file():
        print(f"claimbook: {args.site_dir}/ is up to date (mkdocs.yml and {args.out}/ unchanged)")
        return 0
    command = [sys.executable, "-m", "mkdocs", "build", "--strict",
               "-f", str(args.config_file), "-d", str(Path(args.site_dir).resolve())]  # fmt: skip
    done = subprocess.run(command, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    if done.returncode:
        print(f"claimbook: mkdocs build failed (exit {done.returncode})", file=sys.stderr)
        return done.returncode
    from claimbook.storage.atomic import write_json

    write_json(Path(args.site_dir) / stamp.BUILD_STAMP, {"inputs": inputs})
    print(f"claimbook: site built: {args.site_dir}/index.html")
    return 0
