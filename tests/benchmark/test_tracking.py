"""MLflow tracking of `benchmark run`, `benchmark sweep` and `benchmark compare` (temporary SQLite stores only).

Every test runs in its own working folder (no git there), so the project's store is
`<tmp>/results/mlflow.db` (benchmark.tracking.tracking_uri).
"""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from benchmark.cli import main
from atlas_data.errors import InputError
from benchmark import tracking
from benchmark.tracking import CHILD_METRICS, child_metrics, child_name, child_params, run_tags

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("figures_unrendered"), pytest.mark.long_file]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    """The working folder is tmp_path: the project's store is tmp_path/results/mlflow.db."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def jobs_csv(tmp_path):
    path = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2], "duration": [3, 1, 2, 1]}).to_csv(path, index=False)
    return path


def _client(db):
    import mlflow

    return mlflow.MlflowClient(f"sqlite:///{db}")


def _runs(db, level=None):
    """Every run of the store as (run, tags, params, metrics), oldest first; only `atlas.level=level` if given."""
    client = _client(db)
    experiments = [e.experiment_id for e in client.search_experiments()]
    runs = client.search_runs(experiments, order_by=["attributes.start_time ASC"], max_results=10000)
    return [r for r in runs if level is None or r.data.tags.get("atlas.level") == level]


def test_child_names_metrics_and_params():
    assert child_name({"policy": "spjf", "predictor": "noise:0.5"}) == "spjf noise:0.5"
    assert child_name({"policy": "lpt", "predictor": None, "machines": 5}) == "lpt m5"
    assert child_name({"method": "crr++", "predictor": "crr++"}) == "crr++"  # prediction rows name the method twice
    row = {"policy": "fifo", "predictor": None, "value": 20.0, "ratio": 4 / 3, "opt": None, "ok": True,
           "leaks": [], "reference": float("nan"), "machines": 3}
    assert child_metrics("scheduling", row) == {"value": 20.0, "ratio": 4 / 3}  # no NaN, bool, list or key column
    assert child_metrics("prediction", {"method": "m", "rmsle": 0.5, "stage2_alpha": 0.1, "junk": 1.0}) == {
        "rmsle": 0.5, "stage2_alpha": 0.1}
    doc = {"task": "prediction", "objective": None}
    assert child_params(doc, {}, {"method": "crr++", "predictor": "crr++"}) == {"method": "crr++", "task": "prediction"}
    doc = {"task": "fairness", "objective": None}
    assert child_params(doc, {"scenario": "venus"}, {"policy": "astraea", "predictor": None}) == {
        "policy": "astraea", "scenario": "venus", "task": "fairness"}
    assert "objective" not in run_tags({"task": "prediction", "objective": None}, Path("out"))  # never 'None'
    assert run_tags({"task": "scheduling", "objective": "makespan"}, Path("out"))["objective"] == "makespan"


def test_unsynced_commits_turn_off_the_fsyncs_of_mlflow_connections_only_inside(tmp_path, jobs_csv):
    """`benchmark demo` logs its runs inside `unsynced_commits`: there every connection MLflow's engine
    opens or takes from its pool has SQLite's synchronous = OFF (0), set back when it returns to the
    pool; outside, SQLite's default FULL (2). A run logged inside is in the store afterwards, whole."""
    from sqlalchemy import create_engine, text

    probe = f"sqlite:///{tmp_path / 'probe.db'}"  # any SQLite engine of the process, MLflow's included

    def synchronous(engine):
        with engine.connect() as con:
            return con.execute(text("PRAGMA synchronous")).scalar()

    before = create_engine(probe)  # an engine made before: its pooled connection is switched on checkout
    assert synchronous(before) == 2
    with tracking.unsynced_commits(tracking.tracking_uri(create=True)):
        assert synchronous(before) == 0 and synchronous(create_engine(probe)) == 0
        assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                     "--policies", "fifo,srpt", "--output", str(tmp_path / "first"), "--quiet"]) == 0
    assert synchronous(create_engine(probe)) == 2 and synchronous(before) == 2
    (parent,) = _runs(tmp_path / "results" / "mlflow.db", "run")
    assert parent.info.status == "FINISHED" and len(_runs(tmp_path / "results" / "mlflow.db", "child")) == 2
    with tracking.unsynced_commits("http://localhost:1"):  # not a local SQLite store: nothing to do
        pass


