from lcm import lcm


def test_negative():
    assert lcm(-4, 6) == 12


def test_negative_multiple():
    assert lcm(4, -8) == 8


def test_one_zero():
    assert lcm(0, 7) == 0


def test_more():
    assert lcm(21, 6) == 42
