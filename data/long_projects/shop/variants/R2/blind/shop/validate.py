"""R2: reject a line with a quantity below 1 or a negative price (ValueError)."""


def validate(line):
    if line.qty < 0:
        raise ValueError(f"quantity must not be negative, got {line.qty}")
    if line.price_cents < 0:
        raise ValueError(f"price must not be negative, got {line.price_cents}")
