"""`benchmark robustness --task fairness`: the p̂ sources (noise levels and no-information controls),
the rows, the figure, the README block and the refusals (benchmark.commands.robustness, benchmark.experiments.robustness)."""

import argparse
import json
import math

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from benchmark.experiments import robustness as rb
from cli_checks import exit_2_one_line
from schedulers.policy import get_policy, policy_names

SMALL = ["--scenario", "venus", "--n", "200", "--venus-nodes", "8", "--jobs", "none"]  # 200 Venus-like jobs on 64 GPUs: Python, < 1 s a run; no trace (test_robustness_learned.py)
METRICS = ("avg_jct", "avg_slowdown", "p90_short_jct", "sharing_loss_jobs", "tenant_loss_intervals")


def _sizes(n=500, seed=3):
    return np.exp(np.random.default_rng(seed).normal(7.0, 2.0, n))


# ----- the p̂ sources ---------------------------------------------------------------------------------
def test_the_constant_control_is_the_median_true_size_for_every_job():
    size = _sizes()
    constant = rb.control_predictions(size, ["constant"], seed=0)["constant"]
    assert constant.shape == size.shape and np.all(constant == np.median(size))


def test_the_permuted_control_is_a_seeded_permutation_of_the_true_sizes():
    size = _sizes()
    permuted = rb.control_predictions(size, ["permuted"], seed=0)["permuted"]
    assert np.array_equal(np.sort(permuted), np.sort(size))  # the same sizes ...
    assert np.mean(permuted == size) < 0.02  # ... on other jobs
    assert abs(np.corrcoef(np.log(permuted), np.log(size))[0, 1]) < 0.15
    assert np.array_equal(permuted, rb.control_predictions(size, ["permuted"], seed=0)["permuted"])
    assert not np.array_equal(permuted, rb.control_predictions(size, ["permuted"], seed=1)["permuted"])


def test_the_random_control_draws_the_same_whatever_the_sizes_are():
    size = _sizes()
    other = np.random.default_rng(9).permutation(size) * np.exp(np.random.default_rng(8).normal(0, 0.01, len(size)))
    other *= np.median(size) / np.median(other)  # other sizes, same median
    a = rb.control_predictions(size, ["random"], seed=0)["random"]
    b = rb.control_predictions(other, ["random"], seed=0)["random"]
    assert np.array_equal(a, b)
    scaled = rb.control_predictions(size * 7.0, ["random"], seed=0)["random"]  # only the median scales it
    assert np.allclose(scaled, 7.0 * a)
    z = np.log(a / np.median(size)) / rb.RANDOM_SIGMA
    assert abs(z.mean()) < 0.15 and abs(z.std() - 1.0) < 0.1  # median·exp(2Z), Z standard normal
    assert abs(np.corrcoef(np.log(a), np.log(size))[0, 1]) < 0.15


def test_sigma_zero_is_the_true_sizes_and_sources_come_in_order():
    size = _sizes()
    sources = rb.p_hat_sources(size, [0.0, 0.5, 2.0], ["constant", "random", "permuted"], seed=0)
    assert list(sources) == ["noise:0", "noise:0.5", "noise:2", "constant", "random", "permuted"]
    kind, sigma, exact = sources["noise:0"]
    assert (kind, sigma) == ("noise", 0.0) and np.array_equal(exact, size)
    # the existing seeded noise model: one Z per job shared by every σ
    z = np.log(sources["noise:0.5"][2] / size) / 0.5
    assert np.allclose(np.log(sources["noise:2"][2] / size) / 2.0, z)
    assert [sources[c][0] for c in ("constant", "random", "permuted")] == ["control"] * 3


def test_p90_of_short_jobs_counts_only_jobs_shorter_than_a_lease():
    table = pd.DataFrame({"duration": [10.0, 899.0, 900.0, 5000.0], "jct": [100.0, 200.0, 1e6, 1e6]})
    p90, n = rb.short_job_p90(table, 900.0)
    assert n == 2 and p90 == pytest.approx(190.0)
    assert math.isnan(rb.short_job_p90(table, 5.0)[0])


# ----- the runs ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("robustness") / "out"
    assert main(["robustness", *SMALL, "--noise", "0,1", "--output", str(out), "--quiet"]) == 0
    return out


def test_one_row_per_policy_and_source_with_finite_metrics(small_run):
    frame = pd.read_csv(small_run / "robustness.csv")
    assert list(frame.columns) == list(rb.COLUMNS)
    predictive = [p for p in policy_names("cluster") if get_policy(p, "cluster").needs_prediction]  # by the flag
    assert predictive and set(frame.loc[frame["uses_p_hat"], "policy"]) == set(predictive)
    sources = ["noise:0", "noise:1", "constant", "random", "permuted"]
    for policy in predictive:
        assert list(frame.loc[frame["policy"] == policy, "source"]) == sources
    refs = frame[~frame["uses_p_hat"]]
    assert list(refs["policy"]) == ["astraea", "srtf-oracle"] and list(refs["source"]) == ["none", "none"]
    assert len(frame) == len(predictive) * len(sources) + 2
    assert (frame["scenario"] == "venus").all() and (frame["n_jobs"] == 200).all()
    assert np.isfinite(frame[list(METRICS)].to_numpy(float)).all()
    assert (frame["avg_slowdown"] >= 1).all() and frame["sharing_loss_jobs"].between(0, 1).all()
    assert (frame["short_jobs"] > 0).all()


