from datetime import date

from bizdays import next_business_day


def test_two_holidays():
    hols = {date(2024, 12, 25), date(2024, 12, 26)}
    assert next_business_day(date(2024, 12, 24), hols) == date(2024, 12, 27)


def test_long_break():
    hols = {date(2024, 12, d) for d in (23, 24, 25, 26)}
    assert next_business_day(date(2024, 12, 20), hols) == date(2024, 12, 27)


def test_month_end_friday():
    assert next_business_day(date(2024, 5, 31)) == date(2024, 6, 3)
