"""R4: apply a coupon to an amount in cents: SAVE5 takes 500 off, PCT10 takes 10% off (the
amount taken off rounded half up); never below 0; an unknown code is a ValueError; None
leaves the amount as it is."""


def apply_coupon(amount, code):
    raise NotImplementedError("R4")
