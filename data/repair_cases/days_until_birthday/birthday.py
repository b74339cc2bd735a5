def days_until(today, birthday):
    nxt = birthday.replace(year=today.year)
    if nxt < today:
        nxt = birthday.replace(year=today.year + 1)
    return (nxt - today).days
