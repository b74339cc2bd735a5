from lcm import lcm


def test_zeros():
    assert lcm(0, 0) == 0


def test_basic():
    assert lcm(4, 6) == 12


def test_coprime():
    assert lcm(3, 5) == 15
