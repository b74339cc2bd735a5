import pytest

from median import median


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        median([])


def test_skewed_even():
    assert median([1, 1, 1, 10]) == 1.0


def test_unsorted_even():
    assert median([4, 1, 3, 2]) == 2.5
