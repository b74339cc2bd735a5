"""R3: a line's total in cents: qty * price; from 10 units on, 10% of it (rounded half up)
is taken off."""


def line_total(line):
    gross = line.qty * line.price_cents
    if line.qty >= 10:
        return gross - (gross + 50) // 100
    return gross
