import pytest

from percent import percent_change


def test_negative_base_improves():
    assert percent_change(-100, -50) == 50.0


def test_zero_to_zero():
    assert percent_change(0, 0) is None


def test_full_precision():
    assert percent_change(3, 4) == pytest.approx(100 / 3)
