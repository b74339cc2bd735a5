from csvline import parse_line


def test_quoted_comma():
    assert parse_line('a,"b,c",d') == ["a", "b,c", "d"]


def test_plain():
    assert parse_line("a,b") == ["a", "b"]


def test_empty():
    assert parse_line("") == [""]
