from truncate import truncate


def test_no_ellipsis_at_exact_length():
    assert truncate("a b c", 3) == "a b c"


def test_cuts_long_text():
    assert truncate("a b c d", 2) == "a b…"


def test_cuts_by_one():
    assert truncate("a b c", 2) == "a b…"


def test_short_text():
    assert truncate("a", 5) == "a"
