"""Options the fuzzer broke: every bad value is exit 2 with one line before any work, never exit 1
(an internal error) and never exit 0 after ignoring or dropping what the user gave.

Through `benchmark.cli.main` in-process, like test_hostile_inputs.py.
"""

import pytest

from benchmark.cli import main
from cli_checks import exit_2_one_line

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def _scheduling_refused(tmp_path, capsys, extra, message):
    """`run --task scheduling` on 200 jobs with `extra` is exit 2 saying `message`, and writes nothing."""
    out = tmp_path / "O"
    exit_2_one_line(capsys, ["run", "--task", "scheduling", "--n", "200", *extra, "--no-mlflow", "--quiet",
                              "--output", out], message)
    assert not out.exists()


def _sweep_refused(tmp_path, capsys, text, *fragments):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    out = tmp_path / "never"
    line = exit_2_one_line(capsys, ["sweep", config, "--output", out, "--no-mlflow"], "bad.yaml", *fragments)
    assert not out.exists()
    return line


# ----- 1. seeds are integers >= 0 -----------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["run", "--task", "scheduling", "--n", "200", "--seed", "-1"],
    ["run", "--task", "scheduling", "--objective", "total_completion", "--sample-seed", "-3"],
    ["data", "synth", "--jobs", "10", "--seed", "-1", "--out", "OUT"],
    ["data", "build", "--jobs", "300", "--seed", "-1", "--out", "OUT"],
    ["reproduce", "astraea", "--seed", "-1", "--n", "100", "--output", "OUT"],
    ["reproduce", "atlas", "--seed", "-2", "--output", "OUT"],
    ["transfer", "--seed", "-1", "--output", "OUT"],
], ids=lambda argv: " ".join(argv[:2]))
def test_a_negative_seed_is_refused_by_the_parser(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    line = exit_2_one_line(capsys, argv, "seed", ">= 0")
    assert "internal error" not in line
    assert not (tmp_path / "OUT").exists()


def test_a_negative_seed_in_a_sweep_is_refused_before_any_cell(tmp_path, capsys):
    _sweep_refused(tmp_path, capsys, "task: scheduling\nobjectives: [total_completion]\nseeds: [0, -1]\n"
                   "mlflow: false\n", "seeds", ">= 0")


# ----- 7. a sweep refuses an unknown predictor before any cell; its YAML is read strictly --------------
def test_an_unknown_predictor_in_a_sweep_is_refused_before_any_cell(tmp_path, capsys):
    _sweep_refused(tmp_path, capsys, "task: scheduling\nobjectives: [total_completion]\npolicies: [spjf]\n"
                   "predictors: [lgbm-meta, nosuch]\nn: [200]\nmlflow: false\n",
                   "predictors", "unknown prediction method 'nosuch'")


def test_a_sweep_key_given_twice_is_refused(tmp_path, capsys):
    _sweep_refused(tmp_path, capsys, "task: scheduling\nobjectives: [total_completion]\nseeds: [0]\nseeds: [1]\n",
                   "key 'seeds' is given twice (first on line 3)", "line 4")


# ----- 8. a file store is refused before any work, by run, sweep and compare alike --------------------
@pytest.mark.parametrize("store", ["plain path", "file uri"])
def test_a_file_store_is_refused_before_any_work(tmp_path, capsys, monkeypatch, store):
    folder = tmp_path / "store"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", str(folder) if store == "plain path" else folder.as_uri())
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    out = tmp_path / "O"
    exit_2_one_line(capsys, ["run", "--task", "scheduling", "--objective", "total_completion", "--n", "200",
                              "--policies", "spjf", "--quiet", "--output", out],
                     "MLFLOW_TRACKING_URI", "no longer writes file stores")
    assert not out.exists() and not folder.exists()
    exit_2_one_line(capsys, ["compare"], "MLFLOW_TRACKING_URI", "no longer writes file stores")
    config = tmp_path / "s.yaml"
    config.write_text("task: scheduling\nobjectives: [total_completion]\npolicies: [spjf]\nn: [200]\n")
    exit_2_one_line(capsys, ["sweep", config, "--quiet", "--output", out], "no longer writes file stores")
    assert not out.exists() and not folder.exists()


def test_an_allowed_file_store_is_not_refused_by_the_check(tmp_path, monkeypatch):
    from benchmark.tracking import check_store_kind

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    check_store_kind(str(tmp_path / "store"))
    check_store_kind(f"sqlite:///{tmp_path / 'mlflow.db'}")


# ----- 3. --tenant-weights: every tenant once, known, with a finite weight in [1e-9, 1e9] ----------------
def _fairness_jobs(tmp_path):
    import pandas as pd

    path = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": [f"j{i}" for i in range(12)], "submit_time": [10.0 * i for i in range(12)],
                  "duration": [100.0 + 7 * i for i in range(12)], "gpus": [1, 2] * 6,
                  "tenant": ["LS", "BE", "Burstable"] * 4}).to_csv(path, index=False)
    return path


