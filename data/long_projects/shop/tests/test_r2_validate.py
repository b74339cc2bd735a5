import pytest

from shop.parse import Line
from shop.validate import validate


def test_rejects_a_negative_quantity():
    with pytest.raises(ValueError):
        validate(Line("A", -1, 100))


def test_accepts_an_ordinary_line():
    assert validate(Line("A", 3, 100)) is None
