"""Write the MkDocs docs_dir from one results file: pages from templates, figures from data.

Stage one builds view models (views.py), stage two fills the Jinja2 templates;
nothing here runs an experiment.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import jinja2

from claimbook.history import History
from claimbook.render.figures import claim_figure, strip_figure, trend_figure
from claimbook.render.views import site_view, trend_names, trend_rows
from claimbook.results import load_results

GENERATED = ("index.md", "tags.md", "errata.md", "claims", "figures", "sources", "assets")
ASSETS = ("claimbook.css",)  # copied from the templates folder into docs_dir/assets
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")  # ~ is plain text without pymdownx.tilde


def md_escape(text) -> str:
    """Show ``text`` literally, on one line, in Markdown: HTML-escape it, backslash its specials."""
    one_line = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(one_line, quote=False))


def _environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        undefined=jinja2.StrictUndefined,  # a typo in a template fails the render
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = md_escape
    return env


def render_site(
    results_path: Path,
    out_dir: Path,
    templates: Path,
    previous_path: Path | None = None,
    repo_url: str = "",
    history_path: Path | None = None,
) -> list[Path]:
    """Render ``results_path`` into ``out_dir`` (the MkDocs docs_dir); return the files written.

    ``previous_path`` (an earlier results file) gives the home page its
    "recently changed" list; ``repo_url`` (e.g. a GitHub repository's URL)
    turns each test's file and line into a link at the run's commit.
    ``history_path`` (the run history, if it exists) gives each claim page a
    trend over runs and the home page the verdicts changed in recent runs.
    Previously generated pages and figures in ``out_dir`` are removed first;
    results files and the baseline beside them are left alone.

    Raises:
        claimbook.results.ResultsError: if the results file is unreadable.
        jinja2.TemplateError: if a template is missing or broken.
    """
    results = load_results(results_path)
    out_dir = Path(out_dir)
    for name in GENERATED:
        target = out_dir / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    figures, strips = {}, {}
    for claim in results["claims"]:
        rel = f"figures/{claim['id']}.png"
        if claim_figure(claim, out_dir / rel):
            figures[claim["id"]] = rel
        rel = f"figures/{claim['id']}.seeds.png"
        if strip_figure(claim, out_dir / rel):
            strips[claim["id"]] = rel
    previous = load_results(previous_path) if previous_path else None
    view = site_view(results, figures, strips, previous, repo_url)
    if history_path is not None and Path(history_path).exists():
        history = History(Path(history_path))
        view.history_changes = history.recent_changes()
        for claim in view.claims:
            trend = history.trend(claim.id)
            claim.trend_names = trend_names(trend)
            claim.trend = trend_rows(trend, claim.trend_names)
            rel = f"figures/{claim.id}.trend.png"
            if trend_figure(claim.id, trend, claim.trend_names, out_dir / rel):
                claim.trend_figure = rel
                figures[f"{claim.id}.trend"] = rel
        history.close()
    for asset in ASSETS:
        (out_dir / "assets").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(templates) / asset, out_dir / "assets" / asset)
    env = _environment(Path(templates))
    pages = {"index.md": env.get_template("index.md.j2").render(site=view)}
    pages["tags.md"] = env.get_template("tags.md.j2").render(site=view)
    pages["errata.md"] = env.get_template("errata.md.j2").render(site=view)
    for source in view.sources:
        pages[f"sources/{source.id}.md"] = env.get_template("source.md.j2").render(
            site=view, source=source
        )
    for claim in view.claims:
        pages[claim.page] = env.get_template("claim.md.j2").render(site=view, claim=claim)
    written = []
    for rel, text in pages.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    assets = [out_dir / "assets" / a for a in ASSETS]
    return written + assets + [out_dir / f for f in [*figures.values(), *strips.values()]]
