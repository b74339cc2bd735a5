"""R7: an invoice's total: validate every line, add the line totals, apply the coupon,
then tax what is left; total = after coupon + tax (all in cents)."""

from shop.coupon import apply_coupon
from shop.discount import line_total
from shop.tax import tax
from shop.validate import validate


def total(lines, coupon=None, region="OR"):
    for line in lines:
        validate(line)
    subtotal = sum(line_total(line) for line in lines)
    owed = tax(subtotal, region)
    after = apply_coupon(subtotal, coupon)
    return {"subtotal": subtotal, "after_coupon": after, "tax": owed, "total": after + owed}
