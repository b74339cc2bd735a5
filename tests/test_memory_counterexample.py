"""The counterexample run for real: both keys on the case's own PriceService under a seeded
request mix; the store withholds the lesson where its precondition fails."""

from __future__ import annotations

import pytest

from labkit.experiments.memory import counterexample as ce

CAT, CON = "public catalogue", "contract prices"
ONE, TWO = "product_id", "(user_id, product_id)"


@pytest.fixture(scope="module")
def run() -> ce.Run:
    return ce.run()


def test_user_id_in_a_public_catalogue_key_bloats_the_cache_and_halves_the_hit_rate(run: ce.Run) -> None:
    r = run.result
    assert r.frame.height == len(r.mix.seeds) * 4
    # bigger cache: the composite key's lower bound is above 10x the single key's upper bound
    assert r.entries[CAT, TWO].low > 10 * r.entries[CAT, ONE].high
    assert r.hit_rate[CAT, TWO].high < r.hit_rate[CAT, ONE].low - 0.3
    # and it buys nothing there: neither key serves a wrong catalogue price
    assert r.wrong_rate[CAT, ONE].high == 0 and r.wrong_rate[CAT, TWO].high == 0


def test_where_the_condition_holds_the_composite_key_is_what_stops_the_leak(run: ce.Run) -> None:
    r = run.result
    assert r.wrong_rate[CON, ONE].low > 0.5  # single key: most contract prices served are someone else's
    assert r.wrong_rate[CON, TWO].high == 0


def test_the_store_withholds_the_lesson_from_the_catalogue_because_its_precondition_fails(run: ce.Run) -> None:
    assert [c.entry.key for c in run.tenant] == ["Multi-tenant cache keys must cover the tenant boundary."]
    assert run.catalogue.candidates == ()
    ((entry, check),) = run.catalogue.withheld
    assert check.unmet == ("values differ per tenant",) and not check.expired
    # the lesson's source is the real run's kept correction; its rejected claim carries the measurement
    assert entry.source_run == "cache-main" and entry.experience.source.startswith("run cache-main, round 1")
    claim, why = entry.experience.rejected[0]
    e2 = run.result.entries[CAT, TWO].estimate
    assert claim == ce.WRONG and f"-> {e2:.0f}" in why


def test_the_mix_is_seeded() -> None:
    small = ce.Mix(users=20, products=30, requests=500, seeds=(3,))
    assert ce.measure(small).frame.equals(ce.measure(small).frame)
