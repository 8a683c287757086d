"""The run history: every run's verdicts and measured values, in one SQLite file.

Schema version 1 (``PRAGMA user_version``)::

    runs(id, started, git_commit, git_dirty, partial, seeds, wall_s, python, torch, platform,
         results_file)
    verdicts(run_id, claim_id, level, verdict, seeds_passed, seeds_total)
    measures(run_id, claim_id, name, seed, value, printed, reproduced)   -- numbers only

A missing history is created. One locked by another process is waited for (up to
``LOCK_WAIT_S``), then left alone and reported (:class:`HistoryLocked`): a lock is
never mistaken for damage. Only a file that is really unusable (not a database,
failing its integrity check, or of another schema version) is moved aside
(``history.sqlite.corrupt-<time>``), reported, and started afresh: the history
never blocks a run.
"""

from __future__ import annotations

import itertools
import sqlite3
import statistics
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from claimbook.declare.ids import id_problem
from claimbook.declare.numbers import is_number
from claimbook.storage.atomic import checksum
from claimbook.storage.results import label, measures

VERSION = 2  # 2: each run's rows carry a checksum
LOCK_WAIT_S = 30.0


class HistoryLocked(sqlite3.OperationalError):
    """Another process holds the history's lock for longer than ``LOCK_WAIT_S``."""


def _locked(exc: sqlite3.Error) -> bool:
    """SQLite's own code says another connection holds the lock (the primary code: the
    extended ones, such as SQLITE_BUSY_SNAPSHOT, carry it in their low byte)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


_SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY, started TEXT NOT NULL, git_commit TEXT, git_dirty INTEGER,
    partial INTEGER NOT NULL, seeds TEXT NOT NULL, wall_s REAL, python TEXT, torch TEXT,
    platform TEXT, results_file TEXT, checksum TEXT
);
CREATE TABLE verdicts (
    run_id INTEGER NOT NULL REFERENCES runs(id), claim_id TEXT NOT NULL, level TEXT NOT NULL,
    verdict TEXT NOT NULL, seeds_passed INTEGER, seeds_total INTEGER,
    PRIMARY KEY (run_id, claim_id)
);
CREATE TABLE measures (
    run_id INTEGER NOT NULL REFERENCES runs(id), claim_id TEXT NOT NULL, name TEXT NOT NULL,
    seed INTEGER, value REAL NOT NULL, printed TEXT, reproduced INTEGER
);
CREATE INDEX measures_by_claim ON measures (claim_id, run_id);
"""


