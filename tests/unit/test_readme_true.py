"""The README and docs/running.md true today.

Every number the README's prose states is either a figure of the run, checked against the
newest complete results in reports/results (where a clone has run one) or else against what
is committed (reports/baseline.json, reports/bench.json), a setting checked against the
code, or a time someone measured elsewhere, which must say who measured it and at which
commit. A number the test does not know fails it: add the figure here with its source.
The README's claimbook commands run as written, and the docs say what they do.
"""

from __future__ import annotations

import ast
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from claimbook.config import Settings
from claimbook.declare.design import LOOKS
from claimbook.judge.sequential import ALPHA
from claimbook.storage.results import latest_results, load_results

from tests.unit.conftest import noxfile_module

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
RUNNING = (ROOT / "docs" / "running.md").read_text()
VERDICT_WORDS = ("holds", "supported", "erratum", "inconclusive", "cited", "refuted",
                 "skipped", "equivalent", "not observed")  # fmt: skip


def prose(text: str) -> str:
    """The text a reader reads as sentences: fenced code and image paths left out."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"\]\([^)]*\)", "]", text)


def newest_complete() -> tuple[Path | None, dict | None]:
    try:
        path = latest_results(ROOT / "reports" / "results", True)
    except Exception:  # none there (a fresh clone): the committed files serve
        return None, None
    data = load_results(path)
    return (path, data) if (data["run"].get("outcome") or {}).get("complete") else (None, None)


def figures_of(data: dict) -> dict[str, int]:
    """The figures of a complete run the README states."""
    verdicts = collections.Counter(c["verdict"] for c in data["claims"])
    errata = [c for c in data["claims"] if c.get("erratum")]
    looks = data["run"].get("looks") or {}
    return {
        "claims": len(data["claims"]),
        "runs": looks.get("base_runs", 0) + looks.get("extra_runs", 0),
        "reads": data["run"]["runs_read"],
        "errors": len({c.get("error") or c["id"] for c in errata}),
        **{word: verdicts.get(word, 0) for word in VERDICT_WORDS},
    }


def committed_figures() -> dict[str, int]:
    """What reports/baseline.json gives of the same figures (claims and verdicts only)."""
    baseline = json.loads((ROOT / "reports" / "baseline.json").read_text())["claims"]
    verdicts = collections.Counter(c["verdict"] for c in baseline.values())
    return {"claims": len(baseline), **{word: verdicts.get(word, 0) for word in VERDICT_WORDS}}


# (pattern, figure) for the run's figures; each group is the number of that figure
RUN_FIGURES = [
    (r"(\d+) small models before it judges (\d+) claims", ("runs", "claims")),
    (r"(\d+) runs from an empty cache \((\d+) reads", ("runs", "reads")),
    (r"(\d+) claims, (\d+) training runs from an empty cache \((\d+)\s+reads",
     ("claims", "runs", "reads")),
    (r"(\d+) holds, (\d+) supported, (\d+) erratum \((\d+) distinct errors", (
        "holds", "supported", "erratum", "errors")),
    (r"(\d+) inconclusive, (\d+) cited, (\d+) refuted, (\d+) skipped, (\d+) equivalent",
     ("inconclusive", "cited", "refuted", "skipped", "equivalent")),
    (r"(\d+) not\s+observed \(statements about large models", ("not observed",)),
]  # fmt: skip
# a figure's words may wrap onto the next line of the Markdown source
RUN_FIGURES = [(pattern.replace(" ", r"\s+"), names) for pattern, names in RUN_FIGURES]
BENCH = json.loads((ROOT / "reports" / "bench.json").read_text())
# settings and rules the README states, with what the code says
SETTINGS = [
    (r"Python (3\.11)", "3.11", lambda: _noxfile_python()),
    (r"after (3), (5), (8) and (12) seeds", None, lambda: [str(n) for n in LOOKS]),
    (r"\(and (20) where declared\)", "20", lambda: "20"),
    (r"alpha: (0\.01) for\s+\[established\] claims and (0\.05)", None,
     lambda: [str(ALPHA["established"]), str(ALPHA["likely"])]),
    (r"`--budget (0\.3)`, the default, means (0\.3) x", None,
     lambda: [str(Settings.budget)] * 2),
]  # fmt: skip
# numbers that are names, not figures: commits, catalog prefixes, the source's own numbering
NAMES = [r"\b[0-9a-f]{7}\b", r"`ch04`", r"`dd2`", r"chapter 4", r"part 2", r"2-core",
         r"from 1000 on"]  # fmt: skip
# times measured elsewhere: each row says who measured it and at which commit
MEASURED_ELSEWHERE = r"\| ([^|]*?) at ([0-9a-f]{7})[^|]*?(as CI reported it|as a session measured it)[^|]*\| (\d+) s( \((\d+\.\d) min\))? \|"  # noqa: E501
BENCH_ROW = r"\| `nox -s bench` at ([0-9a-f]{7}): a re-run with nothing changed, whole session \| (\d+\.\d) s \|"  # noqa: E501


def _noxfile_python() -> str:
    """The Python version this book's noxfile sets (read, not run: importing a noxfile
    registers its sessions a second time in this process, which nox warns about)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [
            "PYTHON"
        ]:
            return ast.literal_eval(node.value)
    raise AssertionError("noxfile.py sets no PYTHON")


