def newer(a, b):
    return a > b
