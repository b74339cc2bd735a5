"""The source text of every repair case: original module, fix, wrong patches, tests.

Read by build.py, which writes one directory per case with real unified diffs and the
FAIL_TO_PASS / PASS_TO_PASS lists *measured* by running labkit's validator. Each case:

  original   the module as the executor left it (buggy, or already correct)
  fix        the correct fix (None when the original is already correct)
  wrong      plausible wrong patches against the original: name -> (description, text)
  tempt      tempting "improvements": against the fix (or the original, if it is already
             correct) — name -> (description, text)
  expect     the intended effect of each patch, checked against the measured one:
               resolves           visible and hidden tests pass
               hidden_failure     visible tests pass, a hidden test fails (overfit / silent break)
               breaks_protective  a visible protective (PASS_TO_PASS) test fails
               incomplete         a visible failing test still fails, no protective test broken
"""

from __future__ import annotations

from textwrap import dedent


def d(text):
    return dedent(text).lstrip("\n")

CASES: list[dict] = []


def case(id, slice, title, module, original, visible, hidden, fix=None, wrong=None, tempt=None,
         expect=None, flaky=(), oscillates=()):
    CASES.append(dict(id=id, slice=slice, title=title, module=module, original=d(original),
                      fix=None if fix is None else d(fix), visible=d(visible), hidden=d(hidden),
                      wrong={k: (v[0], d(v[1])) for k, v in (wrong or {}).items()},
                      tempt={k: (v[0], d(v[1])) for k, v in (tempt or {}).items()},
                      expect=dict(expect or {}), flaky=tuple(flaky), oscillates=tuple(oscillates)))


# ============================================================================ text

case("slugify", "text", "slugs collapse runs of spaces", "slugify",
original='''
    import re


    def slugify(title):
        text = title.strip().lower()
        text = re.sub(r"[^a-z0-9 ]", "", text)
        return text.replace(" ", "-")
''',
fix='''
    import re


    def slugify(title):
        text = title.strip().lower()
        text = re.sub(r"[^a-z0-9 ]", "", text)
        return re.sub(r" +", "-", text)
''',
wrong={
    "double_space": ("replace double spaces before hyphenating", '''
        import re


        def slugify(title):
            text = title.strip().lower()
            text = re.sub(r"[^a-z0-9 ]", "", text)
            return text.replace("  ", " ").replace(" ", "-")
    '''),
    "drop_spaces": ("collapse whitespace by removing it", '''
        import re


        def slugify(title):
            text = title.strip().lower()
            text = re.sub(r"[^a-z0-9 ]", "", text)
            return "".join(text.split())
    '''),
},
tempt={
    "truncate": ("keep slugs short: cut at 20 characters", '''
        import re


        def slugify(title):
            text = title.strip().lower()
            text = re.sub(r"[^a-z0-9 ]", "", text)
            return re.sub(r" +", "-", text)[:20]
    '''),
},
expect={"fix": "resolves", "double_space": "hidden_failure", "drop_spaces": "breaks_protective",
        "truncate": "hidden_failure"},
visible='''
    from slugify import slugify


    def test_collapses_spaces():
        assert slugify("Hello  World") == "hello-world"


    def test_basic():
        assert slugify("Hello World!") == "hello-world"


    def test_digits():
        assert slugify("Top 10 Tips") == "top-10-tips"
''',
hidden='''
    from slugify import slugify


    def test_many_spaces():
        assert slugify("Hello   big  World") == "hello-big-world"


    def test_trims():
        assert slugify("  Leading and trailing ") == "leading-and-trailing"


    def test_punctuation():
        assert slugify("C'est la vie!") == "cest-la-vie"


    def test_long_titles_are_not_truncated():
        title = "A very long title that keeps going on"
        assert slugify(title) == "a-very-long-title-that-keeps-going-on"
''')

case("title_case", "text", "the first word is always capitalised", "titlecase",
original='''
    SMALL = {"a", "an", "and", "of", "the", "in", "on"}


    def title_case(text):
        words = text.split()
        out = []
        for w in words:
            out.append(w if w.lower() in SMALL else w[:1].upper() + w[1:])
        return " ".join(out)
''',
fix='''
    SMALL = {"a", "an", "and", "of", "the", "in", "on"}


    def title_case(text):
        words = text.split()
        out = []
        for i, w in enumerate(words):
            small = w.lower() in SMALL and i > 0
            out.append(w if small else w[:1].upper() + w[1:])
        return " ".join(out)
''',
wrong={
    "only_the": ("special-case a leading 'the'", '''
        SMALL = {"a", "an", "and", "of", "the", "in", "on"}


        def title_case(text):
            words = text.split()
            out = []
            for w in words:
                out.append(w if w.lower() in SMALL else w[:1].upper() + w[1:])
            if out and out[0] == "the":
                out[0] = "The"
            return " ".join(out)
    '''),
    "all_words": ("capitalise every word", '''
        SMALL = {"a", "an", "and", "of", "the", "in", "on"}


        def title_case(text):
            return " ".join(w[:1].upper() + w[1:] for w in text.split())
    '''),
},
tempt={
    "capitalize": ("simplify with str.capitalize()", '''
        SMALL = {"a", "an", "and", "of", "the", "in", "on"}


        def title_case(text):
            words = text.split()
            out = []
            for i, w in enumerate(words):
                small = w.lower() in SMALL and i > 0
                out.append(w if small else w.capitalize())
            return " ".join(out)
    '''),
},
expect={"fix": "resolves", "only_the": "hidden_failure", "all_words": "breaks_protective",
        "capitalize": "hidden_failure"},
visible='''
    from titlecase import title_case


    def test_first_word_capitalised():
        assert title_case("the lord of the rings") == "The Lord of the Rings"


    def test_small_words_inside_stay_lower():
        assert title_case("war and peace") == "War and Peace"
''',
hidden='''
    from titlecase import title_case


    def test_leading_small_word():
        assert title_case("of mice and men") == "Of Mice and Men"


    def test_acronyms_kept():
        assert title_case("NASA in space") == "NASA in Space"


    def test_inner_the():
        assert title_case("return of the king") == "Return of the King"
''')

case("truncate_words", "text", "no ellipsis when nothing was cut", "truncate",
original='''
    def truncate(text, n):
        words = text.split()
        if len(words) >= n:
            return " ".join(words[:n]) + "…"
        return " ".join(words)
''',
fix='''
    def truncate(text, n):
        words = text.split()
        if len(words) > n:
            return " ".join(words[:n]) + "…"
        return " ".join(words)
''',
wrong={
    "exact_passthrough": ("return the text unchanged when it has exactly n words", '''
        def truncate(text, n):
            words = text.split()
            if len(words) == n:
                return text
            if len(words) >= n:
                return " ".join(words[:n]) + "…"
            return " ".join(words)
    '''),
    "one_more": ("allow one extra word before cutting", '''
        def truncate(text, n):
            words = text.split()
            if len(words) > n + 1:
                return " ".join(words[:n]) + "…"
            return " ".join(words)
    '''),
},
tempt={
    "strip_punct": ("drop trailing punctuation before the ellipsis", '''
        def truncate(text, n):
            words = text.split()
            if len(words) > n:
                return " ".join(words[:n]).rstrip(".,;:") + "…"
            return " ".join(words)
    '''),
},
expect={"fix": "resolves", "exact_passthrough": "hidden_failure", "one_more": "breaks_protective",
        "strip_punct": "hidden_failure"},
visible='''
    from truncate import truncate


    def test_no_ellipsis_at_exact_length():
        assert truncate("a b c", 3) == "a b c"


    def test_cuts_long_text():
        assert truncate("a b c d", 2) == "a b…"


    def test_cuts_by_one():
        assert truncate("a b c", 2) == "a b…"


    def test_short_text():
        assert truncate("a", 5) == "a"
''',
hidden='''
    from truncate import truncate


    def test_exact_length_normalises_spaces():
        assert truncate("a  b", 2) == "a b"


    def test_words_kept_verbatim():
        assert truncate("Hello, world again", 1) == "Hello,…"


    def test_zero_words():
        assert truncate("a b", 0) == "…"


    def test_one_word_over():
        assert truncate("one two three four", 3) == "one two three…"
''')

