from names import format_name


def test_missing_last():
    assert format_name("Ada", "") == "Ada"


def test_missing_first():
    assert format_name("", "Lovelace") == "Lovelace"


def test_full():
    assert format_name("Ada", "Lovelace") == "Ada Lovelace"
