def format_name(first, last):
    return first + " " + last
