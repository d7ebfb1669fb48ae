"""`benchmark robustness --task fairness --jobs TRACE`: learned p̂ on a real trace's test part, beside the
noise levels and the controls — the rows, that they are `run --task fairness --jobs TRACE --predictor`'s own
numbers, that no true size of the scheduled jobs reaches the fit, the placement between exact p̂ and the
controls, and the refusals (benchmark.commands.robustness, benchmark.experiments.robustness)."""

import argparse
import json
from collections import OrderedDict

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from benchmark.experiments import robustness as rb
from cli_checks import exit_2_one_line

# One Philly VC: 1,137 jobs, its test part 171 jobs; the lgbm-meta fit takes about a second and is
# memoised in-process (benchmark.tasks.traces), the runs are Python loops of well under a second
TRACE = "philly:ed69ec"
NODES = "2"  # 16 GPUs: the VC's jobs contend there, so the order the p̂ gives matters
ONLY_TRACE = ["--scenario", "none", "--jobs", TRACE, "--jobs-nodes", NODES, "--repeats", "1"]
METRICS = ("avg_jct", "avg_slowdown", "p90_short_jct", "sharing_loss_jobs", "tenant_loss_intervals")


def _learned_p_hat(trace=TRACE, predictor="lgbm-meta"):
    """(test part jobs, p̂) through the traces API the fairness task uses, independently of robustness."""
    from benchmark.tasks.traces import trace_predictions, trace_split

    ts = trace_split(trace, seed=0)
    return ts.test_jobs, trace_predictions(ts, [predictor], ts.test_jobs["job_id"], seed=0)[predictor]


@pytest.fixture(scope="module")
def learned_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("robustness-learned") / "out"
    assert main(["robustness", *ONLY_TRACE, "--noise", "0,1", "--policies", "themis,astraea-p", "--references", "astraea",
                 "--output", str(out), "--quiet"]) == 0
    return out


def test_the_trace_gets_learned_rows_between_the_noise_and_the_controls(learned_run):
    frame = pd.read_csv(learned_run / "robustness.csv")
    test_jobs, p_hat = _learned_p_hat()
    assert (frame["scenario"] == f"jobs:{TRACE}").all() and (frame["n_jobs"] == 171).all() and len(test_jobs) == 171
    assert (frame["cluster"] == "2 x 8 GPUs").all()
    for policy in ("themis", "astraea-p"):
        mine = frame[frame["policy"] == policy]
        assert list(mine["source"]) == ["noise:0", "noise:1", "learned:lgbm-meta", "constant", "random", "permuted"]
        row = mine[mine["source"] == "learned:lgbm-meta"].iloc[0]
        assert row["kind"] == "learned" and row["repeats"] == 1 and bool(row["uses_p_hat"])
        # its sigma is the measured σ-equivalent of the p̂ the traces API fits: rms of log(p̂/p)
        rms = np.sqrt(np.mean(np.log(p_hat / test_jobs["duration"].to_numpy(float)) ** 2))
        assert row["sigma"] == pytest.approx(rms, rel=1e-12) and 0.3 < rms < 10
    assert np.isfinite(frame[list(METRICS)].to_numpy(float)).all()
    themis = frame[frame["policy"] == "themis"].set_index("source")["avg_slowdown"]
    assert themis["learned:lgbm-meta"] != themis["noise:0"]  # a p̂ of its own, not the exact sizes again


def test_learned_rows_are_run_task_fairness_with_the_same_predictor(learned_run, tmp_path):
    """The learned point is `benchmark run --task fairness --jobs TRACE --predictor lgbm-meta`: same jobs,
    same p̂, same metrics."""
    out = tmp_path / "run"
    assert main(["run", "--task", "fairness", "--jobs", TRACE, "--predictor", "lgbm-meta", "--nodes", NODES,
                 "--policies", "themis,astraea-p", "--output", str(out), "--quiet", "--no-mlflow"]) == 0
    task = pd.read_csv(out / "results.csv").set_index("policy")
    assert set(task["predictor"]) == {"lgbm-meta"}
    runs = pd.read_csv(learned_run / "robustness_runs.csv")
    for policy in ("themis", "astraea-p"):
        row = runs[(runs["policy"] == policy) & (runs["source"] == "learned:lgbm-meta")]
        assert len(row) == 1 and row["kind"].iloc[0] == "learned"
        for metric in ("avg_jct", "avg_slowdown", "sharing_loss_jobs", "tenant_loss_intervals"):
            assert row[metric].iloc[0] == pytest.approx(task.loc[policy, metric], rel=1e-12), (policy, metric)
    results = json.loads((out / "results.json").read_text())
    assert results["n_jobs"] == 171


