"""The simulated judge's report the judge-bias page opens on is read from data/; here it is computed
again and must equal the stored one (labkit.experiments.judging.sim_report)."""

import json
import math

import pytest
from recordings import assert_as_recorded

from labkit.experiments.judging import bias, sim_report
from labkit.views import judge_page as page


def _close(now: object, recorded: object) -> bool:
    """Floats to 1e-9 (their last bits may follow the CPU's SIMD path); everything else exactly."""
    if isinstance(now, float) and isinstance(recorded, float):
        return math.isclose(now, recorded, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(now) and math.isnan(recorded))
    return now == recorded


def test_the_recorded_report_is_what_the_simulated_judge_gives_now() -> None:
    now = sim_report.report_leaves(bias.report(sim_report.judged(sim_report.OPENING)))
    recorded = sim_report.report_leaves(sim_report.recorded_sim_report())
    assert len(now) > 200 and sum(isinstance(v, float) for _, v in now) > 150  # every interval, not a summary
    # the recorded side, with each value within tolerance of now's replaced by now's: any other
    # value (or path) is reported where it first differs
    tolerated = [(p, v if _close(v, r) else r) for (_, v), (p, r) in zip(now, recorded, strict=False)]
    record = json.loads(sim_report.SIM_REPORT.read_text(encoding="utf-8"))
    assert_as_recorded(now, tolerated + recorded[len(now) :], record, "the simulated judge's report")


def test_the_page_opens_on_the_recording_and_computes_every_other_setting(monkeypatch) -> None:  # noqa: ANN001
    opening = [page.SIM[name].value for name in ("k", "beta", "phi", "delta", "n_questions")]
    k, beta, phi, delta, n_questions = opening
    assert (
        sim_report.SimSetting(k=k, beta=beta, phi=phi, delta=delta, n_questions=n_questions) == sim_report.OPENING
    )  # the sliders start where it was recorded

    def no_fit(*_a, **_k):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("fitted again")

    page.simulate.cache_clear()
    monkeypatch.setattr(sim_report.bias, "report", no_fit)
    swaps, report = page.simulate(*opening)
    assert report == sim_report.recorded_sim_report() and report.simulated and len(swaps) > 1000
    with pytest.raises(AssertionError, match="fitted again"):  # any other setting is computed
        page.simulate(*opening[:3], 0.6, opening[4])
    page.simulate.cache_clear()


def test_a_recording_at_another_setting_is_refused(tmp_path) -> None:  # noqa: ANN001
    rec = json.loads(sim_report.SIM_REPORT.read_text(encoding="utf-8"))
    other = tmp_path / "sim_report.json"
    other.write_text(json.dumps({**rec, "setting": {**rec["setting"], "beta": 0.0}}), encoding="utf-8")
    with pytest.raises(ValueError, match="not at"):
        sim_report.recorded_sim_report(other)
