"""Shipping fees for the shop. Version 1 charges every order the flat fee."""

FLAT_FEE = 5.0
FREE_FROM = 50.0


def shipping_fee(order_total):
    return FLAT_FEE
