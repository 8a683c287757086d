"""Atomic writes of standard JSON: a reader sees the old file or the new one, never half of one.

Every file claimbook writes goes through :func:`write_json`, which refuses NaN and
infinities (``allow_nan=False``: they are not JSON, and a browser's ``JSON.parse``
rejects the whole file) before anything touches the disk. A write that finds the disk
full raises :class:`DiskFullError`, which names the folder and says the disk is full.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# no space, no quota left, or a file-size limit: the disk (for this process) is full
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class DiskFullError(OSError):
    """A write found its disk full; the message names the folder it was writing to."""

    def __str__(self) -> str:
        return str(self.strerror)  # the sentence alone, without "[Errno 28]"


def disk_full(exc: OSError, folder: Path) -> OSError:
    """``exc`` as a :class:`DiskFullError` naming ``folder`` when it says the disk is full;
    otherwise ``exc`` unchanged."""
    if isinstance(exc, DiskFullError) or exc.errno not in FULL:
        return exc
    return DiskFullError(exc.errno, f"the disk that holds {folder} is full ({exc.strerror})")


def write_json(path: Path, data, exclusive: bool = False) -> None:
    """Write ``data`` as standard JSON to ``path`` through a temporary file.

    ``exclusive``: never replace an existing file (``FileExistsError`` instead), for files
    whose name must belong to one run only.

    Raises:
        ValueError: ``data`` holds NaN or an infinity (nothing is written).
        DiskFullError: the disk is full (an OSError naming the folder).
        OSError: the write failed (permissions); the old file is unchanged.
    """
    write_text(path, json.dumps(data, indent=1, allow_nan=False), exclusive)


def write_text(path: Path, text: str, exclusive: bool = False) -> None:
    """Write ``text`` to ``path`` through a temporary file (see :func:`write_json`)."""
    path = Path(path)
    try:
        _write(path, text, exclusive)
    except OSError as exc:
        full = disk_full(exc, path.parent)
        if full is exc:
            raise
        raise full from exc


def _write(path: Path, text: str, exclusive: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    ) as tmp:
        try:
            tmp.write(text)
            tmp.flush()
            os.fsync(tmp.fileno())
        except BaseException:
            os.unlink(tmp.name)
            raise
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp.name, 0o666 & ~umask)  # a plain file's mode, not the temporary file's 0600
    if exclusive:
        try:
            os.link(tmp.name, path)  # fails if the name is taken: no run overwrites another's
        finally:
            os.unlink(tmp.name)
    else:
        os.replace(tmp.name, path)


def temporary_beside(path: Path) -> Path:
    """A new empty file of a unique name in ``path``'s folder, ending as ``path`` ends (a
    writer that picks the format by suffix, such as matplotlib, still knows it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix)
    os.close(handle)
    return Path(name)


@contextmanager
def staged(path: Path) -> Iterator[Path]:
    """Yield a unique temporary path beside ``path``; write it, and on a clean exit it
    replaces ``path`` in one step. Two writers at once never share the temporary file; one
    that fails leaves ``path`` unchanged and no temporary file behind.

    A block that decides not to write (leaving the temporary file empty) may delete it:
    ``path`` is then left alone.
    """
    tmp = temporary_beside(path)
    try:
        yield tmp
        if tmp.exists():
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_json(path: Path, schema: str, what: str, advice: str, error: type[Exception]) -> dict:
    """A JSON file stamped with ``schema``, or ``error`` saying why not and what to do.

    ``what`` names the file in messages ("results file", "baseline"); ``advice`` says how
    to get a current one.
    """
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise error(f"cannot read {what} {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema") != schema:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise error(f"{path} has schema {found!r}, this claimbook reads {schema!r}; {advice}")
    return data


def checksum(data) -> str:
    """The sha256 (hex) of ``data``'s canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def sealed(entry: dict) -> dict:
    """``entry`` with a ``checksum`` field over its other fields (see :func:`seal_of`)."""
    body = {k: v for k, v in entry.items() if k != "checksum"}
    return {**body, "checksum": checksum(body)}


def seal_of(entry) -> str:
    """Whether a cache entry read back is the one written: "intact", "unsealed" (no
    checksum: an older claimbook wrote it, or it is not a dict) or "corrupted" (its content
    no longer matches its checksum)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("checksum"), str):
        return "unsealed"
    body = {k: v for k, v in entry.items() if k != "checksum"}
    try:
        return "intact" if checksum(body) == entry["checksum"] else "corrupted"
    except ValueError:  # NaN or an infinity: never written by claimbook
        return "corrupted"


def corrupted_line(path: Path, what: str = "recomputed") -> str:
    """The one line that names a cache entry failing its checksum."""
    return f"claimbook: cache entry {path} fails its checksum (corrupted): {what}"
