def round_money(x):
    return round(x, 2)