def _stated(text: str) -> dict[str, set[int]]:
    """Each run figure the README states, with every value it gives it."""
    stated: dict[str, set[int]] = collections.defaultdict(set)
    for pattern, names in RUN_FIGURES:
        for match in re.finditer(pattern, text):
            for name, value in zip(names, match.groups(), strict=True):
                stated[name].add(int(value))
    return stated


def _covered_spans(text: str) -> list[tuple[int, int]]:
    patterns = [p for p, _ in RUN_FIGURES] + [p for p, *_ in SETTINGS] + NAMES
    patterns += [MEASURED_ELSEWHERE, BENCH_ROW]
    return [m.span() for p in patterns for m in re.finditer(p, text)]


def test_every_number_in_the_readme_is_a_figure_this_test_checks():
    text = prose(README)
    spans = _covered_spans(text)
    unknown = [
        text[max(0, m.start() - 40) : m.end() + 20].replace("\n", " ")
        for m in re.finditer(r"\d+(?:[.,]\d+)*", text)
        if not any(start <= m.start() and m.end() <= end for start, end in spans)
    ]
    assert not unknown, f"numbers the test does not check (add each with its source): {unknown}"


def test_the_readme_states_each_run_figure_once_in_value():
    stated = _stated(prose(README))
    assert set(stated) == {"claims", "runs", "reads", "errors", *VERDICT_WORDS}
    assert all(len(values) == 1 for values in stated.values()), stated


def test_the_run_figures_match_what_is_committed():
    """Against reports/baseline.json (committed): the claims and their verdicts."""
    stated = {k: v.pop() for k, v in _stated(prose(README)).items()}
    committed = committed_figures()
    assert {k: stated[k] for k in committed} == committed, "against reports/baseline.json"


def test_the_run_figures_match_the_newest_complete_results():
    """What a run's code fixes (claims, training runs, reads, distinct errors) against the
    newest complete run. Its verdict counts are the accepted baseline's (above): a timing
    claim's verdict moves with the machine's load, so a run's own counts may differ by it."""
    path, data = newest_complete()
    if data is None:
        pytest.skip("no complete results in reports/results (a fresh clone): the figures were "
                    "compared with reports/baseline.json and reports/bench.json only")  # fmt: skip
    stated = {k: v.pop() for k, v in _stated(prose(README)).items()}
    fixed = ("claims", "runs", "reads", "errors")
    assert {k: stated[k] for k in fixed} == {k: figures_of(data)[k] for k in fixed}, path.name


def test_the_settings_the_readme_states_are_the_codes():
    text = prose(README)
    for pattern, _, actual in SETTINGS:
        match = re.search(pattern, text)
        assert match, pattern
        want = actual()
        assert list(match.groups()) == (want if isinstance(want, list) else [want]), pattern