case("camel_to_snake", "text", "acronyms stay one word", "snakecase",
original='''
    import re


    def to_snake(name):
        return re.sub(r"([A-Z])", r"_\\1", name).lower().lstrip("_")
''',
fix='''
    import re


    def to_snake(name):
        name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\\1_\\2", name)
        name = re.sub(r"([a-z0-9])([A-Z])", r"\\1_\\2", name)
        return name.lower()
''',
wrong={
    "http_only": ("treat HTTP as a word", '''
        import re


        def to_snake(name):
            name = name.replace("HTTP", "Http")
            return re.sub(r"([A-Z])", r"_\\1", name).lower().lstrip("_")
    '''),
    "normalise": ("normalise separators before splitting", '''
        import re


        def to_snake(name):
            name = name.replace("_", "")
            name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\\1_\\2", name)
            name = re.sub(r"([a-z0-9])([A-Z])", r"\\1_\\2", name)
            return name.lower()
    '''),
},
tempt={
    "digits": ("treat digits as word boundaries too", '''
        import re


        def to_snake(name):
            name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\\1_\\2", name)
            name = re.sub(r"([a-z0-9])([A-Z])", r"\\1_\\2", name)
            name = re.sub(r"([a-zA-Z])([0-9])", r"\\1_\\2", name)
            return name.lower()
    '''),
},
expect={"fix": "resolves", "http_only": "hidden_failure", "normalise": "breaks_protective",
        "digits": "hidden_failure"},
visible='''
    from snakecase import to_snake


    def test_acronym():
        assert to_snake("parseHTTPResponse") == "parse_http_response"


    def test_camel():
        assert to_snake("camelCase") == "camel_case"


    def test_already_snake():
        assert to_snake("already_snake") == "already_snake"
''',
hidden='''
    from snakecase import to_snake


    def test_trailing_acronym():
        assert to_snake("getURL") == "get_url"


    def test_leading_acronym():
        assert to_snake("HTMLParser") == "html_parser"


    def test_digits_stay_attached():
        assert to_snake("Version2Update") == "version2_update"


    def test_snake_stays_snake():
        assert to_snake("user_id") == "user_id"
''')

case("strip_comment", "text", "a # inside quotes is not a comment", "comments",
original='''
    def strip_comment(line):
        return line.split("#", 1)[0].rstrip()
''',
fix='''
    def strip_comment(line):
        quote = None
        for i, ch in enumerate(line):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\\"'":
                quote = ch
            elif ch == "#":
                return line[:i].rstrip()
        return line.rstrip()
''',
wrong={
    "last_hash": ("split at the last # instead of the first", '''
        def strip_comment(line):
            return line.rsplit("#", 1)[0].rstrip()
    '''),
    "space_hash": ("a comment starts with ' #'", '''
        def strip_comment(line):
            return line.split(" #", 1)[0].rstrip()
    '''),
},
tempt={
    "slashes": ("strip // comments as well", '''
        def strip_comment(line):
            quote = None
            for i, ch in enumerate(line):
                if quote:
                    if ch == quote:
                        quote = None
                elif ch in "\\"'":
                    quote = ch
                elif ch == "#" or line.startswith("//", i):
                    return line[:i].rstrip()
            return line.rstrip()
    '''),
},
expect={"fix": "resolves", "last_hash": "hidden_failure", "space_hash": "breaks_protective",
        "slashes": "hidden_failure"},
visible='''
    from comments import strip_comment


    def test_hash_in_string():
        assert strip_comment('x = "a#b"  # note') == 'x = "a#b"'


    def test_plain_comment():
        assert strip_comment("y = 1  # c") == "y = 1"


    def test_whole_line_comment():
        assert strip_comment("# only") == ""
''',
hidden='''
    from comments import strip_comment


    def test_single_quotes():
        assert strip_comment("s = 'x#y' # z") == "s = 'x#y'"


    def test_url_fragment_without_comment():
        assert strip_comment('url = "http://x/#top"') == 'url = "http://x/#top"'


    def test_floor_division_is_code():
        assert strip_comment("a = b // 2  # floor") == "a = b // 2"


    def test_comment_without_space():
        assert strip_comment("x=1# c") == "x=1"
''')

case("parse_bool", "text", "unknown strings are an error, not False", "boolparse",
original='''
    TRUE = {"true", "yes", "1", "on"}


    def parse_bool(s):
        return s.strip().lower() in TRUE
''',
fix='''
    TRUE = {"true", "yes", "1", "on"}
    FALSE = {"false", "no", "0", "off"}


    def parse_bool(s):
        v = s.strip().lower()
        if v in TRUE:
            return True
        if v in FALSE:
            return False
        raise ValueError(f"not a boolean: {s!r}")
''',
wrong={
    "maybe_only": ("reject 'maybe'", '''
        TRUE = {"true", "yes", "1", "on"}


        def parse_bool(s):
            if s == "maybe":
                raise ValueError(s)
            return s.strip().lower() in TRUE
    '''),
    "no_lower": ("look the stripped value up in TRUE and FALSE", '''
        TRUE = {"true", "yes", "1", "on"}
        FALSE = {"false", "no", "0", "off"}


        def parse_bool(s):
            v = s.strip()
            if v in TRUE:
                return True
            if v in FALSE:
                return False
            raise ValueError(f"not a boolean: {s!r}")
    '''),
},
tempt={
    "no_strip": ("drop the redundant strip()", '''
        TRUE = {"true", "yes", "1", "on"}
        FALSE = {"false", "no", "0", "off"}


        def parse_bool(s):
            v = s.lower()
            if v in TRUE:
                return True
            if v in FALSE:
                return False
            raise ValueError(f"not a boolean: {s!r}")
    '''),
},
expect={"fix": "resolves", "maybe_only": "hidden_failure", "no_lower": "breaks_protective",
        "no_strip": "hidden_failure"},
visible='''
    import pytest

    from boolparse import parse_bool


    def test_rejects_garbage():
        with pytest.raises(ValueError):
            parse_bool("maybe")


    def test_true_any_case():
        assert parse_bool("TRUE") is True


    def test_no():
        assert parse_bool("no") is False
''',
hidden='''
    import pytest

    from boolparse import parse_bool


    def test_padded_yes():
        assert parse_bool(" Yes ") is True


    def test_off():
        assert parse_bool("OFF") is False


    @pytest.mark.parametrize("s", ["", "2", "truthy"])
    def test_rejects(s):
        with pytest.raises(ValueError):
            parse_bool(s)
''')

case("pluralize", "text", "zero takes the plural", "plural",
original='''
    def plural(word, n):
        if n <= 1:
            return f"{n} {word}"
        if word.endswith(("s", "x", "ch", "sh")):
            return f"{n} {word}es"
        if word.endswith("y") and word[-2:-1] not in "aeiou":
            return f"{n} {word[:-1]}ies"
        return f"{n} {word}s"
''',
fix='''
    def plural(word, n):
        if n == 1:
            return f"{n} {word}"
        if word.endswith(("s", "x", "ch", "sh")):
            return f"{n} {word}es"
        if word.endswith("y") and word[-2:-1] not in "aeiou":
            return f"{n} {word[:-1]}ies"
        return f"{n} {word}s"
''',
wrong={
    "zero_s": ("add an s for zero", '''
        def plural(word, n):
            if n == 0:
                return f"0 {word}s"
            if n <= 1:
                return f"{n} {word}"
            if word.endswith(("s", "x", "ch", "sh")):
                return f"{n} {word}es"
            if word.endswith("y") and word[-2:-1] not in "aeiou":
                return f"{n} {word[:-1]}ies"
            return f"{n} {word}s"
    '''),
    "always": ("always pluralise; callers pass n", '''
        def plural(word, n):
            if word.endswith(("s", "x", "ch", "sh")):
                return f"{n} {word}es"
            if word.endswith("y") and word[-2:-1] not in "aeiou":
                return f"{n} {word[:-1]}ies"
            return f"{n} {word}s"
    '''),
},
tempt={
    "ves": ("handle words ending in f: leaf -> leaves", '''
        def plural(word, n):
            if n == 1:
                return f"{n} {word}"
            if word.endswith("f"):
                return f"{n} {word[:-1]}ves"
            if word.endswith(("s", "x", "ch", "sh")):
                return f"{n} {word}es"
            if word.endswith("y") and word[-2:-1] not in "aeiou":
                return f"{n} {word[:-1]}ies"
            return f"{n} {word}s"
    '''),
},
expect={"fix": "resolves", "zero_s": "hidden_failure", "always": "breaks_protective",
        "ves": "hidden_failure"},
visible='''
    from plural import plural


    def test_zero_is_plural():
        assert plural("apple", 0) == "0 apples"


    def test_one():
        assert plural("apple", 1) == "1 apple"


    def test_many():
        assert plural("apple", 3) == "3 apples"
''',
hidden='''
    from plural import plural


    def test_zero_berries():
        assert plural("berry", 0) == "0 berries"


    def test_boxes():
        assert plural("box", 2) == "2 boxes"


    def test_days():
        assert plural("day", 2) == "2 days"


    def test_roofs():
        assert plural("roof", 2) == "2 roofs"


    def test_one_box():
        assert plural("box", 1) == "1 box"
''')

