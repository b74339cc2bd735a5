import re


def to_snake(name):
    return re.sub(r"([A-Z])", r"_\1", name).lower().lstrip("_")
