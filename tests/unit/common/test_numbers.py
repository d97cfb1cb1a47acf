"""Numbers from loosely typed values (``common/numbers.py``): never a bool, never NaN, the caller's
default for anything out of range."""

from __future__ import annotations

import math

import pytest

from briny.common.numbers import is_number, non_negative, positive, whole


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, True),
        (0, True),
        (-2.5, True),
        (True, False),
        (False, False),
        ("1", False),
        (None, False),
        (math.nan, False),
        (math.inf, False),
        ([1], False),
    ],
)
def test_is_number(value, expected):
    assert is_number(value) is expected


def test_positive_and_non_negative():
    assert positive(5, None) == 5.0 and isinstance(positive(5, None), float)
    assert positive(0.25, 9) == 0.25
    for bad in (0, -1, True, "5", None, math.nan, math.inf):
        assert positive(bad, "dflt") == "dflt"
    assert non_negative(0, None) == 0.0 and non_negative(3, None) == 3.0
    for bad in (-0.5, False, "0", None):
        assert non_negative(bad, 7) == 7


def test_whole():
    assert whole(0, None) == 0 and whole(42, None) == 42
    assert whole(-1, -9) == -9 and whole(-1, None, minimum=-1) == -1
    assert whole(5, None, 1, 4) is None and whole(4, None, 1, 4) == 4
    for bad in (True, 1.0, "3", None):
        assert whole(bad, "dflt") == "dflt"