def test_a_run_is_a_parent_with_a_child_per_row_a_table_and_an_input(tmp_path, jobs_csv, capsys):
    from atlas_data.build import content_fingerprint
    from atlas_data.jobs_table import read_jobs

    out = tmp_path / "elsewhere" / "first"  # any --output: the run goes to the project's store
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                 "--policies", "fifo,srpt,spjf", "--noise", "0,1", "--output", str(out), "--quiet"]) == 0
    db = tmp_path / "results" / "mlflow.db"
    assert db.exists() and not (out.parent / "mlflow.db").exists()
    (parent,) = _runs(db, "run")
    tags = parent.data.tags
    assert parent.info.run_name == "first" and parent.info.status == "FINISHED"
    assert tags["task"] == "scheduling" and tags["objective"] == "total_completion" and tags["output"] == str(out)
    assert parent.data.params["objective"] == "total_completion" and parent.data.params["package_version"]
    assert not parent.data.metrics  # the metrics are on the children
    children = _runs(db, "child")
    assert [c.info.run_name for c in children] == ["fifo", "srpt", "spjf noise:0", "spjf noise:1"]
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    by_name = {c.info.run_name: c for c in children}
    spjf = by_name["spjf noise:1"]
    assert spjf.data.params == {"policy": "spjf", "predictor": "noise:1", "objective": "total_completion",
                                "task": "scheduling"}
    assert {k: spjf.data.tags[k] for k in spjf.data.params} == spjf.data.params
    assert set(by_name["fifo"].data.metrics) == {"value", "reference", "ratio", "flow_ratio"}
    assert by_name["fifo"].data.metrics["ratio"] == pytest.approx(20 / 15)
    assert by_name["srpt"].data.metrics["ratio"] == 1.0 and "predictor" not in by_name["srpt"].data.params
    for child in children:
        assert set(child.data.metrics) <= set(CHILD_METRICS["scheduling"])
    # the rows as an MLflow table, the jobs file as an input whose digest is its content fingerprint
    client = _client(db)
    table = json.loads(Path(client.download_artifacts(parent.info.run_id, tracking.TABLE_FILE, str(tmp_path))).read_text())
    frame = pd.DataFrame(table["data"], columns=table["columns"])
    assert frame["policy"].tolist() == ["fifo", "srpt", "spjf", "spjf"] and frame["ratio"].iloc[0] == pytest.approx(20 / 15)
    (dataset_input,) = client.get_run(parent.info.run_id).inputs.dataset_inputs
    fingerprint = content_fingerprint(read_jobs(str(jobs_csv)))
    assert dataset_input.dataset.digest == fingerprint[:32] and dataset_input.dataset.name == "jobs.csv"
    assert {t.key: t.value for t in dataset_input.tags}["fingerprint"] == fingerprint
    assert parent.data.params["dataset_fingerprint"] == fingerprint
    # artifacts once: the results and figures, not the per-job table the output folder holds
    logged = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"results.json", "results.csv", "ratios.png", tracking.TABLE_FILE} <= logged
    assert "per_job.parquet" not in logged and (out / "per_job.parquet").exists()
    assert not any(client.list_artifacts(c.info.run_id) for c in children)


def test_fairness_run_children_carry_the_documented_metrics_and_no_objective(tmp_path):
    rng = __import__("numpy").random.default_rng(1)
    jobs = tmp_path / "fair.csv"
    pd.DataFrame({"job_id": [f"j{i}" for i in range(20)], "submit_time": sorted(rng.integers(0, 300, 20)),
                  "duration": rng.integers(30, 600, 20), "gpus": rng.choice([1, 2], 20),
                  "tenant": rng.choice(["t1", "t2"], 20)}).to_csv(jobs, index=False)
    assert main(["run", "--task", "fairness", "--jobs", str(jobs), "--policies", "astraea,yarn-cs", "--nodes", "1",
                 "--output", str(tmp_path / "results" / "fair"), "--quiet"]) == 0
    db = tmp_path / "results" / "mlflow.db"
    (parent,) = _runs(db, "run")
    assert "objective" not in parent.data.tags and "None" not in parent.data.tags.values()
    children = _runs(db, "child")
    assert [c.data.params["policy"] for c in children] == ["astraea", "yarn-cs"]
    for child in children:
        assert "sharing_loss_jobs" in child.data.metrics and "avg_jct" in child.data.metrics
        assert set(child.data.metrics) <= set(CHILD_METRICS["fairness"])
        assert "objective" not in child.data.params


