"""Every claim id a remark, reason, scope or correction names is a claim the suite declares.

The claim modules and coverage maps are read as text: an id is ``ch04.`` or ``dd2.`` and
kebab-case words (a file name such as ``dd2.toml`` is none; ``ch04.shakespeare-*`` names
every claim with that prefix). Before issue 36 a remark named ch04.induction-heads, which
no test declares (the claim is ch04.induction-circuit).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"(?<![\w/.-])((?:ch04|dd2)\.[a-z0-9]+(?:-[a-z0-9]+)*)(-\*)?(?![\w(-]|\.\w)")
DECLARED = re.compile(r"@claim\(\s*(?:id=)?\"([^\"]+)\"")
FILES = ("toml", "py", "md", "txt", "json")


def texts() -> dict[str, str]:
    """The claim modules and the coverage maps, by path."""
    paths = [
        *sorted((ROOT / "tests/claims").glob("*.py")),
        *sorted((ROOT / "coverage").glob("*.toml")),
    ]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths}


def declared(files: dict[str, str]) -> set[str]:
    return {m[1] for text in files.values() for m in DECLARED.finditer(text)}


def unknown(files: dict[str, str], ids: set[str]) -> list[str]:
    """Each id the files name that no claim has, as "path: id"."""
    out = []
    for path, text in files.items():
        for m in NAMED.finditer(text):
            name, prefix = m[1], m[2]
            if name.split(".")[1] in FILES:
                continue
            known = any(i.startswith(name + "-") for i in ids) if prefix else name in ids
            if not known:
                out.append(f"{path}: {name}{prefix or ''}")
    return out


def test_every_claim_id_named_is_declared():
    files = texts()
    ids = declared(files)
    assert len(ids) > 150
    assert not unknown(files, ids)


def test_a_remark_naming_a_missing_claim_is_caught():
    files = texts()
    ids = declared(files)
    path = "tests/claims/test_code_blocks_ch04.py"
    planted = dict(
        files, **{path: files[path].replace("ch04.induction-circuit)", "ch04.induction-heads)")}
    )
    assert unknown(planted, ids) == [f"{path}: ch04.induction-heads"]


def test_prefixes_and_file_names():
    ids = {"ch04.shakespeare-gap", "dd2.sparse-models"}
    text = {"x": "see ch04.shakespeare-*, dd2.toml, dd2.sparse-models and dd2.sparse-modelz"}
    assert unknown(text, ids) == ["x: dd2.sparse-modelz"]