def test_the_learned_p_hat_never_sees_a_true_size_of_the_scheduled_jobs(monkeypatch):
    """Permute the true durations of the test part's later half (the jobs robustness schedules) in the trace
    itself: the model is fitted on train/validation only, so every scheduled job whose p̂ could not yet know a
    changed label (no changed job finished before it was submitted, its own label included) keeps its p̂
    exactly; only the durations the noise curve and the controls read change."""
    from atlas_data import adapters
    from benchmark.tasks import traces
    from benchmark.tasks.fairness import prepare

    args = argparse.Namespace(seed=0, n=None, jobs_nodes=int(NODES))
    monkeypatch.setattr(traces, "_FITS", OrderedDict())  # no fit of the true trace reused for the changed one
    before = prepare(rb.trace_args(args, TRACE, "lgbm-meta"))

    full = adapters._shipped_cached("philly")
    test = before.window
    cut = float(np.median(test["submit_time"]))
    later = test.loc[test["submit_time"] > cut, "job_id"].astype(str)
    rows = np.flatnonzero(full["job_id"].astype(str).isin(set(later)).to_numpy())
    durations = full["duration"].to_numpy(float).copy()
    old = durations[rows]
    new = old[np.random.default_rng(5).permutation(len(rows))]
    assert np.mean(new != old) > 0.9
    durations[rows] = new
    changed = full.assign(duration=durations)
    monkeypatch.setattr(adapters, "_shipped_cached", lambda kind: changed if kind == "philly" else full)
    monkeypatch.setattr(traces, "_FITS", OrderedDict())
    after = prepare(rb.trace_args(args, TRACE, "lgbm-meta"))

    assert list(after.jobs.job_id) == list(before.jobs.job_id)  # the same jobs, split and order
    moved = after.jobs.size != before.jobs.size
    assert moved.sum() > 0.4 * len(moved)  # the scheduled jobs' true sizes did change ...
    submit = before.jobs.submit_time.astype(float)
    finish_old, finish_new = submit[moved] + before.jobs.size[moved], submit[moved] + after.jobs.size[moved]
    known = submit < np.minimum(finish_old, finish_new).min()  # no changed label finished yet
    assert known.sum() > len(known) / 2 and known[moved].any()  # ... among them jobs whose own label changed
    assert np.array_equal(after.jobs.predicted[known], before.jobs.predicted[known])  # ... their p̂ did not
    # the sources robustness builds from it: exact p̂ follows the new sizes, learned p̂ does not
    src_before = rb.p_hat_sources(before.jobs.size, [0.0], [], 0, learned=("lgbm-meta", before.jobs.predicted))
    src_after = rb.p_hat_sources(after.jobs.size, [0.0], [], 0, learned=("lgbm-meta", after.jobs.predicted))
    assert not np.array_equal(src_after["noise:0"][2], src_before["noise:0"][2])
    assert np.array_equal(src_after["learned:lgbm-meta"][2][known], src_before["learned:lgbm-meta"][2][known])


def test_the_tables_place_learned_between_exact_and_the_best_control(learned_run):
    runs = pd.read_csv(learned_run / "robustness_runs.csv")
    summary = json.loads((learned_run / "robustness.json").read_text())
    assert summary["jobs"] == [TRACE] and summary["predictor"] == "lgbm-meta" and summary["scenarios"] == [f"jobs:{TRACE}"]
    (info,) = summary["learned"]
    assert info["source"] == "learned:lgbm-meta" and info["fit_jobs"] == {"train": 795, "val": 171}
    assert info["test_jobs"] == 171 == info["n_jobs"]
    realised = {(r["policy"], r["metric"]): r for r in summary["realised"]}
    assert set(realised) == {(p, m) for p in ("themis", "astraea-p") for m in METRICS}
    for (policy, metric), r in realised.items():
        mine = runs[(runs["policy"] == policy)]
        exact = mine.loc[mine["source"] == "noise:0", metric].iloc[0]
        best = mine.loc[mine["kind"] == "control", metric].min()
        learned = mine.loc[mine["kind"] == "learned", metric].iloc[0]
        assert (r["exact"], r["best_control"], r["learned"]) == pytest.approx((exact, best, learned))
        beats = exact < best * (1 - rb.BEAT_MARGIN)
        assert r["beats"] == beats
        if beats:
            assert r["share"] == pytest.approx((best - learned) / (best - exact))
        else:
            assert r["share"] is None
    # themis orders by p̂: exact p̂ beats every control in avg slowdown on this trace, so a share is given
    themis = realised[("themis", "avg_slowdown")]
    assert themis["beats"] and themis["share"] is not None
    text = (learned_run / "robustness.md").read_text()
    assert rb.markdown(summary) == text
    row = next(line for line in text.split("avg slowdown", 1)[1].splitlines() if line.startswith("| themis |"))
    assert row.rstrip().endswith(f"| {100 * themis['share']:.0f} % |")
    assert "learned: share of σ=0's gain" in text and "fitted on its train/validation part only" in text
    assert rb.NO_LEARNED not in text  # a trace has its learned p̂: no "no learned p̂" note


