from titlecase import title_case


def test_first_word_capitalised():
    assert title_case("the lord of the rings") == "The Lord of the Rings"


def test_small_words_inside_stay_lower():
    assert title_case("war and peace") == "War and Peace"
