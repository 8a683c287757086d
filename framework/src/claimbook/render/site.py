"""Write the MkDocs docs_dir from one results file: pages from templates, figures from data.

Stage one builds view models (views.py), stage two fills the Jinja2 templates;
nothing here runs an experiment.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import jinja2

from claimbook.declare.numbers import fmt
from claimbook.judge.method import load_table
from claimbook.render.coverage import coverage_views
from claimbook.render.figures import claim_figure, evidence_alt, evidence_figure, strip_figure
from claimbook.render.glossary import label_term, link_terms
from claimbook.render.markup import code, front_matter, heading, md_escape, text_line
from claimbook.render.method_view import method_rows
from claimbook.render.offline import copy_offline_assets
from claimbook.render.owned import Owned
from claimbook.render.perf import perf_view
from claimbook.render.trends import slug, trend_figure, trend_names, trend_rows
from claimbook.render.views import site_view
from claimbook.storage.atomic import corrupted_line, temporary_beside
from claimbook.storage.history import History, HistoryLocked
from claimbook.storage.receipts import read_decision
from claimbook.storage.results import load_results

CSS = "claimbook.css"  # from the templates (the book's copy first) into docs_dir/assets
BADGES = "badges.css.j2"  # the badges of the verdicts decided over seeds, appended to the css


def _environment(templates: Path | None) -> jinja2.Environment:
    """Templates from the book's ``templates`` folder first, then claimbook's own."""
    own = jinja2.PackageLoader("claimbook", "templates")
    book = [jinja2.FileSystemLoader(templates)] if templates and Path(templates).is_dir() else []
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([*book, own]),
        undefined=jinja2.StrictUndefined,  # a typo in a template fails the render
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = md_escape
    env.filters["code"] = code
    env.filters["heading"] = heading
    env.filters["text_line"] = text_line
    env.filters["front_matter"] = front_matter
    env.filters["slug"] = slug  # a verdict as a CSS class: "not equivalent" -> "not-equivalent"
    env.filters["num"] = fmt  # a measured number, compactly
    env.filters["terms"] = link_terms  # statistics words linked to the reading page
    env.filters["label_term"] = label_term
    return env


def _figure_data(claim: dict) -> dict:
    """What a claim's figures draw from: its id, figure spec and instances' measures
    (not durations or messages, which change between runs of an unchanged claim)."""
    keep = ("seed", "params", "outcome")
    return {
        "id": claim["id"],
        "figure": claim.get("figure"),
        "instances": [
            {
                **{k: i.get(k) for k in keep},
                "measures": [m for m in i["measures"] if not m.get("nonfinite")],  # not plotted
            }
            for i in claim["instances"]
        ],
    }


def _evidence_data(claim: dict) -> dict:
    """What a claim's evidence figure draws from: its rule, verdict and statistics."""
    return {
        "id": claim["id"],
        "verdict": claim["verdict"],
        "rule": claim.get("rule"),
        "statistics": claim.get("statistics"),
    }


