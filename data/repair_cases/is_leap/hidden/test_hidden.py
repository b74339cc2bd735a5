from leap import is_leap


def test_2400():
    assert is_leap(2400) is True


def test_2100():
    assert is_leap(2100) is False


def test_proleptic_gregorian():
    assert is_leap(1500) is False