case("format_name", "text", "optional name parts (two patches oscillate)", "names",
original='''
    def format_name(first, last):
        return first + " " + last
''',
fix='''
    def format_name(first, last):
        return " ".join(p for p in (first, last) if p)
''',
wrong={
    "rstrip": ("strip the trailing space when the last name is missing", '''
        def format_name(first, last):
            return (first + " " + last).rstrip()
    '''),
    "lstrip": ("strip the leading space when the first name is missing", '''
        def format_name(first, last):
            return (first + " " + last).lstrip()
    '''),
},
tempt={
    "title": ("normalise capitalisation with .title()", '''
        def format_name(first, last):
            return " ".join(p.title() for p in (first, last) if p)
    '''),
},
expect={"fix": "resolves", "rstrip": "incomplete", "lstrip": "incomplete", "title": "hidden_failure"},
oscillates=("rstrip", "lstrip"),
visible='''
    from names import format_name


    def test_missing_last():
        assert format_name("Ada", "") == "Ada"


    def test_missing_first():
        assert format_name("", "Lovelace") == "Lovelace"


    def test_full():
        assert format_name("Ada", "Lovelace") == "Ada Lovelace"
''',
hidden='''
    from names import format_name


    def test_both_missing():
        assert format_name("", "") == ""


    def test_kept_as_given():
        assert format_name("vincent", "van Gogh") == "vincent van Gogh"


    def test_only_first():
        assert format_name("Grace", "") == "Grace"


    def test_only_last():
        assert format_name("", "Hopper") == "Hopper"
''')

case("parse_csv_line", "text", "quoted fields may contain commas", "csvline",
original='''
    def parse_line(line):
        return line.split(",")
''',
fix='''
    import csv


    def parse_line(line):
        row = next(csv.reader([line]))
        return row or [""]
''',
wrong={
    "toggle": ("track quotes by hand", '''
        def parse_line(line):
            fields, cur, quoted = [], "", False
            for ch in line:
                if ch == '"':
                    quoted = not quoted
                elif ch == "," and not quoted:
                    fields.append(cur)
                    cur = ""
                else:
                    cur += ch
            fields.append(cur)
            return fields
    '''),
    "regex": ("find quoted or bare fields with a regex", '''
        import re


        def parse_line(line):
            return [f.strip('"') for f in re.findall(r'"[^"]*"|[^,]+', line)]
    '''),
},
tempt={
    "strip": ("strip whitespace around fields", '''
        import csv


        def parse_line(line):
            row = next(csv.reader([line]))
            return [f.strip() for f in row] or [""]
    '''),
},
expect={"fix": "resolves", "toggle": "hidden_failure", "regex": "breaks_protective",
        "strip": "hidden_failure"},
visible='''
    from csvline import parse_line


    def test_quoted_comma():
        assert parse_line('a,"b,c",d') == ["a", "b,c", "d"]


    def test_plain():
        assert parse_line("a,b") == ["a", "b"]


    def test_empty():
        assert parse_line("") == [""]
''',
hidden='''
    from csvline import parse_line


    def test_escaped_quotes():
        assert parse_line('x,"say ""hi""",y') == ["x", 'say "hi"', "y"]


    def test_spaces_kept():
        assert parse_line(" a , b ") == [" a ", " b "]


    def test_empty_field():
        assert parse_line("a,,b") == ["a", "", "b"]
''')

# ============================================================================ numeric

case("median", "numeric", "even-length median averages the middles", "median",
original='''
    def median(xs):
        s = sorted(xs)
        return s[len(s) // 2]
''',
fix='''
    def median(xs):
        if not xs:
            raise ValueError("median of an empty sequence")
        s = sorted(xs)
        mid = len(s) // 2
        if len(s) % 2:
            return s[mid]
        return (s[mid - 1] + s[mid]) / 2
''',
wrong={
    "mean_even": ("use the mean for even lengths", '''
        def median(xs):
            s = sorted(xs)
            if len(s) % 2 == 0:
                return sum(s) / len(s)
            return s[len(s) // 2]
    '''),
    "always_average": ("always average the two middle values", '''
        def median(xs):
            s = sorted(xs)
            mid = len(s) // 2
            return (s[mid - 1] + s[mid]) / 2
    '''),
},
tempt={
    "no_guard": ("drop the empty check: sorted() handles it", '''
        def median(xs):
            s = sorted(xs)
            mid = len(s) // 2
            if len(s) % 2:
                return s[mid]
            return (s[mid - 1] + s[mid]) / 2
    '''),
},
expect={"fix": "resolves", "mean_even": "hidden_failure", "always_average": "breaks_protective",
        "no_guard": "hidden_failure"},
visible='''
    from median import median


    def test_even():
        assert median([1, 2, 3, 4]) == 2.5


    def test_odd():
        assert median([3, 1, 2]) == 2


    def test_single():
        assert median([5]) == 5
''',
hidden='''
    import pytest

    from median import median


    def test_empty_is_an_error():
        with pytest.raises(ValueError):
            median([])


    def test_skewed_even():
        assert median([1, 1, 1, 10]) == 1.0


    def test_unsorted_even():
        assert median([4, 1, 3, 2]) == 2.5
''')

case("percent_change", "numeric", "change from zero is undefined", "percent",
original='''
    def percent_change(old, new):
        return (new - old) / old * 100
''',
fix='''
    def percent_change(old, new):
        if old == 0:
            return None
        return (new - old) / abs(old) * 100
''',
wrong={
    "zero_guard": ("return None when old is zero", '''
        def percent_change(old, new):
            if old == 0:
                return None
            return (new - old) / old * 100
    '''),
    "or_one": ("avoid division by zero with `old or 1`", '''
        def percent_change(old, new):
            return (new - old) / (old or 1) * 100
    '''),
},
tempt={
    "round2": ("round to two decimals for display", '''
        def percent_change(old, new):
            if old == 0:
                return None
            return round((new - old) / abs(old) * 100, 2)
    '''),
},
expect={"fix": "resolves", "zero_guard": "hidden_failure", "or_one": "incomplete",
        "round2": "hidden_failure"},
visible='''
    from percent import percent_change


    def test_from_zero():
        assert percent_change(0, 5) is None


    def test_up():
        assert percent_change(50, 75) == 50.0


    def test_down():
        assert percent_change(200, 100) == -50.0
''',
hidden='''
    import pytest

    from percent import percent_change


    def test_negative_base_improves():
        assert percent_change(-100, -50) == 50.0


    def test_zero_to_zero():
        assert percent_change(0, 0) is None


    def test_full_precision():
        assert percent_change(3, 4) == pytest.approx(100 / 3)
''')

case("round_money", "numeric", "money rounds half up", "money",
original='''
    def round_money(x):
        return round(x, 2)
''',
fix='''
    from decimal import ROUND_HALF_UP, Decimal


    def round_money(x):
        return float(Decimal(str(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
''',
wrong={
    "nudge": ("nudge by a tiny epsilon before rounding", '''
        def round_money(x):
            return round(x + 1e-9, 2)
    '''),
    "ceil": ("round up the last cent", '''
        import math


        def round_money(x):
            return math.ceil(x * 100) / 100
    '''),
},
tempt={
    "decimal_float": ("build the Decimal straight from the float", '''
        from decimal import ROUND_HALF_UP, Decimal


        def round_money(x):
            return float(Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    '''),
},
expect={"fix": "resolves", "nudge": "hidden_failure", "ceil": "breaks_protective",
        "decimal_float": "hidden_failure"},
visible='''
    from money import round_money


    def test_half_up():
        assert round_money(0.125) == 0.13


    def test_down():
        assert round_money(1.234) == 1.23


    def test_exact():
        assert round_money(2.5) == 2.5
''',
hidden='''
    from money import round_money


    def test_float_repr():
        assert round_money(2.675) == 2.68


    def test_negative_half():
        assert round_money(-0.125) == -0.13


    def test_one_oh_five():
        assert round_money(1.005) == 1.01
''')

