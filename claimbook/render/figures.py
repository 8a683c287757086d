"""Figures drawn from results alone: one PNG per claim that declares a Figure."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: render to files only
import matplotlib.pyplot as plt
import numpy as np

from claimbook.judge.claims import label as measure_label
from claimbook.judge.claims import measures

matplotlib.rcParams["text.parse_math"] = False  # a "$" in a test's name or label is just text
STYLES = ("-", "--", ":", "-.")


def _series(claim: dict) -> dict[str, list[dict]]:
    """Measures with an ``x``, grouped by series name, each group sorted by seed."""
    groups = defaultdict(list)
    for m in measures(claim):
        if m.get("x") is not None:
            groups[m["name"].split(":")[-1].strip()].append(m)
    return {k: sorted(v, key=lambda m: m["seed"] or 0) for k, v in groups.items()}


def _lines(ax, series, colors):
    for color, (label, ms) in zip(colors, series.items(), strict=False):
        for k, m in enumerate(ms):
            seed = "" if m["seed"] is None else f", seed {m['seed']}"
            ax.plot(
                m["x"],
                m["value"],
                marker="o",
                ms=3,
                lw=1.2,
                color=color,
                alpha=1.0 if k == 0 else 0.6,
                ls=STYLES[k % 4],
                label=f"{label}{seed}",
            )


def _band(ax, series, colors):
    for color, (label, ms) in zip(colors, series.items(), strict=False):
        values = np.array([m["value"] for m in ms], dtype=float)  # (seeds, points)
        mean, sd = (
            values.mean(0),
            values.std(0, ddof=1) if len(ms) > 1 else np.zeros(values.shape[1]),
        )
        ax.plot(ms[0]["x"], mean, color=color, lw=1.5, label=f"{label} (mean of {len(ms)} seeds)")
        ax.fill_between(ms[0]["x"], mean - sd, mean + sd, color=color, alpha=0.2)


def _scatter(ax, series, colors):
    for color, (label, ms) in zip(colors, series.items(), strict=False):
        ax.scatter([m["x"] for m in ms], [m["value"] for m in ms], color=color, s=22, label=label)


def _heatmap(ax, series):
    m = next(iter(series.values()))[0]
    image = ax.imshow(
        np.array(m["value"], dtype=float), cmap="Oranges", aspect="auto", vmin=0, vmax=1
    )
    ax.set_xticks(range(len(m["x"])), [str(t) for t in m["x"]], fontsize=7, rotation=90)
    ax.set_yticks(range(len(m["value"])))
    ax.figure.colorbar(image, ax=ax, fraction=0.03)


def claim_figure(claim: dict, path: Path) -> bool:
    """Plot ``claim``'s measures with an ``x`` as its Figure declares, into ``path`` (PNG).

    Returns False, writing nothing, when the claim declares no figure or has
    no such measure.
    """
    spec = claim.get("figure")
    series = _series(claim)
    if not spec or not series:
        return False
    kind = spec.get("kind", "lines")
    fig, ax = plt.subplots(figsize=(9, 2.6) if kind == "heatmap" else (7.5, 3.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if kind == "heatmap":
        _heatmap(ax, series)
    else:
        {"lines": _lines, "band": _band, "scatter": _scatter}[kind](ax, series, colors)
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
        ax.legend(fontsize=7, ncol=3, frameon=False)
    if spec["invert_x"]:
        ax.invert_xaxis()
    if spec.get("log"):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
    ax.set(title=spec["title"], xlabel=spec["xlabel"], ylabel=spec["ylabel"])
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def strip_figure(claim: dict, path: Path, limit: int = 8) -> bool:
    """One dot per seed for each scalar measure of ``claim``, printed values as red bars.

    Each row is scaled to its own values (a strip plot per measure), so rows of
    different units share one picture. Returns False, writing nothing, when the
    claim has no measure with a value in more than one seed.
    """
    rows = defaultdict(dict)
    printed = {}
    for m in measures(claim):
        value = m["value"]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and m.get("x") is None:
            if m["seed"] is None:
                continue
            name = measure_label(m)
            rows[name][m["seed"]] = value
            with contextlib.suppress(KeyError, TypeError, ValueError):
                printed.setdefault(name, set()).add(float(m["printed"]))
    rows = {k: v for k, v in rows.items() if len(v) > 1}
    if not rows:
        return False
    names = list(rows)[:limit]
    fig, axes = plt.subplots(len(names), 1, figsize=(7.5, 0.75 * len(names) + 0.5), squeeze=False)
    for ax, name in zip(axes[:, 0], names, strict=True):
        seeds, values = zip(*sorted(rows[name].items()), strict=True)
        ax.scatter(values, [0] * len(values), s=30, zorder=3)
        for seed, value in zip(seeds, values, strict=True):
            ax.annotate(
                f"seed {seed}",
                (value, 0),
                textcoords="offset points",
                xytext=(0, 6),
                ha="center",
                fontsize=6,
            )
        for book in printed.get(name, ()):
            ax.axvline(book, color="tab:red", lw=1.2, ymax=0.6)
        ax.set_yticks([])
        ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
    fig.suptitle(f"{claim['id']}: value in each seed (red: printed in the source)", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


VERDICT_COLORS = {
    "holds": "tab:green",
    "refuted": "tab:red",
    "error": "black",
    "erratum": "tab:orange",
    "fixed": "tab:purple",
    "skipped": "tab:gray",
}


def trend_figure(claim_id: str, trend: list[dict], names: list[str], path: Path) -> bool:
    """Key values of one claim over the history's runs, one panel per value.

    Each point is one run (its mean over seeds), coloured by that run's verdict
    and labelled by commit. Returns False, writing nothing, with fewer than two
    runs or no value to draw.
    """
    names = [n for n in names if sum(n in t["values"] for t in trend) >= 2]
    if len(trend) < 2 or not names:
        return False
    fig, axes = plt.subplots(
        len(names), 1, figsize=(7.5, 1.5 * len(names) + 0.8), squeeze=False, sharex=True
    )
    xs = range(len(trend))
    for ax, name in zip(axes[:, 0], names, strict=True):
        points = [(x, t["values"][name], t["verdict"]) for x, t in zip(xs, trend, strict=True)
                  if name in t["values"]]  # fmt: skip
        ax.plot([p[0] for p in points], [p[1] for p in points], color="lightgray", lw=1, zorder=1)
        for x, y, verdict in points:
            ax.scatter(x, y, color=VERDICT_COLORS.get(verdict, "tab:blue"), s=25, zorder=2)
        ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=7)
        ax.tick_params(labelsize=7)
    labels = [(t["commit"] or "none")[:7] + ("*" if t["partial"] else "") for t in trend]
    axes[-1, 0].set_xticks(list(xs), labels, rotation=45, ha="right", fontsize=7)
    fig.suptitle(
        f"{claim_id} over runs (green holds, red refuted, orange erratum; * partial run)",
        fontsize=8,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