def test_prediction_run_has_a_child_per_method(tmp_path):
    from predictors.synthetic import make_frame, write_dataset

    write_dataset(make_frame(400, seed=3), tmp_path / "ds")
    assert main(["run", "--task", "prediction", "--data", str(tmp_path / "ds"), "--methods", "constant",
                 "--output", str(tmp_path / "results" / "pred"), "--quiet"]) == 0
    db = tmp_path / "results" / "mlflow.db"
    (parent,) = _runs(db, "run")
    assert "objective" not in parent.data.tags
    (child,) = _runs(db, "child")
    assert child.info.run_name == "constant" and child.data.params == {"method": "constant", "task": "prediction"}
    assert {"rmsle", "cov25", "cov50"} <= set(child.data.metrics) <= set(CHILD_METRICS["prediction"])
    (dataset_input,) = _client(db).get_run(parent.info.run_id).inputs.dataset_inputs
    card = json.loads((tmp_path / "ds" / "dataset.json").read_text())
    assert dataset_input.dataset.digest == card["fingerprint"][:32]


def test_one_store_per_project_wherever_output_goes(tmp_path, jobs_csv, monkeypatch, capsys):
    import os
    import shutil

    if shutil.which("git") is None:
        pytest.skip("needs git to make a project")  # a skip is reported, never counted as a pass
    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    monkeypatch.chdir(project / "notebooks")  # a notebook runs in a subfolder of the project
    for out in (project / "notebooks" / "results" / "a", tmp_path / "scratch" / "b"):
        assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                     "--policies", "fifo", "--output", str(out), "--quiet"]) == 0
        assert "MLFLOW_TRACKING_URI" not in os.environ  # mlflow must not pin later runs to this store
    assert [p.name for p in tmp_path.rglob("mlflow.db")] == ["mlflow.db"]
    db = project / "results" / "mlflow.db"
    assert [r.info.run_name for r in _runs(db, "run")] == ["a", "b"]
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert main(["compare"]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].split()[:7] == ["run", "experiment", "start", "name", "status", "children", "best"]
    assert [line.split()[4] for line in shown[2:]] == ["a", "b"]  # the start is a date and a time
    assert not (project / "mlruns").exists()


def test_compare_shows_one_row_per_invocation_and_its_children_on_request(tmp_path, jobs_csv, capsys):
    results = tmp_path / "results"
    for name, noise, policies in (("first", "0", "fifo,srpt,rr,spjf"), ("second", "1", "fifo,srpt,rr,spjf"),
                                  ("third", "0", "srpt")):
        assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                     "--noise", noise, "--policies", policies, "--output", str(results / name),
                     "--quiet"]) == 0
    assert (results / "mlartifacts").is_dir() and not (tmp_path / "mlruns").exists()
    capsys.readouterr()
    csv = tmp_path / "compare.csv"
    assert main(["compare", "--experiment", "atlas-scheduling-total_completion", "--csv", str(csv)]) == 0
    table = pd.read_csv(csv)
    assert list(table.columns) == ["run", "experiment", "start", "name", "status", "children", "best"]
    assert table["name"].tolist() == ["first", "second", "third"] and table["children"].tolist() == [4, 4, 1]
    assert table["status"].tolist() == ["FINISHED"] * 3
    # srpt, the clairvoyant reference (ratio 1 by definition), and spjf on noise p̂ (made from the true
    # sizes: noise:0 is p itself) are passed over while a competitor has a ratio
    assert table["best"].tolist() == ["ratio 1.333 (fifo)", "ratio 1.333 (fifo)", "ratio 1.000 (srpt, clairvoyant)"]
    run = table["run"].iloc[1]
    assert main(["compare", "--run", run[:6], "--csv", str(csv)]) == 0  # a prefix of the id; replaces its own CSV
    children = pd.read_csv(csv)
    assert children["name"].tolist() == ["fifo", "srpt", "rr", "spjf noise:1"]
    assert children["ratio"].tolist() == pytest.approx([20 / 15, 1.0, 64 / 45, 1.0])
    assert children["predictor"].fillna("").tolist() == ["", "", "", "noise:1"]
    assert children["clairvoyant"].fillna("").tolist() == ["", "yes", "", "yes"]  # noise p̂ is made from p
    assert "rmsle" not in children.columns  # only metrics the rows have
    assert main(["compare", "--run", "zzzz"]) == 2
    assert "no tracked run with an id starting 'zzzz'" in capsys.readouterr().err