class FigureStore:
    """Figures drawn earlier, by a hash of the drawing function's source and its arguments.

    A figure is kept as ``<key>.<sha256 of its bytes>.png``: its name vouches for its
    content, so a PNG whose bytes no longer match is named, removed and drawn again, never
    copied. One of an older claimbook (``<key>.png``, no checksum) is not read: drawn again.

    Args:
        directory: where the PNGs are kept (e.g. ``.claimbook-cache/figures``); None draws
            every figure.
        report: called with the line naming a corrupted figure (default: standard error).
    """

    def __init__(self, directory: Path | None, report=lambda line: print(line, file=sys.stderr)):
        self.directory = Path(directory) if directory else None
        self.report = report
        self._code: dict[str, str] = {}  # module -> hash of its source

    def _source(self, draw) -> str:
        """A hash of the source of ``draw``'s module and of the modules it reads its data
        through (evidence: the evidence figure's panels): a change there draws afresh."""
        names = [draw.__module__, "claimbook.render.evidence"]
        for name in names:
            if name not in self._code:
                source = Path(sys.modules[name].__file__).read_bytes()
                self._code[name] = hashlib.sha256(source).hexdigest()
        return "".join(self._code[n] for n in names)

    def draw(self, draw, *args) -> bool:
        """``draw(*args)``, whose last argument is the PNG path; True if it wrote a figure."""
        *data, path = args
        if self.directory is None:
            return draw(*args)
        payload = json.dumps([draw.__name__, self._source(draw), data], sort_keys=True, default=str)
        key = hashlib.sha256(payload.encode()).hexdigest()[:32]
        empty = self.directory / f"{key}.none"
        if empty.exists():
            return False
        stored = self._intact(key)
        if stored is None:
            partial = temporary_beside(self.directory / f"{key}.png")  # unique per render
            try:
                if not draw(*data, partial):
                    empty.touch()  # nothing to keep: no stored PNG
                    return False
                stored = self.directory / f"{key}.{_sha256(partial)}.png"
                partial.replace(stored)  # one step: a reader sees the whole PNG or none
            finally:
                partial.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(stored, path)
        return True

    def _intact(self, key: str) -> Path | None:
        """The stored PNG of ``key`` whose bytes match its name's sha256, or None; one that
        does not match is named and removed."""
        for stored in sorted(self.directory.glob(f"{key}.*.png")):
            try:
                if _sha256(stored) == stored.name.split(".")[1]:
                    return stored
            except FileNotFoundError:  # removed by another render meanwhile
                continue
            self.report(corrupted_line(stored, "redrawn"))
            stored.unlink(missing_ok=True)
        return None


