"""What the planned looks cost a run: seeds per stochastic claim, extra training runs and
CPU-seconds, and CPU-seconds per decided claim (the bench and the Performance page)."""

from __future__ import annotations


def looks_cost(results: dict) -> dict:
    """The cost of a results file's planned looks. "CPU-seconds per decided claim" is the
    extra training CPU divided by the stochastic claims that reached a decision."""
    looks = results["run"].get("looks") or {}
    rows = [
        {
            "claim": c["id"],
            "kind": c["statistics"]["kind"],
            "seeds_used": c["statistics"]["seeds_used"],
            "seeds_run": c["statistics"]["seeds_available"],
            "decided_at": c["statistics"]["decided_at"],
            "verdict": c["verdict"],
        }
        for c in results["claims"]
        if c.get("statistics") and c["statistics"]["kind"] != "timing ratio"
    ]
    decided = sum(1 for r in rows if r["decided_at"])
    extra = float(looks.get("extra_cpu_s", 0.0))
    return {
        "adaptive": results["run"].get("adaptive", False),
        "base_runs": looks.get("base_runs", 0),
        "base_cpu_s": looks.get("base_cpu_s", 0.0),
        "budget_cpu_s": looks.get("budget_cpu_s", 0.0),
        "extra_committed_s": looks.get("extra_committed_s", 0.0),
        "extra_runs": looks.get("extra_runs", 0),
        "extra_trained": looks.get("extra_trained", 0),
        "extra_cpu_s": extra,
        "extra_instances": looks.get("extra_instances", 0),
        "free_instances": looks.get("free_instances", 0),
        "over_budget": looks.get("over_budget", []),
        "stochastic_claims": len(rows),
        "decided_claims": decided,
        "cpu_s_per_decided_claim": round(extra / decided, 1) if decided else None,
        "claims": rows,
    }
