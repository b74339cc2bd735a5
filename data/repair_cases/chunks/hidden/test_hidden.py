import pytest

from chunks import chunks


def test_bigger_than_list():
    assert chunks([1, 2, 3], 5) == [[1, 2, 3]]


def test_sevens():
    assert chunks(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]


def test_exact_multiple():
    assert chunks([1, 2, 3, 4, 5, 6], 3) == [[1, 2, 3], [4, 5, 6]]


def test_zero_size():
    with pytest.raises(ValueError):
        chunks([1], 0)
