"""A run's measurements as one tidy pandas table: claim, params, seed, measure, value.

Verdicts read their per-seed values from it (:func:`per_seed`); ``python -m claimbook
export`` writes it as CSV or Parquet for a reader's own analysis.
"""

from __future__ import annotations

import json
import math

from claimbook.lazy import lazy

pd = lazy("pandas")


COLUMNS = ["claim", "params", "seed", "measure", "value", "unit", "printed"]


def _scalar(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def tidy(claims: list[dict]) -> pd.DataFrame:
    """One row per scalar measured value of every claim (list values stay in the results)."""
    rows = []
    for claim in claims:
        for inst in claim["instances"]:
            params = json.dumps(inst["params"], sort_keys=True)
            for m in inst["measures"]:
                value = _scalar(m.get("value"))
                if value is None:
                    continue
                seed = m.get("seed", inst["seed"])
                printed = m.get("printed")
                rows.append(
                    [claim["id"], params, seed, m["name"], value, m.get("unit") or "",
                     "" if printed is None else str(printed)]
                )  # fmt: skip
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.astype({"seed": "Int64"})


def per_seed(frame: pd.DataFrame, claim_id: str, names: list[str]) -> pd.DataFrame:
    """The claim's values of ``names``, one row per seed (ascending) that has all of them."""
    rows = frame[(frame["claim"] == claim_id) & frame["measure"].isin(names)]
    table = rows.pivot_table(index="seed", columns="measure", values="value", aggfunc="first")
    table = table.reindex(columns=names).dropna()
    table.index = table.index.astype(int)
    return table.sort_index()
