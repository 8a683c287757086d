"""The same mkdocs.yml builds with MkDocs (Material) and with Zensical, its successor."""

from __future__ import annotations

import subprocess
import sys
import time

import yaml


def pages(site) -> set[str]:
    return {p.relative_to(site).as_posix() for p in site.rglob("*.html")}


def test_mkdocs_and_zensical_build_the_same_pages(built_site, capsys):
    mkdocs_pages = pages(built_site["site"])
    zensical_config = built_site["work"] / "zensical.yml"
    zensical_site = built_site["work"] / "zensical-site"
    config = yaml.safe_load(built_site["config"].read_text())
    # Zensical 0.1 panics on absolute folders: give them relative to its config
    config.update(docs_dir=built_site["docs"].name, site_dir=zensical_site.name)
    zensical_config.write_text(yaml.safe_dump(config))
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "zensical", "build", "--strict", "-f", str(zensical_config)],
        check=True,
        capture_output=True,
        cwd=built_site["work"],
    )
    with capsys.disabled():
        print(f"\nzensical build: {time.perf_counter() - start:.2f} s")
    assert {
        "index.html",
        "sources/doc.html",
        "claims/doc.odd.html",
        "tags.html",
    } <= mkdocs_pages  # pages as page.html (use_directory_urls: false): they open from disk
    assert pages(zensical_site) == mkdocs_pages
