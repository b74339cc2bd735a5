from shop.money import format_cents


def test_thousands_and_cents():
    assert format_cents(123456) == "$1,234.56"


def test_small_amount():
    assert format_cents(5) == "$0.05"
