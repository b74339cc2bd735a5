from money import round_money


def test_half_up():
    assert round_money(0.125) == 0.13


def test_down():
    assert round_money(1.234) == 1.23


def test_exact():
    assert round_money(2.5) == 2.5