WEIGHTS = [
    ("w.json", "[1, 2]", "must be a JSON object"),
    ("w.json", '{"LS": 1, "BE": null, "Burstable": 1}', "tenant 'BE' weight must be a finite number, got None"),
    ("w.json", '{"LS": 1, "BE": true, "Burstable": 1}', "tenant 'BE' weight must be a finite number, got True"),
    ("w.json", '{"LS": 1, "BE": "2", "Burstable": 1}', "tenant 'BE' weight must be a finite number"),
    ("w.json", '{"LS": 1, "BE": 2, "LS": 3, "Burstable": 1}', "key 'LS' is given twice"),
    ("w.json", '{"LS": 1, "BE": 2, "Burstable": 1e-320}', "tenant 'Burstable' weight must be a number from 1e-09 to 1e+09"),
    ("w.json", '{"LS": 1, "BE": 2, "Burstable": 1e300}', "from 1e-09 to 1e+09"),
    ("w.json", '{"LS": 1, "BE": 2, "Burstable": 1, "Typo": 3}', "tenant 'Typo' is not a tenant of the jobs (they are: BE, Burstable, LS)"),
    ("w.csv", "tenant,weight\nLS,1\nBE,2\nBurstable,1\nLS,3\n", "tenant 'LS' is given twice (line 5)"),
    ("w.csv", "tenant,weight\nLS,1\nBE,2\nBurstable,1\nTypo,3\n", "tenant 'Typo' is not a tenant of the jobs"),
    ("w.csv", "tenant,weight,note\nLS,1,a\nBE,2,b\nBurstable,1,c\n", "has columns other than tenant,weight: note"),
    ("w.csv", "tenant,weight\nLS,1\nBE,true\nBurstable,1\n", "tenant 'BE' weight must be a finite number, got 'true' (line 3)"),
    ("w.csv", "tenant,weight\nLS,1\nBE,nan\nBurstable,1\n", "tenant 'BE' weight must be a finite number"),
    ("w.csv", "tenant,weight\nLS,1\nBE,0\nBurstable,1\n", "from 1e-09 to 1e+09"),
]


@pytest.mark.parametrize("name, text, message", WEIGHTS, ids=[w[1][-24:] for w in WEIGHTS])
def test_bad_tenant_weights_are_exit_2_naming_the_file(tmp_path, capsys, name, text, message):
    weights = tmp_path / name
    weights.write_text(text)
    out = tmp_path / "O"
    exit_2_one_line(capsys, ["run", "--task", "fairness", "--jobs", _fairness_jobs(tmp_path), "--nodes", "2",
                              "--tenant-weights", weights, "--no-mlflow", "--quiet", "--output", out],
                     str(weights), message)
    assert not out.exists()


def test_good_tenant_weights_with_a_blank_line_still_run(tmp_path):
    import json

    weights = tmp_path / "w.csv"
    weights.write_text("tenant,weight\nLS,1\n\nBE,2.5\nBurstable,1e-9\n")
    out = tmp_path / "O"
    assert main(["run", "--task", "fairness", "--jobs", str(_fairness_jobs(tmp_path)), "--nodes", "2", "--policies",
                 "fifo", "--tenant-weights", str(weights), "--no-mlflow", "--quiet", "--output", str(out)]) == 0
    assert json.loads((out / "results.json").read_text())["options"]["tenant_weights"] == {
        "BE": 2.5, "Burstable": 1e-9, "LS": 1.0}


# ----- 2. a cluster beyond the simulator's bound is refused before any work ----------------------------
@pytest.mark.parametrize("extra, message", [
    (["--nodes", "100000000"], "--nodes: 100,000,000 nodes is more than the simulator's bound of 100,000"),
    (["--nodes", "100001"], "bound of 100,000"),
    (["--gpus-per-node", "20000000"], "--gpus-per-node: 20,000,000 GPUs (1 x 20,000,000) is more than"),
    (["--nodes", "100000", "--gpus-per-node", "101"], "10,100,000 GPUs (100,000 x 101) is more than the simulator's "
                                                       "bound of 10,000,000"),
    (["--gpus-per-node", "0"], "--gpus-per-node must be >= 1, got 0"),
])
def test_a_cluster_beyond_the_bound_is_exit_2_before_any_work(tmp_path, capsys, monkeypatch, extra, message):
    import benchmark.tasks.fairness as fairness

    def no_work(*args, **kwargs):
        raise AssertionError("jobs were read before the cluster size was checked")

    monkeypatch.setattr(fairness, "_load", no_work)
    out = tmp_path / "O"
    exit_2_one_line(capsys, ["run", "--task", "fairness", "--jobs", "openb", "--n", "200", "--policies", "astraea",
                              *extra, "--no-mlflow", "--quiet", "--output", out], message)
    assert not out.exists()


