import argparse

import pytest
from claimbook.declare.seeds import parse_seeds


@pytest.mark.parametrize(
    ("text", "seeds"),
    [("0,1,2", [0, 1, 2]), ("0-4", [0, 1, 2, 3, 4]), ("7", [7]), ("3,0-1", [0, 1, 3])],
)
def test_lists_and_ranges(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(
    "text", ["", "a", "1,,2", "3-1", "-1", "0-x", "1.5", "1,10,1", "0-2,1", "3,0-1,3"]
)
def test_malformed_lists_are_rejected(text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse_seeds(text)


def test_a_seed_given_twice_is_named():
    with pytest.raises(argparse.ArgumentTypeError, match="seed 1 given twice in '1,10,1'"):
        parse_seeds("1,10,1")
