from comments import strip_comment


def test_hash_in_string():
    assert strip_comment('x = "a#b"  # note') == 'x = "a#b"'


def test_plain_comment():
    assert strip_comment("y = 1  # c") == "y = 1"


def test_whole_line_comment():
    assert strip_comment("# only") == ""
