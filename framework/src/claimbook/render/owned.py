"""The files of the docs folder that render wrote, and only those: replaced, or removed when
a later render no longer writes them.

Render records what it wrote in a manifest beside the pages (``.claimbook-render.json``).
A file render would write that is not in the manifest belongs to someone else (the book's
own page, a results file): render stops with an error naming it, rather than replace it.
A file with exactly the text render would write is taken over (a site rendered before the
manifest existed).
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
        try:
            data = json.loads((self.out_dir / MANIFEST).read_text())
            if isinstance(data, dict) and data.get("schema") == SCHEMA:
                self.previous = {str(f) for f in data.get("files", [])}
        except (OSError, ValueError):
            pass  # no manifest (or a broken one): render owns nothing yet

    def claim(self, rel: str, text: str | None = None) -> Path:
        """The path of ``rel`` under the docs folder, checked as render's to write."""
        path = self.out_dir / rel
        if rel in self.previous or not path.exists():
            return path
        if text is not None and path.is_file() and path.read_text(errors="replace") == text:
            return path
        raise RenderConflict(
            f"{path} exists and was not written by claimbook render; move it, or render into "
            "another folder (the docs setting or --out)"
        )

    def finish(self, pages: dict[str, str], drawn: list[str]) -> list[Path]:
        """Write ``pages`` (relative path -> text), keep the figures ``drawn`` (already
        written), remove what the previous render wrote and this one did not, and record
        this render's files; return the paths written."""
        written = []
        for rel, text in pages.items():
            write_text(self.claim(rel, text), text)
            written.append(self.out_dir / rel)
        now = set(pages) | set(drawn)
        for rel in sorted(self.previous - now):
            stale = self.out_dir / rel
            stale.unlink(missing_ok=True)
            for folder in stale.parents:  # folders render made and left empty
                if folder == self.out_dir or not folder.is_dir() or any(folder.iterdir()):
                    break
                folder.rmdir()
        write_json(self.out_dir / MANIFEST, {"schema": SCHEMA, "files": sorted(now)})
        return written + [self.out_dir / rel for rel in drawn]
