"""``python -m claimbook init [FOLDER]``: a new book that runs as it is.

It writes a pyproject.toml with ``[tool.claimbook]`` and pytest's settings, a three-line
source text, its three claims as tests (a formula, a count with its printed value, and a
stochastic claim judged over seeds), mkdocs.yml for the site, a noxfile with the main
job, requirements.txt (claimbook from where this one was installed, pytest, nox, and the
torch pin a book that trains would add), a GitHub Actions workflow that installs them and
runs the main job, and a .gitignore. A file that already exists is never overwritten: init
names it and stops before writing anything.
"""

from __future__ import annotations

import argparse
import json
from importlib import metadata, resources
from pathlib import Path

FILES = {  # written name -> name inside claimbook/scaffold
    "pyproject.toml": "pyproject.toml",
    "notes.md": "notes.md",
    "tests/claims/test_notes.py": "tests/claims/test_notes.py",
    "mkdocs.yml": "mkdocs.yml",
    "noxfile.py": "noxfile.py",
    "requirements.txt": "requirements.txt",
    ".github/workflows/claims.yml": "workflow.yml",
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
    init.add_argument(
        "--claimbook-from",
        metavar="REQUIREMENT",
        help="how requirements.txt installs claimbook (default: from where this claimbook "
        "was installed: its VCS URL, wheel or folder, else claimbook==<version>)",
    )


def installed_from() -> str:
    """A pip requirement for the claimbook running now, from its install record (PEP 610):
    ``claimbook @ git+URL@COMMIT#subdirectory=...``, ``claimbook @ file:///...`` for a wheel
    or a folder, else ``claimbook==VERSION`` (installed from an index)."""
    dist = metadata.distribution("claimbook")
    record = dist.read_text("direct_url.json")
    if not record:
        return f"claimbook=={dist.version}"
    origin = json.loads(record)
    url, vcs = origin["url"], origin.get("vcs_info")
    if vcs:
        url = f"{vcs['vcs']}+{url}@{vcs.get('commit_id') or vcs.get('requested_revision')}"
    sub = origin.get("subdirectory")
    return f"claimbook @ {url}" + (f"#subdirectory={sub}" if sub else "")


def scaffold(folder: Path, title: str, claimbook: str | None = None) -> int:
    """Write the files into ``folder``; 1 (and nothing written) if any of them exists.
    ``claimbook``: the requirement that installs claimbook (default :func:`installed_from`)."""
    taken = [name for name in FILES if (folder / name).exists()]
    if taken:
        print(f"claimbook: init writes nothing: {', '.join(taken)} already in {folder}")
        return 1
    here = resources.files("claimbook") / "scaffold"
    requirement = claimbook or installed_from()
    for name, packaged in FILES.items():
        text = (here / packaged).read_text().replace("{{title}}", title.replace('"', "'"))
        text = text.replace("{{claimbook}}", requirement)
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    print(f"claimbook: a new book in {folder}: {', '.join(FILES)}")
    scheme = requirement.partition(" @ ")[2].split(":", 1)[0]  # file, git+file, https, ...
    if scheme.split("+")[-1] == "file":  # a folder, a wheel or a repository on this disk
        print(f"note: requirements.txt installs claimbook from this machine ({requirement});"
              " for CI, give a VCS URL or a wheel: init --claimbook-from REQUIREMENT")  # fmt: skip
    print("next: python -m pip install -r requirements.txt   (the book's environment)")
    print("      python -m pytest --claimbook-update-baseline  (the first run, accepted)")
    print("      python -m claimbook durations                  (commit what each run cost)")
    print("      nox -s claims                                   (claims, gate, site)")
    return 0
