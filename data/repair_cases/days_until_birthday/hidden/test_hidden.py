from datetime import date

from birthday import days_until


def test_feb29_in_leap_year():
    assert days_until(date(2024, 2, 1), date(2000, 2, 29)) == 28


def test_next_is_leap():
    assert days_until(date(2023, 3, 1), date(2000, 2, 29)) == 365


def test_new_year():
    assert days_until(date(2023, 12, 31), date(1990, 1, 1)) == 1
