"""Unified diffs as the one way a candidate changes: parse, measure, apply, revert, make.

Application is strict (no fuzz, no offset guessing beyond an exact context match): a
patch that does not apply cleanly is an error naming the file and hunk, not a silent
half-change. Candidates are immutable, so "roll back" is keeping the parent; `revert`
exists for patches applied to a workspace you no longer have the parent of.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from labkit.core.errors import PatchError, PatchTooLarge
from labkit.core.types import Candidate, Patch, PatchSize

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DEV_NULL = "/dev/null"


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: tuple[str, ...]  # each starts with " ", "-" or "+"

    @property
    def old(self) -> list[str]:
        return [ln[1:] for ln in self.lines if ln[0] in " -"]

    @property
    def new(self) -> list[str]:
        return [ln[1:] for ln in self.lines if ln[0] in " +"]


@dataclass(frozen=True)
class FilePatch:
    old_path: str | None  # None: file is created
    new_path: str | None  # None: file is deleted
    hunks: tuple[Hunk, ...]

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def _strip_prefix(raw: str) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if path == _DEV_NULL:
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def parse(diff: str) -> tuple[FilePatch, ...]:
    """Parse a unified diff into file patches. Raises PatchError naming where it is malformed."""
    lines = diff.splitlines()
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("--- "):
            i += 1  # "diff --git", "index …" and prose between files are ignored
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise PatchError(f"malformed diff: line {i + 1} '---' is not followed by a '+++' header")
        old_path, new_path = _strip_prefix(line[4:]), _strip_prefix(lines[i + 1][4:])
        name = new_path or old_path or "?"
        i += 2
        hunks: list[Hunk] = []
        while i < len(lines) and lines[i].startswith("@@"):
            m = _HUNK.match(lines[i])
            if not m:
                raise PatchError(f"{name}: hunk {len(hunks) + 1}: malformed header {lines[i]!r}")
            old_len = int(m.group(2)) if m.group(2) is not None else 1
            new_len = int(m.group(4)) if m.group(4) is not None else 1
            i += 1
            body: list[str] = []
            seen_old = seen_new = 0
            while i < len(lines) and (seen_old < old_len or seen_new < new_len):
                ln = lines[i]
                if ln.startswith("\\"):  # "\ No newline at end of file"
                    i += 1
                    continue
                tag = ln[:1] or " "  # some tools drop the space of an empty context line
                if tag not in " -+":
                    raise PatchError(
                        f"{name}: hunk {len(hunks) + 1}: unexpected line {ln!r} "
                        f"(expected {old_len} old / {new_len} new lines, got {seen_old} / {seen_new})"
                    )
                body.append(tag + ln[1:])
                seen_old += tag in " -"
                seen_new += tag in " +"
                i += 1
            if seen_old != old_len or seen_new != new_len:
                raise PatchError(
                    f"{name}: hunk {len(hunks) + 1}: header says {old_len} old / {new_len} new lines, "
                    f"body has {seen_old} / {seen_new} (truncated diff?)"
                )
            while i < len(lines) and lines[i].startswith("\\"):
                i += 1
            hunks.append(Hunk(int(m.group(1)), old_len, int(m.group(3)), new_len, tuple(body)))
        if not hunks:
            raise PatchError(f"{name}: file header without any hunk")
        files.append(FilePatch(old_path, new_path, tuple(hunks)))
    if not files:
        raise PatchError("not a unified diff: no '--- / +++' file header found")
    return tuple(files)


def touched(patch: Patch) -> tuple[str, ...]:
    """Every path the patch reads or writes (old and new names), sorted."""
    paths: set[str] = set()
    for fp in parse(patch.diff):
        paths.update(p for p in (fp.old_path, fp.new_path) if p)
    return tuple(sorted(paths))


def size(patch: Patch) -> PatchSize:
    """Files, hunks and changed lines: the patch-size rule's measure of attributability."""
    fps = parse(patch.diff)
    hunks = [h for fp in fps for h in fp.hunks]
    added = sum(ln[0] == "+" for h in hunks for ln in h.lines)
    removed = sum(ln[0] == "-" for h in hunks for ln in h.lines)
    return PatchSize(files=len(fps), hunks=len(hunks), added=added, removed=removed)


