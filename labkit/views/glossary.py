"""The words a notebook uses without stopping to explain them, explained once, here.

`glossary_html(keys)` is a collapsible <details> block (closed by default) listing the
chosen terms; every notebook shows the terms it uses. Each entry is a plain sentence or two.
"""

from __future__ import annotations

import html

__all__ = ["TERMS", "glossary_html"]

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
}


def glossary_html(keys: list[str] | tuple[str, ...] | None = None, *, open_: bool = False) -> str:
    """A collapsible glossary of `keys` (default: every term)."""
    chosen = list(keys) if keys is not None else list(TERMS)
    unknown = [k for k in chosen if k not in TERMS]
    if unknown:
        raise KeyError(f"no glossary entry for {unknown}; known: {sorted(TERMS)}")
    items = "".join(
        f'<dt id="labkit-glossary-{k}" style="font-weight:600;margin-top:0.5em">'
        f"{html.escape(TERMS[k][0])}</dt><dd style='margin-left:1.2em'>{html.escape(TERMS[k][1])}</dd>"
        for k in chosen
    )
    return (
        f'<details class="labkit-glossary"{" open" if open_ else ""} '
        'style="border:1px solid #ddd;border-radius:4px;padding:0.4em 0.8em">'
        "<summary style='cursor:pointer;font-weight:600'>Glossary: the terms used here</summary>"
        f"<dl style='margin:0.3em 0'>{items}</dl></details>"
    )
