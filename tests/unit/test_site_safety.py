"""Strings from tests (ids, parameters, messages, sources) land on pages shown, never run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from claimbook.render.site import render_site
from claimbook.storage.results import latest_results

from tests.unit.conftest import strict_build

ROOT = Path(__file__).resolve().parents[2]

HOSTILE = r'''
import pytest
from claimbook import Figure, Source, claim

NULL = Source(id="null", title="A title: with 'quotes' and \"double\" ones", document="a`b<i>.txt")
YES = Source(id="yes", title="Yes", document="yes.txt")


@claim(id="null.html", level="likely", source=NULL, section="1", printed={"cost $x$": 1},
       figure=Figure(title="$\\frac{a}{", xlabel="$x", ylabel="y"))
@pytest.mark.parametrize("name", ["<img src=x onerror=alert(1)>", "a`b</code><b>bold</b>"])
def test_html(name, seed, measure):
    """A claim whose parameters carry HTML and backticks."""
    measure("cost $x$", 2, printed=1)
    measure("curve: $a", [1.0, 2.0], x=[0, 1])
    assert seed == 1, f"failed with \x1b[31m{name}\x07"


@claim(id="yes.title", level="established", source=YES, section="<script>alert(8)</script>",
       scope="<script>alert(7)</script>", remark="<script>alert(6)</script>",
       erratum="<script>alert(4)</script>", error="hostile-error",
       printed={"<script>alert(5)</script>": "<script>alert(3)</script>"})
def test_title(measure):
    """A sentence that ends the page's title </title><script>alert(9)</script> & more."""
    measure("<script>alert(5)</script>", 1, printed="<script>alert(3)</script>")
    measure.correct("<script>alert(2)</script> is the correction")
    assert False, "<script>alert(1)</script> in a failure message"


@claim(id="yes.off", level="established", source=YES, section="off")
def test_off(measure):
    """A claim of a source whose id a YAML 1.1 reader would take for a boolean."""
    measure("v", 1)
'''


def _front(page: str) -> dict:
    return yaml.safe_load(page.split("---\n")[1])


def test_hostile_strings_are_shown_not_run_and_the_strict_build_passes(pytester, tmp_path):
    pytester.makepyfile(test_claims=HOSTILE)
    pytester.runpytest("-p", "no:cacheprovider")
    docs = tmp_path / "reports"
    render_site(latest_results(pytester.path / "reports" / "results"), docs, ROOT / "templates")
    page = (docs / "claims" / "null.html.md").read_text()
    assert _front(page)["tags"] == ["likely", "refuted", "null"]  # the string, not None
    assert _front((docs / "claims" / "yes.off.md").read_text())["tags"][-1] == "yes"
    assert "\x1b" not in page and "\x07" not in page  # control characters shown, not raw
    assert "\\x1b" in page
    build = strict_build(docs, tmp_path)
    assert build.returncode == 0, build.stderr
    html = (tmp_path / "site" / "claims" / "null.html.html").read_text()  # pages as page.html
    assert "<img src=x" not in html and "<b>bold</b>" not in html  # no live HTML from a test
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    for built in (tmp_path / "site").rglob("*.html"):  # every page: the title, nav, tags
        assert "<script>alert(" not in built.read_text(), built
    errata = (tmp_path / "site" / "errata.html").read_text()  # shown there, as text
    assert "&lt;script&gt;alert(4)&lt;/script&gt;" in errata
    assert "&lt;script&gt;alert(2)&lt;/script&gt; is the correction" in errata
    assert (tmp_path / "site" / "figures" / "null.html.png").exists()  # "$" is not mathtext


def test_a_missing_anchor_fails_the_strict_build(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[to nowhere](#no-such-heading)\n")
    build = strict_build(docs, tmp_path, extra_css=[])
    assert build.returncode != 0
    assert "no-such-heading" in build.stderr


def test_a_doctored_manifest_or_claim_id_never_reaches_outside_the_docs_folder(tmp_path):
    """A manifest (restored from a cache, or force-added in a pull request) that lists paths
    outside the docs folder deletes nothing there; a claim id that leads out is refused."""
    import json

    from claimbook.render.owned import MANIFEST, Owned, RenderConflict

    docs, victim = tmp_path / "site" / "reports", tmp_path / "victim.txt"
    docs.mkdir(parents=True)
    victim.write_text("keep me")
    (tmp_path / "outside").mkdir()
    kept = tmp_path / "outside" / "kept.txt"
    kept.write_text("keep me too")
    listed = ["../../victim.txt", str(kept), "page.md", "", ".", "a/../../../victim.txt"]
    (docs / MANIFEST).write_text(json.dumps({"schema": "claimbook.render/1", "files": listed}))
    owned = Owned(docs)
    assert owned.previous == {"page.md"}
    owned.finish({"index.md": "# home\n"}, [])
    assert victim.read_text() == "keep me" and kept.read_text() == "keep me too"
    for rel in ("claims/../../../outside/x.md", "/tmp/x.md", "figures/../../x.png"):
        with pytest.raises(RenderConflict, match="leads out of"):
            Owned(docs).claim(rel)
    assert not (tmp_path / "outside" / "x.md").exists()
