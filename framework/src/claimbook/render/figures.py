"""Figures drawn from results alone: one PNG per claim that declares a Figure, a strip of its
per-seed values, and the evidence of a claim decided over seeds."""

from __future__ import annotations

import math
import textwrap
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: render to files only
import matplotlib.pyplot as plt
import numpy as np

from claimbook.render.evidence import rule_panels
from claimbook.render.strips import save, strip_figure
from claimbook.storage.results import measures

__all__ = ["claim_figure", "evidence_alt", "evidence_figure", "evidence_plot", "strip_figure"]

matplotlib.rcParams["text.parse_math"] = False  # a "$" in a test's name or label is just text
STYLES = ("-", "--", ":", "-.")
TAIL = 0.3  # the zoomed panel of a curve: its last 30% of steps, where curves are compared


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


def _drawn(series: dict, kind: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (x, y) pairs a lines or band figure draws (a band: its mean and mean ± sd)."""
    if kind == "lines":
        return [(np.asarray(m["x"], float), np.asarray(m["value"], float))
                for ms in series.values() for m in ms]  # fmt: skip
    pairs = []
    for ms in series.values():
        values = np.array([m["value"] for m in ms], dtype=float)  # (seeds, points)
        sd = values.std(0, ddof=1) if len(ms) > 1 else np.zeros(values.shape[1])
        x = np.asarray(ms[0]["x"], float)
        pairs += [(x, values.mean(0) - sd), (x, values.mean(0) + sd)]
    return pairs


def tail_view(series: dict, kind: str) -> tuple[float, float, float, float] | None:
    """(x from, x to, y low, y high) of the curves' last ``TAIL`` of x, where a figure of
    training curves compares them; None where that part already fills a third of the full
    y range (the whole picture shows it) or the curves are not numbers."""
    if kind not in ("lines", "band"):
        return None
    try:
        pairs = _drawn(series, kind)
    except (TypeError, ValueError):
        return None
    xs = np.concatenate([x for x, _ in pairs])
    ys = np.concatenate([y for _, y in pairs])
    if not len(xs) or not np.isfinite(xs).all() or xs.max() <= xs.min():
        return None
    start = xs.max() - TAIL * (xs.max() - xs.min())
    tail = np.concatenate([y[x >= start] for x, y in pairs])
    tail = tail[np.isfinite(tail)]
    full = np.nanmax(ys) - np.nanmin(ys)
    if not len(tail) or not full or tail.max() - tail.min() >= full / 3:
        return None
    pad = 0.08 * (tail.max() - tail.min()) or 0.05 * abs(tail.max()) or 0.05
    return start, float(xs.max()), float(tail.min() - pad), float(tail.max() + pad)


def _hlines(ax, hlines: dict) -> None:
    for label, y in hlines.items():
        ax.axhline(y, color="gray", ls=":", lw=1)
        ax.annotate(label, (0.01, y), xycoords=("axes fraction", "data"), color="gray",
                    fontsize=8, va="bottom", annotation_clip=True)  # fmt: skip


def claim_plot(claim: dict):
    """``claim``'s measures with an ``x`` drawn as its Figure declares (the caller closes
    the figure), or None when it declares no figure or has no such measure.

    Training curves whose last ``TAIL`` of steps spans a small part of the y range (the
    loss falls from 4 to 1.5, the claim ranks two models 0.1 nat apart at the end) get a
    second panel zoomed on that part, its y axis scaled to it, so the gap is visible.
    """
    spec = claim.get("figure")
    series = _series(claim)
    if not spec or not series:
        return None
    kind = spec.get("kind", "lines")
    zoom = None if spec.get("log") or spec["invert_x"] else tail_view(series, kind)
    if kind == "heatmap":
        fig, ax = plt.subplots(figsize=(9, 2.6), layout="constrained")
        _heatmap(ax, series)
    else:
        fig, axes = plt.subplots(1, 2 if zoom else 1, figsize=(10 if zoom else 7.5, 4.2),
                                 width_ratios=(2, 1) if zoom else None, squeeze=False,
                                 layout="constrained")  # fmt: skip
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        draw = {"lines": _lines, "band": _band, "scatter": _scatter}[kind]
        for panel in axes[0]:
            draw(panel, series, colors)
            _hlines(panel, spec["hlines"])
        ax = axes[0, 0]
        handles, labels = ax.get_legend_handles_labels()  # below the curves, never on them
        fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)),
                   fontsize=7, frameon=False)  # fmt: skip
        if zoom:
            near = axes[0, 1]
            near.set(xlim=zoom[:2], ylim=zoom[2:], xlabel=spec["xlabel"])
            near.set_title(f"the last {TAIL:.0%} of it, y axis zoomed", fontsize=9)
            near.tick_params(labelsize=7)
    if spec["invert_x"]:
        ax.invert_xaxis()
    if spec.get("log"):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
    ax.set(title=spec["title"], xlabel=spec["xlabel"], ylabel=spec["ylabel"])
    return fig


def claim_figure(claim: dict, path: Path) -> bool:
    """Draw :func:`claim_plot` into ``path`` (PNG); False, writing nothing, without one."""
    return save(claim_plot(claim), path)


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
    return save(evidence_plot(claim), path)


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
