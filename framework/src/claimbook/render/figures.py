"""Figures drawn from results alone: one PNG per claim that declares a Figure, a strip of its
per-seed values, and the evidence of a claim decided over seeds."""

from __future__ import annotations

import contextlib
import math
import textwrap
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: render to files only
import matplotlib.pyplot as plt
import numpy as np

from claimbook.judge.claims import label as measure_label
from claimbook.judge.claims import measures
from claimbook.render.evidence import rule_panels

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


STRIP_LABELS = 6  # seeds labelled on a strip; more would overprint each other


def _integers(values) -> bool:
    """Whether every value is an exact integer (a count, a size: 13, not 13.0 or 0.5)."""
    return all(isinstance(v, int) for v in values)


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
    # a row of exact integers (counts, sizes) says nothing a strip could show
    rows = {k: v for k, v in rows.items() if len(v) > 1 and not _integers(v.values())}
    if not rows:
        return False
    names = list(rows)[:limit]
    fig, axes = plt.subplots(len(names), 1, figsize=(7.5, 0.75 * len(names) + 0.5), squeeze=False)
    for ax, name in zip(axes[:, 0], names, strict=True):
        seeds, values = zip(*sorted(rows[name].items()), strict=True)
        ax.scatter(values, [0] * len(values), s=30, zorder=3)
        for seed, value in zip(seeds, values, strict=True):
            if len(seeds) > STRIP_LABELS:  # labels would overprint: the tables name the seeds
                break
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
    many = max(len(rows[n]) for n in names) > STRIP_LABELS
    fig.suptitle(
        f"{claim['id']}: value in each seed (red: printed in the source)"
        + ("; the tables name each seed's value" if many else ""),
        fontsize=8,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# evidence: what a stochastic claim's rule reads, seed by seed --------------------------


def evidence_alt(claim: dict) -> str:
    """The evidence figure's alt text: what it shows, in words."""
    labels, panels = rule_panels(claim)
    unit = "repetition" if labels and labels[0].startswith("rep ") else "seed"
    return (
        f"Evidence for {claim['id']}: {'; '.join(p['xlabel'] for p in panels)}, one dot per "
        f"{unit} on its own labelled row ({len(labels)} {unit}s), the shown interval as a shaded "
        "band and the rule's threshold or margin as vertical lines"
    )


def evidence_figure(claim: dict, path: Path) -> bool:
    """Draw :func:`evidence_plot` into ``path`` (PNG); False, writing nothing, without one."""
    fig = evidence_plot(claim)
    if fig is None:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _evidence_panel(ax, panel: dict, labels: list[str]) -> None:
    x, rows = panel["x"], range(len(labels))
    core = [v for v in x if v is not None] + [v for v, _ in panel["refs"]]
    if panel["band"]:
        low, high, estimate = panel["band"]
        cover = panel["interval"]
        what = f"{100 * cover:.3g}% interval" if isinstance(cover, int | float) else "interval"
        ax.axvspan(low, high, color="tab:blue", alpha=0.15, lw=0,
                   label=f"{what} ({low:.4g} to {high:.4g})")  # fmt: skip
        ax.axvline(estimate, color="tab:blue", lw=1.2, label=f"estimate {estimate:.4g}")
        core.append(estimate)
        width = max(core) - min(core)
        core += [low, high] if high - low <= 3 * width or not width else []
    span = max(core) - min(core) or max(abs(max(core)), 1e-9) * 0.1
    ax.set_xlim(min(core) - 0.08 * span, max(core) + 0.08 * span)  # a far bound is cut off
    for value, text in panel["refs"]:
        ax.axvline(value, color="tab:red", ls="--", lw=1, label=text)
    if panel["passes"]:  # the colours' meaning, in the legend
        threshold, sign = panel["passes"]
        for color, text in (("tab:green", "passes"), ("tab:red", "fails")):
            ax.scatter([], [], s=28, color=color, label=f"seed {text} the threshold")
    for row, value in zip(rows, x, strict=False):
        if value is None:
            continue
        color = "tab:blue"
        if panel["passes"]:
            color = "tab:green" if sign * (value - threshold) > 0 else "tab:red"
        ax.scatter(value, row, s=28, zorder=3, color=color if row < panel["used"] else "white",
                   edgecolors=color, linewidths=1.2)  # fmt: skip
    ax.set_yticks(list(rows), labels, fontsize=7)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # the first seed on top
    ax.grid(axis="y", color="0.92", lw=0.6)
    ax.tick_params(axis="x", labelsize=7)
    ncols = ax.get_subplotspec().get_gridspec().ncols
    ax.set_xlabel("\n".join(textwrap.wrap(panel["xlabel"], 90 // ncols)), fontsize=7)
    title, look = panel["title"], panel["look"]
    if panel["note"] and look:
        low, high = look["low"], look["high"]  # None: no interval yet (e.g. at one seed)
        interval = "no interval" if low is None or high is None else f"{low:.3g} to {high:.3g}"
        estimate = "none" if look["estimate"] is None else f"{look['estimate']:.3g}"
        rate = f" {estimate} ({interval})"
        title += f" [{panel['note']}{rate if panel['band'] is None else ''}]"
    ax.set_title("\n".join(textwrap.wrap(title, 110 // ncols)[:4]), fontsize=7)
    ax.legend(fontsize=6, frameon=False, loc="best")


def evidence_plot(claim: dict):
    """One dot per seed (rows: seeds, so labels never overprint) of what the claim's rule
    reads (:func:`claimbook.render.evidence.rule_panels`), the shown interval as a band and the
    threshold or margin as vertical lines; one panel per part of a ranking or conjunction.
    The figure grows with the seed count. Returns the figure (the caller closes it), or None
    with nothing numeric to draw."""
    labels, panels = rule_panels(claim)
    if not labels or not panels:
        return None
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    height = max(2.2, 0.24 * len(labels) + 1.6)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.5, height * nrows + 0.4), squeeze=False,
                             sharey=True)  # fmt: skip
    for ax, panel in zip(axes.flat, panels, strict=False):
        _evidence_panel(ax, panel, labels)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    kind = claim["statistics"]["kind"]
    unit = "repetition" if kind == "timing ratio" else "seed"
    hollow = unit == "seed" and any(p["used"] < len(labels) for p in panels)
    fig.suptitle(
        f"{claim['id']}: {claim.get('verdict', '')} ({kind}), one dot per {unit}"
        + ("; hollow: not in the shown look" if hollow else ""),
        fontsize=8,
    )
    fig.tight_layout()
    return fig
