def truncate(text, n):
    words = text.split()
    if len(words) >= n:
        return " ".join(words[:n]) + "…"
    return " ".join(words)
