"""The strip of a claim's per-seed values: one row per scalar measure, one dot per seed,
the value the source prints as a red bar.

A row shows a spread only where there is one: a measure of exact integers, or one whose
seeds agree up to floating-point rounding, gets no row (the measures table shows its
value), and the figure's title says which were left out and why.
"""

from __future__ import annotations

import contextlib
import textwrap
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: render to files only
import matplotlib.pyplot as plt

from claimbook.render.values import shown_names
from claimbook.storage.results import label, measures

STRIP_LABELS = 6  # up to this many seeds each gets its own colour and a legend entry
SEED_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink")
# (no red among them: red marks the value the source prints)
ROUNDING = 1e-9  # seeds that agree to this fraction of the value's size agree exactly
ZERO = 1e-12  # values all this close to zero are float rounding of 0 (1e-16, 3e-17, ...)
NAME_WIDTH = 30  # characters per line of a row's name (wrapped, never overprinted)
NAME_LINES = 4  # lines of a row's name at most; a longer one ends in "..." (the tables have it)


def _integers(values) -> bool:
    """Whether every value is an exact integer (a count, a size: 13, not 13.0 or 0.5)."""
    return all(isinstance(v, int) for v in values)


def rounding_only(values) -> bool:
    """Whether ``values`` differ only by floating-point rounding: within ``ROUNDING`` of
    their size, or all within ``ZERO`` of zero (differences of 1e-16 at a value of 0)."""
    numbers = [float(v) for v in values]
    size = max(abs(v) for v in numbers)
    return size <= ZERO or max(numbers) - min(numbers) <= ROUNDING * size


def strip_rows(claim: dict) -> tuple[dict, dict, dict[str, list[str]]]:
    """The rows a strip draws (shown name -> {seed: value}), their printed values, and the
    measures left out by reason ("counts", "rounding")."""
    rows, printed = defaultdict(dict), {}
    shown = shown_names(claim)
    for m in measures(claim):
        value = m["value"]
        if isinstance(value, int | float) and not isinstance(value, bool) and m.get("x") is None:
            if m["seed"] is None:
                continue
            name = shown[label(m)]
            rows[name][m["seed"]] = value
            with contextlib.suppress(KeyError, TypeError, ValueError):
                printed.setdefault(name, set()).add(float(m["printed"]))
    rows = {k: v for k, v in rows.items() if len(v) > 1}
    left = {"counts": [k for k, v in rows.items() if _integers(v.values())]}
    left["rounding"] = [k for k, v in rows.items() if k not in left["counts"]
                        and rounding_only(v.values())]  # fmt: skip
    drawn = {k: v for k, v in rows.items() if k not in left["counts"] + left["rounding"]}
    return drawn, printed, left


def _title(claim: dict, names: list[str], rows: dict, left: dict, many: bool) -> str:
    title = f"{claim['id']}: value in each seed (red: printed in the source)"
    if many:
        title += "; the tables name each seed's value"
    if len(names) < len(rows):
        title += f"; the first {len(names)} of {len(rows)} measures"
    if left["rounding"]:
        same = ", ".join(left["rounding"])
        title += f"\nnot drawn, the same in every seed up to float rounding: {same}"
    return "\n".join(line for part in title.split("\n") for line in textwrap.wrap(part, 110))


def strip_plot(claim: dict, limit: int = 8):
    """The strip as a figure (the caller closes it), or None with no row worth drawing.

    Each row is scaled to its own values, so rows of different units share one picture.
    Names wrap onto lines of their own and the figure grows with them and with the row
    count; up to ``STRIP_LABELS`` seeds are told apart by colour in one legend (a label
    beside each dot would overprint its neighbours), beyond that the tables name them.
    """
    rows, printed, left = strip_rows(claim)
    if not rows:
        return None
    names = list(rows)[:limit]
    wrapped = {n: textwrap.wrap(n, NAME_WIDTH, max_lines=NAME_LINES, placeholder=" ...")
               for n in names}  # fmt: skip
    heights = [max(0.6, 0.2 * len(wrapped[n]) + 0.25) for n in names]
    seeds = sorted({s for n in names for s in rows[n]})
    many = len(seeds) > STRIP_LABELS
    color = {s: "tab:blue" if many else SEED_COLORS[k] for k, s in enumerate(seeds)}
    title = _title(claim, names, rows, left, many)
    top = 0.3 + 0.15 * title.count("\n") + (0 if many else 0.25)  # title and legend (inches)
    fig, axes = plt.subplots(len(names), 1, figsize=(7.5, sum(heights) + top), squeeze=False,
                             height_ratios=heights, layout="constrained")  # fmt: skip
    for ax, name in zip(axes[:, 0], names, strict=True):
        by_seed = sorted(rows[name].items())
        ax.scatter([v for _, v in by_seed], [0] * len(by_seed), s=30, zorder=3,
                   c=[color[s] for s, _ in by_seed], alpha=0.85)  # fmt: skip
        for book in printed.get(name, ()):
            ax.axvline(book, color="tab:red", lw=1.2, ymax=0.6)
        ax.set_yticks([])
        ax.set_ylabel("\n".join(wrapped[name]), rotation=0, ha="right", va="center", fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
    if not many:
        handles = [plt.Line2D([], [], ls="", marker="o", color=color[s]) for s in seeds]
        fig.legend(handles, [f"seed {s}" for s in seeds], loc="outside lower center",
                   ncol=len(seeds), fontsize=7, frameon=False)  # fmt: skip
    fig.suptitle(title, fontsize=8, x=0.01, ha="left")
    return fig


def save(fig, path: Path) -> bool:
    """Write ``fig`` to ``path`` as a PNG and close it; False, writing nothing, for None."""
    if fig is None:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def strip_figure(claim: dict, path: Path, limit: int = 8) -> bool:
    """Draw :func:`strip_plot` into ``path`` (PNG); False, writing nothing, without one."""
    return save(strip_plot(claim, limit), path)
