"""The files that let the site work opened from disk, with no network: math and search.

Render copies them from claimbook's ``templates/assets`` into the docs folder's ``assets/``,
where mkdocs.yml loads them:

- ``katex/``: KaTeX 0.19.1 (MIT; the npm package ``katex``, its ``dist`` files as
  published: ``katex.min.js``, ``katex.min.css``, ``contrib/auto-render.min.js``, the
  woff2 fonts), which typesets the math that pymdownx.arithmatex marks. No PyPI package
  ships KaTeX's or MathJax's CSS and fonts without a CDN or a large dependency, so
  claimbook carries these few files.
- ``math.js``: claimbook's own, it runs KaTeX on the ``.arithmatex`` elements only.
- ``iframe-worker/shim.js``: iframe-worker 1.0.4 (MIT, by Material for MkDocs' author),
  which runs the search in a page opened from disk (a browser starts no Web Worker from a
  ``file://`` page). Material's offline plugin would load it from a CDN; mkdocs.yml names
  this copy in ``extra.polyfills`` instead.
"""

from __future__ import annotations

from importlib import resources

from claimbook.render.owned import Owned
from claimbook.storage.atomic import staged

FOLDER = "assets"  # in claimbook's templates and in the docs folder alike


def _files(folder, prefix: str) -> list[tuple[str, object]]:
    """Every file under ``folder`` (a package resource), as (relative path, resource)."""
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        rel = f"{prefix}/{entry.name}"
        found += _files(entry, rel) if entry.is_dir() else [(rel, entry)]
    return found


def copy_offline_assets(owned: Owned) -> list[str]:
    """Copy the assets into the docs folder, through ``owned``: a file render did not write
    is never replaced (one with the same bytes is taken over); return their paths in it."""
    root = resources.files("claimbook") / "templates" / FOLDER
    copied = []
    for rel, resource in _files(root, FOLDER):
        data, target = resource.read_bytes(), owned.out_dir / rel
        if not (target.is_file() and target.read_bytes() == data):  # the same: render's, kept
            target = owned.claim(rel)
            with staged(target) as partial:  # never a half-written file, nor a shared name
                partial.write_bytes(data)
        copied.append(rel)
    return copied
