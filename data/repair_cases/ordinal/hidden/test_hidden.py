from ordinal import ordinal


def test_hundreds():
    assert [ordinal(n) for n in (111, 112, 121)] == ["111th", "112th", "121st"]


def test_twenties():
    assert ordinal(22) == "22nd"
