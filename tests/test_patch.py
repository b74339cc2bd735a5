import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit.core import patch as P
from labkit.core.errors import PatchError, PatchTooLarge
from labkit.core.types import Candidate, Patch

CODE = "def key(user, product):\n    return product\n\n\ndef other():\n    return 1\n"
FIXED = "def key(user, product):\n    return (user, product)\n\n\ndef other():\n    return 1\n"


def test_make_apply_roundtrip_and_revert():
    c = Candidate({"app.py": CODE})
    p = P.make(c.files, {"app.py": FIXED}, "composite key")
    new = P.apply(c, p)
    assert new.files["app.py"] == FIXED
    assert new.parent == c.digest and c.files["app.py"] == CODE  # input untouched
    assert P.revert(new, p).files["app.py"] == CODE


def test_size_counts_files_hunks_lines():
    p = P.make({"a.py": CODE, "b.py": "x = 1\n"}, {"a.py": FIXED, "b.py": "x = 2\n"})
    s = P.size(p)
    assert (s.files, s.hunks, s.added, s.removed, s.lines) == (2, 2, 2, 2, 4)
    assert P.touched(p) == ("a.py", "b.py")


def test_size_cap_raises_naming_the_cap():
    p = P.make({"a.py": CODE, "b.py": "x = 1\n"}, {"a.py": FIXED, "b.py": "x = 2\n"})
    with pytest.raises(PatchTooLarge, match="2 files"):
        P.check_size(p, max_files=1)
    assert P.check_size(p, max_files=2).files == 2


def test_create_and_delete_files():
    c = Candidate({"old.py": "a\n"})
    p = P.make(c.files, {"new.py": "b\n"})
    out = P.apply(c, p)
    assert dict(out.files) == {"new.py": "b\n"}
    assert dict(P.revert(out, p).files) == {"old.py": "a\n"}


def test_non_applying_hunk_names_file_and_hunk():
    c = Candidate({"app.py": "something else\n"})
    p = P.make({"app.py": CODE}, {"app.py": FIXED})
    with pytest.raises(PatchError, match=r"app.py: hunk 1 .* does not apply"):
        P.apply(c, p)


def test_missing_file_and_malformed_diffs():
    with pytest.raises(PatchError, match="does not have"):
        P.apply(Candidate({}), P.make({"x.py": "a\n"}, {"x.py": "b\n"}))
    with pytest.raises(PatchError, match="no '--- / \\+\\+\\+' file header"):
        P.parse("please fix the cache")
    bad_count = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-a\n+b\n"
    with pytest.raises(PatchError, match=r"x.py: hunk 1: header says 3 old / 3 new lines, body has 1 / 1"):
        P.parse(bad_count)
    bad_header = "--- a/x.py\n+++ b/x.py\n@@ nonsense @@\n-a\n"
    with pytest.raises(PatchError, match="hunk 1: malformed header"):
        P.parse(bad_header)


def test_stale_line_numbers_still_apply_on_unique_context():
    c = Candidate({"app.py": "# header\n" + CODE})
    p = P.make({"app.py": CODE}, {"app.py": FIXED})  # line numbers are off by one
    assert P.apply(c, p).files["app.py"] == "# header\n" + FIXED


lines = st.lists(st.text(alphabet="abc xyz=()", max_size=8), max_size=12)


@given(lines, lines)
def test_make_then_apply_reproduces_any_edit(a, b):
    before = {"f.py": "".join(x + "\n" for x in a)}
    after = {"f.py": "".join(x + "\n" for x in b)}
    p = P.make(before, after)
    if before == after:
        assert p.diff == ""
        return
    c = Candidate(before)
    assert P.apply(c, p).files == after
    assert P.revert(P.apply(c, p), p).files == before


def test_patch_digest_names_content():
    assert Patch("x").digest != Patch("y").digest