case("lcm", "numeric", "lcm of zeros and negatives", "lcm",
original='''
    from math import gcd


    def lcm(a, b):
        return a * b // gcd(a, b)
''',
fix='''
    from math import gcd


    def lcm(a, b):
        if a == 0 or b == 0:
            return 0
        return abs(a * b) // gcd(a, b)
''',
wrong={
    "both_zero": ("special-case lcm(0, 0)", '''
        from math import gcd


        def lcm(a, b):
            if a == b == 0:
                return 0
            return a * b // gcd(a, b)
    '''),
    "product": ("lcm is the product: drop gcd", '''
        def lcm(a, b):
            return abs(a * b)
    '''),
},
tempt={
    "divides": ("fast path: if a divides b, return b", '''
        from math import gcd


        def lcm(a, b):
            if a == 0 or b == 0:
                return 0
            if b % a == 0:
                return b
            return abs(a * b) // gcd(a, b)
    '''),
},
expect={"fix": "resolves", "both_zero": "hidden_failure", "product": "breaks_protective",
        "divides": "hidden_failure"},
visible='''
    from lcm import lcm


    def test_zeros():
        assert lcm(0, 0) == 0


    def test_basic():
        assert lcm(4, 6) == 12


    def test_coprime():
        assert lcm(3, 5) == 15
''',
hidden='''
    from lcm import lcm


    def test_negative():
        assert lcm(-4, 6) == 12


    def test_negative_multiple():
        assert lcm(4, -8) == 8


    def test_one_zero():
        assert lcm(0, 7) == 0


    def test_more():
        assert lcm(21, 6) == 42
''')

case("roman", "numeric", "subtractive numerals", "roman",
original='''
    TABLE = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


    def roman(n):
        out = ""
        for value, letters in TABLE:
            while n >= value:
                out += letters
                n -= value
        return out
''',
fix='''
    TABLE = [
        (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
        (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
    ]


    def roman(n):
        if not 0 < n < 4000:
            raise ValueError(f"no Roman numeral for {n}")
        out = ""
        for value, letters in TABLE:
            while n >= value:
                out += letters
                n -= value
        return out
''',
wrong={
    "four_only": ("add IV to the table", '''
        TABLE = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (4, "IV"), (1, "I")]


        def roman(n):
            out = ""
            for value, letters in TABLE:
                while n >= value:
                    out += letters
                    n -= value
            return out
    '''),
    "ascending": ("list the table in ascending order for readability", '''
        TABLE = [
            (1, "I"), (4, "IV"), (5, "V"), (9, "IX"), (10, "X"), (40, "XL"), (50, "L"),
            (90, "XC"), (100, "C"), (400, "CD"), (500, "D"), (900, "CM"), (1000, "M"),
        ]


        def roman(n):
            out = ""
            for value, letters in TABLE:
                while n >= value:
                    out += letters
                    n -= value
            return out
    '''),
},
tempt={
    "nulla": ("allow zero as 'N' (nulla)", '''
        TABLE = [
            (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
            (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
        ]


        def roman(n):
            if n == 0:
                return "N"
            if not 0 < n < 4000:
                raise ValueError(f"no Roman numeral for {n}")
            out = ""
            for value, letters in TABLE:
                while n >= value:
                    out += letters
                    n -= value
            return out
    '''),
},
expect={"fix": "resolves", "four_only": "hidden_failure", "ascending": "breaks_protective",
        "nulla": "hidden_failure"},
visible='''
    from roman import roman


    def test_four():
        assert roman(4) == "IV"


    def test_three():
        assert roman(3) == "III"


    def test_eight():
        assert roman(8) == "VIII"
''',
hidden='''
    import pytest

    from roman import roman


    def test_1994():
        assert roman(1994) == "MCMXCIV"


    def test_nine_and_forty():
        assert (roman(9), roman(40)) == ("IX", "XL")


    def test_zero_is_an_error():
        with pytest.raises(ValueError):
            roman(0)
''')

case("human_bytes", "numeric", "no '1024.0 KiB' at unit boundaries", "humanbytes",
original='''
    def human_bytes(n):
        if n < 1024:
            return f"{n} B"
        for unit in ("KiB", "MiB", "GiB"):
            n /= 1024
            if n < 1024:
                return f"{n:.1f} {unit}"
        return f"{n / 1024:.1f} TiB"
''',
fix='''
    def human_bytes(n):
        if n < 0:
            raise ValueError(f"negative size: {n}")
        if n < 1024:
            return f"{n} B"
        for unit in ("KiB", "MiB", "GiB"):
            n /= 1024
            if round(n, 1) < 1024:
                return f"{n:.1f} {unit}"
        return f"{n / 1024:.1f} TiB"
''',
wrong={
    "threshold": ("move to the next unit a little earlier", '''
        def human_bytes(n):
            if n < 1024:
                return f"{n} B"
            for unit in ("KiB", "MiB", "GiB"):
                n /= 1024
                if n < 1023.95:
                    return f"{n:.1f} {unit}"
            return f"{n / 1024:.1f} TiB"
    '''),
    "decimals": ("one decimal everywhere, bytes included", '''
        def human_bytes(n):
            if n < 1024:
                return f"{n:.1f} B"
            for unit in ("KiB", "MiB", "GiB"):
                n /= 1024
                if round(n, 1) < 1024:
                    return f"{n:.1f} {unit}"
            return f"{n / 1024:.1f} TiB"
    '''),
},
tempt={
    "pib": ("support PiB for huge sizes", '''
        def human_bytes(n):
            if n < 0:
                raise ValueError(f"negative size: {n}")
            if n < 1024:
                return f"{n} B"
            for unit in ("KiB", "MiB", "GiB", "TiB"):
                n /= 1024
                if round(n, 1) < 1024:
                    return f"{n:.1f} {unit}"
            return f"{n / 1024:.1f} PiB"
    '''),
},
expect={"fix": "resolves", "threshold": "hidden_failure", "decimals": "breaks_protective",
        "pib": "hidden_failure"},
visible='''
    from humanbytes import human_bytes


    def test_kib_boundary():
        assert human_bytes(1048575) == "1.0 MiB"


    def test_bytes():
        assert human_bytes(512) == "512 B"


    def test_kib():
        assert human_bytes(1536) == "1.5 KiB"
''',
hidden='''
    import pytest

    from humanbytes import human_bytes


    def test_gib_boundary():
        assert human_bytes(1024**3 - 1) == "1.0 GiB"


    def test_tib_is_the_largest_unit():
        assert human_bytes(1024**5) == "1024.0 TiB"


    def test_negative_is_an_error():
        with pytest.raises(ValueError):
            human_bytes(-5)
''')

# ============================================================================ collections

case("unique", "collections", "dedupe keeps first-seen order", "unique",
original='''
    def unique(items):
        return list(set(items))
''',
fix='''
    def unique(items):
        return list(dict.fromkeys(items))
''',
wrong={
    "index_sort": ("sort the set by first index", '''
        def unique(items):
            return sorted(set(items), key=items.index)
    '''),
    "reverse_sorted": ("sort for a deterministic order", '''
        def unique(items):
            return sorted(set(items), reverse=True)
    '''),
},
tempt={
    "drop_none": ("skip None values while at it", '''
        def unique(items):
            return [x for x in dict.fromkeys(items) if x is not None]
    '''),
},
expect={"fix": "resolves", "index_sort": "hidden_failure", "reverse_sorted": "incomplete",
        "drop_none": "hidden_failure"},
visible='''
    from unique import unique


    def test_first_seen_order():
        assert unique([3, 1, 3, 2, 1]) == [3, 1, 2]


    def test_empty():
        assert unique([]) == []


    def test_all_same():
        assert unique([1, 1]) == [1]
''',
hidden='''
    from unique import unique


    def test_generator():
        assert unique(x for x in [2, 2, 1]) == [2, 1]


    def test_none_is_a_value():
        assert unique([None, 1, None]) == [None, 1]


    def test_order():
        assert unique([5, 4, 5, 6, 4]) == [5, 4, 6]
''')