def test_rows_are_those_of_benchmark_run_on_the_same_jobs_and_noise(small_run, tmp_path):
    """The curve's points are the fairness task's own runs: same jobs, same noise draw, same metrics."""
    out = tmp_path / "run"
    assert main(["run", "--task", "fairness", "--scenario", "venus", "--n", "200", "--nodes", "8", "--noise", "1",
                 "--policies", "astraea,themis", "--output", str(out), "--quiet", "--no-mlflow"]) == 0
    task = pd.read_csv(out / "results.csv").set_index("policy")
    runs = pd.read_csv(small_run / "robustness_runs.csv")
    for policy, source in (("themis", "noise:1"), ("astraea", "none")):
        row = runs[(runs["policy"] == policy) & (runs["source"] == source) & (runs["repeat"] == 0)].iloc[0]
        for metric in ("avg_jct", "avg_slowdown", "sharing_loss_jobs", "tenant_loss_intervals"):
            assert row[metric] == pytest.approx(task.loc[policy, metric], rel=1e-12), (policy, metric)
        jobs = pd.read_parquet(out / "jobs" / f"{policy}.parquet")
        jct = (jobs["completion_time"] - jobs["submit_time"]).to_numpy()
        short = jct[jobs["run_time"].to_numpy() < 900.0]
        assert row["short_jobs"] == len(short) and row["p90_short_jct"] == pytest.approx(np.percentile(short, 90))


def test_each_row_averages_its_draws_and_sources_without_a_draw_run_once(small_run):
    frame = pd.read_csv(small_run / "robustness.csv")
    runs = pd.read_csv(small_run / "robustness_runs.csv")
    assert list(runs.columns) == list(rb.RUN_COLUMNS)
    repeats = dict(zip(frame["source"], frame["repeats"]))
    assert repeats == {"noise:0": 1, "noise:1": 3, "constant": 1, "random": 3, "permuted": 3, "none": 1}
    assert len(runs) == frame["repeats"].sum()
    for _, row in frame.iterrows():
        mine = runs[(runs["scenario"] == row["scenario"]) & (runs["policy"] == row["policy"]) & (runs["source"] == row["source"])]
        assert sorted(mine["repeat"]) == list(range(row["repeats"]))
        for metric in METRICS:
            assert row[metric] == pytest.approx(mine[metric].mean())
            # through the CSV a zero standard deviation may read 1e-12
            assert row[f"{metric}_std"] == pytest.approx(mine[metric].std(ddof=0), rel=1e-9, abs=1e-6)
    themis = runs[(runs["policy"] == "themis") & (runs["source"] == "random")]
    assert themis["avg_slowdown"].nunique() == 3  # independent draws, not one draw three times


def test_a_later_draw_redraws_only_the_sources_that_depend_on_it():
    size = _sizes()
    first = rb.p_hat_sources(size, [0.0, 1.0], list(rb.CONTROLS), seed=0)
    second = rb.p_hat_sources(size, [0.0, 1.0], list(rb.CONTROLS), seed=0, draw=1)
    assert list(second) == ["noise:1", "random", "permuted"]
    for name in second:
        assert not np.array_equal(first[name][2], second[name][2])
    assert np.array_equal(np.sort(second["permuted"][2]), np.sort(size))
    from benchmark.tasks.inputs import noise_predictions

    assert np.array_equal(first["noise:1"][2], noise_predictions(size, [1.0], 0)["noise:1"])  # draw 0 = `run --noise`


def test_the_figure_the_markdown_and_the_json_are_written(small_run):
    for name in ("robustness.png", "robustness.svg", "robustness.md", "robustness.json", "robustness_runs.csv"):
        assert (small_run / name).stat().st_size > 1000, name
    assert (small_run / "robustness.png").read_bytes()[:4] == b"\x89PNG"
    text = (small_run / "robustness.md").read_text()
    summary = json.loads((small_run / "robustness.json").read_text())
    assert rb.markdown(summary) == text  # the table is regenerated from the saved rows
    assert "no learned p̂ for a scenario" in text and "| themis |" in text and "| astraea (no p̂) |" in text
    frame = pd.read_csv(small_run / "robustness.csv")
    themis = frame[frame["policy"] == "themis"].set_index("source")
    row = next(line for line in text.split("sharing-loss jobs", 1)[1].splitlines() if line.startswith("| themis |"))
    assert f"{100 * themis.loc['noise:0', 'sharing_loss_jobs']:.1f} %" in row


