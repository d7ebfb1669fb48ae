"""`benchmark demo`: its steps are valid command lines and its README block is regenerated from results."""

from pathlib import Path

import pandas as pd
import pytest

from benchmark.cli import build_parser, main
from atlas_data.outputs import output_folder
from benchmark.experiments.demo import (END, HEADLINE_END, HEADLINE_START, START, demo_steps, replace_block,
                                        summary_markdown)

# the commands' figures are not rendered but where a test looks at them (figures_rendered; tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("figures_unrendered"), pytest.mark.long_file]


def test_every_demo_step_is_a_valid_command_line(tmp_path):
    parser = build_parser()
    steps = demo_steps(tmp_path)
    assert [s[1][:2] for s in steps][:3] == [["data", "build"], ["data", "describe"], ["run", "--task"]]
    for _, argv in steps:
        parser.parse_args(argv)  # raises SystemExit on a bad option
    tasks = [argv[argv.index("--task") + 1] for _, argv in steps if argv[0] == "run"]
    assert tasks.count("scheduling") == 12 and tasks.count("fairness") == 6 and tasks.count("prediction") == 5
    # the real traces' scheduling and fairness use learned p̂ (the contended cluster also exact p̂, a
    # reference); noise only beside it, for the robustness curve
    for _, argv in steps:
        if argv[0] == "run" and "--jobs" in argv and argv[argv.index("--task") + 1] != "prediction":
            exact = "fairness-contended-oracle" in argv[argv.index("--output") + 1]
            single = argv[argv.index("--task") + 1] == "scheduling" and "makespan" not in argv
            # the single-machine runs add the ranking objective, and every learned p̂'s controls
            expected = "oracle" if exact else ("lgbm-meta,lgbm-rank" if single else "lgbm-meta")
            assert argv[argv.index("--predictor") + 1] == expected
            assert ("--controls" in argv) == single
    noisy = [argv for _, argv in steps if "--noise" in argv]
    assert noisy and all("--predictor" in argv for argv in noisy)


def test_summary_is_read_from_results_and_replaces_the_readme_block(tmp_path):
    jobs = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2], "duration": [3, 1, 2, 1]}).to_csv(jobs, index=False)
    out = tmp_path / "demo"
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs), "--noise", "0",
                 "--policies", "fifo,srpt,spjf", "--output", str(out / "trace-elasticflow-cluster05-total_completion"),
                 "--quiet", "--no-mlflow"]) == 0
    assert main(["run", "--task", "prediction", "--jobs", "openb", "--methods", "constant,oracle",
                 "--output", str(out / "prediction-openb"), "--quiet", "--no-mlflow"]) == 0
    summary = summary_markdown(out)
    # FIFO ΣC = 20, SRPT ΣC = 15 (hand schedules in tests/schedulers) → 1.333; SPJF with p̂ = p is SJF: 15
    assert "| fifo | – | 1.333 | – | – |" in summary and "| srpt | – | 1.000 | – | – |" in summary
    assert "| spjf | noise:0 (noise, uses true sizes) | 1.000 | – | – |" in summary
    assert "noise p̂ = p·exp(σZ) reads the true sizes" in summary
    # the real-trace prediction table states each trace's split and feature columns
    assert "`openb` 4,342/930/931 jobs, feature columns: tenant, gpu_spec, gpus, cpu_milli, memory_mib, gpu_milli" in summary
    assert "| oracle | 0.000 · 100.0% |" in summary
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{START}\nold\n{END}\noutro\n")
    replace_block(readme, summary)
    text = readme.read_text()
    assert text.startswith("intro\n" + START) and text.endswith(END + "\noutro\n")
    assert "old" not in text and "| fifo | – | 1.333" in text


