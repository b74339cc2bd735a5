import pytest

from boolparse import parse_bool


def test_rejects_garbage():
    with pytest.raises(ValueError):
        parse_bool("maybe")


def test_true_any_case():
    assert parse_bool("TRUE") is True


def test_no():
    assert parse_bool("no") is False