@pytest.mark.parametrize("doc,row,expected", [
    ({"task": "scheduling", "objective": "total_completion"}, {"policy": "srpt"}, True),
    ({"task": "scheduling", "objective": "total_completion"}, {"policy": "spjf", "predictor": "lgbm-meta"}, False),
    ({"task": "scheduling", "objective": "total_completion"}, {"policy": "spjf", "predictor": "oracle"}, True),
    ({"task": "scheduling", "objective": "total_completion"}, {"policy": "spjf", "p_hat_source": "noise:0.5"}, False),
    ({"task": "scheduling", "objective": "total_completion"}, {"policy": "sprpt", "predictor": "noise:0"}, True),
    ({"task": "scheduling", "objective": "total_completion"}, {"policy": "spjf", "predictor": "noise:0.5"}, True),
    ({"task": "scheduling", "objective": "makespan"}, {"policy": "lpt", "machines": 5}, True),
    ({"task": "scheduling", "objective": "makespan"}, {"policy": "lppt", "machines": 5}, False),
    ({"task": "fairness"}, {"policy": "srtf-oracle"}, True),
    ({"task": "fairness"}, {"policy": "fifo"}, False),
    ({"task": "prediction"}, {"method": "oracle", "predictor": "oracle"}, True),
    ({"task": "prediction"}, {"method": "lgbm-meta", "predictor": "lgbm-meta"}, False),
    ({"task": "scheduling", "objective": "total_completion"}, {"policy": "somebody-elses"}, False),
])
def test_rows_that_read_true_sizes_are_told_apart(doc, row, expected):
    assert tracking.reads_true_sizes(doc, row) is expected


def test_a_sweep_is_one_parent_with_a_run_per_cell(tmp_path, jobs_csv):
    config = tmp_path / "sweep.yaml"
    config.write_text(f"task: scheduling\njobs: {jobs_csv.name}\nobjectives: total_completion\n"
                      "policies: [fifo, spjf]\nnoise: [0, 1]\n")
    out = tmp_path / "sweeps" / "noise"
    assert main(["sweep", str(config), "--workers", "1", "--output", str(out), "--quiet"]) == 0
    db = tmp_path / "results" / "mlflow.db"
    (sweep,) = _runs(db, "sweep")
    assert sweep.info.run_name == "noise" and sweep.info.status == "FINISHED"
    assert sweep.data.tags["output"] == str(out) and sweep.data.params["n_cells"] == "2"
    cells = _runs(db, "run")
    assert sorted(c.info.run_name for c in cells) == ["0000-noise0", "0001-noise1"]
    assert {c.data.tags["mlflow.parentRunId"] for c in cells} == {sweep.info.run_id}
    assert {c.info.experiment_id for c in cells} == {sweep.info.experiment_id}  # nested in the UI
    children = _runs(db, "child")
    assert len(children) == 4 and {c.data.tags["mlflow.parentRunId"] for c in children} == {c.info.run_id for c in cells}
    logged = {a.path for a in _client(db).list_artifacts(sweep.info.run_id)}
    assert {"sweep.json", tracking.TABLE_FILE} <= logged and "sweep.parquet" not in logged


def test_no_mlflow_writes_no_store(tmp_path, jobs_csv):
    out = tmp_path / "results" / "x"
    assert main(["run", "--task", "scheduling", "--objective", "max_stretch", "--jobs", str(jobs_csv),
                 "--output", str(out), "--quiet", "--no-mlflow"]) == 0
    assert json.loads((out / "results.json").read_text())["rows"]
    assert not (tmp_path / "results" / "mlflow.db").exists()


