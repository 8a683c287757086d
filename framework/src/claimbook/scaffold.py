"""``python -m claimbook init [FOLDER]``: a new book that runs as it is.

It writes a pyproject.toml with ``[tool.claimbook]`` and pytest's settings, a three-line
source text, its three claims as tests (a formula, a count with its printed value, and a
stochastic claim judged over seeds), mkdocs.yml for the site, a noxfile with the main
job, and a .gitignore. A file that already exists is never overwritten: init names it
and stops before writing anything.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

FILES = {  # written name -> name inside claimbook/scaffold
    "pyproject.toml": "pyproject.toml",
    "notes.md": "notes.md",
    "tests/claims/test_notes.py": "tests/claims/test_notes.py",
    "mkdocs.yml": "mkdocs.yml",
    "noxfile.py": "noxfile.py",
    ".gitignore": "gitignore",  # a dot file would be left out of the package's data
}


def add_init_parser(commands) -> None:
    init = commands.add_parser(
        "init",
        help="write a new book that runs as it is (nothing is overwritten)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    init.add_argument("folder", nargs="?", type=Path, default=Path("."))
    init.add_argument("--title", default="my notes", help="the book's title (default: my notes)")


def scaffold(folder: Path, title: str) -> int:
    """Write the files into ``folder``; 1 (and nothing written) if any of them exists."""
    taken = [name for name in FILES if (folder / name).exists()]
    if taken:
        print(f"claimbook: init writes nothing: {', '.join(taken)} already in {folder}")
        return 1
    here = resources.files("claimbook") / "scaffold"
    for name, packaged in FILES.items():
        text = (here / packaged).read_text().replace("{{title}}", title.replace('"', "'"))
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    print(f"claimbook: a new book in {folder}: {', '.join(FILES)}")
    print("next: python -m pytest --claimbook-update-baseline  (the first run, accepted)")
    print("      nox -s claims                                   (claims, site, gate)")
    return 0
