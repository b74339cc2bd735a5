from csvline import parse_line


def test_escaped_quotes():
    assert parse_line('x,"say ""hi""",y') == ["x", 'say "hi"', "y"]


def test_spaces_kept():
    assert parse_line(" a , b ") == [" a ", " b "]


def test_empty_field():
    assert parse_line("a,,b") == ["a", "", "b"]
