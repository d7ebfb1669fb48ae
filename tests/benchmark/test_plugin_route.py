"""One plugin route (docs/plugins.md): mod:Obj from the working folder, --plugins FILE, entry points,
errors in user code, the code-aware p̂ cache, and the worked example of the docs, executed."""

from __future__ import annotations

import json
import re
import shlex
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from benchmark.cli import main
from predictors.synthetic import make_frame, write_dataset

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh working folder with a small dataset (800 jobs, 120 test jobs) and a clean module cache."""
    import predictors.methods
    import schedulers.policy
    import schedulers.policy_base

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    # what a test's plugins register stays in the test
    monkeypatch.setattr(predictors.methods, "METHODS", dict(predictors.methods.METHODS))
    schedulers.policy.policy_names()  # the built-in policies registered first, into the real registry
    monkeypatch.setattr(schedulers.policy_base, "_REGISTRY", dict(schedulers.policy_base._REGISTRY))
    before = set(sys.modules)
    write_dataset(make_frame(800, seed=3), tmp_path / "ds")
    yield tmp_path
    for name in set(sys.modules) - before:  # the plugin modules written by a test
        if name.startswith(("my_", "plug_", "broken_")):
            del sys.modules[name]


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


RIDGE_PLUGIN = """
    from sklearn.linear_model import Ridge

    class MyRidge(Ridge):
        def __init__(self, alpha={alpha}):
            super().__init__(alpha=alpha)
