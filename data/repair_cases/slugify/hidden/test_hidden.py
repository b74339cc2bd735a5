from slugify import slugify


def test_many_spaces():
    assert slugify("Hello   big  World") == "hello-big-world"


def test_trims():
    assert slugify("  Leading and trailing ") == "leading-and-trailing"


def test_punctuation():
    assert slugify("C'est la vie!") == "cest-la-vie"


def test_long_titles_are_not_truncated():
    title = "A very long title that keeps going on"
    assert slugify(title) == "a-very-long-title-that-keeps-going-on"