def test_the_times_are_the_bench_or_say_who_measured_them():
    text = prose(README)
    bench = re.search(BENCH_ROW, text)
    assert bench, "the README's time of a re-run with nothing changed (reports/bench.json)"
    warm = BENCH["runs"]["warm, nothing changed"]
    assert BENCH["git_commit"].startswith(bench.group(1))
    assert float(bench.group(2)) == warm["wall_s"] and warm["claims_executed"] == 0
    rows = list(re.finditer(MEASURED_ELSEWHERE, text))
    assert len(rows) == 3, [m.group(0) for m in rows]
    for row in rows:
        assert subprocess.run(["git", "cat-file", "-e", f"{row.group(2)}^{{commit}}"], cwd=ROOT,
                              capture_output=True).returncode in (0, 128)  # fmt: skip
        if row.group(6):  # seconds and minutes agree
            assert round(int(row.group(4)) / 60, 1) == float(row.group(6)), row.group(0)


def test_the_first_screen_says_how_long_the_first_run_takes_and_where_the_texts_are():
    first_screen = README[: README.index("## Two commands")]
    assert "The first run takes about an hour" in first_screen
    assert "CLAIMBOOK_SOURCES_DIR" in first_screen and "never committed" in first_screen
    cold = [int(m.group(4)) for m in re.finditer(MEASURED_ELSEWHERE, prose(README))
            if "cold" in m.group(1)]  # fmt: skip
    assert cold and all(30 * 60 <= s <= 90 * 60 for s in cold), cold  # "about an hour"


def test_diff_and_export_in_the_readme_and_running_name_the_python_that_has_them():
    """claimbook lives in .nox/claims: a bare `python -m claimbook diff` fails in the
    README's own venv, so each diff or export a reader is shown names that Python (gate and
    site are the stages the noxfile runs)."""
    for name, text in (("README.md", README), ("docs/running.md", RUNNING)):
        found = list(re.finditer(r"(\S*)python -m claimbook (diff|export)", text))
        assert found, name
        for match in found:
            assert match.group(1).endswith(".nox/claims/bin/"), f"{name}: {match.group(0)}"


def test_the_readmes_diff_and_export_run_as_written(claims_project, pytester, tmp_path):
    claims_project('''
@claim(id="doc.one", level="established", source=DOC, section="1")
def test_one(measure):
    """One is one."""
    assert measure("v", 1) == 1
''')
    (results,) = (pytester.path / "reports" / "results").glob("run-*.json")
    commands = re.findall(r"`(\.nox/claims/bin/python -m claimbook (?:diff|export)[^`]*)`", README)
    assert len(commands) == 2, commands
    python = ROOT / ".nox" / "claims" / "bin" / "python"
    for command in commands:
        argv = command.replace("OLD NEW", f"{results} {results}").split()
        argv[0] = str(python if python.exists() else sys.executable)  # a fresh clone: this one
        done = subprocess.run(argv, cwd=pytester.path, capture_output=True, text=True)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert (pytester.path / "values.csv").read_text().startswith("claim")


def test_running_md_says_k_matches_claim_ids_and_keeps_its_paragraphs_whole():
    assert "-k matches test names only" not in RUNNING
    assert "-k matches test names and claim ids" in RUNNING
    for paragraph in re.split(r"\n\s*\n", prose(RUNNING)):
        assert paragraph.count("(") == paragraph.count(")"), paragraph[:200]


class _InstallOnly:
    """A nox session under --install-only: installs, and skips every command it is given."""

    def __init__(self, tmp: Path):
        self.posargs, self.tmp, self.logged, self.runs = [], tmp, [], []
        self.virtualenv = type("V", (), {"location": str(tmp)})()

    def install(self, *args, **kwargs):
        pass

    def run(self, *args, **kwargs):
        self.runs.append(args)  # nox logs "Skipping ... run, as --install-only is set."

    def log(self, message):
        self.logged.append(message)

    def create_tmp(self):
        return str(self.tmp)


@pytest.mark.parametrize("session", ["claims", "site"])
def test_install_only_claims_nothing_was_built(session, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    fake = _InstallOnly(tmp_path)
    getattr(noxfile_module(ROOT / "noxfile.py"), session).func(fake)
    said = " ".join(fake.logged)
    assert "built" not in said and "site" not in said, said  # only a command run says so