@pytest.mark.parametrize("text, message", [
    ("nodes: [4, 100000000]\n", "nodes: at most 100,000 nodes"),
    ("nodes: [4]\noptions: {gpus-per-node: 20000000}\n", "bound of 10,000,000"),
])
def test_a_sweep_cluster_beyond_the_bound_is_refused_before_any_cell(tmp_path, capsys, text, message):
    _sweep_refused(tmp_path, capsys, "task: fairness\njobs: openb\npolicies: [astraea]\nmlflow: false\n" + text, message)


# ----- 4. options that the chosen objective, policies or source would not use are refused -------------
@pytest.mark.parametrize("extra, message", [
    (["--objective", "total_completion", "--machines", "5"], "--machines: --machines applies to --objective makespan only"),
    (["--objective", "max_stretch", "--machines", "5,10"], "--machines applies to --objective makespan only"),
    (["--objective", "makespan", "--prr-lambda", "0.3"], "--prr-lambda: --prr-lambda sets the λ of policy prr, which is "
                                                          "not a makespan policy"),
    (["--objective", "total_completion", "--policies", "spjf,srpt", "--prr-lambda", "0.3"], "which --policies does not "
                                                                                             "include"),
    # given with its default value, or abbreviated, it is given all the same
    (["--objective", "total_completion", "--policies", "spjf", "--prr-lambda", "0.7"], "which --policies does not include"),
    (["--objective", "total_completion", "--policies", "spjf", "--prr=0.7"], "which --policies does not include"),
    (["--objective", "total_completion", "--lease", "900"], "--lease: --lease is not an option of --task scheduling"),
])
def test_an_option_the_objective_does_not_use_is_refused(tmp_path, capsys, extra, message):
    _scheduling_refused(tmp_path, capsys, extra, message)


def test_prr_lambda_with_prr_in_the_policies_is_accepted(tmp_path):
    out = tmp_path / "O"
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--n", "200", "--policies",
                 "spjf,prr", "--prr-lambda", "0.3", "--no-mlflow", "--quiet", "--output", str(out)]) == 0


@pytest.mark.parametrize("text, message", [
    ("objectives: [total_completion]\nmachines: [5]\n", "machines: `benchmark run` rejects it: --machines applies to "
                                                         "--objective makespan only"),
    ("objectives: [makespan]\noptions: {prr-lambda: 0.3}\n", "not a makespan policy"),
])
def test_a_sweep_axis_the_objective_does_not_use_is_refused(tmp_path, capsys, text, message):
    _sweep_refused(tmp_path, capsys, "task: scheduling\nn: [200]\nmlflow: false\n" + text, message)


@pytest.mark.parametrize("extra", [["--jobs", "300"], ["--seed", "3"]])
def test_data_build_pai_refuses_the_synthetic_options(tmp_path, capsys, extra):
    raw = tmp_path / "raw"
    raw.mkdir()
    out = tmp_path / "DS"
    exit_2_one_line(capsys, ["data", "build", "--source", "pai", "--raw-dir", raw, *extra, "--quiet", "--out", out],
                     f"{extra[0]}: {extra[0]} is only for --source synthetic")
    assert not out.exists()


# ----- 5. list options: an empty item or an item given twice is exit 2 naming the option ----------------
@pytest.mark.parametrize("extra, message", [
    (["--objective", "makespan", "--machines", "5,5"], "--machines: '5' is given twice in '5,5'"),
    (["--objective", "makespan", "--machines", ""], "--machines: no value given"),
    (["--objective", "makespan", "--machines", "5,"], "--machines: an empty item in '5,'"),
    (["--objective", "total_completion", "--noise", "1,,2"], "--noise: an empty item in '1,,2'"),
    (["--objective", "total_completion", "--noise", "0,0"], "--noise: '0' is given twice"),
    (["--objective", "total_completion", "--noise", "0,0.0"], "--noise: '0.0' is given twice"),
    (["--objective", "total_completion", "--noise", "0", "--policies", "spjf,spjf"],
     "--policies: policy 'spjf' is given twice in 'spjf,spjf'"),
    (["--objective", "total_completion", "--noise", "0", "--policies", "spjf,,srpt"], "--policies: an empty item"),
    (["--objective", "total_completion", "--noise", "0", "--policies", ""], "--policies: no value given"),
    (["--objective", "total_completion", "--predictor", "constant,constant"], "--predictor: 'constant' is given twice"),
])
def test_a_list_option_with_an_empty_or_repeated_item_is_refused(tmp_path, capsys, extra, message):
    _scheduling_refused(tmp_path, capsys, extra, message)


