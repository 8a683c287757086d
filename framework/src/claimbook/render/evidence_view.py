"""The Evidence section of a stochastic claim's page: its rule, the facts of its verdict
(estimate, confidence, seeds, what was seen before a rule declared after data, what support
takes), what would decide it if open, and its values seed by seed."""

from __future__ import annotations

from dataclasses import dataclass

from claimbook.declare.fresh import sentence as fresh_sentence
from claimbook.declare.numbers import fmt
from claimbook.judge.crosscheck import lines as crosscheck_lines
from claimbook.judge.evidence import summary
from claimbook.judge.power import tolerance_factor
from claimbook.judge.sequential import COVERAGE
from claimbook.render import evidence
from claimbook.render.outlook_words import command, outlook_line, outlook_text

ESTIMATES = {
    "typical value": "the mean over seeds",
    "universal": "the mean over seeds; the interval runs from the tolerance bound to the mean",
    "success rate": "the share of seeds that succeed (Clopper-Pearson interval)",
    "paired comparison": "the mean per-seed difference (paired t)",
    "equivalence": "the mean over seeds, against the margin (two one-sided tests)",
    "timing ratio": "the median ratio over interleaved repetitions (order-statistic interval)",
}


# a stand-in's decisions, said as what was seen on it (claimbook.judge.verdicts.stand_in)
SEEN = {"supported": "observed", "equivalent": "observed", "refuted": "not observed",
        "not equivalent": "not observed"}  # fmt: skip


def on_stand_in(stats: dict) -> dict:
    """A copy of a stand-in's statistics record whose decisions (overall, per part, per look)
    say observed / not observed: its page never calls a look at the stand-in "refuted"."""

    def said(record: dict) -> dict:
        out = {**record, "decision": SEEN.get(record.get("decision"), record.get("decision"))}
        for key in ("looks", "parts"):
            if record.get(key):
                out[key] = [said(r) for r in record[key]]
        return out

    return said(stats)


@dataclass
class EvidenceView:
    """A stochastic claim's evidence: its rule, the facts of its verdict, its statistics record
    (whose looks and parts the page tabulates) and the values it read, one row per seed."""

    kind: str
    words: str
    summary: str
    facts: list[tuple[str, str]]  # (what, in words): estimate, confidence, seeds, p, q, ...
    needed: str  # for an undecided claim: the chance its planned looks decide it; else ""
    unit: str  # "seeds", or "repetitions" for a timing ratio
    coverage: str  # the shown intervals' coverage, e.g. "96.6%"
    stats: dict
    value_columns: list[str]
    value_rows: list[list[str]]  # one row per seed (or repetition)
    figure: str | None = None
    figure_alt: str = ""
    outlook: str = ""  # for an undecided claim, its outlook in one line (the home page)
    command: str = ""  # the command that takes an undecided claim, alone, to its cap


def _needed(claim: dict, stats: dict, timing: bool) -> str:
    """For an undecided claim: the chance that its remaining planned looks decide it by its
    cap, and what that takes (:mod:`claimbook.render.outlook_words`)."""
    if stats.get("decision") is not None:
        return ""
    if timing and stats.get("noisy"):  # the cause, not a repetition count
        return f"Undecided because {stats['noisy']}"
    if timing:
        text = f"About {stats['needed']} repetitions would decide it at 80% power"
        return (text if stats.get("needed") else "No repetition count in reach would decide "
                "it") + " (it read the repetitions of one instance)"  # fmt: skip
    if not stats.get("adaptive", True) or len(stats.get("looks_planned") or []) <= 1:
        one = "; one seed has no spread to judge" if stats["seeds_used"] < 2 else ""
        return (
            f"A fixed sample (--claimbook-seeds): no planned look follows it{one}; a run at "
            "the default seeds takes its planned looks"
        )
    return outlook_text(claim) or "This results file records no outlook for it"


