from versions import newer


def test_patch_level():
    assert newer("1.0.10", "1.0.9") is True


def test_trailing_zero_is_equal():
    assert newer("1.2.0", "1.2") is False


def test_older_two_digit():
    assert newer("0.9.1", "0.10") is False
