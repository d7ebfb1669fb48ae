"""`benchmark sweep`: config validation, the cross product, local vs Dask tables, failed cells, MLflow.

The jobs are the 4-job hand case of test_cli_scheduling (SRPT ΣC = 15, FIFO ΣC = 20), so every
cell's values are known exactly; seeds only change the noise draw Z.
"""

import json

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from benchmark.sweeps import cell_count, cells, load_config

# the cells' figures are placeholders (looked at by no test here); the command's own are drawn (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("cell_figures_unrendered"), pytest.mark.long_file]

JOBS = {"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2], "duration": [3, 1, 2, 1]}

TINY = """\
task: scheduling
jobs: jobs.csv
objectives: [total_completion]
policies: [fifo, sjf, srpt, spjf, rr]
noise: [0, 1]
seeds: [0, 1]
mlflow: false
"""


def _write(folder, text, name="sweep.yaml"):
    path = folder / name
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny sweep (4 cells × 5 policies) run once with the local executor."""
    folder = tmp_path_factory.mktemp("tiny")
    pd.DataFrame(JOBS).to_csv(folder / "jobs.csv", index=False)
    config = _write(folder, TINY)
    out = folder / "local"
    with pytest.MonkeyPatch.context() as patch:  # a store of its own, which `mlflow: false` must leave unmade
        patch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{folder / 'store' / 'mlflow.db'}")
        assert main(["sweep", str(config), "--executor", "local", "--workers", "2", "--output", str(out),
                     "--quiet"]) == 0
    return config, out, pd.read_parquet(out / "sweep.parquet")


# ----- config ---------------------------------------------------------------------------------
BAD = [
    ("unknown key", "task: scheduling\npolices: [fifo]\n", "polices"),
    ("missing task", "objectives: [makespan]\n", "task"),
    ("unknown task", "task: juggling\n", "task"),
    ("jobs and data", "task: scheduling\njobs: a.csv\ndata: ds\n", "jobs"),
    ("empty list", "task: scheduling\nseeds: []\n", "seeds"),
    ("wrong type", "task: scheduling\nnoise: [0, fast]\n", "noise"),
    ("bool is no int", "task: scheduling\nn: [true]\n", "n"),
    ("negative noise", "task: scheduling\nnoise: [-1]\n", "noise"),
    ("duplicate seed", "task: scheduling\nseeds: [1, 1]\n", "seeds"),
    ("unknown objective", "task: scheduling\nobjectives: [latency]\n", "objectives"),
    ("mixed policy lists", "task: scheduling\npolicies: [fifo, [srpt]]\n", "policies"),
    ("no objectives", "task: scheduling\npolicies: [fifo]\n", "objectives"),
    ("option run rejects", "task: scheduling\nobjectives: makespan\noptions: {bogus-flag: 3}\n", "options"),
    ("managed option", "task: scheduling\noptions: {seed: 3}\n", "options"),
    ("mlflow not bool", "task: scheduling\nmlflow: maybe\n", "mlflow"),
    ("axis the task ignores", "task: scheduling\nobjectives: makespan\nnodes: [4, 8]\n", "--nodes is not an option"),
    # lease 900 is the run parser's default, so only the config check can catch it on a scheduling sweep
    ("lease off fairness", "task: scheduling\nobjectives: makespan\nlease: [900]\n", "axis of task fairness"),
    ("lease not positive", "task: fairness\nlease: [300, 0]\n", "lease"),
    ("lease not a number", "task: fairness\nlease: [long]\n", "lease"),
    ("lease as an option", "task: fairness\noptions: {lease: 300}\n", "options"),
    ("unknown policy parameter", "task: scheduling\nobjectives: total_completion\npolicies: ['spjf,prr(lamda=0.5)']\n",
     "policies: `benchmark run` rejects it: policy 'prr' has no parameter 'lamda'"),
    ("unknown policy", "task: scheduling\nobjectives: total_completion\npolicies: [spjf, fastest]\n", "unknown policy 'fastest'"),
    ("policy of another kind", "task: fairness\npolicies: [astraea, srpt]\n", "unknown policy 'srpt'"),
    ("not a mapping", "- task\n- scheduling\n", "mapping"),
    ("bad yaml", "task: [scheduling\n", "YAML"),
    ("max_cells not an int", "task: scheduling\nobjectives: makespan\nmax_cells: lots\n", "max_cells"),
    ("max_cells zero", "task: scheduling\nobjectives: makespan\nmax_cells: 0\n", "max_cells"),
    ("over its own max_cells", "task: scheduling\nobjectives: makespan\nseeds: [1, 2, 3]\nmax_cells: 2\n",
     "3 cells"),
]


@pytest.mark.parametrize("label,text,word", BAD, ids=[b[0] for b in BAD])
def test_bad_config_exits_2_with_one_line(tmp_path, capsys, label, text, word):
    config = _write(tmp_path, text, name="bad.yaml")
    out = tmp_path / "never"
    assert main(["sweep", str(config), "--output", str(out), "--no-mlflow"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:"), err
    assert "bad.yaml" in err[0] and word in err[0] and "Traceback" not in err[0]
    assert not out.exists()


def test_missing_config_and_bad_options_exit_2(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "nope.yaml"), "--output", str(tmp_path / "o")]) == 2
    config = _write(tmp_path, "task: scheduling\n")
    assert main(["sweep", str(config), "--address", "tcp://127.0.0.1:1", "--output", str(tmp_path / "o")]) == 2
    assert main(["sweep", str(config), "--workers", "0", "--output", str(tmp_path / "o")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 3 and "nope.yaml" in lines[0] and "--executor dask" in lines[1] and "--workers" in lines[2]
    assert not (tmp_path / "o").exists()


def test_non_utf8_config_exits_2_with_one_line(tmp_path, capsys):
    config = tmp_path / "latin1.yaml"
    config.write_bytes("task: scheduling\nobjectives: makespan\n# caf\u00e9\n".encode("latin-1"))
    assert main(["sweep", str(config), "--output", str(tmp_path / "o"), "--no-mlflow"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {config}: not UTF-8") and "0xe9" in line
    assert not (tmp_path / "o").exists()


def test_cell_count_is_bounded_before_anything_is_expanded(tmp_path, capsys, monkeypatch):
    from benchmark import sweeps
    from benchmark.sweeps import config as sweep_config

    assert sweeps.DEFAULT_MAX_CELLS == 10_000
    seeds = ", ".join(str(i) for i in range(500))
    sizes = ", ".join(str(i) for i in range(1, 401))
    big = _write(tmp_path, f"task: scheduling\nobjectives: makespan\nseeds: [{seeds}]\nn: [{sizes}]\n", "big.yaml")
    assert sweeps.cell_count(load_config(big)) == 200_000
    monkeypatch.setattr(sweep_config, "_check_argv", lambda *a: pytest.fail("expanded a refused sweep"))
    assert main(["sweep", str(big), "--output", str(tmp_path / "o"), "--no-mlflow"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "200,000 cells (500 x 400)" in line and "10,000" in line and "--max-cells" in line
    assert not (tmp_path / "o").exists()
    # the limit is an option and a config key; the option wins
    small = _write(tmp_path, "task: scheduling\nobjectives: makespan\nseeds: [1, 2, 3]\nmax_cells: 2\n", "s.yaml")
    assert main(["sweep", str(small), "--max-cells", "1", "--output", str(tmp_path / "o"), "--no-mlflow"]) == 2
    assert "more than the limit of 1:" in capsys.readouterr().err
    assert main(["sweep", str(small), "--max-cells", "0", "--output", str(tmp_path / "o"), "--no-mlflow"]) == 2
    assert "argument --max-cells: a number of cells must be an integer >= 1" in capsys.readouterr().err
    monkeypatch.undo()
    from dataclasses import replace

    assert len(cells(replace(load_config(small), max_cells=3))) == 3


# ----- the cross product ----------------------------------------------------------------------
def test_cross_product_size_and_argv(tmp_path):
    config = load_config(_write(tmp_path, """\
task: scheduling
jobs: [traces/a.csv, /abs/b.parquet]
objectives: [total_completion, max_stretch]
policies: [[fifo, prr], ["spjf,prr"]]
noise: [0, 0.5, 2]
seeds: [0, 1]
n: 100
options: {prr-lambda: 0.5}
mlflow: false
"""))
    assert config.mlflow is False and config.policies == ("fifo,prr", "spjf,prr")
    grid = cells(config)
    assert len(grid) == 2 * 2 * 2 * 3 * 2 * 1  # datasets × objectives × policy lists × σ × seeds × n
    assert len({c.id for c in grid}) == len(grid) and [c.index for c in grid] == list(range(len(grid)))
    first = grid[0]
    assert first.argv == ("run", "--task", "scheduling", "--jobs", str(tmp_path / "traces" / "a.csv"),
                          "--objective", "total_completion", "--policies", "fifo,prr", "--noise", "0.0",
                          "--seed", "0", "--n", "100", "--prr-lambda", "0.5")
    assert first.id == "0000-a-total_completion-p0-noise0-seed0"
    # machines: a makespan axis (refused with another objective, tests/benchmark/test_option_checks.py)
    makespan = cells(load_config(_write(tmp_path, "task: scheduling\nobjectives: makespan\nmachines: [5, [10, 20]]\n",
                                        "m.yaml")))
    assert [c.machines for c in makespan] == ["5", "10,20"] and makespan[0].id == "0000-m5"
    assert makespan[1].argv == ("run", "--task", "scheduling", "--objective", "makespan", "--machines", "10,20")
    assert {c.dataset for c in grid} == {"traces/a.csv", "/abs/b.parquet"}
    assert sorted({c.noise for c in grid}) == [0.0, 0.5, 2.0]
    # predictors and noise are one axis (the source of p̂), not crossed with each other
    both = load_config(_write(tmp_path, "task: scheduling\nobjectives: max_stretch\npredictors: [lgbm-meta, oracle]\nnoise: [0, 1]\n", "b.yaml"))
    sources = [(c.predictor, c.noise) for c in cells(both)]
    assert sources == [("lgbm-meta", None), ("oracle", None), (None, 0.0), (None, 1.0)]
    # no sweep keys at all: one cell, the task's defaults
    (only,) = cells(load_config(_write(tmp_path, "task: scheduling\nobjectives: makespan\n", "c.yaml")))
    assert only.argv == ("run", "--task", "scheduling", "--objective", "makespan") and only.id == "0000"


def test_machines_cross_only_the_makespan_cells_of_a_mixed_sweep(tmp_path):
    config = load_config(_write(tmp_path, "task: scheduling\nobjectives: [total_completion, makespan]\n"
                                          "machines: [5, [10, 20]]\nseeds: [0, 1]\n"))
    grid = cells(config)
    assert cell_count(config) == len(grid) == 2 + 2 * 2  # total_completion x seeds + makespan x machines x seeds
    assert [(c.objective, c.machines, c.seed) for c in grid] == [
        ("total_completion", None, 0), ("total_completion", None, 1),
        ("makespan", "5", 0), ("makespan", "10,20", 0), ("makespan", "5", 1), ("makespan", "10,20", 1)]
    assert [c.index for c in grid] == list(range(6)) and len({c.id for c in grid}) == 6
    assert grid[0].id == "0000-total_completion-seed0" and grid[3].id == "0003-makespan-seed0-m10_20"
    assert "--machines" not in grid[1].argv
    assert grid[3].argv == ("run", "--task", "scheduling", "--objective", "makespan", "--seed", "0",
                            "--machines", "10,20")


def test_a_mixed_sweep_with_machines_runs_every_cell(tmp_path):
    pd.DataFrame(JOBS).to_csv(tmp_path / "jobs.csv", index=False)
    config = _write(tmp_path, "task: scheduling\njobs: jobs.csv\nobjectives: [total_completion, makespan]\n"
                              "machines: [2, 3]\nmlflow: false\n")
    out = tmp_path / "S"
    assert main(["sweep", str(config), "--executor", "local", "--workers", "1", "--output", str(out), "--quiet"]) == 0
    table = pd.read_parquet(out / "sweep.parquet")
    assert table.groupby("objective")["machines"].apply(lambda m: sorted(m.dropna().unique().tolist())).to_dict() == {
        "makespan": [2, 3], "total_completion": []}
    assert table["cell"].nunique() == 3


# ----- running: local and Dask ----------------------------------------------------------------
def test_local_sweep_values(tiny):
    config, out, table = tiny
    assert len(table) == 4 * 5 and table["cell"].nunique() == 4
    assert list(table.columns[:16]) == ["cell", "task", "objective", "dataset", "policies", "policy", "predictor",
                                        "noise", "seed", "n", "machines", "nodes", "lease", "value", "reference",
                                        "ratio"]
    assert (table["task"] == "scheduling").all() and (table["objective"] == "total_completion").all()
    assert (table["dataset"] == "jobs.csv").all() and (table["policies"] == "fifo,sjf,srpt,spjf,rr").all()
    # cell order = config order (noise outer, seeds inner), then the run's policy order
    assert table.groupby("cell", sort=False)[["noise", "seed"]].first().values.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert table["policy"].tolist()[:5] == ["fifo", "sjf", "srpt", "spjf", "rr"]
    assert str(table["seed"].dtype) == "Int64" and table["n"].isna().all() and table["nodes"].isna().all()
    assert table["lease"].isna().all()  # scheduling runs have no lease
    np.testing.assert_allclose(table["ratio"], table["value"] / table["reference"], rtol=1e-12)
    by = {(r.policy, r.noise, r.seed): r for r in table.itertuples()}
    for noise in (0.0, 1.0):
        for seed in (0, 1):
            assert by[("srpt", noise, seed)].value == 15 and by[("srpt", noise, seed)].ratio == 1
            assert by[("fifo", noise, seed)].value == 20 and by[("fifo", noise, seed)].ratio == pytest.approx(20 / 15)
            assert by[("spjf", noise, seed)].predictor == f"noise:{noise:g}"
            assert pd.isna(by[("srpt", noise, seed)].predictor)
    # σ = 0 gives p̂ = p, so SPJF is SJF
    assert by[("spjf", 0.0, 0)].value == by[("sjf", 0.0, 0)].value
    # a sweep row is exactly the row of the same standalone `benchmark run`
    cell_doc = json.loads((out / "cells" / "0003-noise1-seed1" / "results.json").read_text())
    spjf = next(r for r in cell_doc["rows"] if r["policy"] == "spjf")
    assert by[("spjf", 1.0, 1)].value == spjf["value"] and by[("spjf", 1.0, 1)].ratio == spjf["ratio"]
    for png in ("sweep_ratios.png", "sweep_robustness.png"):
        assert (out / png).stat().st_size > 1000
    assert not (out / "failures.json").exists() and not (out.parent / "store").exists()  # mlflow: false
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["n_failed"] == 0 and [c["ok"] for c in manifest["cells"]] == [True] * 4


def test_dask_local_cluster_gives_the_same_table(tiny):
    pytest.importorskip("distributed")
    config, local_out, local = tiny
    out = local_out.parent / "dask"
    assert main(["sweep", str(config), "--executor", "dask", "--workers", "2", "--output", str(out), "--quiet"]) == 0
    pd.testing.assert_frame_equal(pd.read_parquet(out / "sweep.parquet"), local)


def test_dask_existing_cluster_gives_the_same_table_and_stays_up(tiny):
    distributed = pytest.importorskip("distributed")
    config, local_out, local = tiny
    out = local_out.parent / "dask-address"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        code = main(["sweep", str(config), "--executor", "dask", "--address", cluster.scheduler_address,
                     "--output", str(out), "--quiet"])
        assert code == 0
        assert len(cluster.scheduler.workers) == 2  # the sweep closed its client, not the user's cluster
    pd.testing.assert_frame_equal(pd.read_parquet(out / "sweep.parquet"), local)


# ----- failures and MLflow --------------------------------------------------------------------
def test_failed_cells_are_reported_and_the_rest_complete(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)  # MLflow's default artifact root is ./mlruns
    pd.DataFrame(JOBS).to_csv(tmp_path / "jobs.csv", index=False)
    config = _write(tmp_path, """\
task: scheduling
jobs: [jobs.csv, missing.csv]
objectives: total_completion
policies: [[fifo, srpt], [spjf]]   # spjf needs p̂: no noise and no predicted_duration column
""")
    out = tmp_path / "out"
    assert main(["sweep", str(config), "--workers", "2", "--output", str(out)]) == 1
    captured = capsys.readouterr()
    failures = json.loads((out / "failures.json").read_text())
    assert [f["cell"] for f in failures] == ["0001-jobs-p1", "0002-missing-p0", "0003-missing-p1"]
    assert "needs predicted durations" in failures[0]["error"] and "jobs.csv" in failures[0]["error"]
    assert "missing.csv" in failures[1]["error"] and failures[1]["argv"][:2] == ["benchmark", "run"]
    err = captured.err.strip().splitlines()
    assert "3 of 4 cells failed" in err[-4] and [line.split(":")[0].strip() for line in err[-3:]] == [
        "0001-jobs-p1", "0002-missing-p0", "0003-missing-p1"]
    table = pd.read_parquet(out / "sweep.parquet")
    assert table["policy"].tolist() == ["fifo", "srpt"] and table["value"].tolist() == [20, 15]
    assert "sweep: 1/4 cells" in captured.out
    # only the finished cell was logged, by the parent, under the sweep's run in the project's store
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path / 'results' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("atlas-sweep-scheduling").experiment_id
    runs = client.search_runs([experiment], order_by=["attributes.start_time ASC"])
    levels = [r.data.tags["atlas.level"] for r in runs]
    assert levels == ["sweep", "run", "child", "child"]
    sweep, cell, *children = runs
    assert sweep.data.params["n_failed"] == "3" and cell.data.params["sweep_cell"] == "0000-jobs-p0"
    assert cell.data.tags["mlflow.parentRunId"] == sweep.info.run_id
    assert {c.data.params["policy"]: c.data.metrics["value"] for c in children} == {"fifo": 20.0, "srpt": 15.0}
    assert [c.data.metrics["ratio"] for c in children] == [20 / 15, 1.0]


# ----- fairness axes: lease and nodes -----------------------------------------------------------
# two tenants on 8-GPU nodes; a and b hold 8 GPUs each for 2,000 s, c (tenant y) arrives at 10 s
FAIR_JOBS = {"job_id": ["a", "b", "c"], "submit_time": [0, 0, 10], "duration": [2000, 2000, 500],
             "gpus": [8, 8, 8], "tenant": ["x", "x", "y"]}


def test_fairness_lease_and_nodes_axes_expand_into_run_options(tmp_path):
    config = load_config(_write(tmp_path, "task: fairness\njobs: j.csv\npolicies: [astraea, fifo]\n"
                                          "nodes: [1, 2]\nlease: [300, 1200.5]\n"))
    assert config.lease == (300.0, 1200.5) and config.nodes == (1, 2)
    grid = cells(config)
    assert [(c.nodes, c.lease) for c in grid] == [(1, 300.0), (1, 1200.5), (2, 300.0), (2, 1200.5)]
    assert grid[1].argv[-4:] == ("--nodes", "1", "--lease", "1200.5")
    assert [c.id for c in grid] == ["0000-nodes1-lease300", "0001-nodes1-lease1200.5", "0002-nodes2-lease300",
                                    "0003-nodes2-lease1200.5"]


def test_fairness_sweep_rows_carry_lease_and_nodes_and_match_a_direct_run(tmp_path):
    pd.DataFrame(FAIR_JOBS).to_csv(tmp_path / "j.csv", index=False)
    config = _write(tmp_path, "task: fairness\njobs: j.csv\npolicies: [astraea, fifo]\nnodes: [1, 3]\n"
                              "lease: [300, 900]\nmlflow: false\n")
    out = tmp_path / "out"
    assert main(["sweep", str(config), "--workers", "2", "--output", str(out), "--quiet"]) == 0
    table = pd.read_parquet(out / "sweep.parquet")
    assert table[["nodes", "lease", "policy"]].values.tolist() == [
        [1, 300.0, "astraea"], [1, 300.0, "fifo"], [1, 900.0, "astraea"], [1, 900.0, "fifo"],
        [3, 300.0, "astraea"], [3, 300.0, "fifo"], [3, 900.0, "astraea"], [3, 900.0, "fifo"]]
    by = {(r.nodes, r.lease, r.policy): r for r in table.itertuples()}
    # on 3 nodes nobody waits: every job completes at submit + duration
    assert by[(3, 300.0, "astraea")].avg_jct == pytest.approx((2000 + 2000 + 500) / 3)
    # on 1 node fifo runs a, b, c one after the other (c waits for both)
    assert by[(1, 900.0, "fifo")].avg_jct == pytest.approx((2000 + 4000 + 4490) / 3)
    # while a job waits on 1 node astraea re-decides at every lease end: shorter leases, more rounds
    assert by[(1, 300.0, "astraea")].rounds > by[(1, 900.0, "astraea")].rounds > 0
    direct = tmp_path / "direct"
    assert main(["run", "--task", "fairness", "--jobs", str(tmp_path / "j.csv"), "--policies", "astraea,fifo",
                 "--nodes", "1", "--lease", "300", "--no-mlflow", "--quiet", "--output", str(direct)]) == 0
    rows = {r["policy"]: r for r in json.loads((direct / "results.json").read_text())["rows"]}
    for policy in ("astraea", "fifo"):
        for metric in ("avg_jct", "sharing_loss_jobs", "preemptions"):
            assert getattr(by[(1, 300.0, policy)], metric) == pytest.approx(rows[policy][metric])


def test_the_lease_example_expands_into_one_venus_cell_per_lease():
    from pathlib import Path

    config = load_config(Path(__file__).resolve().parents[2] / "examples" / "sweep_lease.yaml")
    grid = cells(config)
    assert [c.lease for c in grid] == [300.0, 600.0, 900.0, 1200.0, 1800.0]
    assert all(c.argv[:3] == ("run", "--task", "fairness") and "--scenario" in c.argv for c in grid)
