def unique(items):
    return list(set(items))
