"""R6: format cents as dollars: 123456 -> "$1,234.56", -500 -> "-$5.00"."""


def format_cents(cents):
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) / 100:,.2f}"
