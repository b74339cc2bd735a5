"""The words a notebook uses without stopping to explain them, explained once, here.

`glossary_html(keys)` is a collapsible <details> block (closed by default) listing the
chosen terms; every notebook shows the terms it uses. Each entry is a plain sentence or two.

`link_first_uses(texts, keys)` links the first use of each term in a notebook's prose (the
texts in reading order) to its entry, once: `<a class="labkit-term" href="#labkit-glossary-KEY">`,
with the explanation as its tooltip. `labkit/views/stepper.js` makes a click on such a link
open the glossary and scroll to the entry, from the prose and from inside a step card (whose
shadow DOM a plain fragment link cannot leave).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from labkit.core.errors import UnknownGlossaryTerm

__all__ = ["TERMS", "USES", "glossary_html", "link_first_uses", "term_link"]

TERMS: dict[str, tuple[str, str]] = {
    # key: (term as shown, explanation)
    "f2p": (
        "FAIL_TO_PASS / FAIL_TO_FAIL (F2P / F2F)",
        "Buckets for the failing acceptance tests after a patch: a test that failed before and "
        "passes now is F2P (the fix worked for it); one that still fails is F2F.",
    ),
    "p2p": (
        "PASS_TO_PASS / PASS_TO_FAIL (P2P / P2F)",
        "Buckets for the protective tests, which passed before the patch: P2P means still "
        "passing; P2F means the patch broke something that worked (the patch is rolled back).",
    ),
    "patch_size": (
        "patch size 1f/1h/2l",
        "Files / hunks / changed lines of a diff: 1f/1h/2l is one file, one hunk, two lines. "
        "A patch over the case's cap cannot be attributed to one cause and is rolled back.",
    ),
    "decisions": (
        "keep · roll back · keep investigating · reflect · stop",
        "What the loop does after a round. keep: every failing acceptance test passes and no "
        "protective test broke. roll back: the patch broke a protective test, was too large, or "
        "fixed nothing. keep investigating: nothing usable was tested this round. reflect: the "
        "start, with failing evidence to reflect on. stop: a stop rule fired.",
    ),
    "stop_reasons": (
        "stop reasons",
        "Why a loop ends before its round limit. marginal net: a round fixed fewer cases than it "
        "broke (or is projected to). oscillation: a candidate state came back with a test flipped. "
        "no new evidence: the last rounds changed nothing observable. unstable validator: the "
        "same code got different verdicts on re-runs. cap: the round or cost budget is spent. "
        "Outcomes: roll back, escalate (to a human), or report unknowns (say what is still not "
        "known, rather than claim a fix).",
    ),
    "net": (
        "fixed · broken · net",
        "Per round: fixed = cases wrong before and right after; broken = cases right before and "
        "wrong after; net = fixed − broken. Intervals are 95% bootstraps over cases.",
    ),
    "scoring_rules": (
        "scoring rules: FastChat · LLMBar · JudgeBench",
        "Three ways to score a judge that saw each pair in both orders. FastChat: two "
        "inconsistent verdicts count as a tie. LLMBar: the average of the two orders' accuracy. "
        "JudgeBench: a vote — consistent verdicts count, a tie in one order defers to the other.",
    ),
    "beta": (
        "β̂ (position bias)",
        "The fitted preference for the first slot in P(slot 1) = σ(k·Δquality + β + …): 0 means "
        "no position bias. When every verdict follows the slot, no finite β fits the data: it is "
        "shown as unbounded, not as a number with a zero-width interval.",
    ),
    "letter_mass": (
        "letters' share of the first token",
        "For a real judge, the probability its first reply token gives to the answer letters "
        "(A, B). A low share (e.g. 26%) means most of the time it would have started to say "
        "something else: its A-vs-B preference is read from a small part of its distribution.",
    ),
    "hidden": (
        "hidden tests",
        "Tests the loop never sees while it works; they score its result afterwards. A loop "
        "that is green on its visible tests and red on the hidden ones fooled itself.",
    ),
    "error_classes": (
        "error classes: POLICY_DENIED · UNKNOWN_EFFECT · …",
        "What the control plane records about a failure, so the next step follows from it. "
        "INVALID_ARGUMENT: fix the arguments. TEST_FAILURE: a new hypothesis or evidence. "
        "POLICY_DENIED: the policy refused; retrying or rewording cannot help, only an "
        "authorised change or stop. INFRASTRUCTURE: a billed retry. UNKNOWN_EFFECT: the action "
        "may have happened; reconcile before doing it again.",
    ),
    "idempotency": (
        "idempotency key",
        "A name given to one intended side effect (a notice, a payment). Sending again under the "
        "same key is recognised as the same action and not repeated; a fresh key makes a duplicate.",
    ),
    "unit_status": (
        "unit status: success · incomplete · failed · invalid_environment · not_returned",
        "How each assigned task (a unit) ended. invalid_environment: the environment check "
        "failed before any work; not_returned: no result came back. Every assigned unit stays in "
        "the denominator, whatever its status.",
    ),
}

# The words in prose that count as a use of each term (regular expressions, case-sensitive).
USES: dict[str, tuple[str, ...]] = {
    "f2p": (r"F2P", r"F2F", r"FAIL_TO_PASS"),
    "p2p": (r"P2P", r"P2F", r"PASS_TO_PASS", r"protective"),
    "patch_size": (r"\d+f/\d+h/\d+l", r"patch size"),
    "decisions": (r"roll(?:ed)? back", r"keep investigating"),
    "stop_reasons": (
        r"stop rule",
        r"stop reasons?",
        r"no-progress stops?",
        r"report unknowns",
        r"escalate",
    ),
    "net": (r"net",),
    "scoring_rules": (r"FastChat", r"LLMBar", r"JudgeBench"),
    "beta": (r"β̂",),
    "letter_mass": (r"first token",),
    "hidden": (r"hidden (?:tests|suite)",),
    "error_classes": (r"POLICY_DENIED", r"UNKNOWN_EFFECT", r"error class(?:es)?"),
    "idempotency": (r"idempotency key",),
    "unit_status": (r"invalid_environment", r"not_returned"),
}

# Where a term is not linked: code spans, HTML tags and links, headings, format placeholders.
_NOT_PROSE = re.compile(r"`[^`]*`|<a\b.*?</a>|<[^>]*>|^#[^\n]*|\{[^{}\n]*\}", re.M | re.S)


def _unknown(keys: Sequence[str]) -> None:
    """Raise `UnknownGlossaryTerm` naming each key of `keys` with no entry, and the known keys."""
    unknown = [k for k in keys if k not in TERMS]
    if unknown:
        raise UnknownGlossaryTerm(unknown, sorted(TERMS))


def term_link(key: str, shown: str) -> str:
    """`shown` as a link to `key`'s glossary entry, its explanation as the tooltip."""
    _unknown([key])
    return (
        f'<a class="labkit-term" href="#labkit-glossary-{key}" data-term="{key}" '
        f'title="{html.escape(TERMS[key][1], quote=True)}">{shown}</a>'
    )


