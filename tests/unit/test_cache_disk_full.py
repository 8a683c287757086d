"""A full cache disk: the run names the cache folder and the full disk, is neither complete
nor passing, and the gate blames the disk, not the claims.

The disk is a real full one: a 64 KiB tmpfs mounted on the cache folder in a private
mount namespace (``unshare -m``, which needs root), filled before the run starts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.conftest import HEADER

ROOT = Path(__file__).resolve().parents[2]

BOOK = """
from claimbook import Training
from tests.unit.cached_fns import square

@claim(id="doc.stored", level="established", source=DOC, section="1",
       trains=[Training(square, {"x": 3})])
def test_stored(runs, seed):
    '''Each seed's run of x = 3 is 9 plus the seed.'''
    assert runs(square, {"x": 3}, seed)["value"] == 9 + seed

@claim(id="doc.plain", level="established", source=DOC, section="2")
def test_plain():
    '''Reads no training run.'''
    assert 1 + 1 == 2
"""


def _can_mount() -> bool:
    if not shutil.which("unshare") or os.geteuid() != 0:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="needs root and unshare -m to mount a tmpfs")
def test_a_full_cache_disk_is_named_and_the_gate_blames_it(pytester, tmp_path):
    pytester.makepyfile(test_claims=HEADER + BOOK)
    cache = tmp_path / "cache"
    cache.mkdir()
    script = (f"mount -t tmpfs -o size=64k tmpfs {cache} && "
              f"(dd if=/dev/zero of={cache}/fill bs=4k 2>/dev/null; true) && "
              f"exec {sys.executable} -m pytest -p no:cacheprovider --claimbook-seeds=0 "
              "--claimbook-workers=1 test_claims.py")  # fmt: skip
    env = {**os.environ, "CLAIMBOOK_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    run = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=pytester.path, env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    out = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert "INTERNALERROR" not in out
    full = f"the disk that holds {cache / 'square'} is full (No space left on device)"
    assert full in out
    (results,) = (pytester.path / "reports" / "results").glob("run-*.json")
    data = json.loads(results.read_text())
    assert full in data["run"]["facts"]["stopped"]  # the run is neither complete nor passing
    verdicts = {c["id"]: c["verdict"] for c in data["claims"]}
    assert verdicts == {"doc.stored": "error", "doc.plain": "holds"}
    gate = subprocess.run([sys.executable, "-m", "claimbook", "gate", "--results", str(results)],
                          cwd=pytester.path, env=env, capture_output=True, text=True)  # fmt: skip
    assert gate.returncode == 1
    last = gate.stdout.strip().splitlines()[-1]
    assert last.startswith("claimbook: FAILED: the session stopped early (the training runs "
                           f"could not be written to the cache: {full}")  # fmt: skip


def test_a_write_past_the_file_size_limit_names_the_folder_and_leaves_nothing(tmp_path):
    """Without root: RLIMIT_FSIZE makes every write fail (EFBIG) as a full disk would."""
    code = (
        "import resource, signal, sys\n"
        "from claimbook.storage.atomic import DiskFullError, write_json\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    write_json(sys.argv[1] + '/entry.json', {'value': 1})\n"
        "except DiskFullError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert out.strip() == f"the disk that holds {tmp_path} is full (File too large)"
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


@pytest.mark.skipif(not _can_mount(), reason="needs root and unshare -m to mount a tmpfs")
def test_a_full_disk_for_claim_outcomes_loses_only_their_reuse(pytester, tmp_path):
    """Nothing to train, so the first write to fail is a claim outcome's: the run still judges
    every claim (no INTERNALERROR) and says that outcomes are no longer stored."""
    plain = BOOK[BOOK.index('@claim(id="doc.plain"') :]
    pytester.makepyfile(test_claims=HEADER + plain)
    cache = tmp_path / "cache"
    cache.mkdir()
    script = (f"mount -t tmpfs -o size=64k tmpfs {cache} && "
              f"(dd if=/dev/zero of={cache}/fill bs=4k 2>/dev/null; true) && "
              f"exec {sys.executable} -m pytest -p no:cacheprovider test_claims.py")  # fmt: skip
    env = {**os.environ, "CLAIMBOOK_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    run = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=pytester.path, env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    out = run.stdout + run.stderr
    assert "INTERNALERROR" not in out, out
    assert "claim outcomes are no longer stored for reuse: the disk that holds" in out
    (results,) = (pytester.path / "reports" / "results").glob("run-*.json")
    assert [c["verdict"] for c in json.loads(results.read_text())["claims"]] == ["holds"]
