"""A claim's evidence in one line of words: what was shown, by which rule, at what
confidence, on how many seeds, and what would decide it. The terminal, the pages and the
gate's messages all print these lines.
"""

from __future__ import annotations

from claimbook.declare.numbers import fmt
from claimbook.judge.claims import DEFAULT_REPLAY, replay_command
from claimbook.judge.outlook import percent
from claimbook.judge.stats import cp_bounds


def _num(x: float | None) -> str:
    return "-" if x is None else fmt(round(float(x), 4))


def confidence(stats: dict) -> str:
    return f"{1 - stats['alpha']:.0%}"


def seeds_cell(claim: dict) -> str:
    """The terminal's and the pages' short "seeds" cell."""
    stats = claim.get("statistics")
    if claim.get("rule") and stats:
        if stats["kind"] == "timing ratio":
            return f"{len(stats['values'].get('repetition', []))} reps"
        ran = len((stats.get("values") or {}).get("seed") or [])
        if not stats["seeds_used"] and ran:  # fewer seeds than its first look (one node id)
            return f"{ran} seed{'s' if ran > 1 else ''}, no look"
        return f"{stats['seeds_used']} seeds"
    if claim.get("rule"):
        return "-"
    if claim["verdict"] == "cited":
        return "not run (cited)"
    if claim["seeds_total"] is None:
        return "deterministic"
    return f"deterministic, {claim['seeds_passed']}/{claim['seeds_total']} inputs"


def _interval(look: dict, stats: dict) -> str:
    return f"{_num(look['estimate'])} [{_num(look['low'])}, {_num(look['high'])}]"


def _per_look(stats: dict) -> str:
    """The interval's coverage in plain words: wider than the claim's confidence, because the
    seeds are looked at more than once ("96.7% interval, widened for the repeated looks")."""
    return f"{stats['interval']:.1%} interval, widened for the repeated looks"


def _seeds_read(part: dict, n: int) -> str:
    """Where a composite's part was estimated on fewer seeds than the ``n`` its line names:
    which seeds (its first k, at the look that decided it), so that the two agree."""
    k = part["estimate"]["n"]
    if k == n:
        return ""
    return f" (its first {k} seeds{', the look that decided it' if part['decision'] else ''})"


def _outlook(stats: dict) -> str:
    """The chance that the remaining planned looks decide an open claim by its cap."""
    o = stats.get("outlook")
    if not o or not o["looks"]:
        return ""
    if not o["chance"]:
        return "; no remaining planned look can decide it"
    return (
        f"; {percent(o['chance'])} chance that its planned looks decide it by its cap of {o['cap']}"
    )


def _open(stats: dict) -> str:
    """Why an undecided claim stopped, and what would decide it."""
    n = stats["seeds_used"]
    needed = stats.get("needed")
    would = _outlook(stats)
    if n >= stats["looks_planned"][-1] and stats.get("adaptive", True):
        return f"at the cap of {n} seeds{would}"
    if stats.get("no_spread"):
        return (
            f"stopped at {n} seeds: the measure is the same in every seed read, so a rule over "
            "seeds has no spread to judge; the claim should be deterministic (no rule)"
        )
    if stats.get("futile"):
        if needed is None:
            return f"stopped at {n} seeds (futile: no seed count in reach would decide it)"
        cap = stats["looks_planned"][-1]
        return (
            f"stopped at {n} seeds (futile: beyond 1.5 x the cap of {cap}, and no "
            f"counterexample plausible within it){would}"
        )
    if not stats.get("adaptive", True):
        return f"one fixed look at {n} seeds (--claimbook-seeds){would}"
    if stats.get("next_look"):
        why = stats.get("stopped_by") or "this run"
        return (
            f"at {n} seeds; the next planned look ({stats['next_look']}) was not run ({why}){would}"
        )
    return f"at the cap of {n} seeds{would}"


def _open_timing(stats: dict) -> str:
    """Why a timing ratio was left undecided: the machine's noise, or a ratio near its bound."""
    if stats.get("noisy"):
        return stats["noisy"]
    rule = stats["rule"]
    bound = f"{rule['factor']:g}"
    if rule.get("at_most") is not None:
        bound += f" or {rule['at_most']:g}"
    control = stats.get("noise")
    quiet = f"; its control strayed at most {control['spread'] - 1:.1%} from 1" if control else ""
    return (
        f"the interval reaches {bound}: the ratio is too close to it to tell apart with "
        f"{stats['estimate']['n']} repetitions{quiet}"
    )


