"""Fork-join labels on hand-made tables (docs/data-formats.md): multi-task, multi-instance, failed instances."""

import math

import numpy as np
import pandas as pd
import pytest

from atlas_data.labels import fork_join_spans, keep_labelled, label_jobs

NAN = float("nan")


def _instances():
    rows = [
        # job A: two tasks; s_t = min start, e_t = max end per task
        ("A", "worker", 100, 400), ("A", "worker", 102, 450), ("A", "worker", 110, 420),
        ("A", "ps", 90, 300),
        # job B: a failed attempt (50-80) retried (85-200); a Running instance without end is ignored
        ("B", "worker", 50, 80), ("B", "worker", 85, 200), ("B", "worker", 40, NAN),
        # job C is Failed; D has no instances; E has zero duration; F has no tasks; G no submit time
        ("C", "worker", 10, 20),
        ("E", "worker", 500, 500),
        ("F", "worker", 0, 10),
        ("G", "worker", 0, 10),
    ]
    return pd.DataFrame(rows, columns=["job_name", "task_name", "start_time", "end_time"])


def _jobs():
    return pd.DataFrame({
        "job_name": ["A", "B", "C", "D", "E", "F", "G"],
        "status": ["Terminated", "Terminated", "Failed", "Terminated", "Terminated", "Terminated", "Terminated"],
        "submit_time": [80.0, 30.0, 5.0, 1.0, 400.0, 0.0, NAN],
        "n_tasks": [2, 1, 1, 1, 1, 0, 1],
    })


def test_fork_join_label_per_task_formula():
    spans = fork_join_spans(_instances()).set_index("job_name")
    # job A: task worker s=100 e=450, task ps s=90 e=300 -> max e - min s = 450 - 90
    assert spans.loc["A", "first_start"] == 90 and spans.loc["A", "last_end"] == 450
    assert spans.loc["A", "n_timed_instances"] == 4
    # job B: the failed attempt's start counts, the instance without an end does not
    assert spans.loc["B", "first_start"] == 50 and spans.loc["B", "last_end"] == 200
    assert spans.loc["B", "n_timed_instances"] == 2


def test_label_values_and_drop_reasons():
    labelled = label_jobs(_jobs(), fork_join_spans(_instances())).set_index("job_name")
    assert labelled.loc["A", "p_star"] == 360.0
    assert labelled.loc["B", "p_star"] == 150.0
    # finish = max(last end, submit + p*): B submitted at 30, ran 50..200 -> 200
    assert labelled.loc["B", "finish_time"] == 200.0
    assert labelled.loc["A", "finish_time"] == 450.0
    reasons = labelled["drop_reason"].to_dict()
    assert reasons == {"A": "", "B": "", "C": "status_failed", "D": "no_instances", "E": "nonpositive_p_star",
                       "F": "no_tasks", "G": "missing_submit_time"}
    kept, dropped = keep_labelled(label_jobs(_jobs(), fork_join_spans(_instances())))
    assert list(kept["job_name"]) == ["A", "B"]
    assert np.allclose(kept["y"], [math.log1p(360.0), math.log1p(150.0)])
    assert dropped == {"missing_submit_time": 1, "no_instances": 1, "no_tasks": 1, "nonpositive_p_star": 1,
                       "status_failed": 1}


def test_label_differs_from_mean_instance_duration():
    # gang of 3: instance durations 300, 348, 310 -> mean 319.3, fork-join 360 (with the ps task)
    spans = fork_join_spans(_instances()).set_index("job_name")
    inst = _instances()
    a = inst[inst.job_name == "A"]
    assert (a.end_time - a.start_time).mean() < spans.loc["A", "last_end"] - spans.loc["A", "first_start"]


def test_finish_time_not_before_submit_plus_label():
    jobs = pd.DataFrame({"job_name": ["X"], "status": ["Terminated"], "submit_time": [100.0], "n_tasks": [1]})
    inst = pd.DataFrame({"job_name": ["X"], "start_time": [90.0], "end_time": [150.0]})  # starts "before" submit
    out = label_jobs(jobs, fork_join_spans(inst))
    assert out.loc[0, "p_star"] == 60.0
    assert out.loc[0, "finish_time"] == 160.0


@pytest.mark.parametrize("status,reason", [("Running", "status_running"), ("Waiting", "status_waiting")])
def test_unfinished_statuses_are_dropped(status, reason):
    jobs = pd.DataFrame({"job_name": ["X"], "status": [status], "submit_time": [0.0], "n_tasks": [1]})
    inst = pd.DataFrame({"job_name": ["X"], "start_time": [1.0], "end_time": [NAN]})
    out = label_jobs(jobs, fork_join_spans(inst))
    assert out.loc[0, "drop_reason"] == reason
