"""What a reader sees in a claim's tables and figures: parameters in words (never a Python
repr), strips whose labels never overprint and that draw no rounding noise as a spread, and
training curves whose end, where a claim compares them, is drawn large enough to see."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pytest
from claimbook.render.figures import claim_plot
from claimbook.render.strips import rounding_only, strip_figure, strip_plot, strip_rows
from claimbook.render.values import params_words, value_rows, value_words

SPEC = "MixerSpec(kind='lstm', kernel=4, n_heads=4, n_kv_heads=None)"
FIELDS = "kind=lstm, kernel=4, n_heads=4, n_kv_heads=None"
WORDS = "lstm, kernel 4, 4 heads"  # as a reader reads it: no "name=", no None field


def claim(measures_by_seed: dict, params: dict | None = None, test_id: str = "", **extra):
    """A claim record with one instance per seed, each measuring ``measures_by_seed[seed]``."""
    instances = []
    for seed, measures in measures_by_seed.items():
        ids = "-".join(p for p in (test_id, f"seed{seed}") if p)
        instances.append({"seed": seed, "params": params or {}, "outcome": "passed",
                          "nodeid": f"test_x.py::test_x[{ids}]", "measures": measures})  # fmt: skip
    return {"id": "doc.x", "instances": instances, **extra}


def test_a_dataclass_parameter_reads_as_its_pytest_id_or_its_fields():
    assert value_words(SPEC) == FIELDS
    assert value_words("<function relu at 0x7f3a2b>") == "relu"
    assert value_words("softmax(x)") == "softmax(x)"  # a string, not a repr: as it is
    assert params_words({"spec": SPEC}, "t.py::test[LSTM-seed0]") == "LSTM"
    assert params_words({"spec": SPEC}, "t.py::test[spec1-seed0]") == WORDS  # pytest's own id
    assert params_words({"spec": SPEC, "layers": 4}) == f"{WORDS}, layers 4"
    assert params_words({"layers": 4, "n_kv": 2}) == "layers 4, 2 kv"
    assert params_words({"causal": True, "window": 8}) == "causal, window 8"
    by_seed = {s: [{"name": "parameters", "value": 205_000 + s}] for s in range(3)}
    _, rows = value_rows(claim(by_seed, {"spec": SPEC}, "LSTM"))
    assert [r.name for r in rows] == ["parameters (LSTM)"]
    _, rows = value_rows(claim(by_seed, {"spec": SPEC}, "spec0"))
    assert [r.name for r in rows] == [f"parameters ({WORDS})"]
    by_seed = {s: [{"name": "loss", "value": 1.5 + 0.1 * s}] for s in range(3)}
    fig = strip_plot(claim(by_seed, {"spec": SPEC}, "spec0"))
    shown = " ".join(ax.get_ylabel().replace("\n", " ") for ax in fig.axes)
    plt.close(fig)
    assert "MixerSpec(" not in shown and "loss (lstm, kernel 4," in shown


def test_values_equal_up_to_float_rounding_are_not_drawn_as_a_spread(tmp_path):
    assert rounding_only([205000.0, 205000.0 + 1e-11, 205000.0 - 3e-11])
    assert rounding_only([1.1e-16, 2.2e-16, 4.4e-17])  # zero, up to rounding
    assert not rounding_only([1.50, 1.51, 1.52]) and not rounding_only([1e-6, 3e-6])
    noise = {s: [{"name": "max abs difference", "value": [1.1e-16, 2.2e-16, 4e-17][s]},
                 {"name": "norm", "value": 3.0 + 1e-15 * s}] for s in range(3)}  # fmt: skip
    assert not strip_figure(claim(noise), tmp_path / "noise.png")
    assert not (tmp_path / "noise.png").exists()
    for s in noise:
        noise[s].append({"name": "loss", "value": 1.5 + 0.01 * s})
    rows, _, left = strip_rows(claim(noise))
    assert list(rows) == ["loss"] and left["rounding"] == ["max abs difference", "norm"]
    fig = strip_plot(claim(noise))
    assert len(fig.axes) == 1
    title = fig._suptitle.get_text().replace("\n", " ")
    plt.close(fig)
    assert "not drawn, the same in every seed up to float rounding: max abs difference, norm" in (
        title
    )


def _boxes(fig) -> list:
    """The window extents of every piece of text the strip draws, at the site's 110 dpi."""
    fig.set_dpi(110)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [fig._suptitle, *(t for legend in fig.legends for t in legend.get_texts())]
    for ax in fig.axes:
        low, high = sorted(ax.get_xlim())  # the ticks drawn: those inside the view
        ticks = [t for t in ax.get_xticklabels() if low <= t.get_position()[0] <= high]
        texts += [ax.yaxis.label, *ax.texts, *ticks]
    return [t.get_window_extent(renderer) for t in texts if t.get_text()]


@pytest.mark.parametrize("seeds", [3, 5, 20])
def test_a_strips_labels_never_overprint_one_another(seeds):
    names = [f"validation loss of the {k}-layer model after training, averaged" for k in range(8)]
    spread = [0.0, 0.0001, 0.05, 0.0002, 0.03] * 4  # seeds close together, and apart
    by_seed = {s: [{"name": n, "value": 1.5 + spread[s] + k, "printed": 1.5 + k}
                   for k, n in enumerate(names)] for s in range(seeds)}  # fmt: skip
    fig = strip_plot(claim(by_seed, {"spec": SPEC}, "spec0"))
    boxes = _boxes(fig)
    width, height = fig.canvas.get_width_height()
    plt.close(fig)
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)
    for box in boxes:  # nothing cut off at the figure's edges
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1


def _curves(end_gap: float = 0.1, start: float = 4.5) -> dict:
    steps = list(range(0, 601, 20))
    by_seed = {}
    for seed in range(3):
        rng = np.random.default_rng(seed)
        by_seed[seed] = [
            {"name": f"val loss: {name}", "x": steps,
             "value": [end + (start - 1.5) * np.exp(-s / 80) + 0.005 * rng.standard_normal()
                       for s in steps]}
            for name, end in (("attention", 1.5), ("LSTM", 1.5 + end_gap))
        ]  # fmt: skip
    figure = {"title": "validation loss", "xlabel": "step", "ylabel": "loss (nats)",
              "kind": "lines", "hlines": {}, "invert_x": False, "log": False}  # fmt: skip
    return claim(by_seed, figure=figure)


@pytest.mark.parametrize("kind", ["lines", "band"])
def test_a_small_gap_at_the_end_of_training_is_drawn_large_enough_to_see(kind):
    curves = _curves()
    curves["figure"]["kind"] = kind
    fig = claim_plot(curves)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2  # the whole curves, and their last 30% zoomed
    low, high = axes[1].get_ylim()
    plt.close(fig)
    assert low < 1.5 and high > 1.6  # both curves' ends in view
    assert 0.1 / (high - low) > 0.3  # the 0.1-nat gap fills a good part of the panel
    full = axes[0].get_ylim()
    assert 0.1 / (full[1] - full[0]) < 0.05  # which the whole picture could not show


def test_curves_whose_end_already_fills_the_picture_get_no_zoom():
    fig = claim_plot(_curves(end_gap=0.1, start=1.55))  # flat from the start
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 1
    plt.close(fig)
