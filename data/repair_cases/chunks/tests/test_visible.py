from chunks import chunks


def test_partial_last():
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_even():
    assert chunks([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_empty():
    assert chunks([], 3) == []
