from percent import percent_change


def test_from_zero():
    assert percent_change(0, 5) is None


def test_up():
    assert percent_change(50, 75) == 50.0


def test_down():
    assert percent_change(200, 100) == -50.0