case("chunks", "collections", "the last partial chunk is kept", "chunks",
original='''
    def chunks(xs, n):
        return [xs[i:i + n] for i in range(0, len(xs) - n + 1, n)]
''',
fix='''
    def chunks(xs, n):
        if n <= 0:
            raise ValueError(f"chunk size must be positive, got {n}")
        return [xs[i:i + n] for i in range(0, len(xs), n)]
''',
wrong={
    "append_one": ("append the leftover element", '''
        def chunks(xs, n):
            out = [xs[i:i + n] for i in range(0, len(xs) - n + 1, n)]
            if len(xs) % n == 1:
                out.append(xs[-1:])
            return out
    '''),
    "plus_one": ("extend the range by one", '''
        def chunks(xs, n):
            return [xs[i:i + n] for i in range(0, len(xs) + 1, n)]
    '''),
},
tempt={
    "early_exit": ("early exit when n exceeds the list", '''
        def chunks(xs, n):
            if n <= 0:
                raise ValueError(f"chunk size must be positive, got {n}")
            if n > len(xs):
                return []
            return [xs[i:i + n] for i in range(0, len(xs), n)]
    '''),
},
expect={"fix": "resolves", "append_one": "hidden_failure", "plus_one": "breaks_protective",
        "early_exit": "hidden_failure"},
visible='''
    from chunks import chunks


    def test_partial_last():
        assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


    def test_even():
        assert chunks([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


    def test_empty():
        assert chunks([], 3) == []
''',
hidden='''
    import pytest

    from chunks import chunks


    def test_bigger_than_list():
        assert chunks([1, 2, 3], 5) == [[1, 2, 3]]


    def test_sevens():
        assert chunks(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]


    def test_exact_multiple():
        assert chunks([1, 2, 3, 4, 5, 6], 3) == [[1, 2, 3], [4, 5, 6]]


    def test_zero_size():
        with pytest.raises(ValueError):
            chunks([1], 0)
''')

case("flatten", "collections", "strings are atoms, not sequences", "flatten",
original='''
    def flatten(items):
        out = []
        for x in items:
            if hasattr(x, "__iter__"):
                out.extend(flatten(x))
            else:
                out.append(x)
        return out
''',
fix='''
    def flatten(items):
        out = []
        for x in items:
            if isinstance(x, (list, tuple)):
                out.extend(flatten(x))
            else:
                out.append(x)
        return out
''',
wrong={
    "not_str": ("recurse into iterables except str", '''
        def flatten(items):
            out = []
            for x in items:
                if hasattr(x, "__iter__") and not isinstance(x, str):
                    out.extend(flatten(x))
                else:
                    out.append(x)
            return out
    '''),
    "one_level": ("flatten one level of lists", '''
        def flatten(items):
            out = []
            for x in items:
                if isinstance(x, list):
                    out.extend(x)
                else:
                    out.append(x)
            return out
    '''),
},
tempt={
    "skip_none": ("treat None as empty", '''
        def flatten(items):
            out = []
            for x in items:
                if x is None:
                    continue
                if isinstance(x, (list, tuple)):
                    out.extend(flatten(x))
                else:
                    out.append(x)
            return out
    '''),
},
expect={"fix": "resolves", "not_str": "hidden_failure", "one_level": "breaks_protective",
        "skip_none": "hidden_failure"},
visible='''
    from flatten import flatten


    def test_strings_are_atoms():
        assert flatten(["ab", ["cd"]]) == ["ab", "cd"]


    def test_deep():
        assert flatten([1, [2, [3]]]) == [1, 2, 3]


    def test_empty():
        assert flatten([]) == []
''',
hidden='''
    from flatten import flatten


    def test_tuples():
        assert flatten([(1, 2), [3]]) == [1, 2, 3]


    def test_bytes_and_dicts_are_atoms():
        assert flatten([b"xy", {"a": 1}]) == [b"xy", {"a": 1}]


    def test_none_is_kept():
        assert flatten([None, [1]]) == [None, 1]
''')

case("deep_merge", "collections", "merging does not mutate its inputs", "merge",
original='''
    def merge(a, b):
        for k, v in b.items():
            if isinstance(v, dict) and isinstance(a.get(k), dict):
                merge(a[k], v)
            else:
                a[k] = v
        return a
''',
fix='''
    import copy


    def merge(a, b):
        out = copy.deepcopy(a)
        for k, v in b.items():
            if isinstance(v, dict) and isinstance(out.get(k), dict):
                out[k] = merge(out[k], v)
            else:
                out[k] = copy.deepcopy(v)
        return out
''',
wrong={
    "copy_a": ("deep-copy a before merging", '''
        import copy


        def merge(a, b):
            a = copy.deepcopy(a)
            for k, v in b.items():
                if isinstance(v, dict) and isinstance(a.get(k), dict):
                    a[k] = merge(a[k], v)
                else:
                    a[k] = v
            return a
    '''),
    "shallow": ("merge with dict unpacking", '''
        def merge(a, b):
            return {**a, **b}
    '''),
},
tempt={
    "none_deletes": ("None in b deletes the key", '''
        import copy


        def merge(a, b):
            out = copy.deepcopy(a)
            for k, v in b.items():
                if v is None:
                    out.pop(k, None)
                elif isinstance(v, dict) and isinstance(out.get(k), dict):
                    out[k] = merge(out[k], v)
                else:
                    out[k] = copy.deepcopy(v)
            return out
    '''),
},
expect={"fix": "resolves", "copy_a": "hidden_failure", "shallow": "breaks_protective",
        "none_deletes": "hidden_failure"},
visible='''
    from merge import merge


    def test_does_not_mutate():
        a = {"x": {"y": 1}}
        merge(a, {"x": {"z": 2}})
        assert a == {"x": {"y": 1}}


    def test_nested():
        assert merge({"x": {"y": 1}}, {"x": {"z": 2}}) == {"x": {"y": 1, "z": 2}}


    def test_override():
        assert merge({"a": 1}, {"a": 2}) == {"a": 2}
''',
hidden='''
    from merge import merge


    def test_result_does_not_alias_b():
        b = {"k": {"v": 1}}
        out = merge({}, b)
        out["k"]["v"] = 9
        assert b["k"]["v"] == 1


    def test_none_is_a_value():
        assert merge({"a": 1}, {"a": None}) == {"a": None}


    def test_two_levels_untouched():
        a = {"x": {"y": {"z": 1}}}
        merge(a, {"x": {"y": {"w": 2}}})
        assert a == {"x": {"y": {"z": 1}}}
''')

case("top_k", "collections", "ties are broken by name", "topk",
original='''
    def top_k(scores, k):
        return sorted(scores, key=scores.get, reverse=True)[:k]
''',
fix='''
    def top_k(scores, k):
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        return sorted(scores, key=lambda name: (-scores[name], name))[:k]
''',
wrong={
    "presort": ("sort names first, then by score (stable)", '''
        def top_k(scores, k):
            return sorted(sorted(scores), key=scores.get, reverse=True)[:k]
    '''),
    "by_name": ("sort by name for determinism", '''
        def top_k(scores, k):
            return sorted(scores)[:k]
    '''),
},
tempt={
    "zero_all": ("k=0 means 'all'", '''
        def top_k(scores, k):
            if k < 0:
                raise ValueError(f"k must be >= 0, got {k}")
            if k == 0:
                k = len(scores)
            return sorted(scores, key=lambda name: (-scores[name], name))[:k]
    '''),
},
expect={"fix": "resolves", "presort": "hidden_failure", "by_name": "breaks_protective",
        "zero_all": "hidden_failure"},
visible='''
    from topk import top_k


    def test_ties_by_name():
        assert top_k({"b": 2, "a": 2, "c": 1}, 2) == ["a", "b"]


    def test_highest():
        assert top_k({"x": 1, "y": 3}, 1) == ["y"]


    def test_empty():
        assert top_k({}, 3) == []
''',
hidden='''
    import pytest

    from topk import top_k


    def test_k_bigger_than_scores():
        assert top_k({"a": 1, "b": 2}, 5) == ["b", "a"]


    def test_zero():
        assert top_k({"a": 1}, 0) == []


    def test_negative_k():
        with pytest.raises(ValueError):
            top_k({"a": 1}, -1)
''')