@pytest.mark.parametrize("extra, message", [
    (["--methods", "constant,constant"], "--methods: 'constant' is given twice"),
    (["--methods", ""], "--methods: no value given"),
    (["--predictor", "constant,,oracle"], "--predictor: an empty item"),
])
def test_prediction_methods_with_an_empty_or_repeated_item_are_refused(tmp_path, capsys, extra, message):
    out = tmp_path / "O"
    exit_2_one_line(capsys, ["run", "--task", "prediction", *extra, "--no-mlflow", "--quiet", "--output", out],
                     message)
    assert not out.exists()


def test_fairness_policies_given_twice_are_refused(tmp_path, capsys):
    exit_2_one_line(capsys, ["run", "--task", "fairness", "--jobs", "openb", "--n", "200", "--policies",
                              "astraea,fifo,astraea", "--no-mlflow", "--quiet", "--output", tmp_path / "O"],
                     "--policies: policy 'astraea' is given twice")


@pytest.mark.parametrize("clusters, message", [
    ("cluster01,cluster01", "'cluster01' is given twice"),
    ("1,cluster01", "cluster 'cluster01' is given twice"),
    ("cluster01,", "an empty item"),
])
def test_transfer_clusters_given_twice_are_refused(tmp_path, capsys, clusters, message):
    out = tmp_path / "O"
    exit_2_one_line(capsys, ["transfer", "--trace", "elasticflow", "--clusters", clusters, "--quiet",
                              "--output", out], "--clusters", message)
    assert not out.exists()


# ----- 6. σ is bounded: p̂ = p·exp(σZ) never overflows to inf or underflows to 0 ------------------------
@pytest.mark.parametrize("task, noise, message", [
    ("scheduling", "1e308", "'1e308' is too large: a noise level σ is at most 10"),
    ("scheduling", "0,11", "'11' is too large: a noise level σ is at most 10"),
    ("scheduling", "nan", "not a number: 'nan'"),
    ("fairness", "1e308", "'1e308' is too large: a noise level σ is at most 10")])
def test_a_noise_level_beyond_the_bound_is_refused(tmp_path, capsys, monkeypatch, task, noise, message):
    import warnings

    extra = (["--objective", "total_completion", "--n", "200", "--policies", "spjf"] if task == "scheduling"
             else ["--jobs", "openb", "--n", "200", "--policies", "astraea-p"])
    out = tmp_path / "O"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning on the way either
        exit_2_one_line(capsys, ["run", "--task", task, *extra, "--noise", noise, "--no-mlflow", "--quiet",
                                  "--output", out], f"--noise: {message}")
    assert not out.exists()


def test_the_largest_noise_level_gives_finite_positive_p_hat():
    import numpy as np

    from benchmark.tasks.inputs import MAX_NOISE, noise_predictions

    size = np.array([1e-3, 1.0, 1e12] * 100_000)
    (p_hat,) = noise_predictions(size, [MAX_NOISE], seed=0).values()
    assert np.isfinite(p_hat).all() and (p_hat > 1e-300).all() and np.isfinite(p_hat.sum())


def test_a_sweep_noise_level_beyond_the_bound_is_refused(tmp_path, capsys):
    _sweep_refused(tmp_path, capsys, "task: scheduling\nobjectives: [total_completion]\npolicies: [spjf]\n"
                   "noise: [0, 1.0e+308]\nn: [200]\nmlflow: false\n", "noise", "from 0 to 10")


def test_a_sweep_noise_level_yaml_reads_as_text_says_the_range_and_why(tmp_path, capsys):
    # `1e308` without a dot is text to YAML: the message said "a finite number" where the limit is 10
    _sweep_refused(tmp_path, capsys, "task: scheduling\nobjectives: [total_completion]\npolicies: [spjf]\n"
                   "noise: [0, 1e308]\nn: [200]\nmlflow: false\n", "noise", "from 0 to 10", "without a dot")


@pytest.mark.parametrize("option", ["--venus-nodes", "--philly-nodes", "--sizes"])
def test_reproduce_astraea_refuses_a_cluster_beyond_the_bound(tmp_path, capsys, option):
    out = tmp_path / "O"
    exit_2_one_line(capsys, ["reproduce", "astraea", option, "100000000", "--n", "100", "--output", out],
                     f"{option}: at most 100,000 nodes")
    assert not out.exists()