def test_compare_unknown_experiment_exits_2(tmp_path, capsys):
    assert main(["compare", "--results", str(tmp_path), "--experiment", "atlas-nothing"]) == 2
    assert "atlas-nothing" in capsys.readouterr().err


def test_compare_without_a_store_says_so_and_creates_nothing(tmp_path, capsys):
    assert main(["compare"]) == 0
    assert capsys.readouterr().out == f"nothing to compare: no MLflow store at sqlite:///{tmp_path}/results/mlflow.db\n"
    assert main(["compare", "--results", str(tmp_path / "nothing")]) == 0
    assert "nothing to compare" in capsys.readouterr().out
    assert not any(tmp_path.iterdir())


def test_compare_reads_the_store_without_importing_mlflow_or_matplotlib(stores, tmp_path):
    import time

    code = ("import sys, time; t = time.perf_counter(); from benchmark.cli import main; "
            f"c = main(['compare', '--results', {str(stores['used'].parent)!r}]); "
            "print(c, round(time.perf_counter() - t, 2), sorted(m for m in ('mlflow', 'matplotlib', 'sqlalchemy') "
            "if m in sys.modules))")
    env = {k: v for k, v in __import__("os").environ.items() if k != "MLFLOW_TRACKING_URI"}
    env["PYTHONPATH"] = str(REPO)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    *table, last = done.stdout.strip().splitlines()
    code_seen, seconds, heavy = last.split(" ", 2)
    assert code_seen == "0" and heavy == "[]"  # the slow imports of a compare before (seconds each)
    assert "first" in "\n".join(table)
    assert float(seconds) < 5 and time.perf_counter() - started < 60  # generous: a shared, loaded machine


# ----- a store that survives interruptions and damage -------------------------------------------
import shutil  # noqa: E402
import signal  # noqa: E402
from cli_checks import all_statuses as _all_statuses  # noqa: E402
from cli_checks import parent_statuses as _statuses  # noqa: E402
from cli_checks import sql as _sql  # noqa: E402

from benchmark import tracking  # noqa: E402


def _run(jobs_csv, out, *extra):
    return main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                 "--policies", "fifo,srpt", "--output", str(out), "--quiet", *extra])




