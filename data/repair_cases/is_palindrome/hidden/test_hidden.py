from palindrome import is_palindrome


def test_punctuation():
    assert is_palindrome("A man, a plan, a canal: Panama") is True


def test_empty():
    assert is_palindrome("") is True
