"""per_job.parquet is written run by run (benchmark.per_job) and holds what the whole frame held.

The whole per-job frame of `run_objective` (no sink) written with `to_parquet(index=False)` is the
reference: the file written run by run must read back as the same table (schema, pandas metadata,
every row in order), the stretch CDF must get the same series, and no write may hold more than one
run's rows."""

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from benchmark import plots
from benchmark.cli import main
from benchmark.per_job import PerJobTable
from benchmark.value import is_control
from schedulers import objectives
from schedulers.jobs import JobSet
from schedulers.objectives import Watch, per_job_template, planned_runs, run_objective
from schedulers.policy import resolve_policy

pytestmark = pytest.mark.usefixtures("figures_unrendered")


def _jobs(n=60, seed=3):
    rng = np.random.default_rng(seed)
    return JobSet.from_frame(pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "submit_time": np.sort(rng.uniform(0, 200, n)).round(1),
        "duration": rng.lognormal(2.0, 1.0, n).round(2)}))


def _predictions(jobs):
    rng = np.random.default_rng(7)
    p_hat = jobs.size * np.exp(rng.normal(0, 0.5, jobs.n))
    # a control label (benchmark.value): written to the file, not drawn
    return {"noise:0.5": p_hat, "m": p_hat * 1.3, "m~permuted": rng.permutation(p_hat)}