def test_the_share_of_the_exact_gain():
    runs = pd.DataFrame({"scenario": "s", "policy": "a", "uses_p_hat": True,
                         "source": ["noise:0", "learned:m", "constant", "random", "random"],
                         "kind": ["noise", "learned", "control", "control", "control"],
                         "sigma": [0.0, 1.7, None, None, None], **{m: [2.0, 5.0, 12.0, 10.0, 11.0] for m in METRICS}})
    (first, *_), = [[r for r in rb.realised_table(runs) if r["metric"] == "avg_slowdown"]]
    assert first["share"] == pytest.approx((10.0 - 5.0) / (10.0 - 2.0))  # against the best control run, 10
    runs.loc[0, "avg_slowdown"] = 9.8  # exact within the margin of the best control: no gain to realise
    assert [r["share"] for r in rb.realised_table(runs) if r["metric"] == "avg_slowdown"] == [None]
    assert rb.realised_table(runs[runs["kind"] != "learned"]) == []  # a scenario: nothing to place


def test_the_figure_draws_the_learned_point_at_its_sigma_equivalent(learned_run):
    from benchmark.plots import fairness_robustness_figure

    frame = pd.read_csv(learned_run / "robustness.csv")
    fig = fairness_robustness_figure(frame, title="t")
    learned = frame[frame["kind"] == "learned"].set_index("policy")
    stars = [line for ax in fig.axes for line in ax.get_lines() if line.get_marker() == "*"]
    assert len(stars) == 2 * 2  # one per policy and metric panel
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_marker() == "*":
                policy = ax.get_title().rsplit(": ", 1)[1]
                assert line.get_xdata()[0] == pytest.approx(learned.loc[policy, "sigma"])
    assert (learned_run / "robustness.png").stat().st_size > 1000


def test_the_scenarios_still_say_why_they_have_no_learned_p_hat(tmp_path):
    out = tmp_path / "out"
    assert main(["robustness", "--scenario", "venus", "--n", "200", "--venus-nodes", "8", "--jobs", "none",
                 "--noise", "0", "--controls", "random", "--policies", "themis", "--references", "none",
                 "--repeats", "1", "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out / "robustness.csv")
    assert "learned" not in set(frame["kind"]) and list(frame["source"]) == ["noise:0", "random"]
    summary = json.loads((out / "robustness.json").read_text())
    assert summary["notes"] == [f"venus: {rb.NO_LEARNED}"] and summary["learned"] == [] and summary["realised"] == []
    assert summary["predictor"] is None


# ----- bad input --------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, fragments", [
    (["--jobs", "nosuch"], ["--jobs", "unknown trace 'nosuch'"]),
    (["--jobs", "philly:nosuchvc"], ["--jobs", "no VC 'nosuchvc'"]),
    (["--jobs", f"{TRACE},{TRACE}"], ["--jobs", "given twice"]),
    (["--predictor", "nosuch"], ["--predictor", "unknown prediction method 'nosuch'"]),
    (["--predictor", "lgbm-meta,single-stage"], ["--predictor", "one predictor"]),
    (["--predictor", "oracle"], ["--predictor", "'oracle' reads the true sizes"]),
    (["--jobs", "none", "--scenario", "venus", "--predictor", "lgbm-meta"], ["--predictor", "--jobs traces only"]),
    (["--jobs", "none"], ["--scenario", "no workload"]),
    (["--jobs-nodes", "0"], ["--jobs-nodes"]),
])
def test_bad_input_exits_2_with_one_line_before_any_fit(tmp_path, capsys, monkeypatch, argv, fragments):
    from benchmark.tasks import traces

    def no_fit(*a, **k):
        raise AssertionError("a predictor was fitted before the options were checked")

    monkeypatch.setattr(traces, "fit_trace_method", no_fit)
    out = tmp_path / "out"
    exit_2_one_line(capsys, ["robustness", *ONLY_TRACE, "--policies", "themis", *argv, "--output", out], *fragments)
    assert list(tmp_path.iterdir()) == []
