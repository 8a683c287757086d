"""The files of the docs folder that render wrote, and only those: replaced, or removed when
a later render no longer writes them.

Render records what it wrote in a manifest beside the pages (``.claimbook-render.json``).
A file render would write that is not in the manifest belongs to someone else (the book's
own page, a results file): render stops with an error naming it, rather than replace it.
A file with exactly the text render would write is taken over (a site rendered before the
manifest existed).

A render is staged: before it writes a file the previous render did not own, it adds the
file to the manifest's ``pending`` list (written atomically first). A render killed or
interrupted before its manifest thus leaves every file it wrote named there, and the next
render takes them back as its own; a file named nowhere stays the author's.
"""

from __future__ import annotations

import json
from pathlib import Path

from claimbook.storage.atomic import write_json, write_text

MANIFEST = ".claimbook-render.json"
SCHEMA = "claimbook.render/1"


class RenderConflict(RuntimeError):
    """A file render would write exists and was not written by render."""


class Owned:
    """The docs folder ``out_dir`` as render owns it: the previous render's files."""

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)
        self.previous = set()
        self.inputs = None  # the digest of what the previous render read (render/stamp.py)
        try:
            data = json.loads((self.out_dir / MANIFEST).read_text())
            if isinstance(data, dict) and data.get("schema") == SCHEMA:
                listed = [*data.get("files", []), *data.get("pending", [])]
                # files an interrupted render was about to write are render's too; a name
                # that leads out of the folder is data, never a path to remove
                self.previous = {str(f) for f in listed if self.inside(str(f))}
                self.inputs = None if data.get("pending") else data.get("inputs")
        except (OSError, ValueError):
            pass  # no manifest (or a broken one): render owns nothing yet
        self.pending: set[str] = set()  # this render's new files, staged in the manifest

    def inside(self, rel: str) -> bool:
        """Whether ``rel`` names a file under the docs folder (not the folder, no ``..``, not
        absolute, not through a link that leads out)."""
        if not rel or Path(rel).is_absolute() or ".." in Path(rel).parts or "\\" in rel:
            return False
        root = self.out_dir.resolve()
        return (root / rel).resolve().is_relative_to(root) and (root / rel).resolve() != root

    def claim(self, rel: str, text: str | None = None) -> Path:
        """The path of ``rel`` under the docs folder, checked as render's to write."""
        self._check(rel, text)
        self._stage({rel})
        return self.out_dir / rel

    def _check(self, rel: str, text: str | None) -> None:
        """Raise RenderConflict unless render may write ``rel``."""
        if not self.inside(rel):
            raise RenderConflict(f"{rel!r} leads out of {self.out_dir}: nothing is written there")
        path = self.out_dir / rel
        if rel in self.previous or not path.exists():
            return
        if text is not None and path.is_file() and path.read_text(errors="replace") == text:
            return
        raise RenderConflict(
            f"{path} exists and was not written by claimbook render; move it, or render into "
            "another folder (the docs setting or --out)"
        )

    def unchanged(self, inputs: str) -> bool:
        """Whether the previous render read exactly ``inputs`` and its files are all there."""
        return self.inputs == inputs and all((self.out_dir / r).is_file() for r in self.previous)

    def finish(self, pages: dict[str, str], drawn: list[str], inputs: str | None = None):
        """Write ``pages`` (relative path -> text), keep the figures ``drawn`` (already
        written), remove what the previous render wrote and this one did not, and record
        this render's files and the digest of its ``inputs``; return the paths written."""
        for rel, text in pages.items():
            self._check(rel, text)
        self._stage(set(pages))
        written = []
        for rel, text in pages.items():
            write_text(self.out_dir / rel, text)
            written.append(self.out_dir / rel)
        now = set(pages) | set(drawn)
        for rel in sorted(self.previous - now):
            stale = self.out_dir / rel
            stale.unlink(missing_ok=True)
            for folder in stale.parents:  # folders render made and left empty
                if folder == self.out_dir or not folder.is_dir() or any(folder.iterdir()):
                    break
                folder.rmdir()
        write_json(
            self.out_dir / MANIFEST, {"schema": SCHEMA, "files": sorted(now), "inputs": inputs}
        )
        return written + [self.out_dir / rel for rel in drawn]

    def _stage(self, rels: set[str]) -> None:
        """Name the files of ``rels`` new to render in the manifest, before they are written."""
        new = rels - self.previous - self.pending
        if not new:
            return
        self.pending |= new
        self.out_dir.mkdir(parents=True, exist_ok=True)
        write_json(
            self.out_dir / MANIFEST,
            {"schema": SCHEMA, "files": sorted(self.previous), "pending": sorted(self.pending)},
        )