def evidence_view(claim: dict) -> EvidenceView | None:
    """The Evidence section of a stochastic claim's page; None for a deterministic claim or
    one whose rule had nothing to read (skipped, errored)."""
    stats = claim.get("statistics")
    if not claim.get("rule") or not stats:
        return None
    if claim.get("stand_in"):
        stats = on_stand_in(stats)
    timing, look, rule = stats["kind"] == "timing ratio", stats.get("estimate"), stats["rule"]
    cover = f"{100 * stats['interval']:.3g}%"
    facts = []
    if look:
        meaning = ESTIMATES.get(stats["kind"], "the estimate")
        if stats["kind"] == "paired comparison" and rule.get("bimodal"):
            meaning = "the share of seeds the first wins (sign test, Clopper-Pearson interval)"
        elif stats["kind"] == "equivalence" and rule.get("b"):
            meaning = "the mean per-seed difference, against the margin (two one-sided tests)"
        bound = stats["kind"] == "universal"
        what = f"the bound at {cover} confidence" if bound else f"{cover} interval"
        interval = f"[{fmt(look['low'])}, {fmt(look['high'])}]"
        facts.append(("estimate", f"{fmt(look['estimate'])} {interval}: {meaning}; {what}"))
    facts.append((
        "confidence",
        f"{1 - stats['alpha']:.0%} overall (alpha {stats['alpha']:g}); each look tested at "
        f"level {fmt(stats['per_look_level'])}, so each interval shown covers {cover}",
    ))  # fmt: skip
    if timing:
        reps = len(stats["values"].get("repetition", []))
        facts.append(("repetitions used", f"{reps} interleaved repetitions of one instance"))
    else:
        used = f"{stats['seeds_used']} of {stats['seeds_available']} seeds run"
        planned = stats.get("looks_planned") or []
        if stats.get("adaptive", True) and len(planned) > 1:
            used += "; planned looks at " + ", ".join(map(str, planned)) + " seeds"
        else:
            used += "; one fixed look (--claimbook-seeds)"
        facts.append(("seeds used", used))
    if stats.get("decided_at"):
        n = (look or {}).get("n") if timing else stats["decided_at"]
        unit = "repetitions" if timing else "seeds"
        facts.append(("decided", f"{stats['decision']} at the look at {n} {unit}"))
    if rule.get("fresh"):
        record = claim.get("fresh")
        shown = (
            fresh_sentence(claim["id"], record, claim.get("fresh_with") or [])
            if record
            else f"from seed {rule['fresh']} on; this run kept no record of what existed when "
            "the rule first read them"
        )
        facts.insert(0, (
            "declared after data",
            f"judged only on fresh seeds, {shown}; seen before the rule was "
            f"declared: {rule['seen']}",
        ))  # fmt: skip
    if stats.get("p") is not None:  # no false-discovery q: these p ignore the looks taken
        facts.append(("p", f"{fmt(stats['p'])}: fixed-sample, at the look shown; not adjusted "
                           "for the planned looks, so no q-value is derived from it"))  # fmt: skip
    if stats["kind"] == "universal" and stats.get("looks_planned"):
        cap = stats["looks_planned"][-1]
        k = tolerance_factor(cap, COVERAGE[claim["level"]], stats["per_look_level"])
        facts.append(("what support takes", f"every seed passing, and a mean at least {k:.2f} "
                      f"sd from the threshold by the cap of {cap} seeds"))  # fmt: skip
    if stats.get("counterexamples"):
        facts.append(("counterexamples", ", ".join(f"seed {s}" for s in stats["counterexamples"])))
    facts += [(k.replace("_", " "), stats[k]) for k in ("other_level", "reversal") if stats.get(k)]
    check = stats.get("crosscheck")
    if check:  # beside the verdict, never deciding it
        said = crosscheck_lines(check)
        if check["disagree"]:
            facts.append(("assumption warning", said.pop(0)))
        facts.append(("distribution-free cross-check", f"on the {check['seeds']} seeds read, "
                      f"fixed-sample, at alpha {check['alpha']:g}; it never changes the verdict: "
                      + "; ".join(said)))  # fmt: skip
    columns, rows = evidence.rule_values(stats)
    return EvidenceView(
        kind=stats["kind"],
        words=stats.get("words", ""),
        summary=summary(claim),
        facts=facts,
        needed=_needed({**claim, "statistics": stats}, stats, timing),
        outlook=outlook_line(claim) if stats.get("decision") is None else "",
        command=command(claim) if stats.get("decision") is None else "",
        unit="repetitions" if timing else "seeds",
        coverage=cover,
        stats=stats,
        value_columns=columns,
        value_rows=rows,
    )
