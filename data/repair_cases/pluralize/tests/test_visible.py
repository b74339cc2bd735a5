from plural import plural


def test_zero_is_plural():
    assert plural("apple", 0) == "0 apples"


def test_one():
    assert plural("apple", 1) == "1 apple"


def test_many():
    assert plural("apple", 3) == "3 apples"
