"""A book's settings ([tool.claimbook]), claimbook as a guest in other pytest sessions, and
render's ownership of the docs folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from claimbook import config
from claimbook.config import ConfigError, Settings
from claimbook.render.owned import MANIFEST, RenderConflict
from claimbook.render.site import render_site
from claimbook.storage.results import latest_results

from tests.unit.conftest import HEADER

PASSING = """
@claim(id="doc.sum", level="established", source=DOC, section="1", printed={"sum": 4})
def test_sum(seed, measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2, printed=4) == 4
"""


def _settings(tmp_path: Path, text: str) -> Settings:
    (tmp_path / "pyproject.toml").write_text(text)
    config.load.cache_clear()
    return config.load(tmp_path / "pyproject.toml")


def test_settings_are_read_relative_to_their_file(tmp_path, monkeypatch):
    monkeypatch.delenv("CLAIMBOOK_CACHE_DIR", raising=False)
    monkeypatch.delenv("CLAIMBOOK_SOURCES_DIR", raising=False)
    s = _settings(
        tmp_path,
        '[tool.claimbook]\ntitle = "T"\nresults = "out/results"\nsources_dir = "texts"\n'
        'packages = ["mybook"]\n[[tool.claimbook.sources]]\nid = "a"\ntitle = "A"\npath = "a.md"\n',
    )
    assert s.title == "T" and s.packages == ("mybook",)
    assert s.path("results") == tmp_path / "out" / "results"
    assert s.sources_folder() == tmp_path / "texts"
    assert s.cache_dir() == tmp_path / ".claimbook-cache"  # a default
    assert s.source("a").path == "a.md"
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", "/elsewhere")  # one machine's place wins
    assert s.sources_folder() == Path("/elsewhere")
    with pytest.raises(ConfigError, match=re.escape("no [[tool.claimbook.sources]] with id 'b'")):
        s.source("b")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("seed = '0'", "has no setting 'seed'"),
        ("packages = 'mybook'", "packages must be a list of names"),
        ("run_seconds = 0", "run_seconds must be a number > 0"),
        ("replay = 'nox -s claims'", "replay must contain {test}"),
        ("[[tool.claimbook.sources]]\nid = 'a'", "needs at least id and title"),
        ("title = 3", "title must be a string"),
    ],
)
def test_a_malformed_setting_is_refused_naming_it(tmp_path, table, message):
    with pytest.raises(ConfigError, match=message):
        _settings(tmp_path, f"[tool.claimbook]\n{table}\n")


def test_without_a_table_every_default_holds(tmp_path):
    s = _settings(tmp_path, "[project]\nname = 'x'\n")
    assert s.root == tmp_path and s.claims == "tests/claims" and s.seeds == "0,1,2"


def test_the_books_settings_steer_the_plugin(pytester):
    pytester.makepyprojecttoml(
        '[tool.claimbook]\nseeds = "0-4"\nresults = "out"\ntitle = "My notes"\n'
        'replay = "make claim T={test}{seeds}"\n'
    )
    pytester.makepyfile(
        test_claims=HEADER + PASSING.replace("assert measure", "assert seed != 3 and measure")
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == 1
    (path,) = (pytester.path / "out").glob("run-*.json")
    data = json.loads(path.read_text())
    assert data["run"]["seeds"] == [0, 1, 2, 3, 4] and data["run"]["book"] == "My notes"
    failed = [i for i in data["claims"][0]["instances"] if i["outcome"] == "failed"]
    assert (
        failed[0]["replay"] == 'make claim T="test_claims.py::test_sum[seed3]" --claimbook-seeds 3'
    )


def test_another_projects_seed_fixture_is_left_alone(pytester):
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef seed():\n    return 42\n")
    pytester.makepyfile("def test_uses_seed(seed):\n    assert seed == 42\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=1)
    assert "[seed" not in result.stdout.str() and "claimbook:" not in result.stdout.str()
    assert not (pytester.path / "reports").exists()
    assert not (pytester.path / ".claimbook-cache").exists()


def test_measured_values_stay_out_of_junit_xml_unless_asked(pytester):
    pytester.makepyfile(test_claims=HEADER + PASSING)
    for extra, present in (((), False), (("--claimbook-junit-values",), True)):
        xml = pytester.path / "junit.xml"
        result = pytester.runpytest("-p", "no:cacheprovider", f"--junitxml={xml}", *extra)
        assert result.ret == 0
        assert ("claimbook.measure" in xml.read_text()) is present
    data = json.loads(
        sorted((pytester.path / "reports" / "results").glob("*.json"))[-1].read_text()
    )
    assert data["claims"][0]["instances"][0]["measures"][0]["value"] == 4  # still recorded


def test_render_keeps_the_authors_files_and_removes_only_its_own(claims_project, pytester):
    claims_project(PASSING + PASSING.replace("doc.sum", "doc.two").replace("test_sum", "test_two"))
    results = latest_results(pytester.path / "reports" / "results")
    docs = pytester.path / "docs"
    (docs / "claims").mkdir(parents=True)
    (docs / "about.md").write_text("# About\n")
    (docs / "claims" / "notes.md").write_text("mine\n")  # in a folder render writes into
    render_site(results, docs, None)
    assert (docs / "about.md").read_text() == "# About\n"
    assert (docs / "claims" / "notes.md").read_text() == "mine\n"
    assert (docs / "claims" / "doc.two.md").exists() and (docs / MANIFEST).exists()
    claims_project(PASSING)  # doc.two is gone: its page and figures go, nothing else
    render_site(latest_results(pytester.path / "reports" / "results"), docs, None)
    assert not (docs / "claims" / "doc.two.md").exists()
    assert not (docs / "figures" / "doc.two.png").exists()
    assert (docs / "about.md").exists() and (docs / "claims" / "notes.md").exists()
    (docs / MANIFEST).unlink()  # a page render would write, not written by it: an error
    (docs / "index.md").write_text("# The author's home page\n")
    with pytest.raises(RenderConflict, match=re.escape("index.md exists and was not written by")):
        render_site(latest_results(pytester.path / "reports" / "results"), docs, None)
    assert (docs / "index.md").read_text() == "# The author's home page\n"


def test_a_books_template_replaces_claimbooks_own(claims_project, pytester, tmp_path):
    claims_project(PASSING)
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "errata.md.j2").write_text("# Our errata: {{ site.errata | length }}\n")
    (templates / "claimbook.css").write_text(".ours { color: red; }\n")
    docs = tmp_path / "docs"
    render_site(latest_results(pytester.path / "reports" / "results"), docs, templates)
    assert (docs / "errata.md").read_text() == "# Our errata: 0\n"
    css = (docs / "assets" / "claimbook.css").read_text()
    assert css.startswith(".ours { color: red; }") and ".cb-inconclusive" in css  # + badges
    assert "# Claims" in (docs / "index.md").read_text()  # claimbook's own, titled by default


def test_the_books_packages_are_its_code_wherever_they_are_installed():
    from claimbook.runs.keys import module_closure, package_sources, source_hash

    assert module_closure("jinja2.utils") == []  # an installed library: not the book's code
    followed = module_closure("jinja2.utils", ("jinja2",))
    assert "jinja2.utils" in followed and "jinja2" in followed  # the package's __init__ too
    assert source_hash("jinja2.utils", ("jinja2",)) != source_hash("jinja2.utils")
    assert len(package_sources("jinja2")) == 64
    assert package_sources("jinja2") != package_sources("markupsafe")
    missing = re.escape("packages setting names 'no_such_book'")
    with pytest.raises(ModuleNotFoundError, match=missing):
        package_sources("no_such_book")


def test_init_writes_a_book_and_never_overwrites(tmp_path, capsys):
    from claimbook.__main__ import main

    assert main(["init", str(tmp_path), "--title", "my notes"]) == 0
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == [".github/workflows/claims.yml", ".gitignore", "mkdocs.yml", "notes.md",
                       "noxfile.py", "pyproject.toml", "requirements.txt",
                       "tests/claims/test_notes.py"]  # fmt: skip
    s = _settings(tmp_path, (tmp_path / "pyproject.toml").read_text())
    assert s.title == "Claims of my notes, tested" and s.source("notes").path == "notes.md"
    (tmp_path / "notes.md").write_text("mine\n")
    assert main(["init", str(tmp_path)]) == 1
    assert "notes.md" in capsys.readouterr().out and (tmp_path / "notes.md").read_text() == "mine\n"


def test_a_malformed_setting_stops_pytest_naming_it(pytester):
    pytester.makepyprojecttoml('[tool.claimbook]\nseed = "0"\n')
    pytester.makepyfile(test_claims=HEADER + PASSING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pyproject.toml: [[]tool.claimbook[]] has no setting 'seed'*"])


def test_init_pins_claimbook_where_it_came_from_and_torch_as_a_comment(tmp_path, capsys):
    from claimbook.__main__ import main
    from claimbook.scaffold import installed_from

    assert main(["init", str(tmp_path / "a")]) == 0
    lines = (tmp_path / "a" / "requirements.txt").read_text().splitlines()
    assert installed_from() in lines and "pytest>=8" in lines and "nox" in lines
    assert "# torch==2.13.0" in lines  # a comment: a book that trains nothing needs no torch
    # this checkout's claimbook is installed from a folder: the note says CI needs another
    assert installed_from().startswith("claimbook @ file://")
    assert "for CI, give a VCS URL or a wheel" in capsys.readouterr().out
    url = "claimbook @ git+https://example.org/claimbook@v1#subdirectory=framework"
    assert main(["init", str(tmp_path / "b"), "--claimbook-from", url]) == 0
    assert url in (tmp_path / "b" / "requirements.txt").read_text().splitlines()
    assert "for CI, give a VCS URL or a wheel" not in capsys.readouterr().out
    here = "claimbook @ git+file://localhost/src/claimbook@abc#subdirectory=framework"
    assert main(["init", str(tmp_path / "c"), "--claimbook-from", here]) == 0
    assert "for CI, give a VCS URL or a wheel" in capsys.readouterr().out  # a repo on this disk


def test_installed_from_reads_the_install_record(monkeypatch):
    """PEP 610's direct_url.json, as pip writes it for a VCS install, a wheel and an index."""
    from claimbook import scaffold

    records = {
        "vcs": {"url": "https://example.org/cb.git", "subdirectory": "framework",
                "vcs_info": {"vcs": "git", "commit_id": "abc123"}},
        "wheel": {"url": "file:///w/claimbook-0.4-py3-none-any.whl", "archive_info": {}},
        "index": None,
    }  # fmt: skip

    class Dist:
        version = "0.4"

        def __init__(self, record):
            self.record = record

        def read_text(self, name):
            return json.dumps(self.record) if self.record else None

    want = {
        "vcs": "claimbook @ git+https://example.org/cb.git@abc123#subdirectory=framework",
        "wheel": "claimbook @ file:///w/claimbook-0.4-py3-none-any.whl",
        "index": "claimbook==0.4",
    }
    for kind, record in records.items():
        monkeypatch.setattr(scaffold.metadata, "distribution", lambda _, r=record: Dist(r))
        assert scaffold.installed_from() == want[kind]


