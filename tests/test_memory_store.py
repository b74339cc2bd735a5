"""The experience store: gated writes (only verified corrections, never sealed diagnostics) and
retrievals that re-check preconditions and expiry. The positive gate reads a real engine run."""

from __future__ import annotations

import datetime as dt

import pytest

from labkit.core.errors import MemoryRefused
from labkit.experiments import cache_isolation as cache_case
from labkit.loop.engine.reflection import Experience
from labkit.loop.strategies.memory.store import (
    CandidateExplanation,
    Correction,
    ExperienceStore,
    Exposure,
    find_correction,
)
from labkit.record.events import Kind, Role
from labkit.record.ledger import Ledger

ENV = "pricing v1 · python 3.11 · pytest 8"


def lesson(**extra: object) -> Experience:
    return Experience.from_mapping(
        {
            "lesson": "Multi-tenant cache keys must cover the tenant boundary.",
            "condition": "a cache shared by tenants whose cached values differ per tenant",
            "requires": {"multi-tenant": True, "values differ per tenant": True},
            "failure_mode": "cross-tenant leak",
            "signal": "two users get one price",
            "strategy": "tenant in the key",
            "counterexample": "public data, same for everyone",
            "source": "authored",
            "version": ENV,
            **extra,
        }
    )


@pytest.fixture(scope="module")
def real_run() -> tuple[Ledger, str]:
    ledger = Ledger()
    trace = cache_case.run("main", ledger=ledger)
    return ledger, trace.run_id


def test_a_kept_validated_change_in_a_real_run_may_teach(real_run: tuple[Ledger, str]) -> None:
    ledger, run_id = real_run
    corr = find_correction(ledger, run_id)
    assert corr.round == 1 and corr.simulated and "user_id" in corr.cause
    store = ExperienceStore()
    entry = store.write(lesson(), corr)
    # the stored source is the run's, not the authored text
    assert entry.experience.source == corr.source and corr.candidate in entry.experience.source
    assert entry.exposure is Exposure.DEVELOPMENT and entry.version == 1
    assert store.write(lesson(), corr).version == 2 and len(store.entries()) == 1


def _fake_run(ledger: Ledger, decision: str, resolved: bool, retest: bool = True) -> str:
    run = f"run-{decision}-{resolved}"
    ledger.record(
        run, 1, Role.VALIDATOR, Kind.VERIFY, detail={"candidate": "c1", "resolved": resolved, "retest": retest}
    )
    ledger.record(run, 1, Role.DECISION, Kind.DECIDE, detail={"decision": decision, "candidate": "c1", "cause": "x"})
    return run


def test_write_gate_refuses_what_was_not_a_verified_correction() -> None:
    ledger = Ledger()
    with pytest.raises(MemoryRefused, match="no events"):
        find_correction(ledger, "missing")
    with pytest.raises(MemoryRefused, match="kept no change"):
        find_correction(ledger, _fake_run(ledger, "roll back", resolved=True))
    with pytest.raises(MemoryRefused, match="never re-tested as resolved"):
        find_correction(ledger, _fake_run(ledger, "keep", resolved=False))
    with pytest.raises(MemoryRefused, match="never re-tested as resolved"):
        find_correction(ledger, _fake_run(ledger, "keep", resolved=True, retest=False))
    assert find_correction(ledger, _fake_run(ledger, "keep", resolved=True)).candidate == "c1"
    with pytest.raises(MemoryRefused, match="Correction"):
        ExperienceStore().write(lesson(), "run 7 looked fine")  # type: ignore[arg-type]


def test_sealed_final_test_diagnostics_can_never_be_written() -> None:
    ledger = Ledger()
    corr = find_correction(ledger, _fake_run(ledger, "keep", resolved=True))
    store = ExperienceStore()
    sealed = ["tests/test_hidden_prices.py::test_tenant_c_isolated"]
    with pytest.raises(MemoryRefused, match="sealed test tests/test_hidden_prices.py::test_tenant_c_isolated"):
        store.write(lesson(), corr, sealed=sealed, signals_from=sealed)
    with pytest.raises(MemoryRefused, match="names sealed test 'test_tenant_c_isolated'"):
        store.write(lesson(signal="test_tenant_c_isolated fails with 100 != 80"), corr, sealed=sealed)
    assert store.entries() == []  # nothing was written by the refused calls
    visible = "tests/test_isolation.py::test_user_b_does_not_get_user_a_price"
    assert store.write(lesson(), corr, sealed=sealed, signals_from=[visible]).version == 1


def test_retrieval_rechecks_preconditions_and_expiry_and_returns_candidates_not_facts() -> None:
    ledger = Ledger()
    corr = find_correction(ledger, _fake_run(ledger, "keep", resolved=True))
    store = ExperienceStore()
    store.write(lesson(), corr)
    store.write(lesson(lesson="Old lesson.", expires={"after": "2026-01-01", "on_version_change": False}), corr)
    tenant = {"multi-tenant": True, "values differ per tenant": True}
    got = store.retrieve(tenant, environment=ENV, today=dt.date(2026, 6, 1))
    assert [c.entry.key for c in got.candidates] == ["Multi-tenant cache keys must cover the tenant boundary."]
    assert isinstance(got.candidates[0], CandidateExplanation)
    assert "verify" in got.candidates[0].status
    assert got.candidates[0].hypothesis.refuted_if.endswith("public data, same for everyone")
    assert [w.reason.startswith("expired") for _, w in got.withheld] == [True]
    catalogue = store.retrieve(
        {"multi-tenant": True, "values differ per tenant": False}, environment=ENV, today=dt.date(2026, 6, 1)
    )
    assert catalogue.candidates == () and catalogue.withheld[0][1].unmet == ("values differ per tenant",)
    moved = store.retrieve(tenant, environment="pricing v2", today=dt.date(2026, 6, 1))
    assert moved.candidates == () and all(w.expired for _, w in moved.withheld)


def test_the_store_is_a_durable_append_only_ledger(tmp_path) -> None:
    ledger = Ledger()
    corr = find_correction(ledger, _fake_run(ledger, "keep", resolved=True))
    path = tmp_path / "memory.sqlite"
    store = ExperienceStore(path)
    store.write(lesson(), corr)
    store.close()
    again = ExperienceStore(path)
    assert [e.experience.lesson for e in again.entries()] == [lesson().lesson]
    assert isinstance(corr, Correction)
