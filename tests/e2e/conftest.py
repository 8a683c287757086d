"""A small site built for real from a results file the tests make themselves."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from claimbook.render.site import render_site
from claimbook.storage.results import latest_results

from tests.unit.test_render import BENCH  # the same benchmark record the unit test renders

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ODD_SENTENCE = "A sentence with a pipe | an <b>angle</b> and *stars* stays literal."

CLAIMS = f'''
from claimbook import Figure, Source, claim

DOC = Source(id="doc", title="A test document", document="doc.txt", path="doc.txt")


@claim(id="doc.odd", level="established", source=DOC, section="Tricky", at="loss is one",
       printed={{"loss": 1.0}}, figure=Figure(title="curve", xlabel="step", ylabel="loss"))
def test_odd(seed, measure):
    """{ODD_SENTENCE}"""
    measure("loss", 1.0 + seed, printed=1.0)
    measure("curve: model", [3.0, 2.0, 1.0 + seed], x=[0, 1, 2])


@claim(id="doc.zebra", level="likely", source=DOC, section="Animals")
def test_zebra(seed, measure):
    """Zebras gallop faster than snails in every seed."""
    measure("speed ratio", 100.0 + seed)


@claim(id="doc.typo", level="established", source=DOC, section="Animals",
       erratum="snails have one foot, not two")
def test_typo(measure):
    """A snail has two feet."""
    assert measure("feet", 1, printed=2) == 2
'''


# the document's text (read at render time, like a real source's) and its coverage map
TEXT = """A test document about <b>animals</b> | and losses.
The loss is one, in every seed.
Zebras gallop faster than snails [likely].
A snail has two feet [established].
Snails are slow and that is all [speculative].
"""
COVERAGE = """
source = "doc"

[[statement]]
id = "loss-one"
at = "The loss is one"
kind = "number"
values = ["one"]
claims = ["doc.odd"]
checked = "asserted"

[[statement]]
id = "zebras"
at = "Zebras gallop faster"
kind = "tagged"
level = "likely"
claims = ["doc.zebra"]

[[statement]]
id = "snail-feet"
at = "A snail has two feet"
kind = "tagged"
level = "established"
claims = ["doc.typo"]

[[statement]]
id = "slow-snails"
at = "Snails are slow"
kind = "tagged"
level = "speculative"

[[statement]]
id = "about"
at = "A test document about"
kind = "model"
status = "not-a-claim"
reason = "the title"
"""


def mkdocs_config(docs: Path, site: Path) -> dict:
    """The project's mkdocs.yml pointed at ``docs``/``site``."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config.update(docs_dir=str(docs), site_dir=str(site))
    return config


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> dict:
    """Run the claim tests twice with the plugin, render the results, build with MkDocs.

    Two complete runs, the claim's loss changed between them (a code change), give the
    run history two entries, so claim pages have a trend (an unchanged re-run or a partial
    run adds no point to it).

    Returns paths: ``config`` (the mkdocs.yml), ``docs`` and ``site``.
    """
    work = tmp_path_factory.mktemp("site")
    for folder, name, text in (("texts", "doc.txt", TEXT), ("coverage", "doc.toml", COVERAGE)):
        (work / folder).mkdir()
        (work / folder / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "CLAIMBOOK_CACHE_DIR"}
    for loss in ("1.0 + seed", "1.0 + 1.5 * seed"):  # seed 0 reproduces 1.0 in both
        (work / "test_claims.py").write_text(CLAIMS.replace("1.0 + seed,", f"{loss},"))
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
             str(work)],
            cwd=work,
            env=env,
            check=True,
            capture_output=True,
        )  # fmt: skip
    docs, site = work / "reports", work / "site"
    bench = work / "bench.json"
    bench.write_text(json.dumps(BENCH))
    render_site(
        latest_results(docs / "results"),
        docs,
        ROOT / "templates",
        history_path=docs / "history.sqlite",
        bench_path=bench,
        coverage_dir=work / "coverage",
        sources_dir=work / "texts",
    )
    config = work / "mkdocs.yml"
    config.write_text(yaml.safe_dump(mkdocs_config(docs, site)))
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)],
        check=True,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
    )
    return {"config": config, "docs": docs, "site": site, "work": work}


@pytest.fixture(scope="session")
def served_site(built_site):
    """The built site on http://127.0.0.1:<port>/, served from a thread."""
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(built_site["site"])
    )
    handler.log_message = lambda *args: None  # keep test output clean
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium driven by Playwright.

    Skipped, with the reason, where /usr/bin/chromium is missing, unless
    CLAIMBOOK_REQUIRE_BROWSER=1 (set by .ci/run, which installs it) makes
    that a failure.
    """
    if not CHROMIUM.exists():
        message = "needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
        if os.environ.get("CLAIMBOOK_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    flags = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=flags, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where page screenshots are kept as test artifacts (build/screenshots, git-ignored)."""
    folder = Path(os.environ.get("CLAIMBOOK_ARTIFACTS", ROOT / "build")) / "screenshots"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


# lines of LaTeX as source texts write them (\( \), $$ $$), one that only looks like markup,
# and money, which is no math: appended to the test document for the math site below
MATH_LINES = r"""Each \(W_j\) is a \(d \times d\) matrix, and \(1 < n_{kv}\) <b>here</b>.
$$c_t = f_t \odot c_{t-1} + i_t \odot \tilde c_t$$
A pen costs $2 and a book $5, which is no math.
"""


@pytest.fixture(scope="session")
def math_site(built_site, tmp_path_factory) -> dict:
    """The same results rendered again, the test document holding LaTeX, and built with
    MkDocs; returns paths ``docs`` and ``site``."""
    work = tmp_path_factory.mktemp("math-site")
    (work / "texts").mkdir()
    (work / "texts" / "doc.txt").write_text(TEXT + MATH_LINES)
    docs, site = work / "reports", work / "site"
    render_site(
        latest_results(built_site["docs"] / "results"),
        docs,
        ROOT / "templates",
        coverage_dir=built_site["work"] / "coverage",
        sources_dir=work / "texts",
    )
    config = work / "mkdocs.yml"
    config.write_text(yaml.safe_dump(mkdocs_config(docs, site)))
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)],
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return {"docs": docs, "site": site}


def served_book(work: Path, claims: str, text: str):
    """Run a one-file book (``claims`` as test_claims.py, ``text`` as texts/book.txt) over its
    seeds in ``work``, render and build its site, and serve it over HTTP: yields the site's
    URL and the docs folder, and stops the server after."""
    (work / "test_claims.py").write_text(claims)
    (work / "texts").mkdir()
    (work / "texts" / "book.txt").write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "CLAIMBOOK_CACHE_DIR"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(work)],
        cwd=work, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
    docs, built = work / "reports", work / "site"
    render_site(latest_results(docs / "results"), docs, ROOT / "templates",
                sources_dir=work / "texts")  # fmt: skip
    config = work / "mkdocs.yml"
    config.write_text(yaml.safe_dump(mkdocs_config(docs, built)))
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)],
        check=True, env={**env, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(built))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", docs
    server.shutdown()
    server.server_close()


@pytest.fixture
def page(browser):
    """A fresh browser page, 1280 x 1000 (a test file may define a page of its own)."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