CASES = {
    "total_completion": ("total_completion", ["fifo", "srpt", "spjf", "sprpt(revision='double')", "gittins"], True),
    "blind only": ("total_completion", ["fifo", "srpt", "rr"], True),  # the predictor column has no text
    "max_stretch": ("max_stretch", ["edf", "srpt", "prr", "serpt"], True),
    "makespan": ("makespan", ["lpt", "lppt"], False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_written_run_by_run_is_the_whole_frame(case, tmp_path):
    objective, policies, with_p = CASES[case]
    policies = [resolve_policy(p, "parallel" if objective == "makespan" else "single") for p in policies]
    jobs = _jobs()
    predictions = _predictions(jobs) if with_p else {}
    spreads = {label: 0.5 for label in predictions}
    kw = dict(machines=[2, 3], spreads=spreads)
    rows, whole, reference = run_objective(objective, jobs, policies, predictions, **kw)
    whole.to_parquet(tmp_path / "whole.parquet", index=False)

    cdf = objective != "makespan"
    with PerJobTable(tmp_path / "runs.parquet", cdf=cdf) as table:
        streamed_rows, none, streamed_reference = run_objective(objective, jobs, policies, predictions,
                                                                watch=Watch(per_job=table), **kw)
    assert none is None and streamed_rows == rows and streamed_reference == reference
    expected, got = pq.read_table(tmp_path / "whole.parquet"), pq.read_table(tmp_path / "runs.parquet")
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected, check_metadata=True) and got.num_rows == len(whole) > 0
    assert pd.read_parquet(tmp_path / "runs.parquet").equals(pd.read_parquet(tmp_path / "whole.parquet"))
    runs = planned_runs(objective, policies, predictions, kw["machines"], spreads)
    assert len(rows) == len(runs) and pq.ParquetFile(tmp_path / "runs.parquet").num_row_groups == len(runs)
    assert table.most_rows == jobs.n  # one run's rows at a time
    if case == "blind only":
        assert str(got.schema.field("predictor").type) == "null"
    if cdf:
        drawn = whole[~whole["predictor"].map(is_control)]
        assert _same_series(table.series, plots.series_cdf_steps(drawn, "stretch"))
        assert not any(is_control(key[1]) for key, _ in table.series)
        assert len(table.series) == len(runs) - sum(is_control(label) for _, label, _ in runs)
    else:
        assert table.series == []


def _same_series(a, b) -> bool:
    return [k for k, _ in a] == [k for k, _ in b] and all(
        np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for (_, x), (_, y) in zip(a, b))


def test_the_template_has_the_whole_frame_types():
    """One row per planned run, the whole frame's columns and dtypes (the predictor column is text only
    if a run has a p̂); no jobs, no rows, as the whole frame."""
    jobs = _jobs(5)
    plan = planned_runs("total_completion", ["fifo", "spjf"], {"a": jobs.size, "b": jobs.size})
    assert plan == [("fifo", None, 1), ("spjf", "a", 1), ("spjf", "b", 1)]
    template = per_job_template(jobs, plan)
    _, whole, _ = run_objective("total_completion", jobs, ["fifo", "spjf"], {"a": jobs.size, "b": jobs.size})
    assert list(template["predictor"]) == [None, "a", "b"] and len(template) == 3
    assert template.dtypes.equals(whole.dtypes)
    assert template.reset_index(drop=True)[["policy", "predictor", "job_id"]].equals(
        whole.iloc[[0, 5, 10]].reset_index(drop=True)[["policy", "predictor", "job_id"]])
    empty = JobSet.from_arrays(np.zeros(0), np.zeros(0))
    assert len(per_job_template(empty, plan)) == 0


def test_no_run_arrays_are_kept_with_a_sink(monkeypatch):
    """With a sink, each run's frame is built from that run alone (its arrays then let go)."""
    jobs = _jobs(30)
    sizes = []
    real = objectives.per_job_frame

    def spy(jobs_, runs, rows=slice(None)):
        sizes.append(len(runs))
        return real(jobs_, runs, rows)

    monkeypatch.setattr(objectives, "per_job_frame", spy)

    class Sink:
        def start(self, template):
            self.template = template

        def write(self, frame):
            assert len(frame) == jobs.n

    run_objective("total_completion", jobs, ["fifo", "srpt", "rr", "spjf"], {"x": jobs.size}, watch=Watch(per_job=Sink()))
    assert sizes == [4, 1, 1, 1, 1]  # the template (four planned runs), then one run per frame


def test_a_series_in_two_writes_is_refused(tmp_path):
    frame = pd.DataFrame({"policy": ["a", "a"], "predictor": [None, None], "stretch": [1.0, 2.0]})
    with PerJobTable(tmp_path / "t.parquet", cdf=True) as table:
        table.start(frame)
        table.write(frame)
        with pytest.raises(ValueError, match="two parts"):
            table.write(frame)


def test_the_command_writes_the_whole_frame_run_by_run(tmp_path, monkeypatch):
    """`run --task scheduling`: per_job.parquet equals the whole frame's to_parquet, results.json's
    rows are those of the whole-frame run, the CDF figure gets the whole frame's series, and the
    file has a row group per run."""
    import benchmark.tasks.scheduling as task

    jobs_csv = tmp_path / "jobs.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"job_id": [f"x{i}" for i in range(80)], "submit_time": np.sort(rng.integers(0, 300, 80)),
                  "duration": rng.integers(1, 40, 80)}).to_csv(jobs_csv, index=False)
    seen = {}
    real_run, real_cdf = task.run_objective, plots.stretch_cdf

    def both(*args, watch=None, **kw):
        seen["whole"] = real_run(*args, **kw)  # the whole-frame path, then the command's own
        return real_run(*args, watch=watch, **kw)

    def cdf(series, path, **kw):
        seen["series"] = series
        return real_cdf(series, path, **kw)

    monkeypatch.setattr(task, "run_objective", both)
    monkeypatch.setattr(plots, "stretch_cdf", cdf)
    out = tmp_path / "out"
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                 "--noise", "0.5,1", "--no-mlflow", "--quiet", "--output", str(out)]) == 0
    rows, whole, _ = seen["whole"]
    whole.to_parquet(tmp_path / "whole.parquet", index=False)
    got = pq.read_table(out / "per_job.parquet")
    assert got.equals(pq.read_table(tmp_path / "whole.parquet"), check_metadata=True) and got.num_rows == 80 * len(rows)
    # the five blind defaults once, the eleven that read p̂ under each σ: a row group per run
    assert pq.ParquetFile(out / "per_job.parquet").num_row_groups == len(rows) == 5 + 11 * 2
    doc = json.loads((out / "results.json").read_text())
    assert [(r["policy"], r["predictor"], r["value"]) for r in doc["rows"]] == \
        [(r["policy"], r["predictor"], r["value"]) for r in rows]
    assert _same_series(seen["series"], plots.series_cdf_steps(whole, "stretch"))
