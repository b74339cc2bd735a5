"""QA's checks, written from the requirements' text (never from the code). project.json tags
each with the kind of case it probes; a QA source that shares the developer's blind spot tends
not to write the checks of that kind (the same-source parameter)."""

import pytest

from shop.coupon import apply_coupon
from shop.discount import line_total
from shop.invoice import total
from shop.money import format_cents
from shop.parse import Line, parse_line
from shop.tax import tax
from shop.validate import validate


def test_r1_price_in_cents_is_exact():
    assert parse_line("A,1,0.29").price_cents == 29


def test_r1_whole_dollar_price():
    assert parse_line("A,1,3").price_cents == 300


def test_r2_zero_quantity_is_refused():
    with pytest.raises(ValueError):
        validate(Line("A", 0, 100))


def test_r2_negative_price_is_refused():
    with pytest.raises(ValueError):
        validate(Line("A", 1, -5))


def test_r3_ten_units_is_bulk():
    assert line_total(Line("A", 10, 100)) == 900


def test_r3_discount_rounds_half_up():
    assert line_total(Line("A", 11, 15)) == 148


def test_r4_coupon_never_goes_below_zero():
    assert apply_coupon(300, "SAVE5") == 0


def test_r4_no_coupon_leaves_the_amount():
    assert apply_coupon(300, None) == 300


def test_r5_tax_rounds_half_up():
    assert tax(1000, "CA") == 73


def test_r6_negative_amount():
    assert format_cents(-500) == "-$5.00"


def test_r7_bulk_order_total():
    got = total([Line("A", 10, 100)], region="NY")
    assert got["total"] == 936