"""


def test_methods_predictor_and_template_take_mod_obj_from_the_working_folder(workdir, capsys):
    _write(workdir / "my_ridge.py", RIDGE_PLUGIN.format(alpha=1.0))
    assert main(["run", "--task", "prediction", "--data", "ds", "--methods", "constant,my_ridge:MyRidge",
                 "--output", "out", "--no-mlflow", "--quiet"]) == 0
    rows = {r["method"]: r for r in json.loads((workdir / "out" / "results.json").read_text())["rows"]}
    assert rows["my_ridge:MyRidge"]["rmsle"] < rows["constant"]["rmsle"] - 0.2
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--data", "ds",
                 "--predictor", "my_ridge:MyRidge", "--policies", "spjf", "--output", "sched", "--no-mlflow", "--quiet"]) == 0
    doc = json.loads((workdir / "sched" / "results.json").read_text())
    assert [(r["policy"], r["predictor"]) for r in doc["rows"]] == [("spjf", "my_ridge:MyRidge")]
    assert main(["submit", "--template", "sub", "--method", "my_ridge:MyRidge", "--data", "ds", "--quiet"]) == 0
    preds = pd.read_parquet(workdir / "sub" / "predictions.parquet")
    ours = pd.read_parquet(workdir / "out" / "predictions" / "my_ridge_MyRidge.parquet")
    assert preds.set_index("job_id")["p_hat"].to_dict() == pytest.approx(ours.set_index("job_id")["p_hat"].to_dict())


def test_a_changed_plugin_refits_instead_of_reusing_the_cache(workdir):
    from predictors.api import predict_test

    _write(workdir / "my_model.py", RIDGE_PLUGIN.format(alpha=1.0))
    first = predict_test(workdir / "ds", "my_model:MyRidge")
    assert predict_test(workdir / "ds", "my_model:MyRidge")["p_hat"].tolist() == first["p_hat"].tolist()  # cached
    # the user edits the plugin: a far stronger ridge penalty
    _write(workdir / "my_model.py", RIDGE_PLUGIN.format(alpha=1e6))
    del sys.modules["my_model"]
    second = predict_test(workdir / "ds", "my_model:MyRidge")
    assert (second["p_hat"] - first["p_hat"]).abs().max() > 1.0
    # a registered method: the same name, another build -> refit too
    from predictors import methods
    from predictors.framework import ThreeStage
    from sklearn.linear_model import Ridge

    saved = dict(methods.METHODS)
    try:
        methods.register_method("my-reg", lambda f, c: ThreeStage({"main": Ridge(alpha=1.0)}))
        a = predict_test(workdir / "ds", "my-reg")
        methods.METHODS.pop("my-reg")
        methods.register_method("my-reg", lambda f, c: ThreeStage({"main": Ridge(alpha=1e6)}))
        b = predict_test(workdir / "ds", "my-reg")
        assert (a["p_hat"] - b["p_hat"]).abs().max() > 1.0
    finally:
        methods.METHODS.clear()
        methods.METHODS.update(saved)


def test_plugins_file_registers_a_method_with_a_plain_regressor_and_no_stage2(workdir, capsys):
    _write(workdir / "plug_methods.py", """
        from sklearn.ensemble import HistGradientBoostingRegressor
        from predictors.framework import ThreeStage
        from predictors.methods import register_method

        register_method("plain-hgb", lambda features, cfg: ThreeStage({"main": HistGradientBoostingRegressor(max_iter=30)}, None))
    """)
    (workdir / "elsewhere").mkdir()
    assert main(["run", "--task", "prediction", "--data", "ds", "--plugins", str(workdir / "plug_methods.py"),
                 "--methods", "constant,plain-hgb", "--output", "out", "--no-mlflow", "--quiet"]) == 0
    rows = {r["method"]: r for r in json.loads((workdir / "out" / "results.json").read_text())["rows"]}
    assert rows["plain-hgb"]["rmsle"] < rows["constant"]["rmsle"] - 0.2


def test_policies_by_import_path_with_parameters_and_plugins_file(workdir, capsys):
    repo = Path(__file__).resolve().parents[2]
    jobs = pd.DataFrame({"job_id": range(6), "submit_time": [0, 1, 2, 3, 4, 5], "duration": [10, 50, 5, 5, 5, 5],
                         "predicted_duration": [10, 50, 5, 5, 5, 5]})
    jobs.to_csv(workdir / "jobs.csv", index=False)
    args = ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", "jobs.csv", "--output", "o",
            "--no-mlflow", "--quiet", "--plugins", str(repo / "examples" / "my_policy.py"),
            "--policies", "spjf,my_policy:SPJFAging(alpha=100),spjf-aging"]
    assert main(args) == 0
    rows = json.loads((workdir / "o" / "results.json").read_text())["rows"]
    assert [r["policy"] for r in rows] == ["spjf", "spjf-aging(alpha=100)", "spjf-aging"]
    by = {r["policy"]: r["value"] for r in rows}
    assert by["spjf-aging"] == by["spjf"] != by["spjf-aging(alpha=100)"]  # α = 0 is SPJF; a large α is FIFO
    fifo_sum = sum([10, 60, 65, 70, 75, 80])
    assert by["spjf-aging(alpha=100)"] == pytest.approx(fifo_sum)
    capsys.readouterr()
    assert main(args[:-1] + ["my_policy:SPJFAging(beta=1)"]) == 2
    assert "policy 'spjf-aging' has no parameter 'beta' (it takes: alpha)" in _one_error_line(capsys)
    assert main(args[:-1] + ["my_policy:IDLE"]) == 2
    assert "not a policy" in _one_error_line(capsys)


def test_exceptions_in_user_code_are_one_line_exit_2(workdir, capsys):
    _write(workdir / "broken_things.py", """
        import numpy as np
        from sklearn.base import BaseEstimator, RegressorMixin
        from schedulers.policy import Allocation, Policy

        class Crashy(Policy):
            name = "crashy"
            def allocate(self, view):
                raise ZeroDivisionError("my bug in allocate")

        class BadFit(RegressorMixin, BaseEstimator):
            def fit(self, X, y):
                raise ValueError("my bug in fit")
            def predict(self, X):
                return np.zeros(len(X))
    """)
    pd.DataFrame({"job_id": [1, 2], "submit_time": [0, 1], "duration": [3, 4]}).to_csv("jobs.csv", index=False)
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", "jobs.csv", "--no-mlflow",
                 "--quiet", "--output", "o", "--policies", "broken_things:Crashy"]) == 2
    line = _one_error_line(capsys)
    assert "policy 'crashy' (broken_things.Crashy) raised ZeroDivisionError: my bug in allocate" in line
    assert "internal error" not in line
    assert main(["run", "--task", "prediction", "--data", "ds", "--methods", "broken_things:BadFit", "--output", "p",
                 "--no-mlflow", "--quiet"]) == 2
    assert "method 'broken_things:BadFit' raised ValueError: my bug in fit" in _one_error_line(capsys)
    _write(workdir / "broken_import.py", "raise RuntimeError('cannot start')\n")
    assert main(["run", "--task", "prediction", "--data", "ds", "--plugins", "broken_import.py", "--output", "q",
                 "--no-mlflow", "--quiet"]) == 2
    assert "plugin file 'broken_import.py' raised RuntimeError: cannot start" in _one_error_line(capsys)
    assert main(["run", "--task", "prediction", "--data", "ds", "--methods", "no_such_mod:X", "--output", "r",
                 "--no-mlflow", "--quiet"]) == 2
    assert "cannot import module 'no_such_mod'" in _one_error_line(capsys)


def test_an_installed_package_registers_plugins_through_the_entry_point_group(workdir, monkeypatch):
    import atlas_data.plugins as plugins
    from predictors import methods

    site = workdir / "site"
    (site / "plug_pkg").mkdir(parents=True)
    _write(site / "plug_pkg" / "__init__.py", """
        from sklearn.linear_model import Ridge
        from predictors.framework import ThreeStage
        from predictors.methods import register_method

        register_method("ep-ridge", lambda features, cfg: ThreeStage({"main": Ridge()}))
    """)
    dist = site / "plug_pkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-pkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[atlas_bench.plugins]\nplug = plug_pkg\n")
    sys.path.insert(0, str(site))
    monkeypatch.setattr(plugins, "_loaded_entry_points", False)
    monkeypatch.setattr(methods, "METHODS", dict(methods.METHODS))
    assert "ep-ridge" in methods.method_names()
    assert main(["run", "--task", "prediction", "--data", "ds", "--methods", "ep-ridge", "--output", "o",
                 "--no-mlflow", "--quiet"]) == 0


def _doc_blocks():
    text = DOCS.read_text()
    section = text[text.index("## Worked example"):]
    code = re.search(r"```python\n# (\w+\.py)\n(.*?)```", section, re.S)
    commands = re.search(r"Then, from the same folder:\n\n```\n(.*?)```", section, re.S).group(1)
    return code.group(1), code.group(2), [line for line in commands.splitlines() if line.startswith("benchmark ")]


def test_the_worked_example_of_the_docs_runs_as_written(workdir, capsys, monkeypatch):
    """The docs' commands, on a small dataset (--data) and a private entries folder (--entries-dir)."""
    monkeypatch.setattr("schedulers.normalisers.cpsat_feasible_size", lambda n, m: False)
    name, code, commands = _doc_blocks()
    assert len(commands) == 4
    (workdir / name).write_text(code)
    entries = workdir / "entries"
    assert main(["leaderboard", "--rebuild-builtin", "--methods", "constant,oracle", "--track", "scheduling",
                 "--data", "ds", "--entries-dir", str(entries), "--quiet"]) == 0
    capsys.readouterr()
    for line in commands:
        argv = shlex.split(line)[1:]
        extra = []
        if argv[0] in ("run", "submit"):
            extra += ["--data", "ds"]
        if argv[0] == "run":
            extra += ["--no-mlflow"]
        if argv[0] == "leaderboard" or (argv[0] == "submit" and "--template" not in argv):
            extra += ["--entries-dir", str(entries)]
        assert main(argv + extra) == 0, line
    out = capsys.readouterr().out
    board = out[out.index("# ATLAS-Bench leaderboards"):]
    assert "my-MyHGB" in board and "| ref | oracle |" in board
    entry = json.loads(next((entries / "scheduling").glob("my-myhgb-*.json")).read_text())
    lo, hi = entry["score_interval"]
    assert lo <= entry["score"] <= hi and entry["scheduling"]["windows"] >= 5
    rows = [r for r in board.splitlines() if r.startswith("| ") and ("my-MyHGB" in r or "| constant |" in r)]
    assert len(rows) == 2 and all(re.match(r"^\| =?\d+ \|", r) for r in rows)


