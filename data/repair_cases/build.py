"""Write one directory per repair case from cases_text.py, with measured labels.

For every case this writes the original module, the visible tests, the hidden tests and
each patch as a real unified diff (labkit.core.patch.make), then runs labkit's validator to
*measure* which tests fail on the original (FAIL_TO_PASS) and which pass (PASS_TO_PASS),
and what each patch does (resolves / hidden_failure / breaks_protective / incomplete). A
patch whose measured effect differs from the intended one stops the build.

Run from the repo root:  .venv/bin/python data/repair_cases/build.py [case ids...]
(all cases: about 330 pytest runs, 3-7 minutes on a busy 2-core machine)
"""

from __future__ import annotations

import json
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from cases_text import CASES  # noqa: E402

from labkit.core import patch as patches  # noqa: E402
from labkit.core.types import Candidate, Verdict  # noqa: E402
from labkit.grading.acceptance import AcceptanceSuite  # noqa: E402
from labkit.grading.validator import Validator  # noqa: E402

VISIBLE, HIDDEN = "tests/test_visible.py", "tests/test_hidden.py"


def _outcomes(verdict: Verdict) -> dict[str, str]:
    return {r.nodeid: r.outcome for r in verdict.evidence.results}


def _split(outcomes: dict[str, str], flaky: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Measured FAIL_TO_PASS / PASS_TO_PASS; a flaky test counts as protective (its author's belief)."""
    f2p, p2p = [], list(flaky)
    for nodeid, outcome in outcomes.items():
        if any(nodeid == f or nodeid.startswith(f + "[") for f in flaky):
            continue
        (p2p if outcome == "passed" else f2p).append(nodeid)
    return sorted(f2p), sorted(p2p)


def _effect(visible: Verdict, hidden: Verdict, flaky: tuple[str, ...]) -> str:
    broken = [n for n in visible.pass_to_fail if n not in flaky]
    still = [n for n in visible.fail_to_fail if n not in flaky]
    if broken:
        return "breaks_protective"
    if still:
        return "incomplete"
    return "resolves" if hidden.resolved else "hidden_failure"


def build_case(spec: dict, validator: Validator) -> dict:
    module = spec["module"] + ".py"
    out = HERE / spec["id"]
    if out.exists():
        shutil.rmtree(out)
    (out / "tests").mkdir(parents=True)
    (out / "hidden").mkdir()
    (out / "patches").mkdir()
    (out / module).write_text(spec["original"])
    (out / VISIBLE).write_text(spec["visible"])
    (out / "hidden" / "test_hidden.py").write_text(spec["hidden"])

    original = Candidate({module: spec["original"]}, label="original")
    flaky = spec["flaky"]
    first_visible = next(n for n in _names(spec["visible"]))
    first_hidden = next(n for n in _names(spec["hidden"]))
    probe_v = AcceptanceSuite("probe", {VISIBLE: spec["visible"]}, (), (f"{VISIBLE}::{first_visible}",))
    probe_h = AcceptanceSuite("probe", {HIDDEN: spec["hidden"]}, (), (f"{HIDDEN}::{first_hidden}",))
    v_f2p, v_p2p = _split(_outcomes(validator.run(original, probe_v)), flaky)
    h_f2p, h_p2p = _split(_outcomes(validator.run(original, probe_h)), ())
    visible = AcceptanceSuite(f"{spec['id']}:visible", {VISIBLE: spec["visible"]}, tuple(v_f2p), tuple(v_p2p))
    hidden = AcceptanceSuite(f"{spec['id']}:hidden", {HIDDEN: spec["hidden"]}, tuple(h_f2p), tuple(h_p2p))

    correct = spec["fix"] is None
    if correct and (v_f2p or h_f2p):
        raise SystemExit(f"{spec['id']}: marked already correct but fails {v_f2p + h_f2p}")
    if not correct and not v_f2p:
        raise SystemExit(f"{spec['id']}: buggy case with no failing visible test")
    if not correct and not h_f2p:
        raise SystemExit(f"{spec['id']}: buggy case whose original passes every hidden test")

    variants = []  # (name, kind, base name, base text, text, description)
    if not correct:
        variants.append(("fix", "fix", "original", spec["original"], spec["fix"], "the correct fix"))
    for name, (desc, text) in spec["wrong"].items():
        variants.append((name, "wrong", "original", spec["original"], text, desc))
    base = "original" if correct else "fix"
    for name, (desc, text) in spec["tempt"].items():
        variants.append((name, "tempt", base, spec["fix"] or spec["original"], text, desc))

    records, mismatches = [], []
    for name, kind, base_name, base_text, text, desc in variants:
        diff = patches.make({module: base_text}, {module: text}, description=desc)
        (out / "patches" / f"{name}.diff").write_text(diff.diff)
        start = original if base_name == "original" else Candidate({module: spec["fix"]}, label="fix")
        cand = patches.apply(start, diff)
        assert cand.files[module] == text, f"{spec['id']}/{name}: diff does not round-trip"
        hidden_verdict = validator.run(cand, hidden)
        effect = _effect(validator.run(cand, visible), hidden_verdict, flaky)
        if spec["expect"].get(name) != effect:
            mismatches.append(f"{spec['id']}/{name}: intended {spec['expect'].get(name)}, measured {effect}")
        if kind != "fix" and hidden_verdict.resolved:
            mismatches.append(f"{spec['id']}/{name}: a {kind} patch passes every hidden test")
        records.append({"name": name, "file": f"patches/{name}.diff", "kind": kind, "base": base_name, "description": desc, "effect": effect,
                        "hidden_failing": sorted(hidden_verdict.fail_to_fail + hidden_verdict.pass_to_fail)})
    if mismatches:
        raise SystemExit("\n".join(mismatches))

    meta = {
        "id": spec["id"], "slice": spec["slice"], "title": spec["title"], "module": module,
        "initially_correct": correct,
        "visible": {"fail_to_pass": v_f2p, "pass_to_pass": v_p2p},
        "hidden": {"fail_to_pass": h_f2p, "pass_to_pass": h_p2p},
        "flaky": list(flaky), "oscillates": list(spec["oscillates"]), "patches": records,
    }
    (out / "case.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def _names(test_text: str):
    import ast

    for node in ast.parse(test_text).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            yield node.name


def main(only: list[str]) -> None:
    validator = Validator()
    specs = [s for s in CASES if not only or s["id"] in only]
    with ThreadPoolExecutor(max_workers=2) as pool:
        metas = list(pool.map(lambda s: build_case(s, validator), specs))
    for m in metas:
        effects = ", ".join(f"{p['name']}={p['effect']}" for p in m["patches"])
        print(f"{m['id']:<22} {m['slice']:<12} f2p={len(m['visible']['fail_to_pass'])} {effects}")
    print(f"{len(metas)} cases, {sum(m['initially_correct'] for m in metas)} already correct")


if __name__ == "__main__":
    main(sys.argv[1:])
