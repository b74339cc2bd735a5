import pytest

from duration import parse_duration


def test_hours_minutes():
    assert parse_duration("1h30m") == 5400


def test_bare_number_is_an_error():
    with pytest.raises(ValueError):
        parse_duration("90")
