import pytest

from duration import parse_duration


def test_seconds():
    assert parse_duration("45s") == 45


def test_trailing_garbage():
    with pytest.raises(ValueError):
        parse_duration("1h30x")


def test_unitless_is_an_error():
    with pytest.raises(ValueError):
        parse_duration("45")