@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Two sound stores built once: `empty` (schema only) and `used` (one finished run)."""
    root = tmp_path_factory.mktemp("stores")
    empty = root / "empty" / "mlflow.db"
    tracking.prepare(f"sqlite:///{empty}")
    jobs = root / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b"], "submit_time": [0, 1], "duration": [2, 1]}).to_csv(jobs, index=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MLFLOW_TRACKING_URI", raising=False)
        patch.chdir(root)  # the project's store: root/results/mlflow.db
        assert _run(jobs, root / "results" / "first") == 0
    return {"empty": empty, "used": root / "results" / "mlflow.db"}


@pytest.fixture
def quick_build(stores, monkeypatch):
    """A new store is a copy of the module's empty one: the real build (50 migrations, seconds) is
    exercised by the `stores` fixture and the concurrency and fault tests; here it is the detection."""
    built = []

    def build(db):
        shutil.copyfile(stores["empty"], db)
        built.append(db)

    monkeypatch.setattr(tracking, "_build", build)
    return built


def _copy_store(stores, kind, results):
    results.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(stores[kind], results / "mlflow.db")
    return results / "mlflow.db"


# MLflow's first schema migration (add metric step, MLflow 1.x): a version every MLflow knows and none writes now
OLD_SCHEMA = "451aebb31d03"


def _head_and_previous(stores):
    """The schema version this MLflow writes (as MLflow built the empty store) and an older one."""
    ((head,),) = _sql(stores["empty"], "SELECT version_num FROM alembic_version")
    assert head != OLD_SCHEMA
    return head, OLD_SCHEMA


EMPTY_DAMAGE = {
    # what an interrupted first migration or four runs starting at once left behind (issue 15)
    "leftover tmp table": "CREATE TABLE _alembic_tmp_experiments AS SELECT * FROM experiments",
    "no version row": "DELETE FROM alembic_version",
    "two version rows": "INSERT INTO alembic_version VALUES ('{previous}')",
    "stopped part way": "UPDATE alembic_version SET version_num = '{previous}'",
}


@pytest.mark.parametrize("damage", sorted(EMPTY_DAMAGE))
def test_half_migrated_store_without_runs_is_rebuilt(stores, jobs_csv, tmp_path, monkeypatch, capsys, damage,
                                                     request):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    db = _copy_store(stores, "empty", tmp_path / "results")
    head, previous = _head_and_previous(stores)
    _sql(db, EMPTY_DAMAGE[damage].format(previous=previous))
    built = request.getfixturevalue("quick_build") if damage != "leftover tmp table" else None  # one real rebuild
    assert _run(jobs_csv, tmp_path / "results" / "run") == 0
    assert built is None or built == [db]
    err = capsys.readouterr().err
    assert "rebuilt the MLflow store" in err and "held no runs" in err
    assert _sql(db, "SELECT version_num FROM alembic_version") == [(head,)]
    assert not _sql(db, "SELECT name FROM sqlite_master WHERE name LIKE '\\_alembic\\_tmp%' ESCAPE '\\'")
    assert _statuses(db) == {"FINISHED": 1}


@pytest.mark.parametrize("how", ["copy left beside the table", "table dropped, copy not renamed"])
def test_half_migrated_store_with_runs_is_repaired_keeping_them(stores, jobs_csv, tmp_path, monkeypatch, capsys, how):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    names_before = _sql(db, "SELECT name FROM experiments ORDER BY experiment_id")
    if how.startswith("copy"):
        _sql(db, "CREATE TABLE _alembic_tmp_experiments AS SELECT * FROM experiments")
    else:
        _sql(db, "ALTER TABLE experiments RENAME TO _alembic_tmp_experiments")
    damaged = db.read_bytes()
    assert _run(jobs_csv, results / "second") == 0
    err = capsys.readouterr().err
    assert "repaired the MLflow store" in err
    backups = list(results.glob("mlflow.db.damaged-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == damaged  # the damaged file is kept as it was
    assert _statuses(db) == {"FINISHED": 2}  # the old run is still there, the new one logged
    assert _sql(db, "SELECT name FROM experiments ORDER BY experiment_id") == names_before
    assert not _sql(db, "SELECT name FROM sqlite_master WHERE name LIKE '\\_alembic\\_tmp%' ESCAPE '\\'")


def test_unrepairable_store_with_runs_is_exit_2_with_the_command_before_any_work(stores, jobs_csv, tmp_path,
                                                                                 monkeypatch, capsys, quick_build):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    _sql(db, "DELETE FROM alembic_version")
    damaged = db.read_bytes()
    assert _run(jobs_csv, results / "second") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"error: {db}")
    assert f"mv {db} {db}.damaged" in err and "holds 3 runs" in err  # one invocation with two children
    assert db.read_bytes() == damaged and not (results / "second").exists()  # refused before the work
    shutil.move(db, f"{db}.damaged")  # the command it gave
    assert _run(jobs_csv, results / "second") == 0
    assert _statuses(db) == {"FINISHED": 1}


@pytest.mark.parametrize("version", ["previous", "0123456789ab"])
def test_store_of_another_mlflow_version_is_exit_2_with_the_fix(stores, jobs_csv, tmp_path, monkeypatch, capsys,
                                                                version):
    """MLflow itself refuses the version (its out-of-date error), which becomes one line with both fixes."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    version = _head_and_previous(stores)[1] if version == "previous" else version
    _sql(db, "UPDATE alembic_version SET version_num = ?", version)
    before = db.read_bytes()
    words = [f"schema version {version}", f"mlflow db upgrade sqlite:///{db}", "if a newer one did, upgrade MLflow"]
    assert _run(jobs_csv, results / "second") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and all(w in err for w in words), err
    assert main(["compare", "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and all(w in err for w in words), err
    assert db.read_bytes() == before  # neither migrated nor repaired
    assert sorted(p.name for p in results.iterdir()) == ["mlflow.db"]  # no lock file left beside a refused store


def test_leftovers_of_a_killed_build_are_removed_and_junk_is_refused(stores, tmp_path, jobs_csv, monkeypatch, capsys,
                                                                     quick_build):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    results.mkdir()
    (results / "mlflow.db.building-99999").write_bytes(b"half a database")
    (results / "mlflow.db.repairing-99999").write_bytes(b"half a copy")
    assert _run(jobs_csv, results / "run") == 0
    assert sorted(p.name for p in results.iterdir()) == ["mlartifacts", "mlflow.db", "mlflow.db.lock", "run"]
    assert quick_build == [results / "mlflow.db"]
    junk = tmp_path / "junk" / "results"
    junk.mkdir(parents=True)
    (junk / "mlflow.db").write_text("not a database at all, just text that is long enough" * 100)
    monkeypatch.chdir(junk.parent)
    capsys.readouterr()
    assert _run(jobs_csv, junk / "run") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not a usable MLflow SQLite store" in err


def _interrupting(monkeypatch, action):
    """Make MLflow's artifact upload (mid-logging: the run and its children exist) do `action`."""
    import mlflow

    def log_artifact(*args, **kwargs):
        action()

    monkeypatch.setattr(mlflow, "log_artifact", log_artifact)


def _ctrl_c():
    raise KeyboardInterrupt


def _sigterm():
    import os
    import time

    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # would kill pytest itself: fail instead
        raise AssertionError("SIGTERM is not handled inside the command")
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)  # the handler raises long before this ends
    raise AssertionError("SIGTERM did not interrupt")


@pytest.mark.parametrize("action,line", [(_ctrl_c, "interrupted"), (_sigterm, "terminated (SIGTERM)")])
def test_interrupt_while_logging_ends_the_run_killed(stores, jobs_csv, tmp_path, monkeypatch, capsys, action, line):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    _interrupting(monkeypatch, action)
    assert _run(jobs_csv, results / "second") == 130
    assert capsys.readouterr().err == f"{line}\n"
    assert _statuses(db) == {"FINISHED": 1, "KILLED": 1}
    assert "RUNNING" not in _all_statuses(db)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored for the caller
    monkeypatch.undo()
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)  # undo() left the project folder too
    assert _run(jobs_csv, results / "third") == 0  # the store takes the next run
    assert _statuses(db) == {"FINISHED": 2, "KILLED": 1}