def check_size(
    patch: Patch,
    *,
    max_files: int | None = None,
    max_hunks: int | None = None,
    max_lines: int | None = None,
) -> PatchSize:
    """Return the patch's size, or raise PatchTooLarge saying which cap it exceeds."""
    s = size(patch)
    for what, value, cap in (
        ("files", s.files, max_files),
        ("hunks", s.hunks, max_hunks),
        ("changed lines", s.lines, max_lines),
    ):
        if cap is not None and value > cap:
            raise PatchTooLarge(
                f"patch changes {value} {what} (cap {cap}): too large to attribute the result "
                f"to one hypothesis — split it into a checkpointed sequence"
            )
    return s


def _apply_hunks(text: str, fp: FilePatch) -> str:
    src = text.splitlines()
    trailing_newline = text.endswith("\n") or not text
    out: list[str] = []
    pos = 0  # next unread line of src
    for n, h in enumerate(fp.hunks, start=1):
        want = h.old
        start = h.old_start - 1 if h.old_len else h.old_start  # a pure insertion names the line before
        if src[start : start + len(want)] != want:
            # The header's line number may be stale; accept one exact match after pos, no fuzz.
            matches = [k for k in range(pos, len(src) - len(want) + 1) if src[k : k + len(want)] == want]
            if len(matches) != 1:
                found = "not found" if not matches else f"found {len(matches)} times"
                first = next((ln for ln in want if ln.strip()), "")
                raise PatchError(
                    f"{fp.path}: hunk {n} (@@ -{h.old_start},{h.old_len}) does not apply: "
                    f"its context is {found} in the file" + (f" (first line: {first!r})" if first else "")
                )
            start = matches[0]
        if start < pos:
            raise PatchError(f"{fp.path}: hunk {n} overlaps the previous hunk")
        out.extend(src[pos:start])
        out.extend(h.new)
        pos = start + len(want)
    out.extend(src[pos:])
    return "\n".join(out) + ("\n" if out and trailing_newline else "")


def apply(candidate: Candidate, patch: Patch, label: str = "") -> Candidate:
    """A new candidate with the patch applied. The input candidate is untouched."""
    files = dict(candidate.files)
    for fp in parse(patch.diff):
        if fp.old_path is None:
            if fp.new_path in files:
                raise PatchError(f"{fp.new_path}: patch creates a file that already exists")
            files[fp.path] = _apply_hunks("", fp)
            continue
        if fp.old_path not in files:
            raise PatchError(f"{fp.old_path}: patch edits a file the candidate does not have")
        new_text = _apply_hunks(files[fp.old_path], fp)
        del files[fp.old_path]
        if fp.new_path is not None:
            files[fp.new_path] = new_text
    return candidate.with_files(files, label=label or patch.description or candidate.label)


def reverse(patch: Patch) -> Patch:
    """The inverse diff: applying it undoes the patch."""
    out: list[str] = []
    for fp in parse(patch.diff):
        out.append(f"--- {'a/' + fp.new_path if fp.new_path else _DEV_NULL}")
        out.append(f"+++ {'b/' + fp.old_path if fp.old_path else _DEV_NULL}")
        for h in fp.hunks:
            out.append(f"@@ -{h.new_start},{h.new_len} +{h.old_start},{h.old_len} @@")
            flip = {"+": "-", "-": "+", " ": " "}
            out.extend(flip[ln[0]] + ln[1:] for ln in h.lines)
    return Patch("\n".join(out) + "\n", description=f"revert: {patch.description}")


def revert(candidate: Candidate, patch: Patch) -> Candidate:
    """Undo `patch` on a candidate it was applied to."""
    return apply(candidate, reverse(patch))


def make(before: Mapping[str, str], after: Mapping[str, str], description: str = "") -> Patch:
    """The unified diff taking `before` files to `after` files (for authoring and for tests)."""
    chunks: list[str] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{path}" if old is not None else _DEV_NULL,
                tofile=f"b/{path}" if new is not None else _DEV_NULL,
            )
        )
    text = "".join(c if c.endswith("\n") else c + "\n" for c in chunks)
    return Patch(text, description=description)
