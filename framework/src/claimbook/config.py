"""A book's settings: ``[tool.claimbook]`` of its pyproject.toml, read here and nowhere else.

Every path is relative to the folder of that pyproject.toml (the book's root). The
plugin reads the file at pytest's rootdir, the command line the first pyproject.toml at
or above the working directory; without one (or without the table) every default holds.
Two environment variables say where things live on one machine and override their
setting: ``CLAIMBOOK_CACHE_DIR`` (cache) and ``CLAIMBOOK_SOURCES_DIR`` (sources_dir).

    [tool.claimbook]
    title = "Claims of my text"        # the site's and the terminal's name for the book
    claims = "tests/claims"            # the claim tests; a run of all of it is complete
    seeds = "0,1,2"                    # the first look of every seeded claim
    results = "reports/results"        # results files, one per run
    baseline = "reports/baseline.json"
    history = "reports/history.sqlite"
    cache = ".claimbook-cache"         # training runs, claim outcomes, figures
    docs = "reports"                   # render writes the site's pages here (MkDocs docs_dir)
    templates = "templates"            # templates found here replace claimbook's own
    maps = "coverage"                  # coverage maps (*.toml), if any
    sources_dir = "."                  # where the source texts are
    packages = ["mybook"]              # the book's code: editing it re-executes every claim
    replay = "python -m pytest {test}{seeds}"  # how a page says to re-run one instance
    run_seconds = 60                   # a training run's cost before one is recorded
    run_timeout_factor = 10            # a run still training after 10 times its expected
    run_timeout_floor = 60             # seconds (at least 60 s) is stopped: an error; 0: none
    durations = "reports/durations.json"  # recorded training seconds (commit it: plans use it)

    [[tool.claimbook.sources]]
    id = "intro"                       # the prefix of its claims' ids
    title = "An introduction"
    path = "intro.md"                  # relative to sources_dir
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import tomllib
from functools import cache
from pathlib import Path

from claimbook.declare.seeds import parse_seeds
from claimbook.declare.source import Source

CACHE_ENV, SOURCES_ENV = "CLAIMBOOK_CACHE_DIR", "CLAIMBOOK_SOURCES_DIR"
DEFAULT_REPLAY = "python -m pytest {test}{seeds}"  # the replay setting's default


class ConfigError(ValueError):
    """``[tool.claimbook]`` is malformed: the message names the file and the setting."""


@dataclasses.dataclass(frozen=True)
class Settings:
    root: Path = Path(".")
    file: Path | None = None  # the pyproject.toml read, None when there is none
    title: str = "Claims"
    claims: str = "tests/claims"
    seeds: str = "0,1,2"
    results: str = "reports/results"
    baseline: str = "reports/baseline.json"
    history: str = "reports/history.sqlite"
    cache: str = ".claimbook-cache"
    docs: str = "reports"
    templates: str = "templates"
    maps: str = "coverage"
    sources_dir: str = ""
    packages: tuple[str, ...] = ()
    replay: str = DEFAULT_REPLAY
    run_seconds: float = 60.0
    run_timeout_factor: float = 10.0
    run_timeout_floor: float = 60.0
    durations: str = "reports/durations.json"
    # the defaults of the command-line options a book fixes (--claimbook-NAME overrides them)
    budget: float = 0.3
    workers: str = "auto"
    train_on: str = "local"
    require_baseline: bool = False
    sources: tuple[Source, ...] = ()

    def path(self, name: str) -> Path:
        """The setting ``name`` (a path) resolved against the book's root."""
        return self.root / getattr(self, name)

    def cache_dir(self) -> Path:
        return Path(os.environ.get(CACHE_ENV) or self.path("cache"))

    def sources_folder(self) -> Path | None:
        """Where the source texts are: ``$CLAIMBOOK_SOURCES_DIR``, else ``sources_dir``."""
        if os.environ.get(SOURCES_ENV):
            return Path(os.environ[SOURCES_ENV])
        return self.path("sources_dir") if self.sources_dir else None

    def source(self, source_id: str) -> Source:
        """The source declared with this id (``claimbook.source("intro")`` in a claim module)."""
        for source in self.sources:
            if source.id == source_id:
                return source
        known = ", ".join(s.id for s in self.sources) or "none"
        raise ConfigError(f"{self.file}: no [[tool.claimbook.sources]] with id {source_id!r} "
                          f"(declared: {known})")  # fmt: skip


