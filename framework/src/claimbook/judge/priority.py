"""How likely an undecided claim's next look is to decide it, and what deciding it costs.

Both come from the claim's own statistics record and the book's committed durations alone,
so the planned looks they order are the same on every machine and in every run of the same
code and seeds.

The chance is a normal approximation to the power of the next look at the current
estimate: the record says how many seeds (``needed``) would decide the claim at 80% power
at that estimate, so at ``n`` seeds the power is about
Phi((z_a + z_0.8) * sqrt(n / needed) - z_a), with ``a`` the per-look level. A record that
cannot name a count in reach (an estimate at the threshold) has no chance to offer.
"""

from __future__ import annotations

import math

from claimbook.judge.stats import POWER
from claimbook.lazy import lazy

scipy_stats = lazy("scipy.stats")


def chance_to_decide(stats: dict) -> float:
    """The approximate chance that the claim's next planned look decides it (0 to 1)."""
    n, needed = stats.get("next_look"), stats.get("needed")
    if not n or not needed:
        return 0.0
    z_a = scipy_stats.norm.ppf(1 - stats["per_look_level"])
    return float(
        scipy_stats.norm.cdf((z_a + scipy_stats.norm.ppf(POWER)) * math.sqrt(n / needed) - z_a)
    )


def to_decide(stats: dict) -> tuple[int, float] | None:
    """For an open claim: the further seeds that would decide it at 80% power, and their
    committed training CPU-seconds (``seed_cpu_s`` per seed); None when no count would."""
    needed = stats.get("needed")
    if stats.get("decision") is not None or not needed:
        return None
    more = max(0, needed - stats["seeds_used"])
    return more, more * float(stats.get("seed_cpu_s") or 0.0)
