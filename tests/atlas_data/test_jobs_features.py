"""Submit-time features of any jobs table: values by hand, the leakage proof, and bad feature columns."""

import numpy as np
import pandas as pd
import pytest

from atlas_data.errors import InputError
from atlas_data.features import EB_LAMBDA
from atlas_data.jobs_features import (
    FeatureColumns,
    check_feature_columns,
    jobs_dataset,
    read_jobs_with_features,
    transfer_dataset,
)
from atlas_data.jobs_table import validate_jobs

BASE = FeatureColumns(("tenant",), ("gpus",))


def _table(n=400, seed=0):
    """A jobs table with signal: duration depends on the app and the tenant; arrivals every ~60 s."""
    rng = np.random.default_rng(seed)
    app = rng.choice(["train", "eval", "sweep"], size=n)
    tenant = rng.choice(["vc1", "vc2"], size=n)
    base = np.where(app == "train", 20_000.0, np.where(app == "eval", 600.0, 3_000.0)) * np.where(tenant == "vc1", 1, 2)
    return pd.DataFrame({
        "job_id": [f"j{i:04d}" for i in range(n)], "submit_time": np.cumsum(rng.exponential(60.0, n)),
        "duration": base * np.exp(0.3 * rng.standard_normal(n)), "gpus": rng.choice([1, 2, 8], size=n),
        "tenant": tenant, "app": app,
    })