_FIELDS = {f.name: f for f in dataclasses.fields(Settings) if f.name not in ("root", "file")}
_SOURCE_FIELDS = {f.name for f in dataclasses.fields(Source)}


def _settings(file: Path, table: dict) -> Settings:
    values = {}
    for name, value in table.items():
        if name not in _FIELDS:
            raise ConfigError(f"{file}: [tool.claimbook] has no setting {name!r} "
                              f"(known: {', '.join(sorted(_FIELDS))})")  # fmt: skip
        if name == "sources":
            values[name] = _sources(file, value)
        elif name == "packages":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{file}: [tool.claimbook] packages must be a list of names")
            values[name] = tuple(value)
        elif name == "run_seconds":
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{file}: [tool.claimbook] run_seconds must be a number > 0")
            values[name] = float(value)
        elif name == "budget":
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not (number and 0 <= value < 1e9):
                raise ConfigError(f"{file}: [tool.claimbook] budget must be a number >= 0")
            values[name] = float(value)
        elif name == "workers":
            whole = isinstance(value, int) and not isinstance(value, bool) and value >= 1
            if not (whole or value == "auto"):
                raise ConfigError(f"{file}: [tool.claimbook] workers must be a number >= 1 or "
                                  f'"auto", got {value!r}')  # fmt: skip
            values[name] = str(value)
        elif name == "require_baseline":
            if not isinstance(value, bool):
                raise ConfigError(f"{file}: [tool.claimbook] require_baseline must be true or "
                                  f"false, got {value!r}")  # fmt: skip
            values[name] = value
        elif name in ("run_timeout_factor", "run_timeout_floor"):
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not (number and 0 <= value < 1e9):  # NaN fails too
                raise ConfigError(f"{file}: [tool.claimbook] {name} must be a number >= 0")
            values[name] = float(value)
        elif not isinstance(value, str):
            raise ConfigError(f"{file}: [tool.claimbook] {name} must be a string, got {value!r}")
        else:
            values[name] = value
    if "replay" in values and "{test}" not in values["replay"]:
        raise ConfigError(f"{file}: [tool.claimbook] replay must contain {{test}}")
    _check_paths(file, values)
    return Settings(root=file.parent, file=file, **values)


def _check_paths(file: Path, values: dict) -> None:
    """The settings that must name something real, checked before any run starts: a claims
    folder that is missing would make every run partial (the complete-run rules silently
    off), a results "folder" that is a file could take no run's results, and a seed list
    that does not parse would stop the run only after collection."""
    where = f"{file}: [tool.claimbook]"
    claims = file.parent / values.get("claims", "")
    if "claims" in values and not claims.is_dir():
        found = "is a file" if claims.exists() else "does not exist"
        raise ConfigError(f"{where} claims names the folder {claims}, which {found}")
    results = file.parent / values.get("results", "")
    if "results" in values and results.exists() and not results.is_dir():
        raise ConfigError(f"{where} results names {results}, a file: it must name a folder")
    if "seeds" in values:
        try:
            parse_seeds(values["seeds"])
        except argparse.ArgumentTypeError as exc:
            raise ConfigError(f"{where} seeds: {exc}") from None


def _sources(file: Path, entries) -> tuple[Source, ...]:
    """The declared sources, each id once: a second would silently never be found."""
    if not isinstance(entries, list):
        raise ConfigError(f"{file}: [[tool.claimbook.sources]] must be a list of tables")
    sources = tuple(_source(file, i, entry) for i, entry in enumerate(entries))
    ids = [s.id for s in sources]
    for i, source_id in enumerate(ids):
        if source_id in ids[:i]:
            raise ConfigError(f"{file}: [[tool.claimbook.sources]] number {i + 1} has the id "
                              f"{source_id!r} of number {ids.index(source_id) + 1}: each source "
                              "id is declared once")  # fmt: skip
    return sources


