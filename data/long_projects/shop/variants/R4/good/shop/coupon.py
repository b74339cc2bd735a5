"""R4: apply a coupon to an amount in cents: SAVE5 takes 500 off, PCT10 takes 10% off (the
amount taken off rounded half up); never below 0; an unknown code is a ValueError; None
leaves the amount as it is."""


def apply_coupon(amount, code):
    if code is None:
        return amount
    if code == "SAVE5":
        off = 500
    elif code == "PCT10":
        off = (amount * 10 + 50) // 100
    else:
        raise ValueError(f"unknown coupon {code!r}")
    return max(0, amount - off)
