import re

_PART = re.compile(r"(\d+)([hms])")
_WHOLE = re.compile(r"(?:\d+[hms])+")
_SECONDS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(n) * _SECONDS[u] for n, u in _PART.findall(text))
