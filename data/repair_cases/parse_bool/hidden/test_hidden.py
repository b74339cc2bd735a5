import pytest

from boolparse import parse_bool


def test_padded_yes():
    assert parse_bool(" Yes ") is True


def test_off():
    assert parse_bool("OFF") is False


@pytest.mark.parametrize("s", ["", "2", "truthy"])
def test_rejects(s):
    with pytest.raises(ValueError):
        parse_bool(s)
