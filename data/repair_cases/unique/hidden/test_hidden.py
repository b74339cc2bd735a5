from unique import unique


def test_generator():
    assert unique(x for x in [2, 2, 1]) == [2, 1]


def test_none_is_a_value():
    assert unique([None, 1, None]) == [None, 1]


def test_order():
    assert unique([5, 4, 5, 6, 4]) == [5, 4, 6]
