from money import round_money


def test_float_repr():
    assert round_money(2.675) == 2.68


def test_negative_half():
    assert round_money(-0.125) == -0.13


def test_one_oh_five():
    assert round_money(1.005) == 1.01
