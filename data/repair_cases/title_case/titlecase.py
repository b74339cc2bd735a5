SMALL = {"a", "an", "and", "of", "the", "in", "on"}


def title_case(text):
    words = text.split()
    out = []
    for w in words:
        out.append(w if w.lower() in SMALL else w[:1].upper() + w[1:])
    return " ".join(out)
