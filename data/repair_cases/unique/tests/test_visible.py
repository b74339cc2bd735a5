from unique import unique


def test_first_seen_order():
    assert unique([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_empty():
    assert unique([]) == []


def test_all_same():
    assert unique([1, 1]) == [1]
