from truncate import truncate


def test_exact_length_normalises_spaces():
    assert truncate("a  b", 2) == "a b"


def test_words_kept_verbatim():
    assert truncate("Hello, world again", 1) == "Hello,…"


def test_zero_words():
    assert truncate("a b", 0) == "…"


def test_one_word_over():
    assert truncate("one two three four", 3) == "one two three…"
