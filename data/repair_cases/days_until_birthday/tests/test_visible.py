from datetime import date

from birthday import days_until


def test_feb29_in_common_year():
    assert days_until(date(2023, 2, 1), date(2000, 2, 29)) == 27


def test_soon():
    assert days_until(date(2024, 5, 1), date(1990, 5, 10)) == 9


def test_today():
    assert days_until(date(2024, 5, 10), date(1990, 5, 10)) == 0


def test_just_passed():
    assert days_until(date(2024, 5, 11), date(1990, 5, 10)) == 364
