"""R5: sales tax in cents for a region (CA 7.25%, NY 4%, OR 0%), rounded half up;
an unknown region is a ValueError."""


def tax(amount, region):
    raise NotImplementedError("R5")
