"""History features use only jobs that finished before the job was submitted; EB shrinkage λ = 5."""

import numpy as np
import pandas as pd
import pytest

from atlas_data.features import EB_LAMBDA, add_features, causal_stats, prior_submits, shrink


def _jobs():
    # one user, one group; finish = submit + p*
    rows = [
        # name, submit, finish, y, split
        ("j1", 0.0, 100.0, 1.0, "train"),
        ("j2", 50.0, 500.0, 2.0, "train"),   # still running when j3 is submitted
        ("j3", 200.0, 260.0, 4.0, "train"),
        ("j4", 500.0, 900.0, 3.0, "val"),    # j2 finished exactly at 500 -> visible
        ("j5", 600.0, 700.0, 5.0, "test"),
    ]
    df = pd.DataFrame(rows, columns=["job_name", "submit_time", "finish_time", "y", "split"])
    df["p_star"] = np.expm1(df["y"])
    df["user"] = "u"
    df["group"] = "g"
    df["workload"] = ""
    df["gpu_type_spec"] = ""
    df["cpu"], df["gpu"], df["mem"] = 6.0, 1.0, 20.0
    df["n_instances"], df["n_tasks"], df["max_task_instances"] = 1.0, 1, 1.0
    return df


def test_causal_stats_by_hand():
    df = _jobs()
    keys = np.zeros(len(df), dtype=np.int64)
    count, mean, ewma = causal_stats(keys, df.submit_time.to_numpy(), df.finish_time.to_numpy(), df.y.to_numpy())
    # j1: nothing finished; j2: nothing (j1 ends at 100); j3: j1; j4: j1, j3, j2 (ends at 500 = submit)
    # j5: same three (j4 ends at 900)
    assert list(count) == [0, 0, 1, 3, 3]
    assert np.isnan(mean[0]) and mean[2] == 1.0
    assert mean[3] == pytest.approx((1 + 4 + 2) / 3)
    # EWMA (adjust=True, alpha 0.3) in finish order j1 (100), j3 (260), j2 (500): weights .49, .7, 1
    assert ewma[3] == pytest.approx((0.49 * 1 + 0.7 * 4 + 1 * 2) / (0.49 + 0.7 + 1))
    assert ewma[2] == 1.0


def test_history_ignores_jobs_finishing_after_submission():
    df = _jobs()
    out = add_features(df).set_index("job_name")
    assert out.loc["j2", "hist_user_count"] == 0
    assert out.loc["j3", "hist_user_count"] == 1          # j2 had not finished at 200
    assert out.loc["j4", "hist_user_count"] == 3
    # changing a label of a job that finished after j3 was submitted leaves j3 untouched
    df2 = df.copy()
    df2.loc[df2.job_name == "j2", "y"] = 9.0
    out2 = add_features(df2).set_index("job_name")
    cols = [c for c in out.columns if c.startswith(("hist_", "sig_"))]
    pd.testing.assert_series_equal(out.loc["j3", cols], out2.loc["j3", cols])
    assert out.loc["j4", "hist_user_mean_eb"] != out2.loc["j4", "hist_user_mean_eb"]


def test_eb_shrinkage_and_train_prior():
    df = _jobs()
    out = add_features(df).set_index("job_name")
    # prior for j4 = mean y over train jobs finished by 500 = (1 + 4 + 2)/3; history n = 3, mean the same
    prior = (1 + 4 + 2) / 3
    assert out.loc["j4", "hist_user_mean_eb"] == pytest.approx((3 * prior + EB_LAMBDA * prior) / (3 + EB_LAMBDA))
    # j3: prior = train mean over {j1} = 1, history {j1}: (1*1 + 5*1)/6 = 1
    assert out.loc["j3", "hist_user_mean_eb"] == pytest.approx(1.0)
    assert shrink(np.array([2.0]), np.array([1.5]), np.array([3.0]))[0] == pytest.approx((3 + 15) / 7)
    # the train-only signature statistic never uses the val job j4 (j5 sees j1, j2, j3 only)
    assert out.loc["j5", "sig_train_count"] == 3
    assert out.loc["j5", "hist_sig_count"] == 3


def test_prior_submits_and_recurrence_flag():
    keys = np.array([0, 0, 1, 0, 0])
    submit = np.array([0.0, 5.0, 5.0, 5.0, 9.0])
    # the two key-0 jobs at t=5 do not count each other
    assert list(prior_submits(keys, submit, np.arange(5))) == [0, 1, 0, 1, 3]
    out = add_features(_jobs())
    assert list(out["is_recurrent"]) == [False, True, True, True, True]