class History:
    """The history file at ``path``, opened (and repaired if need be) on construction.

    Args:
        path: the SQLite file, e.g. reports/history.sqlite.
        report: called with one line when the file had to be moved aside.
    """

    def __init__(self, path: Path, report: Callable[[str], None] = print):
        self.path = Path(path)
        self.report = report
        self._trusted: set[int] | None = None  # see trusted()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = self._open()
        except sqlite3.DatabaseError as exc:
            if _locked(exc):
                raise HistoryLocked(
                    f"{self.path} is locked by another process (waited {LOCK_WAIT_S:.0f} s); "
                    "left as it is"
                ) from exc
            self._move_aside(str(exc))
            self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=LOCK_WAIT_S)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()
        if version == 0 and tables[0] == 0:
            db.executescript(_SCHEMA + f"PRAGMA user_version = {VERSION};")
        elif version != VERSION:
            db.close()
            raise sqlite3.DatabaseError(
                f"schema version {version}, this claimbook writes {VERSION}"
            )
        elif db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            db.close()
            raise sqlite3.DatabaseError("integrity check failed")
        return db

    def _move_aside(self, why: str) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        self.path.replace(aside)
        self.report(f"history {self.path} is unusable ({why}); kept as {aside}, starting afresh")

    def close(self) -> None:
        self.db.close()

    def append(self, results: dict, results_file: str = "") -> int:
        """Add one run (a results file's content); return its run id.

        Raises:
            HistoryLocked: another process held the lock for longer than ``LOCK_WAIT_S``.
        """
        try:
            return self._append(results, results_file)
        except sqlite3.OperationalError as exc:
            if _locked(exc):
                raise HistoryLocked(f"{self.path} is locked by another process: {exc}") from exc
            raise

    def _append(self, results: dict, results_file: str) -> int:
        run = results["run"]
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO runs (started, git_commit, git_dirty, partial, seeds, wall_s, python,"
                " torch, platform, results_file) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run["started"],
                    run.get("git_commit"),
                    int(bool(run.get("git_dirty"))),
                    int(bool(run.get("partial"))),
                    ",".join(map(str, run["seeds"])),
                    run.get("wall_s"),
                    run.get("python"),
                    run.get("torch"),
                    run.get("platform"),
                    results_file,
                ),
            )
            run_id = cursor.lastrowid
            for c in results["claims"]:
                self.db.execute(
                    "INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        c["id"],
                        c["level"],
                        c["verdict"],
                        c["seeds_passed"],
                        c["seeds_total"],
                    ),
                )
                rows = [
                    (
                        run_id,
                        c["id"],
                        label(m),
                        m["seed"],
                        float(m["value"]),
                        None if m.get("printed") is None else str(m["printed"]),
                        None if m.get("reproduced") is None else int(m["reproduced"]),
                    )
                    for m in measures(c)
                    if is_number(m["value"])
                ]
                self.db.executemany("INSERT INTO measures VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            self.db.execute(
                "UPDATE runs SET checksum = ? WHERE id = ?", (self._checksum(run_id), run_id)
            )
        return run_id

    def _checksum(self, run_id: int) -> str:
        """sha256 of a run's rows: its own, its verdicts and its measured values."""
        run = self.db.execute(
            "SELECT id, started, git_commit, git_dirty, partial, seeds, wall_s, python, torch,"
            " platform, results_file FROM runs WHERE id = ?",
            (run_id,),
        ).fetchall()
        verdicts = self.db.execute(
            "SELECT * FROM verdicts WHERE run_id = ? ORDER BY claim_id", (run_id,)
        ).fetchall()
        values = self.db.execute(
            "SELECT * FROM measures WHERE run_id = ? ORDER BY rowid", (run_id,)
        ).fetchall()
        return checksum([run, verdicts, values])

    def trusted(self) -> set[int]:
        """The runs whose rows still match their checksum; each other run is named once (a
        row edited after it was written is never shown as a real run)."""
        if self._trusted is None:
            self._trusted = set()
            for run_id, started, stored in self.db.execute(
                "SELECT id, started, checksum FROM runs"
            ).fetchall():
                if stored is not None and stored == self._checksum(run_id):
                    self._trusted.add(run_id)
                else:
                    why = "fails its checksum (edited after it was written): left out"
                    self.report(f"history {self.path}: the run of {started} (row {run_id}) {why}")
        return self._trusted

    def trend(self, claim_id: str, limit: int = 20) -> list[dict]:
        """The claim's last ``limit`` states in complete runs, oldest first: a partial run
        (one node id, a seed, -k) judged fewer seeds than the claim's looks, so its verdict
        and means are not the claim's; a run that repeats the one before it at the same
        commit (same verdict, seeds and values: a re-run with nothing changed) is left out,
        so such a re-run never changes a trend.

        Each: run (id), started, commit (12 hex digits or None), partial (always False),
        verdict, seeds ("2/3" or "-"), and values: measure name -> mean over the run's seeds.
        """
        rows = self.db.execute(
            "SELECT r.id, r.started, r.git_commit, r.partial, v.verdict, v.seeds_passed,"
            " v.seeds_total FROM verdicts v JOIN runs r ON r.id = v.run_id WHERE v.claim_id = ?"
            " AND r.partial = 0 ORDER BY r.id",
            (claim_id,),
        ).fetchall()
        rows = [r for r in rows if r[0] in self.trusted()]
        values: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        query = "SELECT run_id, name, value FROM measures WHERE claim_id = ?"
        for run_id, name, value in self.db.execute(query, (claim_id,)):
            values[run_id][name].append(value)
        trend = [
            {
                "run": run_id,
                "started": started,
                "commit": (commit or "")[:12] or None,
                "partial": bool(partial),
                "verdict": verdict,
                "seeds": "-"
                if total is None
                else f"{total} seeds"
                if passed is None
                else f"{passed}/{total}",
                "values": {n: statistics.mean(v) for n, v in values[run_id].items()},
            }
            for run_id, started, commit, partial, verdict, passed, total in rows
        ]
        return collapse_repeats(trend)[-limit:]

    def recent_changes(self, runs: int = 10) -> list[dict]:
        """Verdict changes between consecutive full runs among the last ``runs`` full runs.

        Each: claim, before, after, commit and started of the run that changed
        it; newest first. A claim first seen in one of those runs counts as
        "(new)" before, one no longer there as "(gone)" after. A row whose claim id breaks
        the rule of ids (:mod:`claimbook.declare.ids`: the page links it) is left out, named.
        """
        full = self.db.execute(
            "SELECT id, git_commit, started FROM runs WHERE partial = 0 ORDER BY id DESC LIMIT ?",
            (runs + 1,),
        ).fetchall()[::-1]
        full = [row for row in full if row[0] in self.trusted()]
        verdicts = {
            run_id: dict(
                self.db.execute(
                    "SELECT claim_id, verdict FROM verdicts WHERE run_id = ?", (run_id,)
                ).fetchall()
            )
            for run_id, _, _ in full
        }
        bad = sorted({c for found in verdicts.values() for c in found if id_problem(c)}, key=str)
        if bad:
            self.report(f"history {self.path}: {len(bad)} claim(s) left out: {id_problem(bad[0])}")
            verdicts = {r: {c: v for c, v in found.items() if c not in bad}
                        for r, found in verdicts.items()}  # fmt: skip
        changes = []
        for (old, _, _), (new, commit, started) in itertools.pairwise(full):
            for claim_id in sorted(set(verdicts[old]) | set(verdicts[new])):
                before = verdicts[old].get(claim_id, "(new)")
                after = verdicts[new].get(claim_id, "(gone)")
                if before != after:
                    changes.append(
                        {
                            "claim": claim_id,
                            "before": before,
                            "after": after,
                            "commit": (commit or "")[:8] or None,
                            "started": started,
                        }
                    )
        return changes[::-1]


def collapse_repeats(trend: list[dict]) -> list[dict]:
    """Drop a run that repeats the one before it at the same commit (same verdict, seeds and
    values), e.g. a re-run with nothing changed; the first run of each state stays."""
    kept = []
    same = ("commit", "partial", "verdict", "seeds", "values")
    for t in trend:
        if kept and all(kept[-1][k] == t[k] for k in same):
            continue
        kept.append(t)
    return kept
