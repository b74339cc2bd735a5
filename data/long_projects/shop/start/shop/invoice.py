"""R7: an invoice's total: validate every line, add the line totals, apply the coupon,
then tax what is left; total = after coupon + tax (all in cents)."""


def total(lines, coupon=None, region="OR"):
    raise NotImplementedError("R7")
