"""The verified skill library: the oracle gate, composition, and progressive disclosure's token
costs and retrieval precision as the library grows (SYNTHETIC skills, real oracle runs)."""

from __future__ import annotations

import polars as pl
import pytest

from labkit.core.errors import MemoryRefused
from labkit.experiments.memory import skills_measure as sx
from labkit.loop.strategies.memory.skills import Check, Skill, SkillLibrary

ADD = Skill(
    name="add_ten",
    description="Add 10 to an amount.",
    code="def add_ten(x):\n    return x + 10\n",
    files={"notes.md": "adds 10"},
)
DBL = Skill(name="double", description="Double an amount.", code="def double(x):\n    return 2 * x\n")
BOTH = Skill(
    name="add_then_double",
    description="Add 10 then double.",
    code="def add_then_double(x):\n    return double(add_ten(x))\n",
    calls=("add_ten", "double"),
)


def test_only_skills_that_passed_their_external_check_are_stored() -> None:
    lib = SkillLibrary()
    with pytest.raises(MemoryRefused, match="failed its external check"):
        lib.add(ADD, Check("add_ten", False, "1/4 tests passed"))
    with pytest.raises(MemoryRefused, match="no oracle check"):
        lib.add(ADD, Check("double", True))
    with pytest.raises(MemoryRefused, match="not verified skills"):
        lib.add(BOTH, Check("add_then_double", True))
    assert len(lib) == 0
    lib.add(ADD, Check("add_ten", True, "4/4"))
    lib.add(DBL, Check("double", True, "4/4"))
    lib.add(BOTH, Check("add_then_double", True, "4/4"))
    assert lib.load("add_then_double")(1) == 22  # a skill calls simpler skills
    assert lib.skills["add_ten"].verified == "4/4"


def test_the_real_oracle_refuses_the_buggy_candidates() -> None:
    cands = sx.candidates()[:120]
    checks = sx.verify(cands)
    buggy = {c.skill.name for c in cands if c.buggy}
    assert buggy and {n for n, c in checks.items() if not c.passed} == buggy
    lib, refused = sx.build(1000, cands, checks)
    assert set(refused) == buggy and not buggy & set(lib.skills)
    comp = next(s for s in lib.skills.values() if s.calls)
    ref = next(c.ref for c in cands if c.skill.name == comp.name)
    assert [lib.load(comp.name)(x) for x in (0, 7)] == [ref(0), ref(7)]


def test_disclosure_levels_l3_on_demand_and_unknown_files_refused() -> None:
    lib = SkillLibrary()
    lib.add(ADD, Check("add_ten", True))
    lib.add(DBL, Check("double", True))
    p = lib.prompt("add 10 to the amount", k=1)
    assert p.retrieved == ("add_ten",) and p.l3_tokens == 0 and "- double: Double an amount" in p.text
    assert lib.prompt("add 10", k=1, open_files=("add_ten/notes.md",)).l3_tokens > 0
    with pytest.raises(KeyError, match="notes.txt"):
        lib.prompt("add", open_files=("add_ten/notes.txt",))


@pytest.fixture(scope="module")
def growth() -> pl.DataFrame:
    return sx.measure()


def test_l1_costs_a_near_constant_line_per_skill_so_its_total_grows_linearly(growth: pl.DataFrame) -> None:
    per = growth["L1 tokens per skill"].to_list()
    assert max(per) / min(per) < 1.1
    total = growth["L1 tokens (all skills)"].to_list()
    assert total[2] / total[0] > 50  # 100x the skills: the always-loaded L1 is what grows
    # what a retrieval adds (L2 full text of the top k, L3 one file) does not grow with the library
    l2 = growth["L2 tokens"].to_list()
    assert max(l2) / min(l2) < 1.3
    narrow = growth["L1 tokens (retrieved only)"].to_list()
    assert narrow[2] / narrow[1] < 1.3


def test_retrieval_precision_on_held_out_paraphrases(growth: pl.DataFrame) -> None:
    assert growth["skills"].to_list() == [10, 100, 1000]
    assert all(low > 0.85 for low in growth["precision@1 low"].to_list()[1:])
    assert growth["refused by the gate"].to_list()[2] > 0


def test_every_skills_l1_line_is_in_the_prompt_after_each_add() -> None:
    """The all-skills L1 text is built once per library state: a skill added later is in the next prompt."""
    lib = SkillLibrary()
    lib.add(ADD, Check("add_ten", True))
    before = lib.prompt("add ten to a number")
    assert before.l1_tokens > 0 and ADD.l1() in before.text and DBL.l1() not in before.text
    lib.add(DBL, Check("double", True))
    after = lib.prompt("add ten to a number")
    assert ADD.l1() in after.text and DBL.l1() in after.text and after.l1_tokens > before.l1_tokens