def test_compare_shows_each_runs_status_and_counts_abandoned_ones(stores, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    import mlflow

    tracking.use_store(mlflow, f"sqlite:///{db}")
    client = mlflow.MlflowClient(f"sqlite:///{db}")
    experiment = client.get_experiment_by_name("atlas-scheduling-total_completion").experiment_id
    client.create_run(experiment, run_name="killed-by-sigkill")  # what a SIGKILL while logging leaves
    csv = tmp_path / "compare.csv"
    assert main(["compare", "--csv", str(csv)]) == 0
    table = pd.read_csv(csv)
    assert table[["name", "status", "children"]].values.tolist() == [["first", "FINISHED", 2],
                                                                     ["killed-by-sigkill", "RUNNING", 0]]
    out = capsys.readouterr().out
    assert "status" in out.splitlines()[0] and "note: 1 run(s) still RUNNING" in out


def test_tracking_uri_store_keeps_artifacts_beside_it_not_in_the_working_folder(stores, tmp_path, jobs_csv,
                                                                                monkeypatch, quick_build):
    store = tmp_path / "elsewhere" / "store.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{store}")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert _run(jobs_csv, tmp_path / "results" / "run") == 0
    assert not any(cwd.iterdir())  # no ./mlruns
    assert not (tmp_path / "results" / "mlflow.db").exists()
    assert list((tmp_path / "elsewhere" / "mlartifacts").glob("*/artifacts/results.json"))


def test_artifact_location_is_never_the_working_folder(tmp_path):
    assert tracking.artifact_location_for(f"sqlite:///{tmp_path}/a.db") == (tmp_path / "mlartifacts").as_uri()
    assert tracking.artifact_location_for("http://127.0.0.1:5000") is None  # the server decides
    assert tracking.artifact_location_for(str(tmp_path / "mlruns")) is None  # a file store keeps its own
    with pytest.raises(InputError, match="mlflow server"):
        tracking.artifact_location_for("postgresql://u@127.0.0.1/db")


