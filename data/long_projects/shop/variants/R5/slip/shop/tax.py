"""R5: sales tax in cents for a region (CA 7.25%, NY 4%, OR 0%), rounded half up;
an unknown region is a ValueError."""

RATES = {"CA": 725, "NY": 400, "OR": 0}  # basis points of a hundredth: 725 = 7.25%


def tax(amount, region):
    if region not in RATES:
        raise ValueError(f"unknown region {region!r}")
    return amount * RATES[region] // 1000
