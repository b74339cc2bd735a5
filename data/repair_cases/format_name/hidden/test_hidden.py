from names import format_name


def test_both_missing():
    assert format_name("", "") == ""


def test_kept_as_given():
    assert format_name("vincent", "van Gogh") == "vincent van Gogh"


def test_only_first():
    assert format_name("Grace", "") == "Grace"


def test_only_last():
    assert format_name("", "Hopper") == "Hopper"
