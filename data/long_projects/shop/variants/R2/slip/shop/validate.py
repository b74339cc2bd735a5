"""R2: reject a line with a quantity below 1 or a negative price (ValueError)."""


def validate(line):
    if line.qty < 1 or line.price_cents < 0:
        raise ValueError("bad line")
    return True
