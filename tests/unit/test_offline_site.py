"""What the site needs to work opened from disk: its math marked and escaped, its assets."""

from __future__ import annotations

from pathlib import Path

import markdown
import pytest
import yaml
from claimbook.render.coverage import math_cell
from claimbook.render.offline import copy_offline_assets
from claimbook.render.owned import Owned, RenderConflict

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = [
    ROOT / "mkdocs.yml",
    ROOT / "framework" / "src" / "claimbook" / "scaffold" / "mkdocs.yml",
    ROOT / "examples" / "little-book" / "mkdocs.yml",
]


def cell_html(text: str) -> str:
    """``text`` as the coverage page's table cell, through the project's Markdown setup."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    names, settings = [], {}
    for entry in config["markdown_extensions"]:
        name, options = next(iter(entry.items())) if isinstance(entry, dict) else (entry, None)
        names.append(name)
        settings[name] = options or {}
    table = f"| text |\n| --- |\n| {math_cell(text)} |\n"
    return markdown.markdown(table, extensions=names, extension_configs=settings)


def test_math_is_marked_as_arithmatex_marks_it_and_the_rest_stays_literal():
    html = cell_html(r"Each \(W_j\) is a \(1 < n_{kv}\) matrix | <b>here</b>.")
    assert r'<span class="arithmatex">\(W_j\)</span>' in html  # the LaTeX, unchanged
    assert r'<span class="arithmatex">\(1 &lt; n_{kv}\)</span>' in html  # escaped, not markup
    assert "matrix | &lt;b&gt;here&lt;/b&gt;." in html and "<b>" not in html  # one cell
    display = cell_html(r"$$c_t = f_t \odot c_{t-1}$$")
    assert r'<span class="arithmatex">$$c_t = f_t \odot c_{t-1}$$</span>' in display


@pytest.mark.parametrize(
    "line",
    [
        "A pen costs $2 and a book $5.",  # a lone $ is money
        r"An unclosed \(x and a stray \] stay text.",
        r"An escaped \\(x\\) is no math.",
        "A line that holds cbmath0q, the placeholder's word.",
    ],
)
def test_what_is_not_clearly_math_is_shown_as_written(line):
    assert "arithmatex" not in math_cell(line)
    html = cell_html(line)
    assert "arithmatex" not in html and line in html  # the line, as written


def test_math_beside_the_placeholders_word_keeps_both():
    cell = math_cell(r"cbmath0q and \(x\)")
    assert cell.startswith("cbmath0q and ") and r'<span class="arithmatex">\\(x\\)</span>' in cell


def test_the_assets_are_copied_once_and_a_foreign_file_is_never_replaced(tmp_path):
    owned = Owned(tmp_path)
    copied = copy_offline_assets(owned)
    assert {"assets/math.js", "assets/katex/katex.min.js", "assets/iframe-worker/shim.js"} <= set(
        copied
    )
    assert any(rel.endswith(".woff2") for rel in copied)  # KaTeX's fonts travel with the site
    stamp = (tmp_path / "assets" / "math.js").stat().st_mtime_ns
    owned.finish({}, copied)  # the manifest: render owns them now
    assert copy_offline_assets(Owned(tmp_path)) == copied
    assert (tmp_path / "assets" / "math.js").stat().st_mtime_ns == stamp  # unchanged: untouched
    other = tmp_path / "other"
    (other / "assets").mkdir(parents=True)
    (other / "assets" / "math.js").write_text("// the author's own")
    with pytest.raises(RenderConflict):
        copy_offline_assets(Owned(other))
    assert (other / "assets" / "math.js").read_text() == "// the author's own"
    (tmp_path / ".claimbook-render.json").unlink()  # the same files, no record: taken over
    assert copy_offline_assets(Owned(tmp_path)) == copied


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.parent.name)
def test_each_mkdocs_yml_opens_from_disk_and_loads_only_copied_assets(path, tmp_path):
    config = yaml.safe_load(path.read_text().replace("{{title}}", "t"))
    assert config["use_directory_urls"] is False and "offline" in config["plugins"]
    assert any(
        isinstance(e, dict) and e.get("pymdownx.arithmatex", {}).get("generic")
        for e in config["markdown_extensions"]
    )
    copied = set(copy_offline_assets(Owned(tmp_path))) | {"assets/claimbook.css"}
    loaded = config["extra_css"] + config["extra_javascript"] + config["extra"]["polyfills"]
    assert set(loaded) <= copied  # no CDN: every script and style is a file render writes
