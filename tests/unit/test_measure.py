import json

import pytest
from claimbook.declare.measure import Measure
from claimbook.declare.numbers import NonFiniteValueError, decode, encode, reproduces


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
        (0.4, 1e-05, None, False),  # the printed exponent counts: 0.4 is not 0.00001
        (1.2e-05, 1e-05, None, True),
        (1.7075, "1.708", None, True),  # half up, in decimal (binary 1.7075 is 1.70749...)
        (0.125, "0.13", None, True),  # half up, not to even
        (2.5, 3, None, True),
        (2.5, 2, None, False),
        (124402944, 124402944, None, True),
        (float("nan"), 1.0, None, False),
        ({"nonfinite": "NaN"}, "1.00", None, False),
    ],
)
def test_reproduction_rule(value, printed, tolerance, expected):
    assert reproduces(value, printed, tolerance) is expected


def test_measure_records_json_values_and_returns_them():
    props = []
    measure = Measure(props)
    assert measure("loss", 1.5, printed="1.50", unit="nats") == 1.5
    assert props == [
        {"name": "loss", "value": 1.5, "printed": "1.50", "reproduced": True, "unit": "nats"}
    ]
    with pytest.raises(TypeError, match="measured values must be"):
        measure("model", object())


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), [1.0, float("-inf")]])
def test_a_non_finite_value_is_recorded_explicitly_and_makes_the_test_an_error(bad):
    props = []
    with pytest.raises(NonFiniteValueError, match="measured value 'loss' is"):
        Measure(props)("loss", bad, printed="1.0")
    (entry,) = props
    assert entry["nonfinite"] is True and entry["reproduced"] is False
    assert "NaN" in json.dumps(entry, allow_nan=False) or "Infinity" in json.dumps(entry)


def test_run_results_round_trip_non_finite_floats_through_standard_json():
    data = {"loss": [1.0, float("nan")], "best": float("-inf"), "n": 3}
    text = json.dumps(encode(data), allow_nan=False)
    back = decode(json.loads(text))
    assert back["n"] == 3 and back["best"] == float("-inf") and back["loss"][1] != back["loss"][1]


def test_a_value_beside_a_printed_number_keeps_the_printed_digits():
    from claimbook.declare.numbers import fmt

    assert fmt(0.99997) == "1" and fmt(0.99997, "0.99997") == "0.99997"  # never "1" beside it
    assert fmt(1.70812, "1.708") == "1.708" and fmt(52.3, "52") == "52.3"  # never fewer digits
    assert fmt(2.0, 1.0) == "2"  # a number given as a float carries no printed digits
    assert fmt(1234.567, "1234.57") == "1,234.57" and fmt(4, "4") == "4"
    assert fmt(0.5, "about a half") == "0.5"  # a phrase sets no digits


def test_reproduces_records_as_measure_does_and_fails_naming_both():
    from claimbook.declare.measure import Measure

    props: list = []
    measure = Measure(props)
    assert measure.reproduces("parameters", 1_050_624, printed=1_050_624) == 1_050_624
    with pytest.raises(AssertionError, match=r"loss: measured 1\.7075, printed '1\.707'"):
        measure.reproduces("loss", 1.7075, printed="1.707")
    plain: list = []
    Measure(plain)("loss", 1.7075, printed="1.707")
    assert props[-1] == plain[-1]  # the same record as measure(..., printed=...)