case("version_newer", "collections", "versions compare numerically", "versions",
original='''
    def newer(a, b):
        return a > b
''',
fix='''
    def _parts(v):
        nums = [int(p) for p in v.split(".")]
        while nums and nums[-1] == 0:
            nums.pop()
        return nums


    def newer(a, b):
        return _parts(a) > _parts(b)
''',
wrong={
    "tuples": ("compare integer tuples", '''
        def newer(a, b):
            return tuple(map(int, a.split("."))) > tuple(map(int, b.split(".")))
    '''),
    "string_parts": ("compare component-wise", '''
        def newer(a, b):
            return a.split(".") > b.split(".")
    '''),
},
tempt={
    "major_minor": ("only major.minor matter for compatibility", '''
        def _parts(v):
            nums = [int(p) for p in v.split(".")][:2]
            while nums and nums[-1] == 0:
                nums.pop()
            return nums


        def newer(a, b):
            return _parts(a) > _parts(b)
    '''),
},
expect={"fix": "resolves", "tuples": "hidden_failure", "string_parts": "incomplete",
        "major_minor": "hidden_failure"},
visible='''
    from versions import newer


    def test_two_digit_minor():
        assert newer("1.10.0", "1.9.0") is True


    def test_major():
        assert newer("2.0.0", "1.9.9") is True


    def test_equal():
        assert newer("1.0.0", "1.0.0") is False
''',
hidden='''
    from versions import newer


    def test_patch_level():
        assert newer("1.0.10", "1.0.9") is True


    def test_trailing_zero_is_equal():
        assert newer("1.2.0", "1.2") is False


    def test_older_two_digit():
        assert newer("0.9.1", "0.10") is False
''')

# ============================================================================ dates

case("is_leap", "dates", "centuries divisible by 400 are leap years", "leap",
original='''
    def is_leap(year):
        return year % 4 == 0 and year % 100 != 0
''',
fix='''
    def is_leap(year):
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
''',
wrong={
    "y2000": ("2000 was a leap year", '''
        def is_leap(year):
            if year == 2000:
                return True
            return year % 4 == 0 and year % 100 != 0
    '''),
    "mod4": ("every fourth year", '''
        def is_leap(year):
            return year % 4 == 0
    '''),
},
tempt={
    "julian": ("be historically accurate: Julian calendar before 1583", '''
        def is_leap(year):
            if year < 1583:
                return year % 4 == 0
            return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    '''),
},
expect={"fix": "resolves", "y2000": "hidden_failure", "mod4": "breaks_protective",
        "julian": "hidden_failure"},
visible='''
    from leap import is_leap


    def test_2000():
        assert is_leap(2000) is True


    def test_2024():
        assert is_leap(2024) is True


    def test_1900():
        assert is_leap(1900) is False


    def test_2023():
        assert is_leap(2023) is False
''',
hidden='''
    from leap import is_leap


    def test_2400():
        assert is_leap(2400) is True


    def test_2100():
        assert is_leap(2100) is False


    def test_proleptic_gregorian():
        assert is_leap(1500) is False
''')

case("next_business_day", "dates", "Friday is followed by Monday", "bizdays",
original='''
    from datetime import timedelta


    def next_business_day(d, holidays=()):
        d = d + timedelta(days=1)
        if d.weekday() == 6 or d in holidays:
            d += timedelta(days=1)
        return d
''',
fix='''
    from datetime import timedelta


    def next_business_day(d, holidays=()):
        d = d + timedelta(days=1)
        while d.weekday() >= 5 or d in holidays:
            d += timedelta(days=1)
        return d
''',
wrong={
    "friday": ("Friday jumps three days", '''
        from datetime import timedelta


        def next_business_day(d, holidays=()):
            if d.weekday() == 4:
                return d + timedelta(days=3)
            d = d + timedelta(days=1)
            if d.weekday() == 6 or d in holidays:
                d += timedelta(days=1)
            return d
    '''),
    "isoweekday": ("skip days with isoweekday() >= 5", '''
        from datetime import timedelta


        def next_business_day(d, holidays=()):
            d = d + timedelta(days=1)
            while d.isoweekday() >= 5 or d in holidays:
                d += timedelta(days=1)
            return d
    '''),
},
tempt={
    "bounded": ("guard against infinite loops: look at most 3 days ahead", '''
        from datetime import timedelta


        def next_business_day(d, holidays=()):
            d = d + timedelta(days=1)
            for _ in range(3):
                if d.weekday() < 5 and d not in holidays:
                    break
                d += timedelta(days=1)
            return d
    '''),
},
expect={"fix": "resolves", "friday": "hidden_failure", "isoweekday": "breaks_protective",
        "bounded": "hidden_failure"},
visible='''
    from datetime import date

    from bizdays import next_business_day


    def test_friday():
        assert next_business_day(date(2024, 5, 3)) == date(2024, 5, 6)


    def test_monday():
        assert next_business_day(date(2024, 5, 6)) == date(2024, 5, 7)


    def test_thursday():
        assert next_business_day(date(2024, 5, 2)) == date(2024, 5, 3)
''',
hidden='''
    from datetime import date

    from bizdays import next_business_day


    def test_two_holidays():
        hols = {date(2024, 12, 25), date(2024, 12, 26)}
        assert next_business_day(date(2024, 12, 24), hols) == date(2024, 12, 27)


    def test_long_break():
        hols = {date(2024, 12, d) for d in (23, 24, 25, 26)}
        assert next_business_day(date(2024, 12, 20), hols) == date(2024, 12, 27)


    def test_month_end_friday():
        assert next_business_day(date(2024, 5, 31)) == date(2024, 6, 3)
''')

case("days_until_birthday", "dates", "Feb 29 birthdays in common years", "birthday",
original='''
    def days_until(today, birthday):
        nxt = birthday.replace(year=today.year)
        if nxt < today:
            nxt = birthday.replace(year=today.year + 1)
        return (nxt - today).days
''',
fix='''
    from datetime import date


    def _on(birthday, year):
        try:
            return birthday.replace(year=year)
        except ValueError:  # Feb 29 in a common year: celebrate on Feb 28
            return date(year, 2, 28)


    def days_until(today, birthday):
        nxt = _on(birthday, today.year)
        if nxt < today:
            nxt = _on(birthday, today.year + 1)
        return (nxt - today).days
''',
wrong={
    "always_28": ("move Feb 29 birthdays to Feb 28", '''
        def days_until(today, birthday):
            if (birthday.month, birthday.day) == (2, 29):
                birthday = birthday.replace(day=28)
            nxt = birthday.replace(year=today.year)
            if nxt < today:
                nxt = birthday.replace(year=today.year + 1)
            return (nxt - today).days
    '''),
    "day_of_year": ("count in day-of-year space", '''
        def days_until(today, birthday):
            return (birthday.timetuple().tm_yday - today.timetuple().tm_yday) % 365
    '''),
},
tempt={
    "leap_once": ("compute the leap year once, from today", '''
        import calendar
        from datetime import date


        def days_until(today, birthday):
            if (birthday.month, birthday.day) == (2, 29) and not calendar.isleap(today.year):
                birthday = date(2001, 2, 28)
            nxt = birthday.replace(year=today.year)
            if nxt < today:
                nxt = birthday.replace(year=today.year + 1)
            return (nxt - today).days
    '''),
},
expect={"fix": "resolves", "always_28": "hidden_failure", "day_of_year": "breaks_protective",
        "leap_once": "hidden_failure"},
visible='''
    from datetime import date

    from birthday import days_until


    def test_feb29_in_common_year():
        assert days_until(date(2023, 2, 1), date(2000, 2, 29)) == 27


    def test_soon():
        assert days_until(date(2024, 5, 1), date(1990, 5, 10)) == 9


    def test_today():
        assert days_until(date(2024, 5, 10), date(1990, 5, 10)) == 0


    def test_just_passed():
        assert days_until(date(2024, 5, 11), date(1990, 5, 10)) == 364
''',
hidden='''
    from datetime import date

    from birthday import days_until


    def test_feb29_in_leap_year():
        assert days_until(date(2024, 2, 1), date(2000, 2, 29)) == 28


    def test_next_is_leap():
        assert days_until(date(2023, 3, 1), date(2000, 2, 29)) == 365


    def test_new_year():
        assert days_until(date(2023, 12, 31), date(1990, 1, 1)) == 1
''')

# ============================================================================ stateful

