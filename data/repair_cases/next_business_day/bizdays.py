from datetime import timedelta


def next_business_day(d, holidays=()):
    d = d + timedelta(days=1)
    if d.weekday() == 6 or d in holidays:
        d += timedelta(days=1)
    return d
