from versions import newer


def test_two_digit_minor():
    assert newer("1.10.0", "1.9.0") is True


def test_major():
    assert newer("2.0.0", "1.9.9") is True


def test_equal():
    assert newer("1.0.0", "1.0.0") is False
