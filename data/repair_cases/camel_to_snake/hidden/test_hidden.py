from snakecase import to_snake


def test_trailing_acronym():
    assert to_snake("getURL") == "get_url"


def test_leading_acronym():
    assert to_snake("HTMLParser") == "html_parser"


def test_digits_stay_attached():
    assert to_snake("Version2Update") == "version2_update"


def test_snake_stays_snake():
    assert to_snake("user_id") == "user_id"