def test_readme_without_markers_is_refused(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("no block here\n")
    (tmp_path / "demo").mkdir()
    assert main(["demo", "--summary-only", "--output", str(tmp_path / "demo"), "--readme", str(readme), "--no-mlflow"]) == 2
    assert "demo-results:start" in capsys.readouterr().err
    assert readme.read_text() == "no block here\n"


def test_the_committed_results_page_has_the_generated_block_and_the_readme_its_headline():
    root = Path(__file__).resolve().parents[2]
    block = (root / "docs" / "results.md").read_text().split(START, 1)[1].split(END, 1)[0]
    assert "Produced by `benchmark demo`" in block and "| lgbm-meta |" in block and "| astraea |" in block
    readme = (root / "README.md").read_text()
    assert START not in readme  # the full tables live in docs/results.md only
    headline = readme.split(HEADLINE_START, 1)[1].split(HEADLINE_END, 1)[0]
    assert "Produced by `benchmark demo`" in headline and "| spjf | lgbm-meta |" in headline


def test_one_run_writes_the_headline_and_the_full_block_into_their_files(tmp_path, capsys):
    """`--readme` once per file; each file gets the demo's blocks it holds, the headline read from the results."""
    out = tmp_path / "demo"
    with output_folder(out, "demo") as folder:
        _fake_run(folder / "atlas-total_completion", [("fifo", None, 3.25), ("rr", None, 1.5), ("spjf", "lgbm-meta", 1.125),
                                                      ("srpt", None, 1.0)], n_jobs=40)
        _fake_run(folder / "trace-philly-total_completion", [("fifo", None, 9.5), ("spjf", "lgbm-meta", 4.0),
                                                             ("srpt", None, 1.0)], n_jobs=1234)
    readme, results = tmp_path / "README.md", tmp_path / "results.md"
    readme.write_text(f"# landing\n{HEADLINE_START}\nold\n{HEADLINE_END}\nmore\n")
    results.write_text(f"# results\n{START}\nold\n{END}\n")
    assert main(["demo", "--summary-only", "--no-mlflow", "--output", str(out), "--readme", str(readme),
                 "--readme", str(results)]) == 0
    head = readme.read_text()
    assert head.startswith(f"# landing\n{HEADLINE_START}\nProduced by `benchmark demo`") and head.endswith(f"{HEADLINE_END}\nmore\n")
    assert "test split (40 jobs) | real Philly trace, test part with its real arrivals (1,234 jobs) |" in head
    assert "| fifo | – | 3.250 | 9.500 |" in head and "| spjf | lgbm-meta | 1.125 | 4.000 |" in head
    assert "| gittins | lgbm-meta | – | – |" in head and "| rr | – | 1.500 | – |" in head  # a missing row is a dash
    assert "\nold\n" not in head and START not in head
    full = results.read_text()
    assert "| fifo | – | 3.250 | – | – |" in full and HEADLINE_START not in full


def test_a_file_without_either_block_is_refused_before_the_other_is_written(tmp_path, capsys):
    out = tmp_path / "demo"
    with output_folder(out, "demo"):
        pass
    good, bad = tmp_path / "README.md", tmp_path / "other.md"
    good.write_text(f"{HEADLINE_START}\nold\n{HEADLINE_END}\n")
    bad.write_text("# no block\n")
    assert main(["demo", "--summary-only", "--no-mlflow", "--output", str(out), "--readme", str(good),
                 "--readme", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {bad}: --readme: no {START} ... {END} block to replace (nor a {HEADLINE_START} ... "
                   f"{HEADLINE_END} one)"]
    assert good.read_text() == f"{HEADLINE_START}\nold\n{HEADLINE_END}\n" and bad.read_text() == "# no block\n"


def _fake_run(folder: Path, rows, n_jobs: int) -> None:
    import json

    folder.mkdir(parents=True)
    doc = {"task": "scheduling", "objective": "total_completion", "n_jobs": n_jobs,
           "rows": [{"policy": p, "predictor": pred, "ratio": ratio} for p, pred, ratio in rows]}
    (folder / "results.json").write_text(json.dumps(doc))


def _small_demo(monkeypatch, tmp_path, policies="fifo,srpt", prediction=False):
    """The demo's steps replaced by a few small ones of each kind (a prediction step too if asked)."""
    import benchmark.commands.demo as demo

    jobs = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b", "c"], "submit_time": [0, 0, 1], "duration": [3, 1, 2]}).to_csv(jobs, index=False)
    monkeypatch.setattr(demo, "demo_steps", lambda out: [
        ("dataset", ["data", "build", "--source", "synthetic", "--jobs", "3000", "--seed", "0", "--out",
                     str(out / "dataset")]),
        ("scheduling on it", ["run", "--task", "scheduling", "--objective", "makespan", "--data", str(out / "dataset"),
                              "--policies", "lpt", "--noise", "0", "--output", str(out / "atlas-makespan")]),
        ("scheduling", ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs),
                        "--policies", policies, "--output", str(out / "trace-elasticflow-cluster05-total_completion")]),
        ("fairness", ["run", "--task", "fairness", "--scenario", "venus", "--n", "200", "--policies", "fifo",
                      "--output", str(out / "fairness-venus")]),
    ] + ([("prediction", ["run", "--task", "prediction", "--jobs", "openb", "--methods", "constant",
                           "--output", str(out / "prediction-openb")])] if prediction else []))


@pytest.mark.figures_rendered  # reads the title of a plot's SVG
def test_the_paths_the_demo_prints_are_the_final_ones(tmp_path, monkeypatch, capsys):
    """Each step writes inside the demo's temporary folder; what it prints names where its output ends up."""
    _small_demo(monkeypatch, tmp_path, prediction=True)
    out = tmp_path / "demo"
    assert main(["demo", "--output", str(out), "--no-mlflow"]) == 0
    captured = capsys.readouterr()
    printed = captured.out + captured.err  # `wrote FOLDER` of the prediction task is on stderr
    assert ".tmp-" not in printed
    named = [line.split(" ", 1)[1] for line in printed.splitlines() if line.startswith(("results: ", "wrote "))]
    assert sorted(named) == sorted([str(out / "trace-elasticflow-cluster05-total_completion"), str(out / "atlas-makespan"),
                                    str(out / "fairness-venus"), str(out / "prediction-openb")])
    assert f"{out / 'dataset'}: kept " in printed and f"data: {out / 'dataset'}" in printed  # the dataset's own lines
    plot = (out / "atlas-makespan" / "ratios.svg").read_text()
    assert ".tmp-" not in plot and f"({out / 'dataset'})" in plot  # the plot's title names the dataset's final place
    for folder in named:
        assert (Path(folder) / "results.json").is_file()
    assert f"Results and plots: {out.resolve()}/*/" in printed and (out / "SUMMARY.md").is_file()


def test_the_steps_of_one_trace_or_of_the_dataset_form_one_chain_in_order(tmp_path):
    """A trace's fits are memoised in its process: the steps that fit on it share one worker, in their
    order; its step with p̂ = p fits nothing and runs apart, off the longest chain."""
    from benchmark.experiments.demo import step_chains

    argvs = [argv for _, argv in demo_steps(tmp_path)]
    chains = step_chains(argvs)
    assert sorted(i for chain in chains for i in chain) == list(range(len(argvs)))  # each step exactly once
    assert all(chain == sorted(chain) for chain in chains)
    by_step = {i: n for n, chain in enumerate(chains) for i in chain}
    philly = [i for i, argv in enumerate(argvs) if "--jobs" in argv and argv[argv.index("--jobs") + 1] == "philly"]
    exact = [i for i in philly if "--predictor" in argvs[i] and argvs[i][argvs[i].index("--predictor") + 1] == "oracle"]
    fitting = [i for i in philly if i not in exact]
    dataset = [i for i, argv in enumerate(argvs) if argv[0] == "data" or "--data" in argv]
    assert len(fitting) == 6 and len({by_step[i] for i in fitting}) == 1
    assert len(exact) == 1 and chains[by_step[exact[0]]] == exact
    assert dataset[0] == 0 and len(dataset) == 6 and len({by_step[i] for i in dataset}) == 1
    assert chains[0] == fitting  # the longest chain starts first
    assert chains[-1] == exact  # after the longest chain, the others in step order
    scenarios = [i for i, argv in enumerate(argvs) if "--scenario" in argv]
    assert len(scenarios) == 3 and len({by_step[i] for i in scenarios}) == 3  # independent: one chain each


def test_steps_in_two_workers_print_in_order_and_give_the_results_of_one_process(tmp_path, monkeypatch, capsys):
    import json

    _small_demo(monkeypatch, tmp_path)
    printed, rows = {}, {}
    for workers in ("1", "2"):
        out = tmp_path / f"demo-{workers}"
        assert main(["demo", "--output", str(out), "--no-mlflow", "--workers", workers]) == 0
        captured = capsys.readouterr()
        printed[workers] = [line.replace(f"demo-{workers}", "demo") for line in captured.out.splitlines()
                            if line.startswith(("=== ", "$ benchmark", "results: ", "srpt ", "lpt "))]
        rows[workers] = {folder: json.loads((out / folder / "results.json").read_text())["rows"]
                         for folder in ("atlas-makespan", "trace-elasticflow-cluster05-total_completion", "fairness-venus")}
    assert [line for line in printed["2"] if line.startswith("=== ")] == [
        "=== dataset", "=== scheduling on it", "=== scheduling", "=== fairness"]
    assert printed["2"] == printed["1"]
    for folder, expected in rows["1"].items():
        got = [{k: v for k, v in r.items() if k != "sim_seconds"} for r in rows["2"][folder]]
        assert got == [{k: v for k, v in r.items() if k != "sim_seconds"} for r in expected], folder


def test_with_workers_the_store_is_made_beside_the_steps_and_every_run_logged_from_its_final_place(
        tmp_path, monkeypatch, capsys):
    """With two workers the demo builds the missing MLflow store while they run (demo._prepare_store),
    then logs each run from its final folder, FINISHED, with a child per row."""
    import json

    import mlflow

    import benchmark.commands.demo as demo

    _small_demo(monkeypatch, tmp_path)
    db = tmp_path / "store" / "mlflow.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{db}")
    prepared = []  # whether the store existed before, and whether after, the call made beside the steps
    real = demo._prepare_store
    monkeypatch.setattr(demo, "_prepare_store", lambda: (prepared.append(db.exists()), real(), prepared.append(db.exists())))
    import benchmark.tracking as tracking

    unsynced = []  # the logging skips the disk waits only in a store this demo made, never in one it found
    real_unsynced = tracking.unsynced_commits
    monkeypatch.setattr(tracking, "unsynced_commits", lambda uri: (unsynced.append(uri), real_unsynced(uri))[1])
    out = tmp_path / "demo"
    assert main(["demo", "--output", str(out), "--workers", "2", "--quiet"]) == 0
    assert prepared == [False, True]
    assert unsynced == [f"sqlite:///{db}"]
    client = mlflow.MlflowClient(f"sqlite:///{db}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()], max_results=1000)
    parents = {r.data.tags["output"]: r for r in runs if r.data.tags.get("atlas.level") == "run"}
    assert sorted(parents) == sorted(str(out / name) for name in
                                     ("atlas-makespan", "trace-elasticflow-cluster05-total_completion", "fairness-venus"))
    assert all(r.info.status == "FINISHED" for r in runs)
    children = [r for r in runs if r.data.tags.get("atlas.level") == "child"]
    rows = {Path(folder).name: len(json.loads((Path(folder) / "results.json").read_text())["rows"]) for folder in parents}
    assert rows == {"atlas-makespan": 5, "trace-elasticflow-cluster05-total_completion": 2, "fairness-venus": 1}
    assert len(children) == 8  # a child per row: lpt on m = 5…100; fifo, srpt; fifo
    assert main(["demo", "--output", str(tmp_path / "again"), "--workers", "1", "--quiet"]) == 0
    assert unsynced == [f"sqlite:///{db}"]  # the second run found the store: its commits were synced


def test_a_failed_step_in_a_worker_prints_its_error_in_place_and_leaves_no_folder(tmp_path, monkeypatch, capsys):
    _small_demo(monkeypatch, tmp_path, policies="no-such-policy")
    out = tmp_path / "demo"
    assert main(["demo", "--output", str(out), "--no-mlflow", "--workers", "2"]) == 2
    captured = capsys.readouterr()
    assert "=== scheduling\n" in captured.out and "=== fairness" not in captured.out
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "unknown policy 'no-such-policy'" in errors[0]
    assert not out.exists() and not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


@pytest.mark.parametrize("value", ["0", "-1", "two", "2000"])
def test_a_bad_worker_count_is_exit_2_with_one_line_before_any_work(tmp_path, capsys, value):
    out = tmp_path / "demo"
    assert main(["demo", "--output", str(out), "--no-mlflow", "--workers", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--workers" in err[0] and value in err[0] and not out.exists()
