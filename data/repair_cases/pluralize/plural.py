def plural(word, n):
    if n <= 1:
        return f"{n} {word}"
    if word.endswith(("s", "x", "ch", "sh")):
        return f"{n} {word}es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return f"{n} {word[:-1]}ies"
    return f"{n} {word}s"