def _first_use(text: str, key: str) -> re.Match[str] | None:
    blocked = [m.span() for m in _NOT_PROSE.finditer(text)]
    pattern = re.compile(r"(?<![\w/])(?:" + "|".join(USES[key]) + r")(?![\w/])")
    for m in pattern.finditer(text):
        if not any(a < m.end() and m.start() < b for a, b in blocked):
            return m
    return None


def link_first_uses(texts: Sequence[str], keys: Sequence[str]) -> list[str]:
    """`texts` (prose in reading order) with the first use of each of `keys` linked to its entry.

    A term is linked once across all the texts; uses in code, headings, links and `{placeholders}`
    do not count. A term that is never used is simply not linked.
    """
    _unknown(keys)
    out = list(texts)
    for key in keys:
        for i, text in enumerate(out):
            if (m := _first_use(text, key)) is not None:
                out[i] = text[: m.start()] + term_link(key, m.group(0)) + text[m.end() :]
                break
    return out


def glossary_html(keys: list[str] | tuple[str, ...] | None = None, *, open_: bool = False) -> str:
    """A collapsible glossary of `keys` (default: every term)."""
    chosen = list(keys) if keys is not None else list(TERMS)
    _unknown(chosen)
    items = "".join(
        f'<dt id="labkit-glossary-{k}" style="font-weight:600;margin-top:0.5em;float:none;width:auto">'
        f"{html.escape(TERMS[k][0])}</dt><dd style='margin-left:1.2em;width:auto'>{html.escape(TERMS[k][1])}</dd>"
        for k in chosen
    )
    return (
        f'<details class="labkit-glossary"{" open" if open_ else ""} '
        'style="border:1px solid #ddd;border-radius:4px;padding:0.4em 0.8em">'
        "<summary style='cursor:pointer;font-weight:600'>Glossary: the terms used here</summary>"
        f"<dl style='margin:0.3em 0'>{items}</dl></details>"
    )
