import pytest

from shop.coupon import apply_coupon


def test_save5_takes_five_dollars_off():
    assert apply_coupon(1000, "SAVE5") == 500


def test_pct10_takes_ten_percent_off():
    assert apply_coupon(2000, "PCT10") == 1800


def test_unknown_code_is_refused():
    with pytest.raises(ValueError):
        apply_coupon(1000, "FREE")
