import re


def slugify(title):
    text = title.strip().lower()
    text = re.sub(r"[^a-z0-9 ]", "", text)
    return text.replace(" ", "-")