case("rate_limiter", "stateful", "a hit expires exactly one window later", "ratelimit",
original='''
    class RateLimiter:
        def __init__(self, limit, window):
            self.limit, self.window = limit, window
            self.hits = []

        def allow(self, now):
            self.hits = [t for t in self.hits if now - t <= self.window]
            if len(self.hits) < self.limit:
                self.hits.append(now)
                return True
            return False
''',
fix='''
    class RateLimiter:
        def __init__(self, limit, window):
            self.limit, self.window = limit, window
            self.hits = []

        def allow(self, now):
            self.hits = [t for t in self.hits if now - t < self.window]
            if len(self.hits) < self.limit:
                self.hits.append(now)
                return True
            return False
''',
wrong={
    "reset": ("reset the window once the oldest hit expires", '''
        class RateLimiter:
            def __init__(self, limit, window):
                self.limit, self.window = limit, window
                self.hits = []

            def allow(self, now):
                if self.hits and now - self.hits[0] >= self.window:
                    self.hits = []
                if len(self.hits) < self.limit:
                    self.hits.append(now)
                    return True
                return False
    '''),
    "at_limit": ("allow up to and including the limit", '''
        class RateLimiter:
            def __init__(self, limit, window):
                self.limit, self.window = limit, window
                self.hits = []

            def allow(self, now):
                self.hits = [t for t in self.hits if now - t < self.window]
                if len(self.hits) <= self.limit:
                    self.hits.append(now)
                    return True
                return False
    '''),
},
tempt={
    "count_denied": ("remember denied attempts so hammering clients slow down", '''
        class RateLimiter:
            def __init__(self, limit, window):
                self.limit, self.window = limit, window
                self.hits = []

            def allow(self, now):
                self.hits = [t for t in self.hits if now - t < self.window]
                allowed = len(self.hits) < self.limit
                self.hits.append(now)
                return allowed
    '''),
},
expect={"fix": "resolves", "reset": "hidden_failure", "at_limit": "breaks_protective",
        "count_denied": "hidden_failure"},
visible='''
    from ratelimit import RateLimiter


    def test_expires_after_window():
        rl = RateLimiter(1, 10)
        rl.allow(0)
        assert rl.allow(10) is True


    def test_limit():
        rl = RateLimiter(2, 10)
        assert rl.allow(0) and rl.allow(1)
        assert rl.allow(2) is False


    def test_within_window():
        rl = RateLimiter(1, 10)
        rl.allow(0)
        assert rl.allow(5) is False
''',
hidden='''
    from ratelimit import RateLimiter


    def test_denied_requests_do_not_count():
        rl = RateLimiter(1, 10)
        assert rl.allow(0)
        assert not rl.allow(5)
        assert rl.allow(10)


    def test_sliding_not_reset():
        rl = RateLimiter(2, 10)
        assert rl.allow(0) and rl.allow(5) and rl.allow(10)
        assert rl.allow(11) is False
''')

case("undo_editor", "stateful", "undo with nothing to undo is a no-op", "editor",
original='''
    class Editor:
        def __init__(self):
            self.text = ""
            self._undo = []

        def type(self, s):
            self._undo.append(self.text)
            self.text += s

        def undo(self):
            self.text = self._undo.pop()
''',
fix='''
    class Editor:
        def __init__(self):
            self.text = ""
            self._undo = []

        def type(self, s):
            self._undo.append(self.text)
            self.text += s

        def undo(self):
            if self._undo:
                self.text = self._undo.pop()
''',
wrong={
    "seed": ("seed the history with the empty document", '''
        class Editor:
            def __init__(self):
                self.text = ""
                self._undo = [""]

            def type(self, s):
                self._undo.append(self.text)
                self.text += s

            def undo(self):
                self.text = self._undo.pop()
    '''),
    "fifo": ("pop from the front of the history", '''
        class Editor:
            def __init__(self):
                self.text = ""
                self._undo = []

            def type(self, s):
                self._undo.append(self.text)
                self.text += s

            def undo(self):
                if self._undo:
                    self.text = self._undo.pop(0)
    '''),
},
tempt={
    "bounded": ("bound memory: keep two undo steps", '''
        class Editor:
            def __init__(self):
                self.text = ""
                self._undo = []

            def type(self, s):
                self._undo.append(self.text)
                self._undo = self._undo[-2:]
                self.text += s

            def undo(self):
                if self._undo:
                    self.text = self._undo.pop()
    '''),
},
expect={"fix": "resolves", "seed": "hidden_failure", "fifo": "breaks_protective",
        "bounded": "hidden_failure"},
visible='''
    from editor import Editor


    def test_undo_on_fresh_editor():
        e = Editor()
        e.undo()
        assert e.text == ""


    def test_undo_last():
        e = Editor()
        e.type("a")
        e.type("b")
        e.undo()
        assert e.text == "a"


    def test_type():
        e = Editor()
        e.type("x")
        assert e.text == "x"
''',
hidden='''
    from editor import Editor


    def test_extra_undos():
        e = Editor()
        e.type("a")
        for _ in range(3):
            e.undo()
        e.type("b")
        assert e.text == "b"


    def test_undo_everything():
        e = Editor()
        for s in "abc":
            e.type(s)
        for _ in range(3):
            e.undo()
        assert e.text == ""
''')

case("ttl_cache", "stateful", "entries expire at exactly ttl and are evicted", "ttlcache",
original='''
    class TTLCache:
        def __init__(self, ttl):
            self.ttl = ttl
            self._d = {}

        def set(self, key, value, now):
            self._d[key] = (value, now)

        def get(self, key, now):
            if key not in self._d:
                return None
            value, t = self._d[key]
            if now - t <= self.ttl:
                return value
            return None

        def __len__(self):
            return len(self._d)
''',
fix='''
    class TTLCache:
        def __init__(self, ttl):
            self.ttl = ttl
            self._d = {}

        def set(self, key, value, now):
            self._d[key] = (value, now)

        def get(self, key, now):
            if key not in self._d:
                return None
            value, t = self._d[key]
            if now - t < self.ttl:
                return value
            del self._d[key]
            return None

        def __len__(self):
            return len(self._d)
''',
wrong={
    "strict": ("compare with < instead of <=", '''
        class TTLCache:
            def __init__(self, ttl):
                self.ttl = ttl
                self._d = {}

            def set(self, key, value, now):
                self._d[key] = (value, now)

            def get(self, key, now):
                if key not in self._d:
                    return None
                value, t = self._d[key]
                if now - t < self.ttl:
                    return value
                return None

            def __len__(self):
                return len(self._d)
    '''),
    "early": ("expire one tick early to be safe", '''
        class TTLCache:
            def __init__(self, ttl):
                self.ttl = ttl
                self._d = {}

            def set(self, key, value, now):
                self._d[key] = (value, now)

            def get(self, key, now):
                if key not in self._d:
                    return None
                value, t = self._d[key]
                if now - t < self.ttl - 1:
                    return value
                del self._d[key]
                return None

            def __len__(self):
                return len(self._d)
    '''),
},
tempt={
    "sliding": ("sliding expiry: refresh on every hit", '''
        class TTLCache:
            def __init__(self, ttl):
                self.ttl = ttl
                self._d = {}

            def set(self, key, value, now):
                self._d[key] = (value, now)

            def get(self, key, now):
                if key not in self._d:
                    return None
                value, t = self._d[key]
                if now - t < self.ttl:
                    self._d[key] = (value, now)
                    return value
                del self._d[key]
                return None

            def __len__(self):
                return len(self._d)
    '''),
},
expect={"fix": "resolves", "strict": "hidden_failure", "early": "breaks_protective",
        "sliding": "hidden_failure"},
visible='''
    from ttlcache import TTLCache


    def test_expires_at_ttl():
        c = TTLCache(5)
        c.set("a", 1, now=0)
        assert c.get("a", now=5) is None


    def test_fresh():
        c = TTLCache(5)
        c.set("a", 1, now=0)
        assert c.get("a", now=4) == 1


    def test_missing():
        assert TTLCache(5).get("nope", now=0) is None
''',
hidden='''
    from ttlcache import TTLCache


    def test_expired_entries_are_evicted():
        c = TTLCache(5)
        c.set("a", 1, now=0)
        c.get("a", now=7)
        assert len(c) == 0


    def test_absolute_expiry():
        c = TTLCache(5)
        c.set("a", 1, now=0)
        assert c.get("a", now=4) == 1
        assert c.get("a", now=6) is None


    def test_overwrite_refreshes():
        c = TTLCache(5)
        c.set("a", 1, now=0)
        c.set("a", 2, now=3)
        assert c.get("a", now=6) == 2
''')

