"""`benchmark.tasks.traces.trace_prediction_spreads`: each job's predicted spread (log_sd) from the same
fit as its p̂, calibrated on the validation part only — changing the true sizes of the scheduled jobs
changes neither p̂ nor log_sd of any job whose features could not have seen them."""

from collections import OrderedDict

import numpy as np
import pytest

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

TRACE = "philly:ed69ec"  # one Philly VC: 1,137 jobs, its test part 171 jobs; each fit about a second
METHODS = ["lgbm-rank", "lgbm-asym"]


def _fit(trace=TRACE):
    from benchmark.tasks.traces import trace_prediction_spreads, trace_predictions, trace_split

    ts = trace_split(trace, seed=0)
    ids = ts.test_jobs["job_id"]
    return ts, trace_predictions(ts, METHODS, ids, seed=0), trace_prediction_spreads(ts, METHODS, ids, seed=0)


def test_spreads_come_from_the_fit_of_the_p_hat(monkeypatch):
    from benchmark.tasks import traces

    monkeypatch.setattr(traces, "_FITS", OrderedDict())
    ts, p_hat, spread = _fit()
    for method in METHODS:
        pred = traces.fit_trace_method(ts, method, seed=0)
        assert len(traces._FITS) == len(METHODS)  # the spreads reused the fits of the p̂
        frame = pred.to_frame(spread=True).set_index("job_id").loc[ts.test_jobs["job_id"].astype(str)]
        np.testing.assert_array_equal(frame["p_hat"].to_numpy(), p_hat[method])
        np.testing.assert_array_equal(frame["log_sd"].to_numpy(), spread[method])
        assert np.all(np.isfinite(spread[method])) and np.all(spread[method] > 0)
    assert traces.trace_prediction_spreads(ts, ["oracle"], ts.test_jobs["job_id"])["oracle"].tolist() == [0.0] * len(ts.test_jobs)


def test_spreads_never_see_a_true_size_of_the_scheduled_jobs(monkeypatch):
    from atlas_data import adapters
    from benchmark.tasks import traces

    monkeypatch.setattr(traces, "_FITS", OrderedDict())
    before_ts, before_p, before_sd = _fit()
    test = before_ts.test_jobs
    full = adapters._shipped_cached("philly")
    cut = float(np.median(test["submit_time"]))
    later = set(test.loc[test["submit_time"] > cut, "job_id"].astype(str))
    rows = np.flatnonzero(full["job_id"].astype(str).isin(later).to_numpy())
    durations = full["duration"].to_numpy(float).copy()
    durations[rows] = durations[rows][np.random.default_rng(5).permutation(len(rows))] * 3.0
    changed = full.assign(duration=durations)
    monkeypatch.setattr(adapters, "_shipped_cached", lambda kind: changed if kind == "philly" else full)
    monkeypatch.setattr(traces, "_FITS", OrderedDict())
    after_ts, after_p, after_sd = _fit()

    assert list(after_ts.test_jobs["job_id"]) == list(test["job_id"])
    moved = after_ts.test_jobs["duration"].to_numpy() != test["duration"].to_numpy()
    assert moved.sum() > 0.4 * len(moved)
    # a job submitted before any changed job could finish has the same features: the same p̂ and spread
    submit = test["submit_time"].to_numpy(float)
    first_finish = np.minimum(submit + test["duration"].to_numpy(float),
                              submit + after_ts.test_jobs["duration"].to_numpy(float))[moved].min()
    known = submit < first_finish
    assert known.sum() > len(known) / 2 and known[moved].any()
    for method in METHODS:
        np.testing.assert_array_equal(after_p[method][known], before_p[method][known])
        np.testing.assert_array_equal(after_sd[method][known], before_sd[method][known])


def test_an_unknown_method_is_refused_before_any_fit(monkeypatch):
    from atlas_data.errors import InputError
    from benchmark.tasks import traces

    ts = traces.trace_split(TRACE, seed=0)
    monkeypatch.setattr(traces, "fit_trace_method", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(InputError, match="unknown prediction method 'nope'"):
        traces.trace_prediction_spreads(ts, ["lgbm-rank", "nope"], ts.test_jobs["job_id"])
