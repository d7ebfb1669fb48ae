"""Metric definitions on hand-made arrays."""

import math

import numpy as np
import pytest

from predictors import metrics


def test_rmsle_zero_for_exact_and_known_value():
    p = np.array([1.0, 3.0, 7.0])
    assert metrics.rmsle(p, p) == 0.0
    # log1p: [ln2, ln4, ln8]; swapping the first two gives errors ±ln2 on two of three jobs.
    assert metrics.rmsle([3.0, 1.0, 7.0], p) == pytest.approx(math.log(2) * math.sqrt(2 / 3))


def test_coverage_boundary_is_inclusive():
    p = np.full(4, 100.0)
    p_hat = np.array([125.0, 74.0, 150.0, 151.0])  # relative errors .25 .26 .50 .51
    assert metrics.coverage(p_hat, p, 0.25) == 0.25
    assert metrics.coverage(p_hat, p, 0.50) == 0.75
    assert list(metrics.coverage_curve(p_hat, p, [0.0, 0.25, 0.5, 1.0])) == [0.0, 0.25, 0.75, 1.0]


def test_coverage_is_relative_to_true_size_not_prediction():
    # p̂ = 2p has relative error 1.0 (|2p − p|/p), p̂ = p/2 has 0.5.
    assert metrics.coverage([200.0], [100.0], 0.5) == 0.0
    assert metrics.coverage([50.0], [100.0], 0.5) == 1.0


def test_spearman_signs_and_constant():
    p = np.array([1.0, 2.0, 3.0, 4.0])
    assert metrics.spearman(p * 10, p) == pytest.approx(1.0)
    assert metrics.spearman(p[::-1], p) == pytest.approx(-1.0)
    assert math.isnan(metrics.spearman(np.ones(4), p))


def test_interval_metrics():
    lo, hi, p = np.array([1.0, 5.0, 10.0]), np.array([2.0, 6.0, 20.0]), np.array([1.5, 7.0, 10.0])
    assert metrics.interval_coverage(lo, hi, p) == pytest.approx(2 / 3)
    expected = np.mean(np.log1p(hi) - np.log1p(lo))
    assert metrics.interval_width(lo, hi) == pytest.approx(expected)


def test_evaluate_recurrent_subset_and_missing_intervals():
    p = np.array([100.0, 100.0, 100.0, 100.0])
    p_hat = np.array([100.0, 100.0, 300.0, 140.0])
    rec = np.array([True, False, False, True])
    out = metrics.evaluate(p_hat, p, rec)
    assert set(out) == set(metrics.METRIC_NAMES)
    assert out["cov25"] == 0.5 and out["cov50"] == 0.75
    assert out["cov25_recurrent"] == 0.5 and out["cov50_recurrent"] == 1.0
    assert math.isnan(out["interval_coverage"]) and math.isnan(out["interval_width"])
    with_pi = metrics.evaluate(p_hat, p, rec, lo=p * 0.5, hi=p * 2)
    assert with_pi["interval_coverage"] == 1.0
    assert with_pi["interval_width"] == pytest.approx(math.log(201 / 51))


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError):
        metrics.rmsle([1.0, 2.0], [1.0])