def summary(claim: dict) -> str:
    """One line: e.g. "supported at 95% (paired comparison, 5 seeds): ... +0.031 [...]"."""
    stats = claim.get("statistics")
    verdict = claim["verdict"]
    if verdict == "cited":
        why = claim.get("cited") or claim.get("note")
        return f"cited, not run here and never counted as holding: {why}"
    if not claim.get("rule"):
        inputs = claim["seeds_total"]
        where = f" on {inputs} fixed input seeds" if inputs else ""
        rule = {
            "erratum": "the printed claim fails, as its erratum declares",
            "fixed": "the printed claim holds although it is declared an erratum",
        }.get(verdict, "every instance must pass")
        return f"deterministic: {verdict}{where}, {rule}"
    if (
        not stats
        or verdict in ("error", "skipped")
        or not (stats.get("looks") or stats.get("parts"))
    ):
        return (
            f"{verdict}: {claim.get('note') or 'no look taken (fewer seeds than the first look)'}"
        )
    kind, n = stats["kind"], stats["seeds_used"]
    stand = claim.get("stand_in") and verdict in ("observed", "not observed")
    head = verdict if stand else stats["decision"] or "inconclusive"  # never "refuted": a stand-in
    conf = confidence(stats)
    if stats["kind"] == "timing ratio":
        look = stats["estimate"]
        line = (
            f"{head} at {conf} (timing ratio, {look['n']} interleaved repetitions, this machine "
            f"class): median {_interval(look, stats)}"
        )
        if stats["decision"] is None:
            return f"{line}; {_open_timing(stats)}"
        control = stats.get("noise")
        if control:
            line += (
                f"; beyond the machine's noise (its control strayed {control['spread'] - 1:.1%})"
            )
        return line
    parts = stats.get("parts")
    if parts:
        shown = "; ".join(
            f"{p['words'].split(':')[0].split(' (')[0]}: {p['decision'] or 'open'} "
            f"{_interval(p['estimate'], stats)}{_seeds_read(p, n)}"
            for p in parts
            if p["estimate"]
        )
        decided = f", decided at {stats['decided_at']}" if stats["decided_at"] else ""
        line = f"{head} at {conf} ({kind}, {n} seeds{decided}): {shown}"
    else:
        look = stats["estimate"]
        decided = f", decided at {stats['decided_at']}" if stats["decided_at"] else ""
        line = f"{head} at {conf} ({kind}, {n} seeds{decided}): "
        if kind == "success rate" or (kind == "paired comparison" and stats["rule"]["bimodal"]):
            wins = round(look["estimate"] * look["n"])
            line += (
                f"{wins} of {look['n']} seeds succeed, rate {_interval(look, stats)} "
                f"({_per_look(stats)})"
            )
        elif kind == "universal":
            counter = stats.get("counterexamples") or []
            if counter:
                form = claim.get("replay_form") or DEFAULT_REPLAY
                replays = "; ".join(
                    replay_command(f"{claim['test']}[seed{k}]", k, form) for k in counter[:3]
                )
                said = "not observed: a counterexample" if stand else "refuted by counterexample"
                line = (
                    f"{said} ({kind}, {n} seeds): seed "
                    f"{', '.join(map(str, counter))} (replay: {replays})"
                )
            else:
                low, _ = cp_bounds(look["n"], look["n"], 0.05)
                above = stats["rule"].get("above") is not None
                bound = look["low"] if above else look["high"]
                line += (
                    f"every seed passes; mean {_num(look['estimate'])}, tolerance bound "
                    f"{_num(bound)}"
                    f" (>= {low:.0%} of seeds pass at 95%, distribution-free)"
                )
        else:
            line += f"{_interval(look, stats)} ({_per_look(stats)})"
    if stats["decision"] is None:
        line += "; " + _open(stats)
    if stats.get("other_level"):
        line += f"; {stats['other_level']}"
    if stats.get("reversal"):
        line += f"; reversal: {stats['reversal']}"
    return line
