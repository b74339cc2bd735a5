"""A tiny shop's invoicing: parse order lines, validate, discount, coupon, tax, format, total."""
