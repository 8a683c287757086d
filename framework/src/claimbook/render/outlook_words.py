"""An open claim's outlook in words (:mod:`claimbook.judge.outlook`, and what its cap costs,
:mod:`claimbook.plugin.tocap`): the chance that its remaining planned looks decide it by its
cap, how that chance was computed, the training it takes and the command that buys it. The
claim page says all of it; the home page's list of unsettled claims, one line."""

from __future__ import annotations

from claimbook.judge.outlook import percent

DECISIONS = {"equivalence": ("equivalent", "not equivalent")}


def _seeds(ns: list[int]) -> str:
    shown = [str(n) for n in ns]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def cost(to_cap: dict | None) -> str:
    """The training the cap takes, charging only the runs not in the training cache."""
    if not to_cap:
        return "what its cap costs is not recorded in this results file"
    fresh = to_cap["runs"] - to_cap["cached"]
    held = (  # the runs of its remaining looks, not those of the seeds it has read
        f"{to_cap['cached']} of the {to_cap['runs']} training runs its remaining looks read "
        "are in the training cache"
        if to_cap["cached"]
        else "none of the training runs its remaining looks read is in the training cache yet"
    )
    if not fresh:
        return f"its cap takes no training: {held}"
    minutes = to_cap["cpu_s"] / 60
    return (
        f"its cap takes about {minutes:.1f} CPU-minutes of training, for the {fresh} training "
        f"runs not in the training cache ({held}; priced from each run's time as recorded in "
        "the book's repository, not from this machine's clock)"
    )


def command(claim: dict) -> str:
    """The command that takes the claim, alone, to its cap ("" when its cost is unknown)."""
    to_cap = (claim.get("statistics") or {}).get("to_cap") or {}
    if to_cap.get("budget") is None:
        return ""
    return f'nox -s claims -- "{claim["test"]}" --budget {to_cap["budget"]:g}'


def _none_left(o: dict) -> str:
    """Why a zero chance is zero."""
    if o["no_spread"]:
        return (
            "No remaining planned look can decide it: the seeds read have no spread to draw "
            "further seeds from"
        )
    if not o["looks"]:
        return f"No planned look remains: it is at its cap of {o['cap']} seeds"
    how = "exact" if o["exact"] else f"none of {o['paths']:,} simulated paths"
    return (
        f"No remaining planned look can decide it: at its estimate, its looks at "
        f"{_seeds(o['looks'])} seeds cannot reach a bound ({how})"
    )


def outlook_text(claim: dict) -> str:
    """The claim page's account of an open claim's outlook ("" when none is recorded)."""
    stats = claim["statistics"]
    o = stats.get("outlook")
    if not o:
        return ""
    if not o["chance"]:
        return _none_left(o)
    yes, no = DECISIONS.get(stats["kind"], ("supported", "refuted"))
    if claim.get("stand_in"):  # a rule decided on a stand-in is observed or not, never refuted
        yes, no = "observed", "not observed"
    steps = "; ".join(
        f"{percent(x)} by the look at {n}"
        for n, x in zip(o["looks"][:-1], o["by_look"], strict=False)
    )
    how = "exact" if o["exact"] else f"{o['paths']:,} simulated paths from a fixed seed"
    return (
        f"A {percent(o['chance'])} chance that its remaining planned looks decide it by its "
        f"cap of {o['cap']} (looks at {_seeds(o['looks'])} seeds), given the "
        f"{o['seeds_read']} seeds read ({steps + '; ' if steps else ''}{yes} "
        f"{percent(o['supported'])}, {no} {percent(o['refuted'])}). The chance takes the "
        f"estimate as the truth: {o['model']} ({how}). And {cost(stats.get('to_cap'))}"
    )


def outlook_line(claim: dict) -> str:
    """The home page's one line on an open claim's outlook ("" when none is recorded)."""
    o = (claim.get("statistics") or {}).get("outlook")
    if not o:
        return ""
    if not o["chance"]:
        return f"{_none_left(o)} ({o['seeds_read']} seeds read)"
    to_cap = claim["statistics"].get("to_cap")
    spend = ""
    if to_cap:
        fresh = to_cap["runs"] - to_cap["cached"]
        spend = (
            f"; about {to_cap['cpu_s'] / 60:.1f} CPU-minutes of training ({fresh} runs not in the "
            "training cache)"
            if fresh
            else "; no training (every run in the training cache)"
        )
    return (
        f"{percent(o['chance'])} chance that its planned looks decide it by its cap of "
        f"{o['cap']} seeds ({o['seeds_read']} read){spend}"
    )