@pytest.mark.parametrize("task, policies, message", [
    # a built-in refusing a setting was an internal error (exit 1) with a traceback hint
    (["--task", "scheduling", "--objective", "total_completion"], "prr(lam=5)",
     "--policies: policy 'prr(lam=5)': prr lambda must be in [0, 1]"),
    (["--task", "scheduling", "--objective", "total_completion"], "spjf(alpha=1)",
     "policy 'spjf' has no parameter 'alpha' (it takes: revision)"),  # said "(it takes: args)"
    # a setting the task passes itself was silently overridden by the task's value, under the user's label
    (["--task", "fairness", "--nodes", "1", "--gpus-per-node", "8"], "astraea(lease_s=60)",
     "policy 'astraea(lease_s=60)': 'lease_s' is set by the task from its own options"),
    (["--task", "scheduling", "--objective", "makespan"], "lpt(seed=3)", "policy 'lpt(seed=3)': 'seed' is set by the task"),
    # a plugin's constructor raising was an internal error too
    (["--task", "scheduling", "--objective", "total_completion"], "plug_strict:Strict(k=-1)",
     "policy 'plug-strict(k=-1)' (plug_strict.Strict) raised ValueError: k must be >= 0"),
])
def test_a_policy_setting_that_cannot_run_is_one_line_exit_2(workdir, capsys, task, policies, message):
    _write(workdir / "plug_strict.py", """
        from schedulers.policy import Policy

        class Strict(Policy):
            name = "plug-strict"

            def __init__(self, k=1):
                if k < 0:
                    raise ValueError("k must be >= 0")
    """)
    pd.DataFrame({"job_id": [1, 2], "submit_time": [0, 1], "duration": [3, 4], "predicted_duration": [3, 4], "gpus": [2, 4],
                  "tenant": ["a", "b"]}).to_csv("jobs.csv", index=False)
    assert main(["run", *task, "--jobs", "jobs.csv", "--no-mlflow", "--quiet", "--output", "o",
                 "--policies", policies]) == 2
    line = _one_error_line(capsys)
    assert message in line and "internal error" not in line