def _source(file: Path, index: int, entry) -> Source:
    where = f"{file}: [[tool.claimbook.sources]] number {index + 1}"
    if not isinstance(entry, dict) or not {"id", "title"} <= entry.keys():
        raise ConfigError(f"{where} needs at least id and title")
    unknown = set(entry) - _SOURCE_FIELDS
    if unknown:
        raise ConfigError(f"{where} has unknown keys {sorted(unknown)}")
    return Source(**{k: str(v) for k, v in entry.items()})


@cache
def load(file: Path) -> Settings:
    """The settings in ``file`` (a pyproject.toml); defaults rooted at its folder if it has
    no ``[tool.claimbook]``. Raises :class:`ConfigError` naming the file and the setting."""
    file = Path(file).resolve()
    try:
        data = tomllib.loads(file.read_text())
    except FileNotFoundError:
        return Settings(root=file.parent)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML ({exc})") from None
    table = data.get("tool", {}).get("claimbook")
    if table is None:
        return Settings(root=file.parent, file=file)
    if not isinstance(table, dict):
        raise ConfigError(f"{file}: [tool.claimbook] must be a table")
    return _settings(file, table)


def find(start: Path | None = None) -> Settings:
    """The settings of the book around ``start`` (default: the working directory): the first
    pyproject.toml at or above it, else defaults rooted at ``start``."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return load(folder / "pyproject.toml")
    return Settings(root=here)


def for_pytest(config) -> Settings:
    """The settings of a pytest session: the pyproject.toml at its rootdir."""
    return load(Path(config.rootpath) / "pyproject.toml")


def source(source_id: str) -> Source:
    """The source ``source_id`` of the book the calling module belongs to (for claim modules:
    ``INTRO = claimbook.source("intro")``): its settings are found from that module's folder."""
    frame = inspect.currentframe().f_back
    caller = frame.f_globals.get("__file__") if frame else None
    return find(Path(caller).parent if caller else None).source(source_id)


def source_text(source: Source, settings: Settings | None = None) -> str:
    """The text of ``source``, read now from the sources folder: a claim that checks what the
    text prints reads it at run time, so that an edited text is checked as it stands.

    Raises :class:`ConfigError` saying which variable or file is missing (the claim is then
    an error, never refuted). The claim cache keys on every declared text's checksum."""
    if settings is None:  # the book of the calling module, as for source()
        frame = inspect.currentframe().f_back
        caller = frame.f_globals.get("__file__") if frame else None
        settings = find(Path(caller).parent if caller else None)
    declared = {s.id: s for s in settings.sources}
    if source.id not in declared:  # the cache keys on declared texts only
        raise ConfigError(f"{source.id} is read at run time, so it must be declared: add it "
                          f"to [[tool.claimbook.sources]] in {settings.file}")  # fmt: skip
    source, folder = declared[source.id], settings.sources_folder()
    if folder is None or not source.path:
        raise ConfigError(f"{source.id}'s text is read at run time: set {SOURCES_ENV} to "
                          "the folder that holds it (or sources_dir and its path)")  # fmt: skip
    try:
        return (folder / source.path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{source.id}'s text {folder / source.path} cannot be read: "
                          f"{exc.strerror or exc}") from None  # fmt: skip


def text_checksums(settings: Settings) -> dict[str, str | None]:
    """sha256 of each declared source's text (None where it cannot be read)."""
    from hashlib import sha256  # on use: every pytest start reads this module

    folder, sums = settings.sources_folder(), {}
    for s in settings.sources:
        try:
            sums[s.id] = sha256((folder / s.path).read_bytes()).hexdigest()
        except (OSError, TypeError):
            sums[s.id] = None
    return sums
