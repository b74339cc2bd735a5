TRUE = {"true", "yes", "1", "on"}


def parse_bool(s):
    return s.strip().lower() in TRUE
