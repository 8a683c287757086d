import pytest

from claimbook.measure import Measure, decimals, reproduces


@pytest.mark.parametrize(("printed", "places"), [(1.708, 3), ("1.00", 2), (13, 0), ("0.20", 2)])
def test_printed_decimals(printed, places):
    assert decimals(printed) == places


@pytest.mark.parametrize(
    ("value", "printed", "tolerance", "expected"),
    [
        (1.7076, 1.708, None, True),  # the chapter's seed-0 convolution loss
        (0.369, 0.36, None, False),  # one digit off
        (0.9996, "1.00", None, True),
        (0.994, "1.00", None, False),
        (0.21, 0.20, 0.015, True),
        (0.24, 0.20, 0.015, False),
        ([0.06, 0.58], [0.06, 0.58], None, True),
        ([0.06, 0.37], [0.06, 0.36], None, False),
        (5, "over 30", None, None),  # not a number: not judged
        ("pre-norm", "post-norm", None, False),  # a printed word: the same word reproduces it
        ("pre-norm", "pre-norm", None, True),
        ("yes", "two layers solve it", None, None),  # a phrase is not judged
    ],
)
def test_reproduction_rule(value, printed, tolerance, expected):
    assert reproduces(value, printed, tolerance) is expected


def test_measure_records_json_values_and_returns_them():
    props = []
    measure = Measure(props)
    assert measure("loss", 1.5, printed="1.50", unit="nats") == 1.5
    assert props == [
        (
            "claimbook.measure",
            {"name": "loss", "value": 1.5, "printed": "1.50", "reproduced": True, "unit": "nats"},
        )
    ]
    with pytest.raises(TypeError, match="measured values must be"):
        measure("model", object())