case("pick_winner", "stateful", "empty contest has no winner (a visible test is flaky)", "winner",
original='''
    import random


    def pick_winner(scores):
        best = max(scores.values())
        leaders = sorted(name for name, s in scores.items() if s == best)
        return random.choice(leaders)  # ties are broken uniformly at random, by requirement
''',
fix='''
    import random


    def pick_winner(scores):
        if not scores:
            return None
        best = max(scores.values())
        leaders = sorted(name for name, s in scores.items() if s == best)
        return random.choice(leaders)  # ties are broken uniformly at random, by requirement
''',
wrong={
    "first_leader": ("return None when empty; make ties deterministic (first leader)", '''
        def pick_winner(scores):
            if not scores:
                return None
            best = max(scores.values())
            return sorted(name for name, s in scores.items() if s == best)[0]
    '''),
    "default": ("max(..., default=None)", '''
        import random


        def pick_winner(scores):
            best = max(scores.values(), default=None)
            leaders = sorted(name for name, s in scores.items() if s == best)
            return random.choice(leaders)  # ties are broken uniformly at random, by requirement
    '''),
},
expect={"fix": "resolves", "first_leader": "hidden_failure", "default": "incomplete"},
flaky=("tests/test_visible.py::test_tie_goes_to_first",),
visible='''
    import pytest

    from winner import pick_winner


    def test_empty_returns_none():
        assert pick_winner({}) is None


    def test_highest_wins():
        assert pick_winner({"a": 1, "b": 3}) == "b"


    # FLAKY: this test contradicts the requirement (ties are random), so it passes
    # about half the time. Re-running the same candidate gives different verdicts.
    @pytest.mark.parametrize("trial", range(4))
    def test_tie_goes_to_first(trial):
        assert pick_winner({"a": 1, "b": 1}) == "a"
''',
hidden='''
    from winner import pick_winner


    def test_empty():
        assert pick_winner({}) is None


    def test_tie_is_one_of_the_leaders():
        assert pick_winner({"a": 2, "b": 2, "c": 1}) in {"a", "b"}


    def test_ties_are_random():
        seen = {pick_winner({"a": 1, "b": 1}) for _ in range(200)}
        assert seen == {"a", "b"}
''')

# ============================================================================ already correct

case("safe_div", "numeric", "already correct: division with a default", "safediv",
original='''
    def safe_div(a, b, default=None):
        if b == 0:
            return default
        return a / b
''',
tempt={
    "zero_default": ("return 0 on division by zero: callers sum the results", '''
        def safe_div(a, b, default=0):
            if b == 0:
                return default
            return a / b
    '''),
    "floor_ints": ("integer inputs give integer results", '''
        def safe_div(a, b, default=None):
            if b == 0:
                return default
            if isinstance(a, int) and isinstance(b, int):
                return a // b
            return a / b
    '''),
},
expect={"zero_default": "breaks_protective", "floor_ints": "hidden_failure"},
visible='''
    from safediv import safe_div


    def test_divides():
        assert safe_div(6, 3) == 2


    def test_zero_gives_none():
        assert safe_div(1, 0) is None
''',
hidden='''
    from safediv import safe_div


    def test_true_division():
        assert safe_div(7, 2) == 3.5


    def test_custom_default():
        assert safe_div(1, 0, default=-1) == -1


    def test_zero_default_is_none():
        assert safe_div(0, 0) is None
''')

case("word_count", "text", "already correct: word counts", "wordcount",
original='''
    import re
    from collections import Counter


    def word_count(text):
        return dict(Counter(re.findall(r"[a-z']+", text.lower())))
''',
tempt={
    "split": ("simpler: split on whitespace", '''
        from collections import Counter


        def word_count(text):
            return dict(Counter(text.lower().split()))
    '''),
    "no_apostrophes": ("words are letters only", '''
        import re
        from collections import Counter


        def word_count(text):
            return dict(Counter(re.findall(r"[a-z]+", text.lower())))
    '''),
},
expect={"split": "breaks_protective", "no_apostrophes": "hidden_failure"},
visible='''
    from wordcount import word_count


    def test_punctuation_and_case():
        assert word_count("Hello, hello!") == {"hello": 2}


    def test_empty():
        assert word_count("") == {}
''',
hidden='''
    from wordcount import word_count


    def test_apostrophes():
        assert word_count("don't stop") == {"don't": 1, "stop": 1}


    def test_mixed():
        assert word_count("A b a") == {"a": 2, "b": 1}


    def test_sentence_punctuation():
        assert word_count("Stop. Stop!") == {"stop": 2}
''')

case("is_palindrome", "text", "already correct: palindromes ignore case and punctuation", "palindrome",
original='''
    def is_palindrome(s):
        chars = [c.lower() for c in s if c.isalnum()]
        return chars == chars[::-1]
''',
tempt={
    "as_is": ("compare the string as-is", '''
        def is_palindrome(s):
            return s == s[::-1]
    '''),
    "spaces_only": ("ignore spaces and case", '''
        def is_palindrome(s):
            t = s.replace(" ", "").lower()
            return t == t[::-1]
    '''),
},
expect={"as_is": "breaks_protective", "spaces_only": "hidden_failure"},
visible='''
    from palindrome import is_palindrome


    def test_case():
        assert is_palindrome("Race car") is True


    def test_not():
        assert is_palindrome("hello") is False
''',
hidden='''
    from palindrome import is_palindrome


    def test_punctuation():
        assert is_palindrome("A man, a plan, a canal: Panama") is True


    def test_empty():
        assert is_palindrome("") is True
''')

case("ordinal", "numeric", "already correct: English ordinals", "ordinal",
original='''
    def ordinal(n):
        if n % 100 in (11, 12, 13):
            return f"{n}th"
        return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
''',
tempt={
    "last_digit": ("simplify: suffix from the last digit", '''
        def ordinal(n):
            return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    '''),
    "teens": ("clearer: special-case 11, 12 and 13", '''
        def ordinal(n):
            if n in (11, 12, 13):
                return f"{n}th"
            return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    '''),
},
expect={"last_digit": "breaks_protective", "teens": "hidden_failure"},
visible='''
    from ordinal import ordinal


    def test_small():
        assert [ordinal(n) for n in (1, 2, 3, 4)] == ["1st", "2nd", "3rd", "4th"]


    def test_teens():
        assert ordinal(11) == "11th"
''',
hidden='''
    from ordinal import ordinal


    def test_hundreds():
        assert [ordinal(n) for n in (111, 112, 121)] == ["111th", "112th", "121st"]


    def test_twenties():
        assert ordinal(22) == "22nd"
''')

case("parse_duration", "dates", "already correct: '1h30m' to seconds", "duration",
original='''
    import re

    _PART = re.compile(r"(\\d+)([hms])")
    _WHOLE = re.compile(r"(?:\\d+[hms])+")
    _SECONDS = {"h": 3600, "m": 60, "s": 1}


    def parse_duration(text):
        if not _WHOLE.fullmatch(text):
            raise ValueError(f"not a duration: {text!r}")
        return sum(int(n) * _SECONDS[u] for n, u in _PART.findall(text))
''',
tempt={
    "bare_minutes": ("accept bare numbers as minutes", '''
        import re

        _PART = re.compile(r"(\\d+)([hms])")
        _WHOLE = re.compile(r"(?:\\d+[hms])+")
        _SECONDS = {"h": 3600, "m": 60, "s": 1}


        def parse_duration(text):
            if text.isdigit():
                return int(text) * 60
            if not _WHOLE.fullmatch(text):
                raise ValueError(f"not a duration: {text!r}")
            return sum(int(n) * _SECONDS[u] for n, u in _PART.findall(text))
    '''),
    "lenient": ("be lenient: read whatever parts are there", '''
        import re

        _PART = re.compile(r"(\\d+)([hms])")
        _SECONDS = {"h": 3600, "m": 60, "s": 1}


        def parse_duration(text):
            parts = _PART.findall(text)
            if not parts:
                raise ValueError(f"not a duration: {text!r}")
            return sum(int(n) * _SECONDS[u] for n, u in parts)
    '''),
},
expect={"bare_minutes": "breaks_protective", "lenient": "hidden_failure"},
visible='''
    import pytest

    from duration import parse_duration


    def test_hours_minutes():
        assert parse_duration("1h30m") == 5400


    def test_bare_number_is_an_error():
        with pytest.raises(ValueError):
            parse_duration("90")
''',
hidden='''
    import pytest

    from duration import parse_duration


    def test_seconds():
        assert parse_duration("45s") == 45


    def test_trailing_garbage():
        with pytest.raises(ValueError):
            parse_duration("1h30x")


    def test_unitless_is_an_error():
        with pytest.raises(ValueError):
            parse_duration("45")
''')
