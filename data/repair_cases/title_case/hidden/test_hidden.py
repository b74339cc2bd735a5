from titlecase import title_case


def test_leading_small_word():
    assert title_case("of mice and men") == "Of Mice and Men"


def test_acronyms_kept():
    assert title_case("NASA in space") == "NASA in Space"


def test_inner_the():
    assert title_case("return of the king") == "Return of the King"
