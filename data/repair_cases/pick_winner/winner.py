import random


def pick_winner(scores):
    best = max(scores.values())
    leaders = sorted(name for name, s in scores.items() if s == best)
    return random.choice(leaders)  # ties are broken uniformly at random, by requirement