def test_a_book_fixes_its_options_in_its_settings_and_the_command_line_wins(pytester):
    pytester.makepyprojecttoml(
        '[tool.claimbook]\nclaims = "."\nbudget = 2\nworkers = 1\nrequire_baseline = true\n'
    )
    pytester.makepyfile(test_claims=HEADER + PASSING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 1  # require_baseline: no baseline file, the run fails
    result.stdout.fnmatch_lines(["*baseline*"])
    files = sorted((pytester.path / "reports" / "results").glob("run-*.json"))
    data = json.loads(files[-1].read_text())
    assert data["run"]["looks"]["budget"] == 2.0
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--claimbook-budget", "0")
    files = sorted((pytester.path / "reports" / "results").glob("run-*.json"))
    assert json.loads(files[-1].read_text())["run"]["looks"]["budget"] == 0.0


def test_a_malformed_option_setting_stops_pytest_naming_it(pytester):
    for bad in ('budget = "lots"', "workers = 0", 'require_baseline = "yes"'):
        pytester.makepyprojecttoml(f"[tool.claimbook]\n{bad}\n")
        pytester.makepyfile(test_claims=HEADER + PASSING)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.USAGE_ERROR, bad
        name = bad.split()[0]
        result.stderr.fnmatch_lines([f"*[[]tool.claimbook[]] {name} must be*"])
