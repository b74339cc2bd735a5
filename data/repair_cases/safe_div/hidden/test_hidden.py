from safediv import safe_div


def test_true_division():
    assert safe_div(7, 2) == 3.5


def test_custom_default():
    assert safe_div(1, 0, default=-1) == -1


def test_zero_default_is_none():
    assert safe_div(0, 0) is None
