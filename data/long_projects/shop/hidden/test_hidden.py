"""The hidden acceptance benchmark: scored after every iteration for the reader only. No role
(planner, developer, QA) ever sees these tests' names, text or results."""

import pytest

from shop.coupon import apply_coupon
from shop.discount import line_total
from shop.invoice import total
from shop.money import format_cents
from shop.parse import Line, parse_line
from shop.tax import tax
from shop.validate import validate


def test_h1_parse_keeps_cents_exact():
    assert [parse_line(f"A,1,{p}").price_cents for p in ("0.29", "4.35", "19.99")] == [29, 435, 1999]


def test_h1_parse_strips_spaces():
    assert parse_line(" A , 2 , 3 ") == Line("A", 2, 300)


def test_h2_quantity_must_be_positive():
    for qty in (0, -3):
        with pytest.raises(ValueError):
            validate(Line("A", qty, 100))


def test_h2_price_may_be_zero_not_negative():
    assert validate(Line("A", 1, 0)) is None
    with pytest.raises(ValueError):
        validate(Line("A", 1, -1))


def test_h3_bulk_from_ten_units():
    assert [line_total(Line("A", q, 100)) for q in (9, 10, 11)] == [900, 900, 990]


def test_h3_half_up_rounding():
    assert line_total(Line("A", 11, 15)) == 148 and line_total(Line("A", 13, 5)) == 58


def test_h4_coupons():
    assert (apply_coupon(300, "SAVE5"), apply_coupon(500, "SAVE5"), apply_coupon(105, "PCT10")) == (0, 0, 94)


def test_h5_tax_half_up():
    assert (tax(1000, "CA"), tax(2000, "CA"), tax(1234, "NY")) == (73, 145, 49)


def test_h6_formatting():
    assert [format_cents(c) for c in (0, 99, 100000, -500)] == ["$0.00", "$0.99", "$1,000.00", "-$5.00"]


def test_h7_end_to_end():
    lines = [parse_line("A,10,1.00"), parse_line("B,1,0.29")]
    got = total(lines, coupon="PCT10", region="CA")
    assert (got["subtotal"], got["after_coupon"], got["tax"], got["total"]) == (929, 836, 61, 897)


def test_h7_refuses_a_bad_line():
    with pytest.raises(ValueError):
        total([Line("A", 0, 100)])
