"""Figures drawn from results alone: one PNG per claim that declares a Figure."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: render to files only
import matplotlib.pyplot as plt

from claimbook.table import measures


def claim_figure(claim: dict, path: Path) -> bool:
    """Plot the list-valued measures of ``claim`` (one line per measure and seed) into ``path``.

    Returns False, writing nothing, when the claim declares no figure or has no
    list-valued measure with an ``x``.
    """
    spec = claim.get("figure")
    curves = [m for m in measures(claim) if isinstance(m["value"], list) and m.get("x")]
    if not spec or not curves:
        return False
    lines = defaultdict(list)
    for m in curves:
        label = m["name"].split(":")[-1].strip()
        lines[label].append(m)
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for color, (label, ms) in zip(colors, lines.items(), strict=False):
        for k, m in enumerate(sorted(ms, key=lambda m: m["seed"] or 0)):
            ax.plot(
                m["x"],
                m["value"],
                marker="o",
                ms=3,
                lw=1.2,
                color=color,
                alpha=1.0 if k == 0 else 0.55,
                ls=("-", "--", ":", "-.")[k % 4],
                label=f"{label}, seed {m['seed']}",
            )
    for label, y in spec["hlines"].items():
        ax.axhline(y, color="gray", ls=":", lw=1)
        ax.annotate(
            label,
            (0.01, y),
            xycoords=("axes fraction", "data"),
            color="gray",
            fontsize=8,
            va="bottom",
        )
    if spec["invert_x"]:
        ax.invert_xaxis()
    ax.set(title=spec["title"], xlabel=spec["xlabel"], ylabel=spec["ylabel"])
    ax.legend(fontsize=7, ncol=3, frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
