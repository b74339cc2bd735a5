import pytest

from roman import roman


def test_1994():
    assert roman(1994) == "MCMXCIV"


def test_nine_and_forty():
    assert (roman(9), roman(40)) == ("IX", "XL")


def test_zero_is_an_error():
    with pytest.raises(ValueError):
        roman(0)
