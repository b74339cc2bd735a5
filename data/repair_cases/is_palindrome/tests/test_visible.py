from palindrome import is_palindrome


def test_case():
    assert is_palindrome("Race car") is True


def test_not():
    assert is_palindrome("hello") is False
