from comments import strip_comment


def test_single_quotes():
    assert strip_comment("s = 'x#y' # z") == "s = 'x#y'"


def test_url_fragment_without_comment():
    assert strip_comment('url = "http://x/#top"') == 'url = "http://x/#top"'


def test_floor_division_is_code():
    assert strip_comment("a = b // 2  # floor") == "a = b // 2"


def test_comment_without_space():
    assert strip_comment("x=1# c") == "x=1"
