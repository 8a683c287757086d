"""What changed between two runs: ``python -m claimbook diff OLD NEW`` and the gate's
GitHub step summary show one :class:`Diff`, as terminal lines or as Markdown.

The older side is a results file or the baseline (both record each claim's verdict, its
erratum mark, the seeds that refute a universal claim and each instance's outcome); the
newer side is a results file, which also gives the claims' sentences and evidence.

- **changed**: a claim in both whose verdict differs (before -> after);
- **values changed**: a claim in both whose measured values differ, instance by instance
  (two results files only: the baseline keeps no values; never a timing claim or a wall
  time, whose seconds differ in every run);
- **added** / **gone**: a claim in only the newer / the older side;
- **not in this partial run**: a claim that a partial side (``-k``, a path, a shard) did not
  select, though its suite has it (its catalog names it): not gone, nor added;
- **new errata**: a claim that is an erratum now and was not before (or is new);
- **new counterexamples**: a claim in both that a seed newly refutes: a seed that fails a
  universal ("in every seed") rule, or an instance of a deterministic claim that fails now
  and did not before (an erratum's declared failures and cited claims never count);
- **inconclusive**: every claim of the newer side that its seeds did not decide, with
  what would decide it.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from claimbook.coverage.catalog import narrowed
from claimbook.judge.evidence import summary


@dataclass(frozen=True)
class Entry:
    """One claim in one section of a diff."""

    claim: str
    sentence: str = ""
    before: str = ""  # its verdict in the older side ("" when added)
    after: str = ""  # its verdict in the newer side ("" when gone)
    detail: str = ""  # the seeds newly failing, the erratum, what would decide it


@dataclass
class Diff:
    old: str  # how each side is named in the output
    new: str
    changed: list[Entry] = field(default_factory=list)
    values: list[Entry] = field(default_factory=list)
    added: list[Entry] = field(default_factory=list)
    gone: list[Entry] = field(default_factory=list)
    errata: list[Entry] = field(default_factory=list)
    counterexamples: list[Entry] = field(default_factory=list)
    inconclusive: list[Entry] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)  # "NEW is a partial run (...)": each side
    not_in_new: list[Entry] = field(default_factory=list)  # in OLD; NEW did not select them
    not_in_old: list[Entry] = field(default_factory=list)  # in NEW; OLD did not select them

    def sections(self) -> list[tuple[str, list[Entry]]]:
        """(title, entries) in the order both renderings show them."""
        return [
            ("verdicts changed", self.changed),
            ("values changed", self.values),
            ("claims added", self.added),
            ("claims gone", self.gone),
            *self.unselected(),
            ("new errata", self.errata),
            ("new counterexamples", self.counterexamples),
            (f"inconclusive in {self.new}", self.inconclusive),
        ]

    @property
    def moved(self) -> bool:
        """Whether anything changed (the inconclusive claims are a state, not a change, and a
        claim a partial run did not select is no change either)."""
        changes = (self.changed, self.values, self.added, self.gone, self.errata)
        return any(changes) or bool(self.counterexamples)

    def unselected(self) -> list[tuple[str, list[Entry]]]:
        """The claims a partial side did not select, as sections (none for complete sides)."""
        return [
            (f"not in this partial run ({name})", entries)
            for name, entries in ((self.new, self.not_in_new), (self.old, self.not_in_old))
            if entries
        ]


def instance_name(instance: dict) -> str:
    """ "seed 1", "seed 1 (layers=4)", "layers=4", or "its one instance"."""
    params = ", ".join(f"{k}={v}" for k, v in instance["params"].items())
    if instance["seed"] is None:
        return params or "its one instance"
    return f"seed {instance['seed']}" + (f" ({params})" if params else "")


def measured(claim: dict) -> dict[str, object] | None:
    """Each measured value of a results file's claim, by instance and name ("seed 0: loss");
    None for a timing claim (its seconds are the machine's of the moment: never the same
    twice)."""
    if (claim.get("rule") or {}).get("rule") == "Slower":
        return None
    values = {}
    for instance in claim["instances"]:
        for m in instance.get("measures") or []:
            if m.get("unit") == "s":  # a wall time, for the record
                continue
            where = f"{instance_name(instance)}: {m['name']}"
            if m.get("x") is not None:
                where += f" at {m['x']}"
            values[where] = m.get("value")
    return values


def _moved_values(before: dict | None, after: dict | None, only: set[str] | None = None) -> str:
    """The values that differ between two records of one claim ("" when none does); with
    ``only``, those of these instances alone (a partial side ran fewer seeds)."""
    if before is None or after is None:
        return ""
    keys = sorted(set(before) | set(after))
    if only is not None:
        keys = [k for k in keys if k.partition(": ")[0] in only]
    moved = [f"{k}: {before.get(k)!r} -> {after.get(k)!r}" for k in keys
             if before.get(k) != after.get(k)]  # fmt: skip
    if not moved:
        return ""
    more = f" (and {len(moved) - 3} more)" if len(moved) > 3 else ""
    return "; ".join(moved[:3]) + more


def _record(claim: dict) -> dict:
    """What the diff reads of a claim: a results file's claim or a baseline's record."""
    stats = claim.get("statistics") or {}
    return {
        "verdict": claim["verdict"],
        "sentence": claim.get("sentence", ""),
        "rule": bool(claim.get("rule")),
        "counterexamples": set(claim.get("counterexamples") or stats.get("counterexamples") or []),
        "failing": {instance_name(i) for i in claim["instances"] if i["outcome"] == "failed"},
        "instances": {instance_name(i) for i in claim["instances"]},
    }


def records(data: dict) -> dict[str, dict]:
    """Claim id -> record, from a results file (a list of claims) or a baseline (a mapping)."""
    claims = data["claims"]
    if isinstance(claims, dict):  # the baseline: {id: record}, without values
        return {claim_id: {**_record(c), "values": None} for claim_id, c in claims.items()}
    return {c["id"]: {**_record(c), "values": measured(c)} for c in claims}


def _seeds(seeds) -> str:
    shown = ", ".join(map(str, sorted(seeds)))
    return f"seed {shown}" if len(seeds) == 1 else f"seeds {shown}"


def _new_counterexample(before: dict, after: dict) -> str:
    """What newly refutes a claim ("" when nothing does)."""
    if after["rule"]:
        seeds = after["counterexamples"] - before["counterexamples"]
        if not seeds:
            return ""
        return f"{_seeds(seeds)} now {'fails' if len(seeds) == 1 else 'fail'} its every-seed rule"
    failing = sorted(after["failing"] - before["failing"])
    return f"newly failing: {'; '.join(failing)}" if failing else ""


def unselected(data: dict):
    """Whether a claim id is one that a partial results file did not select though its suite
    has it (its catalog names every claim the suite knows; a partial file without a catalog,
    or one that collected only a node id or a path, may have left out any claim it lacks);
    never for a complete run or a baseline."""
    run = data.get("run") or {}
    if not _is_partial(run):
        return lambda claim_id: False
    ran = {c["id"] for c in data["claims"]}
    if not isinstance(run.get("catalog"), list) or narrowed(run):  # a catalog of part
        return lambda claim_id: claim_id not in ran
    known = {c.get("id") for c in run["catalog"] if isinstance(c, dict)}
    return lambda claim_id: claim_id in known and claim_id not in ran


def _is_partial(run: dict) -> bool:
    outcome = run.get("outcome") or {}
    return bool(run.get("partial") or outcome.get("complete") is False)


def partial_line(data: dict, name: str) -> str:
    """ "NAME is a partial run (why): ..." or "" for a complete run or a baseline."""
    run = data.get("run") or {}
    if not _is_partial(run):
        return ""
    why = "; ".join((run.get("outcome") or {}).get("partial_reasons") or [])
    return (f"{name} is a partial run{f' ({why})' if why else ''}: a claim it did not select "
            "is listed as not in this partial run, not as gone or added")  # fmt: skip


WHY_SHOWN = ("error", "fixed", "skipped")  # verdicts whose note says why (not self-evident)


def diff_claims(old: dict, new: dict, old_name: str = "OLD", new_name: str = "NEW") -> Diff:
    """The diff of ``new`` (a results file's data) against ``old`` (a results file's or the
    baseline's data)."""
    before, after = records(old), records(new)
    claims = {c["id"]: c for c in new["claims"]}
    diff = Diff(old_name, new_name)
    said = (partial_line(old, old_name), partial_line(new, new_name))
    diff.partial = list(dict.fromkeys(line for line in said if line))  # a file with itself: once
    old_left_out, new_left_out = unselected(old), unselected(new)
    for claim_id in sorted(after):
        now, c = after[claim_id], claims[claim_id]
        was = before.get(claim_id)
        note = c.get("note") or ""
        unseen = was is None and old_left_out(claim_id)  # the older partial run left it out
        if unseen:
            diff.not_in_old.append(Entry(claim_id, after=now["verdict"]))
        elif was is None:
            diff.added.append(Entry(claim_id, now["sentence"], after=now["verdict"]))
        elif was["verdict"] != now["verdict"]:
            why = note if now["verdict"] in WHY_SHOWN else ""
            if diff.partial and was["instances"] != now["instances"]:  # e.g. one seed of it
                why = (f"judged on {len(now['instances'])} instances in {new_name}, "
                       f"{len(was['instances'])} in {old_name}; {why}").rstrip("; ")  # fmt: skip
            diff.changed.append(
                Entry(claim_id, now["sentence"], was["verdict"], now["verdict"], why)
            )
        moved = ""
        if was is not None:  # a partial side's claims are compared on the instances both ran
            only = was["instances"] & now["instances"] if diff.partial else None
            moved = _moved_values(was["values"], now["values"], only)
        if moved:
            diff.values.append(
                Entry(claim_id, now["sentence"], was["verdict"], now["verdict"], moved)
            )
        new_erratum = was is None or was["verdict"] != "erratum"
        if now["verdict"] == "erratum" and new_erratum and not unseen:
            erratum = c.get("erratum") if isinstance(c.get("erratum"), str) else ""
            diff.errata.append(Entry(claim_id, now["sentence"], after="erratum", detail=erratum))
        counted = was is not None and not c.get("erratum") and now["verdict"] != "cited"
        found = _new_counterexample(was, now) if counted else ""
        if found:
            diff.counterexamples.append(
                Entry(claim_id, now["sentence"], was["verdict"], now["verdict"], found)
            )
        if now["verdict"] == "inconclusive":
            diff.inconclusive.append(
                Entry(claim_id, now["sentence"], after="inconclusive", detail=summary(c))
            )
    for claim_id in sorted(set(before) - set(after)):
        gone = before[claim_id]
        if new_left_out(claim_id):
            diff.not_in_new.append(Entry(claim_id, before=gone["verdict"]))
        else:
            diff.gone.append(Entry(claim_id, gone["sentence"], before=gone["verdict"]))
    return diff


def _verdicts(entry: Entry, arrow: str) -> str:
    if entry.before and entry.after and entry.before != entry.after:
        return f"{entry.before} {arrow} {entry.after}"
    return entry.after or f"was {entry.before}"


def text_lines(diff: Diff) -> list[str]:
    """The diff for the terminal: every section, "none" where it is empty."""
    lines = [f"claimbook: {diff.old} -> {diff.new}", *diff.partial]
    for title, entries in diff.sections():
        if not entries:
            lines.append(f"{title}: none")
            continue
        lines.append(f"{title} ({len(entries)}):")
        if title.startswith("not in this partial run"):  # ids only: often most of the book
            lines += textwrap.wrap(", ".join(e.claim for e in entries), 88, initial_indent="  ",
                                   subsequent_indent="  ", break_on_hyphens=False)  # fmt: skip
            continue
        for e in entries:
            lines.append(f"  {e.claim}: {_verdicts(e, '->')}")
            lines += [f"      {text}" for text in (e.sentence, e.detail) if text]
    return lines


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#<>&$~])")  # GitHub's markup characters


def md(text: str) -> str:
    """``text`` shown literally, on one line, in GitHub's Markdown."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def markdown_lines(diff: Diff, heading: str = "###") -> list[str]:
    """The diff in Markdown: a heading and a list per section that has entries."""
    lines = [f"\n{md(line)}" for line in diff.partial]
    for title, entries in diff.sections():
        if not entries:
            continue
        lines += ["", f"{heading} {md(title[0].upper() + title[1:])} ({len(entries)})", ""]
        if title.startswith("not in this partial run"):
            lines.append(", ".join(f"`{e.claim}`" for e in entries))
            continue
        for e in entries:
            said = f": {md(e.sentence)}" if e.sentence else ""
            detail = f"<br>{md(e.detail)}" if e.detail else ""
            lines.append(f"- `{e.claim}` **{_verdicts(e, '→')}**{said}{detail}")
    if diff.old and not diff.moved:
        lines += ["", f"No verdict changed against {md(diff.old)}."]
    return lines
