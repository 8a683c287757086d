"""Sessions: claims (run, render, build, gate), tests, site, bench, lint.

nox -s claims                     every claim over seeds 0,1,2 on every core, the site, the gate
nox -s claims -- --seeds 0 -k recall   a quicker subset (arguments go to pytest)
nox -s claims -- --train-part 2/3 phase 1 only: train part 2 of 3 of the missing runs (a CI leg)
nox -s claims -- --no-train       phase 2 only: the claims on the merged cache, training nothing
nox -s claims -- --train-on dask  train on a Dask LocalCluster (or dask://HOST:PORT, slurm, ...)
nox -s claims -- --shard 2/3      part 2 of 3 of the claims (results file only; no site)
(--seeds, --workers, --shard, --budget, --baseline, --history, --results-dir, --receipt,
--no-cache, --update-baseline, --train-part, --no-train, --train-on are short for pytest's
--claimbook-* options)
nox -s site -- FILE...            merge shards' results files, build the site, gate the merge
nox -s site                       re-render and rebuild the site from the last results
nox -s tests                      claimbook's and the experiments' own unit tests
nox -s bench                      cold/warm/edited run times, CI legs simulated, mixer FLOP/s,
                                  one run on every engine (about 2 hours; --steps=... a subset)
nox -s lint                       ruff
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import nox

nox.options.sessions = ["claims"]
nox.options.reuse_venv = (
    "yes"  # torch is large; rebuild with `nox -R` is not needed, `--no-reuse-venv` is
)
nox.options.error_on_missing_interpreters = True
# plain venv + pip: pip takes the pinned CPU torch wheel; uv would fetch a CUDA build of several GB
nox.options.default_venv_backend = "venv"

PYTHON = "3.11"


def install(session: nox.Session, target: str = ".", framework: str = "./framework") -> None:
    """pip install -e claimbook (./framework) and the book's dependencies, skipped while both
    pyproject.toml files are unchanged.

    One pip call: the book's requirement "claimbook" is met by ./framework. Editable, so
    code edits need no reinstall; skipping pip saves several seconds of a warm run.
    """
    stamp = Path(session.virtualenv.location) / ".claimbook-installed"
    files = Path("pyproject.toml").read_bytes() + Path("framework/pyproject.toml").read_bytes()
    want = hashlib.sha256(files + target.encode() + framework.encode()).hexdigest()
    if stamp.exists() and stamp.read_text() == want:
        session.log(f"{target} already installed and pyproject.toml unchanged: no pip")
        return
    session.install("-e", framework, "-e", target)
    stamp.write_text(want)


def engine_extra(args: list[str]) -> str:
    """claimbook's extra for the engine ``--claimbook-train-on`` names ("" for the local
    pool), so that ``nox -s claims -- --train-on dask`` installs what it trains on."""
    for index, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name == "--claimbook-train-on":
            value = value if eq else (args[index + 1] if index + 1 < len(args) else "")
            if value.startswith(("dask", "tcp://")):
                return "[dask]"
            if value in ("slurm", "submitit-local"):
                return "[slurm]"
    return ""


# this book's short spellings of the plugin's options (pytest itself knows only the
# --claimbook-* names, which no other plugin's options can collide with)
SHORT = ("seeds", "workers", "shard", "budget", "baseline", "history", "results-dir",
         "receipt", "no-cache", "update-baseline", "require-baseline", "train-part", "no-train",
         "train-on")  # fmt: skip


def pytest_args(args: list[str]) -> list[str]:
    """``args`` with each short option (``--seeds 0``, ``--seeds=0``) in its full name."""
    out = []
    for arg in args:
        name, eq, value = arg.partition("=")
        if name.startswith("--") and name[2:] in SHORT:
            arg = f"--claimbook-{name[2:]}{eq}{value}"
        out.append(arg)
    return out


def build_site(session: nox.Session) -> None:
    """Render the newest complete results into reports/ and build site/ with MkDocs, each
    step skipped when nothing it reads changed.

    No experiment runs. Strict: a missing file, page or anchor fails the build, and its
    warnings are shown (no --quiet).
    """
    session.run("python", "-m", "claimbook", "site")


def receipt(session: nox.Session) -> Path:
    """A path of this invocation's own where the run writes which results file it wrote (for
    the gate): in a new folder, so two sessions at once in one checkout never share it."""
    folder = tempfile.mkdtemp(prefix="claimbook-run-", dir=session.create_tmp())
    return Path(folder) / "receipt.json"


# pytest collects the claims folder unless the arguments name tests (pytest itself decides
# which arguments are paths); the config file fixes the rootdir, which pytest would otherwise
# take from an existing folder given as an option's value (--results-dir /shared/dir);
# and a baseline must be there: losing the file must not switch the regression rules off
CLAIMS = ("-c", "pyproject.toml", "-o", "testpaths=tests/claims", "--claimbook-require-baseline")
# the gate also holds the coverage maps (coverage/*.toml, when the folder exists) to this share
# of each source's statements per kind, no tagged statement uncovered, no error finding
COVERAGE = ("--coverage-fail-under", "95")


@nox.session(python=PYTHON)
def claims(session: nox.Session) -> None:
    """Run every claim over the seeds, gate the run, build the site showing the gate's decision."""
    args = pytest_args(session.posargs)
    install(session, framework=f"./framework{engine_extra(args)}")
    if {"-h", "--help", "--collect-only", "--co"} & set(args):
        session.run("python", "-m", "pytest", *CLAIMS, *args)
        return
    if any(arg.startswith(("--claimbook-shard", "--claimbook-train-part")) for arg in args):
        # a shard's or a training leg's gate is its exit status; the site is built by the
        # merge of the shards, or by the claims phase (--no-train) on the legs' merged cache
        session.run("python", "-m", "pytest", *CLAIMS, *args)
        return
    ticket = receipt(session)
    # 1 means "the run failed": the gate says why, from the results file this run wrote (no
    # receipt: it wrote none, and the gate fails); the site is built after it, whatever it
    # decided, and shows its decision
    session.run(
        "python", "-m", "pytest", *CLAIMS, f"--claimbook-receipt={ticket}", *args,
        success_codes=[0, 1],
    )  # fmt: skip
    try:
        session.run("python", "-m", "claimbook", "gate", "--receipt", str(ticket), *COVERAGE)
    finally:
        build_site(session)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit tests of claimbook/ and experiments/, and the built site in a real browser, in
    one pytest-xdist worker per core (serial: ``nox -s tests -- -n 0``)."""
    install(session, ".[test]")
    workers = f"--numprocesses={len(os.sched_getaffinity(0))}"
    # one test at a time to the next free worker (--dist=loadfile, a module per worker, was
    # no faster here: 548 s against 552 s; loadgroup's xdist_group marks are lost on pytest
    # 9.2's node ids, pytest-xdist#1386, so it groups nothing)
    session.run("python", "-m", "pytest", workers, "--dist=load", "tests/unit",
                "tests/e2e", *session.posargs)  # fmt: skip


@nox.session(python=PYTHON, default=False)
def site(session: nox.Session) -> None:
    """Build the site from the last results; given shards' results files, merge and gate them.

    nox -s site -- reports/results/run-*-shard*.json (one file per shard, any order; they carry
    no verdicts: the merge judges)
    """
    install(session)
    ticket = receipt(session)
    if session.posargs:
        session.run(
            "python",
            "-m",
            "claimbook",
            "merge",
            "--require-baseline",
            "--receipt",
            str(ticket),
            *session.posargs,
        )
    try:
        if session.posargs:
            session.run("python", "-m", "claimbook", "gate", "--receipt", str(ticket), *COVERAGE)
    finally:
        build_site(session)


# the claim test the bench's edit step edits
EDITED = "tests/claims/test_ch04_token_mixing.py::test_shakespeare_loss_ranks_conv_then_lstm_then_attention"  # noqa: E501


BOOK_STEPS = ("throughput", "engines")  # this book's own bench steps, run after claimbook's


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Time the suite cold (one worker, every core), warm, and after editing one claim test;
    split the recorded durations into CI legs and simulate the legs; each mixer's training
    FLOP/s against matmul's; one real run on every engine. Writes reports/bench.json.

    nox -s bench -- --steps=balance,legs,engines   a subset (claimbook's steps and the book's)
    """
    install(session, ".[test]")  # the engines step needs Dask and submitit
    session.install("nox")  # the bench runs `nox -s claims` itself, as a user would
    chosen = next((a.split("=", 1)[1] for a in session.posargs if a.startswith("--steps=")), "")
    steps = chosen.split(",") if chosen else None
    rest = [a for a in session.posargs if not a.startswith("--steps=")]
    framework = [s for s in steps if s not in BOOK_STEPS] if steps else None
    if framework is None or framework:
        only = [f"--steps={','.join(framework)}"] if framework else []
        session.run(
            "python", "-m", "claimbook.bench", "--command", "python -m nox -s claims --",
            "--setup", "python -m nox -s claims --install-only", "--edit", EDITED, *only, *rest,
        )  # fmt: skip
    for step in BOOK_STEPS:
        if steps is None or step in steps:
            session.run("python", "-m", f"experiments.bench_{step}", "--into", "reports/bench.json")
    build_site(session)


@nox.session(python=PYTHON, default=False)
def lint(session: nox.Session) -> None:
    """ruff check and format check."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
