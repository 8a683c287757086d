"""claimbook's own documentation: a short README, and the README with the reference pages
(docs/) built as one MkDocs site, strictly, so that every link and anchor resolves."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
MAX_README_LINES = 150


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def build_docs(tmp_path: Path, readme: str) -> subprocess.CompletedProcess:
    """docs/ with the README as its home page (its ``docs/`` links made relative), built."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / "index.md").write_text(readme.replace("](docs/", "]("))
    config = {
        "site_name": "claimbook",
        "docs_dir": str(docs),
        "site_dir": str(tmp_path / "site"),
        "strict": True,
        "validation": {
            "omitted_files": "warn",
            "absolute_links": "warn",
            "unrecognized_links": "warn",
            "anchors": "warn",
        },
        "theme": {"name": "material", "font": False},
        "markdown_extensions": ["tables", "admonition", "attr_list", {"toc": {"permalink": True}}],
    }
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config))
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(path)],
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )


def test_the_readme_and_the_reference_build_with_every_link_valid(tmp_path):
    build = build_docs(tmp_path, (ROOT / "README.md").read_text())
    assert build.returncode == 0, build.stderr


def test_a_broken_link_or_anchor_fails_the_docs_build(tmp_path):
    readme = (ROOT / "README.md").read_text()
    broken = build_docs(tmp_path / "a", readme + "\n[gone](docs/no-such-page.md)\n")
    assert broken.returncode != 0 and "no-such-page.md" in broken.stderr
    anchor = build_docs(tmp_path / "b", readme + "\n[gone](docs/claims.md#no-such-heading)\n")
    assert anchor.returncode != 0 and "no-such-heading" in anchor.stderr