@pytest.fixture
def sigint(request):
    """SIGINT set as the test says for its duration (a terminal's default_int_handler, or ignored as a
    background job has it), whatever this pytest process inherited; restored afterwards."""
    previous = signal.signal(signal.SIGINT, request.param)
    yield request.param
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("sigint", [signal.default_int_handler], indirect=True)
def test_deferred_signals_hold_a_ctrl_c_until_the_block_is_done(sigint):
    import os

    from benchmark.interrupts import deferred_signals

    done = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("after the signal")
    assert done == ["after the signal"]
    with deferred_signals(reraise=False):
        os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("sigint", [signal.default_int_handler, signal.SIG_IGN], indirect=True)
def test_sigterm_interrupts_whether_ctrl_c_is_handled_or_ignored(sigint):
    """A background job (SIGINT ignored) must still turn `kill` into a clean stop; a sweep worker
    (its parent stops it) is the one process that keeps SIGTERM's default action."""
    import os

    from benchmark import interrupts

    with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        with interrupts.terminate_as_interrupt():
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # else the kill ends pytest
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs between bytecodes, well before this ends
                time.sleep(0.005)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL and signal.getsignal(signal.SIGINT) is sigint


def test_a_sweep_worker_leaves_sigterm_to_its_default(monkeypatch):
    from benchmark import interrupts

    previous = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(interrupts, "_parent_handles_signals", False)
    try:
        interrupts.leave_signals_to_parent()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        with interrupts.terminate_as_interrupt():
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, previous)


def test_the_docs_name_the_metrics_the_code_logs():
    """docs/results-and-tracking.md's metric table names exactly CHILD_METRICS (and the prefixes), the names
    the runs above are checked to log; the old flattened names are gone from the docs."""
    doc = (REPO / "docs" / "results-and-tracking.md").read_text()
    table = doc[doc.index('<a id="metric-names"></a>'):]
    documented = {}
    lines = table.splitlines()[2:]
    assert lines[0].startswith("| task |") and lines[1].startswith("|---")
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        task, names = [cell.strip() for cell in line.strip("|").split("|")]
        documented[task] = re.findall(r"`([^`]+)`", names)
    expected = {task: [*names, *(f"{p}*" for p in tracking.CHILD_METRIC_PREFIXES.get(task, ()))]
                for task, names in CHILD_METRICS.items()}
    assert documented == expected
    for old in ("lgbm-meta/lgbm-meta.rmsle", "srpt.ratio", "spjf/noise:0.5.ratio", "OUT/cells/mlflow.db"):
        assert old not in doc


def test_a_waiter_whose_lock_file_was_removed_by_a_refusal_locks_the_new_one(tmp_path, monkeypatch):
    """A command that created `<store>.lock` and refuses the store removes it; one that waited on the removed
    file then locks the file standing at the path (else a third command could lock a new file beside it)."""
    import threading

    from benchmark.tracking import lock_path, store_lock

    monkeypatch.delenv("ATLAS_STORE_LOCK_TIMEOUT", raising=False)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    path = lock_path(uri)
    holding, release, seen = threading.Event(), threading.Event(), {}

    def refuser():
        with pytest.raises(InputError, match="refused"):
            with store_lock(uri):
                holding.set()
                release.wait(10)
                raise InputError("refused")

    def waiter():
        with store_lock(uri):
            seen["exists"] = path.exists()

    checks = []
    real = tracking._names_this_file
    monkeypatch.setattr(tracking, "_names_this_file", lambda p, h: checks.append(real(p, h)) or checks[-1])

    first = threading.Thread(target=refuser)
    first.start()
    assert holding.wait(10)
    second = threading.Thread(target=waiter)
    second.start()
    time.sleep(0.3)  # the waiter is waiting on the refuser's file
    release.set()
    first.join(10)
    second.join(10)
    # the refuser's own check, the waiter's on the removed file (no), then on the new one (yes)
    assert checks == [True, False, True] and seen == {"exists": True}
    assert path.exists()  # the waiter's run went through: its lock file stays, as after any logged run