def test_history_features_by_hand():
    # finish = submit + duration: a ends at 5, b at 110, c at 29; d is submitted at 30
    jobs = pd.DataFrame({"job_id": list("abcdefghij"), "submit_time": [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
                         "duration": [5.0, 100, 9, 1, 1, 1, 1, 1, 1, 1], "gpus": 1,
                         "tenant": ["x", "y", "y", "x", "x", "x", "x", "x", "x", "x"]})
    ds = jobs_dataset(jobs, BASE)
    f = ds.frame.set_index("job_id")
    assert list(f["split"]) == ["train"] * 7 + ["val", "test", "test"]
    y_a, y_c = np.log1p(5.0), np.log1p(9.0)
    prior = (y_a + y_c) / 2  # μ0: the train jobs finished by t = 30 (a and c; b still runs)
    d = f.loc["d"]
    assert d["hist_tenant_count"] == 1 and d["hist_tenant_ewma"] == pytest.approx(y_a)
    assert d["hist_tenant_mean_eb"] == pytest.approx((1 * y_a + EB_LAMBDA * prior) / (1 + EB_LAMBDA))
    assert d["hist_sig_count"] == 1  # signature = tenant | gpus bucket: c (tenant y) is another one
    assert d["tenant_prior_submits"] == 1 and d["sig_prior_submits"] == 1
    # nothing had finished when a and b were submitted: count 0 and the fallback prior
    assert f.loc["a", "hist_tenant_count"] == 0 and f.loc["b", "hist_sig_count"] == 0
    assert f.loc["b", "hist_tenant_mean_eb"] == f.loc["b", "hist_tenant_ewma"]
    # encoders are fitted on train: both tenants seen; log_gpus = log1p(1)
    assert set(f["tenant_code"]) == {0.0, 1.0} and np.allclose(f["log_gpus"], np.log1p(1.0))
    assert np.allclose(f["y"], np.log1p(f["p_star"]))


def test_calendar_features_use_the_traces_own_clock():
    hours = [6, 12, 24 * 5, 24 * 6 + 3, 24 * 7, 24 * 8, 24 * 9, 24 * 10]
    jobs = pd.DataFrame({"job_id": list("abcdefgh"), "submit_time": np.array(hours) * 3600.0, "duration": 1.0})
    f = jobs_dataset(validate_jobs(jobs), BASE).frame
    assert f["hour_sin"].iloc[0] == pytest.approx(1.0) and f["hour_cos"].iloc[1] == pytest.approx(-1.0)
    # 1970-01-01 was a Thursday (3); day 5 a Tuesday, day 6 a Wednesday ... day 9 a Saturday
    assert list(f["day_of_week"]) == [3, 3, 1, 2, 3, 4, 5, 6]
    assert list(f["is_weekend"]) == [0, 0, 0, 0, 0, 0, 1, 1]


def _stretch(jobs, mask, factor=7.0):
    out = jobs.copy()
    out.loc[mask, "duration"] = out.loc[mask, "duration"] * factor + 3600.0
    return out


def test_stretching_test_period_durations_changes_no_train_or_validation_feature():
    jobs = _table()
    columns = FeatureColumns(("tenant", "app"), ("gpus",))
    a = jobs_dataset(jobs, columns)
    test_ids = set(a.frame.loc[a.frame["split"] == "test", "job_id"])
    b = jobs_dataset(_stretch(jobs, jobs["job_id"].isin(test_ids)), columns)
    fa, fb = a.frame.set_index("job_id"), b.frame.set_index("job_id")
    early = fa.index[fa["split"] != "test"]
    assert (fb.loc[early, "split"] == fa.loc[early, "split"]).all()
    cols = list(a.features) + ["is_recurrent", "p_star", "y"]
    assert fa.loc[early, cols].equals(fb.loc[early, cols])
    # the perturbation is real: later test jobs see the stretched labels of earlier ones
    late = fa.index[fa["split"] == "test"]
    assert not fa.loc[late, list(a.features)].equals(fb.loc[late, list(a.features)])


def test_no_job_sees_its_own_duration():
    jobs = _table(n=200, seed=3)
    columns = FeatureColumns(("tenant", "app"), ("gpus",))
    base = jobs_dataset(jobs, columns).frame.set_index("job_id")
    features = [c for c in base.columns if c not in ("p_star", "y", "split")]
    for i in np.random.default_rng(0).choice(len(jobs), size=12, replace=False):
        job = jobs["job_id"].iloc[i]
        changed = jobs_dataset(_stretch(jobs, jobs["job_id"] == job, factor=50.0), columns).frame.set_index("job_id")
        assert changed.loc[job, "p_star"] != base.loc[job, "p_star"]
        assert changed.loc[job, features].equals(base.loc[job, features]), job
        earlier = base.index[base["submit_time"] <= base.loc[job, "submit_time"]]
        assert changed.loc[earlier, features].equals(base.loc[earlier, features])


def _check(df, names):
    jobs = validate_jobs(df, "jobs.csv")
    return check_feature_columns(df, jobs, names, "jobs.csv")


def test_feature_columns_take_their_kind_from_the_values():
    df = _table(n=50).assign(mem_gb=np.arange(50) % 7 + 1.0, queue_name=["q1", None] * 25)
    columns, values = _check(df, ["app", "mem_gb", "queue_name"])
    assert columns.categorical == ("tenant", "app", "queue_name") and columns.numeric == ("gpus", "mem_gb")
    assert values["queue_name"].iloc[1] == "" and values["mem_gb"].iloc[3] == 4.0


@pytest.mark.parametrize("column, values, message", [
    ("nope", None, "--feature-columns names a column the file does not have"),
    ("empty", [np.nan] * 50, "the column is empty in every row"),
    ("queue", ["q1"] * 50, "the column has one value in every row ('q1'), so it cannot tell jobs apart"),
    ("mem_gb", [4.0] * 50, "the column has one value in every row ('4.0')"),
    ("end_time", "end", "is a post-execution column (its name says 'end'"),
    ("gpu_time", "gpu_time", "is a post-execution column (computed from what the job used)"),
    ("t_done", "end", "never before the submit time and follow it"),
    ("x", "gpu_time", "the values track the duration"),
    ("duration", None, "cannot be a feature (the label: the true size)"),
    ("tenant", None, "already a feature of every jobs table"),
])
def test_bad_feature_columns_are_refused_naming_the_column(column, values, message):
    df = _table(n=50)
    if values == "end":
        df[column] = df["submit_time"] + df["duration"]
    elif values == "gpu_time":
        df[column] = df["duration"] * df["gpus"]
    elif values is not None:
        df[column] = values
    with pytest.raises(InputError) as err:
        _check(df, [column])
    text = str(err.value)
    assert text.startswith(f"jobs.csv: column '{column}': ") and message in text and "\n" not in text


def test_a_column_with_one_value_and_empty_rows_is_kept():
    # whether a value is given at all can tell jobs apart
    columns, values = _check(_table(n=50).assign(queue=["q1", None] * 25), ["queue"])
    assert columns.categorical == ("tenant", "queue") and list(values["queue"].iloc[:2]) == ["q1", ""]


def test_request_columns_with_execution_words_are_allowed():
    df = _table(n=50).assign(requested_duration=[3600.0, 7200.0, 86400.0, 600.0, 1800.0] * 10,
                             time_limit=np.arange(50) * 60.0 + 60.0)
    columns, _ = _check(df, ["requested_duration"])
    assert "requested_duration" in columns.numeric


def test_a_file_keeps_its_feature_columns(tmp_path):
    path = tmp_path / "jobs.csv"
    _table(n=30).to_csv(path, index=False)
    jobs, columns = read_jobs_with_features(path, ["app"])
    assert list(jobs.columns) == ["job_id", "submit_time", "duration", "gpus", "tenant", "weight", "app"]
    assert columns.categorical == ("tenant", "app") and jobs["app"].iloc[0] in {"train", "eval", "sweep"}


def test_transfer_never_learns_from_the_targets_jobs_or_from_its_test_period():
    jobs = _table(n=600, seed=5)
    target = jobs[jobs["tenant"] == "vc2"]
    train_ds, target_ds, notes = transfer_dataset(jobs, BASE, target, BASE, same_clock=True)
    t_test = target_ds.frame.loc[target_ds.frame["split"] == "test", "submit_time"].min()
    fit = train_ds.frame
    assert not set(fit["job_id"]) & set(target["job_id"])
    assert ((fit["submit_time"] + fit["p_star"]) <= t_test).all()
    assert set(fit["split"]) == {"train", "val"} and notes["dropped_target_jobs"] == len(target)
    assert notes["source_jobs_used"] == len(fit) == len(jobs) - len(target) - notes["dropped_after_target_test_start"]
    # the target's tenant is not in the training vocabulary: its code is "unseen"
    assert (target_ds.frame["tenant_code"] == -1).all() and train_ds.features == target_ds.features
