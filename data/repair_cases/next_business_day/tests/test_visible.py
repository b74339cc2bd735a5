from datetime import date

from bizdays import next_business_day


def test_friday():
    assert next_business_day(date(2024, 5, 3)) == date(2024, 5, 6)


def test_monday():
    assert next_business_day(date(2024, 5, 6)) == date(2024, 5, 7)


def test_thursday():
    assert next_business_day(date(2024, 5, 2)) == date(2024, 5, 3)