def test_a_policy_that_ignores_p_hat_scores_the_same_under_every_source():
    args = argparse.Namespace(seed=0, n=200, venus_nodes=8, philly_nodes=64)
    run_args = rb.scenario_args(args, "venus")
    from benchmark.tasks.fairness import prepare

    prep = prepare(run_args)
    sources = rb.p_hat_sources(prep.jobs.size, [0.0, 2.0], list(rb.CONTROLS), seed=0)
    rows = rb.simulate_sources(run_args, prep, ["astraea", "astraea-p"], sources, scenario="venus")
    blind = pd.DataFrame([r for r in rows if r["policy"] == "astraea"])
    assert len(blind) == 5 and (blind[list(METRICS)].nunique() == 1).all()
    reads = pd.DataFrame([r for r in rows if r["policy"] == "astraea-p"])  # the check is not vacuous
    assert reads["avg_slowdown"].nunique() > 1


def test_verdicts_compare_exact_p_hat_with_the_best_control_beyond_the_margin():
    frame = pd.DataFrame({
        "scenario": ["s"] * 8, "policy": ["a", "a", "a", "b", "b", "c", "c", "c"], "uses_p_hat": [True] * 8,
        "source": ["noise:0", "constant", "random", "noise:0", "random", "noise:0", "noise:1", "permuted"],
        "kind": ["noise", "control", "control", "noise", "control", "noise", "noise", "control"],
        "sigma": [0.0, None, None, 0.0, None, 0.0, 1.0, None], "avg_slowdown": [2.0, 3.0, 2.5, 4.0, 3.9, 3.0, 1.0, 3.1]})
    v = rb.verdicts(frame, "avg_slowdown")
    assert v[("s", "a")] == {"exact": 2.0, "best_control": 2.5, "gap": pytest.approx(-0.2), "beats": True}
    assert v[("s", "b")]["beats"] is False and v[("s", "b")]["gap"] > 0
    assert v[("s", "c")]["gap"] == pytest.approx(3.0 / 3.1 - 1) and v[("s", "c")]["beats"] is False  # within the margin
    assert rb.BEAT_MARGIN == 0.05
    # every draw of a control counts: one random draw as good as exact p̂ is enough to doubt the gain
    draws = pd.DataFrame({"scenario": "s", "policy": "d", "uses_p_hat": True, "source": ["noise:0"] + ["random"] * 3,
                          "kind": ["noise"] + ["control"] * 3, "sigma": [0.0, None, None, None],
                          "avg_slowdown": [2.0, 3.0, 2.05, 3.0]})
    d = rb.verdicts(draws, "avg_slowdown")[("s", "d")]
    assert d["best_control"] == 2.05 and d["beats"] is False


def test_readme_block_is_rewritten_between_its_markers(tmp_path, small_run):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{rb.START}\nold\n{rb.END}\ntail\n")
    out = tmp_path / "out"
    assert main(["robustness", *SMALL, "--noise", "0", "--controls", "random", "--policies", "astraea-p",
                 "--references", "astraea", "--output", str(out), "--readme", str(readme), "--quiet"]) == 0
    text = readme.read_text()
    assert text.startswith(f"# x\n{rb.START}\nProduced by `benchmark robustness") and text.endswith(f"{rb.END}\ntail\n")
    assert "old" not in text and "avg slowdown" in text and "avg JCT" not in text  # the block: the two headline metrics
    assert "| astraea-p |" in text and "| themis |" not in text


# ----- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, fragments", [
    (["--controls", "constant,shuffled"], ["--controls", "unknown control 'shuffled'"]),
    (["--noise", "0,-0.5"], ["--noise", "-0.5"]),
    (["--noise", "0,,1"], ["--noise", "empty item"]),
    (["--scenario", "venus,helios"], ["--scenario", "unknown scenario 'helios'"]),
    (["--policies", "astraea"], ["--policies", "'astraea' reads no p̂"]),
    (["--references", "themis"], ["--references", "'themis' reads p̂"]),
    (["--policies", "nosuch"], ["nosuch"]),
    (["--philly-nodes", "0"], ["--philly-nodes"]),
    (["--repeats", "0"], ["--repeats"]),
])
def test_bad_input_exits_2_with_one_line_before_any_work(tmp_path, capsys, argv, fragments):
    out = tmp_path / "out"
    exit_2_one_line(capsys, ["robustness", *SMALL, *argv, "--output", out], *fragments)
    assert list(tmp_path.iterdir()) == []


def test_a_readme_without_the_block_is_refused_before_any_work(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# no block\n")
    exit_2_one_line(capsys, ["robustness", *SMALL, "--output", tmp_path / "out", "--readme", readme],
                    "--readme", f"no {rb.START}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"] and readme.read_text() == "# no block\n"
