def top_k(scores, k):
    return sorted(scores, key=scores.get, reverse=True)[:k]
