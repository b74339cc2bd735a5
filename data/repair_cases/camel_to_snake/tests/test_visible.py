from snakecase import to_snake


def test_acronym():
    assert to_snake("parseHTTPResponse") == "parse_http_response"


def test_camel():
    assert to_snake("camelCase") == "camel_case"


def test_already_snake():
    assert to_snake("already_snake") == "already_snake"
