"""A timing claim's verdict (``Slower``): one look at its interleaved repetitions, weighed
against the machine's noise.

Timings have no seeds: their spread is the machine's, and a load on it (another process)
moves them. The median ratio gets a distribution-free interval as before. Where the rule
names a ``noise`` control (identical work timed twice in each repetition, see
:mod:`claimbook.timing`), the control's median ratio gets the same interval; identical work
would give 1, so how far that interval reaches from 1 (``spread``, a factor of at least 1)
is how far the machine alone can move a median ratio. The claim's interval is widened by
that factor on both sides before it is held against the bounds: a claim is decided only
where it clears them by more than the noise. Where the widened interval cannot decide, and
the noise is as large as the distance from the median to the bound, the verdict is
inconclusive *because the machine was too noisy*, and the record says so in words
(``noisy``), with the numbers; the baseline's warning and the pages repeat that cause.
"""

from __future__ import annotations

from claimbook.declare.design import Slower, rule_to_dict
from claimbook.judge import stats
from claimbook.judge.sequential import ALPHA, look_dict


def _distance(median: float, factor: float, at_most: float | None) -> float:
    """How far (as a factor >= 1) the median lies from the nearest bound of the claim."""
    bounds = [factor] if at_most is None else [factor, at_most]
    return min(max(median / b, b / median) for b in bounds)


def _noisy(rule: Slower, look: stats.Look, control: stats.Look, spread: float) -> str:
    """Why the machine was too noisy to decide, in words with the numbers."""
    band = f"{rule.factor:g}" if rule.at_most is None else f"{rule.factor:g}-{rule.at_most:g}"
    distance = _distance(look.estimate, rule.factor, rule.at_most)
    return (
        f"the machine was too noisy: identical work timed twice ({rule.noise}) gave a median "
        f"ratio of {control.estimate:.3f} [{control.low:.3f}, {control.high:.3f}], up to "
        f"{spread - 1:.1%} away from 1, while the claim's median ratio {look.estimate:.3f} "
        f"[{look.low:.3f}, {look.high:.3f}] is {distance - 1:.1%} "
        f"away from {band}; time it again on a quieter machine"
    )  # fmt: skip


def judge_timing(rule: Slower, level: str, ratios: list[float], noise: list[float]) -> dict:
    """The rule's record for one instance's repetitions (``noise``: the control's ratios, or
    empty when the rule names none)."""
    a = ALPHA[level]
    look = stats.ratio_look(ratios, a, rule.factor, rule.at_most)
    decision, noisy, control_record = look.decision, "", None
    if noise:
        control = stats.ratio_look(noise, a, 1.0, None)
        spread = max(control.high, 1 / control.low)
        wide = (look.low / spread, look.high * spread)
        decision = stats.band_decision(*wide, rule.factor, rule.at_most)
        close = spread > _distance(look.estimate, rule.factor, rule.at_most)
        if decision is None and (look.decision is not None or close):
            noisy = _noisy(rule, look, control, spread)
        control_record = {**look_dict(control), "spread": spread}
    shown = {**look_dict(look), "decision": decision}
    values = {"repetition": list(range(1, len(ratios) + 1)), rule.ratios: ratios}
    if noise:
        values[rule.noise] = noise
    return {
        "kind": rule.kind, "rule": rule_to_dict(rule), "words": rule.words(),
        "alpha": a, "per_look_level": a, "interval": 1 - 2 * a, "looks_planned": [1],
        "looks": [shown], "decision": decision,
        "decided_at": 1 if decision else None, "seeds_used": 1, "seeds_available": 1,
        "estimate": shown, "reversal": "", "futile": False, "next_look": None,
        "p": look.p, "needed": None, "counterexamples": [], "values": values,
        **({"noise": control_record, "noisy": noisy} if noise else {}),
    }  # fmt: skip
