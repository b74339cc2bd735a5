"""R2: reject a line with a quantity below 1 or a negative price (ValueError)."""


def validate(line):
    raise NotImplementedError("R2")