def _sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def render_site(
    results_path: Path,
    out_dir: Path,
    templates: Path,
    previous_path: Path | None = None,
    repo_url: str = "",
    history_path: Path | None = None,
    figure_store: Path | None = None,
    bench_path: Path | None = None,
    coverage_dir: Path | None = None,
    sources_dir: Path | None = None,
    inputs: str | None = None,
) -> list[Path]:
    """Render ``results_path`` into ``out_dir`` (the MkDocs docs_dir); return the files written.

    ``previous_path`` (an earlier results file) gives the home page its
    "recently changed" list; ``repo_url`` (e.g. a GitHub repository's URL)
    turns each test's file and line into a link at the run's commit.
    ``history_path`` (the run history, if it exists) gives each claim page a
    trend over runs and the home page the verdicts changed in recent runs.
    ``bench_path`` (reports/bench.json, if it exists) fills the performance page.
    ``coverage_dir`` (the coverage maps, if the folder exists) gives each mapped source a
    coverage page, its text read from ``sources_dir`` (default ``$CLAIMBOOK_SOURCES_DIR``).
    ``figure_store`` keeps every figure drawn, by a hash of its data, so that an
    unchanged figure is copied rather than drawn again (matplotlib is most of a
    render's time). ``templates`` (the book's folder, if it exists) overrides claimbook's
    templates and CSS file by file. Only the files the previous render wrote are replaced or
    removed (:class:`claimbook.render.owned.Owned`); every other file of ``out_dir`` (the
    book's own pages, results, baseline) is left alone, and one in the way is an error.
    ``inputs``, the digest of what this render reads, is recorded with its files.

    Raises:
        claimbook.results.ResultsError: if the results file is unreadable.
        claimbook.coverage.CoverageMapError: if a coverage map is malformed.
        jinja2.TemplateError: if a template is missing or broken.
    """
    results = load_results(results_path)
    out_dir = Path(out_dir)
    owned = Owned(out_dir)
    store = FigureStore(figure_store)
    figures, strips, evidence = {}, {}, {}
    for claim in results["claims"]:
        drawn = _figure_data(claim)
        rel = f"figures/{claim['id']}.png"
        if store.draw(claim_figure, drawn, owned.claim(rel)):
            figures[claim["id"]] = rel
        rel = f"figures/{claim['id']}.seeds.png"
        if store.draw(strip_figure, drawn, owned.claim(rel)):
            strips[claim["id"]] = rel
        rel = f"figures/{claim['id']}.evidence.png"
        if claim.get("statistics") and store.draw(
            evidence_figure, _evidence_data(claim), owned.claim(rel)
        ):
            evidence[claim["id"]] = (rel, evidence_alt(claim))
    previous = load_results(previous_path) if previous_path else None
    view = site_view(results, figures, strips, previous, repo_url, evidence, sources_dir)
    view.gate = read_decision(results_path, results)  # None: the gate has not judged it
    view.compared = bool(results.get("comparison")) and not results["comparison"].get("error")
    titles = {source.id: source.title for source in view.sources}
    coverage = coverage_views(results, coverage_dir, sources_dir, titles)
    for source in view.sources:
        source.coverage = next((c.page for c in coverage if c.id == source.id), "")
    history = None
    if history_path is not None and Path(history_path).exists():
        try:
            history = History(Path(history_path))
        except HistoryLocked as exc:  # trends wait for the next render; the history is kept
            print(f"claimbook: no trends this time: {exc}")
    if history is not None:
        paged = {claim.id for claim in view.claims}  # a claim the history names may be gone
        view.history_changes = [{**change, "linked": change["claim"] in paged}
                                for change in history.recent_changes()]  # fmt: skip
        for claim in view.claims:
            trend = history.trend(claim.id)  # repeats collapsed, values by measure label
            trend = [{**t, "values": {claim.names.get(k, k): v for k, v in t["values"].items()}}
                     for t in trend]  # fmt: skip
            claim.trend_names = trend_names(trend)
            printed = {row.name: row.printed for row in claim.rows if row.printed}
            claim.trend = trend_rows(trend, claim.trend_names, printed, claim.yearly)
            rel = f"figures/{claim.id}.trend.png"
            if store.draw(trend_figure, claim.id, trend, claim.trend_names, owned.claim(rel)):
                claim.trend_figure = rel
                figures[f"{claim.id}.trend"] = rel
        history.close()
    env = _environment(templates)
    # mkdocs.yml loads claimbook.css alone: the verdicts' badges are appended to it
    pages = {f"assets/{CSS}": _asset(env, CSS) + "\n" + env.get_template(BADGES).render()}
    pages["index.md"] = env.get_template("index.md.j2").render(site=view)
    pages["counts.md"] = env.get_template("counts.md.j2").render(site=view)
    pages["tags.md"] = env.get_template("tags.md.j2").render(site=view)
    pages["errata.md"] = env.get_template("errata.md.j2").render(site=view)
    reading = env.get_template("reading.md.j2")
    pages["reading.md"] = reading.render(site=view, examples=view.examples)
    perf = perf_view(results, bench_path)  # this run's figures; bench.json as an older record
    pages["performance.md"] = env.get_template("performance.md.j2").render(perf=perf)
    rows, current = load_table()
    budget = (results["run"].get("looks") or {}).get("budget", 0)
    pages["method.md"] = env.get_template("method.md.j2").render(
        rows=method_rows(rows, results), current=current, budget=budget
    )
    for source in view.sources:
        pages[source.page] = env.get_template("source.md.j2").render(site=view, source=source)
        if source.checks:
            checks = env.get_template("source_checks.md.j2")
            pages[source.checks_page] = checks.render(site=view, source=source)
    for page in coverage:
        pages[page.page] = env.get_template("coverage.md.j2").render(site=view, source=page)
    for claim in view.claims:
        pages[claim.page] = env.get_template("claim.md.j2").render(site=view, claim=claim)
    drawn = [*figures.values(), *strips.values(), *(rel for rel, _ in evidence.values())]
    # KaTeX and the search shim; ``inputs`` (render/stamp.py) lets an unchanged site be kept
    return owned.finish(pages, drawn + copy_offline_assets(owned), inputs)


def _asset(env: jinja2.Environment, name: str) -> str:
    """A static file of the templates (the book's copy first), as text."""
    source, _, _ = env.loader.get_source(env, name)
    return source
