from safediv import safe_div


def test_divides():
    assert safe_div(6, 3) == 2


def test_zero_gives_none():
    assert safe_div(1, 0) is None
