from ordinal import ordinal


def test_small():
    assert [ordinal(n) for n in (1, 2, 3, 4)] == ["1st", "2nd", "3rd", "4th"]


def test_teens():
    assert ordinal(11) == "11th"