def test_a_plugin_taking_a_built_in_name_is_one_line_in_a_fresh_process(tmp_path):
    import subprocess

    (tmp_path / "plug_clash.py").write_text(
        "from schedulers.policy import Policy, register\n\n@register\nclass Mine(Policy):\n    name = 'spjf'\n")
    pd.DataFrame({"job_id": [1, 2], "submit_time": [0, 1], "duration": [3, 4]}).to_csv(tmp_path / "jobs.csv", index=False)
    # a fresh process: the plugin is imported before the built-in policies are (in this one they already are)
    argv = ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", "jobs.csv", "--no-mlflow",
            "--quiet", "--output", "o", "--plugins", "plug_clash.py", "--policies", "fifo"]
    done = subprocess.run([sys.executable, "-c", f"from benchmark.cli import main; raise SystemExit(main({argv!r}))"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr  # was 1: "internal error" from importing the built-in module
    assert done.stderr.strip() == ("error: --plugins: plugin file 'plug_clash.py' raised ValueError: policy name 'spjf' is "
                                   "already registered for kind 'single' by schedulers.policies.single.SPJF")


def test_a_cluster_policy_plugin_runs_from_the_command_line(workdir, capsys):
    """examples/my_cluster_policy.py, a Python rule, on the cluster simulator: with parameters, by name and
    by import path; a rule that breaks the simulator's rules is exit 2 with one line naming it."""
    repo = Path(__file__).resolve().parents[2]
    plugin = str(repo / "examples" / "my_cluster_policy.py")
    args = ["run", "--task", "fairness", "--scenario", "venus", "--n", "600", "--nodes", "12", "--output", "o", "--no-mlflow", "--quiet",
            "--plugins", plugin]
    assert main(args + ["--policies", "tenant-band-sjf(band=0.5),my_cluster_policy:TenantBandSJF(band=100)"]) == 0
    doc = json.loads((workdir / "o" / "results.json").read_text())
    rows = {r["policy"]: r for r in doc["rows"]}
    assert set(rows) == {"tenant-band-sjf(band=0.5)", "tenant-band-sjf(band=100)"}
    assert all(r["completed"] == 600 for r in rows.values())
    assert set(doc["cluster_loops"].values()) == {"Python"}  # a Python rule runs on the simulator's Python loop
    # a band wider than every ρ is shortest predicted GPU time first over all tenants: another schedule
    assert rows["tenant-band-sjf(band=0.5)"]["avg_jct"] != rows["tenant-band-sjf(band=100)"]["avg_jct"]
    capsys.readouterr()
    _write(workdir / "broken_cluster.py", """
        from schedulers.cluster.base import ClusterPolicy
        from schedulers.policy import register

        @register
        class EveryJob(ClusterPolicy):
            name = "every-job"

            def order(self, view, candidates):
                return list(range(view.jobs.n))  # jobs that have not arrived, or are done, too
    """)
    assert main(args[:-1] + [str(workdir / "broken_cluster.py"), "--policies", "every-job", "--output", "o2"]) == 2
    line = _one_error_line(capsys)
    assert "every-job" in line and "which is neither running nor waiting" in line
