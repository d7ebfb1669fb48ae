"""Every name a command is given — predictors, policies, a plugin's `package.module:Obj` — is resolved
before any data is read or any model fitted, for every data source (benchmark.tasks.inputs.resolve_names):
a plugin predictor that works with `--methods` works with `--predictor` on a `--jobs` trace too, and an
unknown name in any position is one line, exit 2, before the first fit."""

import json
import sys
from collections import OrderedDict

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from cli_checks import exit_2_one_line

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

# One Philly VC: 1,137 jobs, its test part 171 jobs (a Ridge fit and the runs take well under a second)
TRACE = "philly:ed69ec"
PLUGIN = "names_first_ridge:MyRidge"

PLUGIN_SOURCE = '''
from sklearn.linear_model import Ridge

FITS = []  # the number of rows of every fit: the test proves the plugin itself was fitted


class MyRidge(Ridge):
    def fit(self, X, y, *args, **kwargs):
        FITS.append(len(y))
        return super().fit(X, y, *args, **kwargs)
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A scikit-learn regressor in a module of the working folder, named by `module:Class`; the
    in-process memo of trace fits emptied, so that the command fits it."""
    from benchmark.tasks import traces

    (tmp_path / "names_first_ridge.py").write_text(PLUGIN_SOURCE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(traces, "_FITS", OrderedDict())
    yield tmp_path
    sys.modules.pop("names_first_ridge", None)


def _fits():
    return sys.modules["names_first_ridge"].FITS


def test_a_plugin_predictor_runs_the_scheduling_task_on_a_trace(plugin):
    from benchmark.tasks import traces
    from predictors.methods import MethodConfig, run_method

    out = plugin / "out"
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", TRACE,
                 "--predictor", PLUGIN, "--policies", "srpt,spjf", "--no-mlflow", "--quiet", "--output", out]) == 0
    doc = json.loads((out / "results.json").read_text())
    rows = {r["policy"]: r for r in doc["rows"]}
    assert rows["spjf"]["predictor"] == PLUGIN and rows["spjf"]["p_hat_source"] == traces.LEARNED_SOURCE
    assert rows["srpt"]["predictor"] is None
    assert _fits() == [doc["dataset"]["counts"]["train"]]  # the plugin, fitted once on the train part
    assert doc["dataset"]["counts"]["test"] == doc["n_jobs"] == 171
    # the p̂ spjf scheduled is the plugin's own prediction of each test job, fitted apart from the command
    per_job = pd.read_parquet(out / "per_job.parquet")
    spjf = per_job[per_job["policy"] == "spjf"].set_index("job_id")["predicted_duration"]
    apart = run_method(traces.trace_split(TRACE, seed=0).split, PLUGIN, MethodConfig(seed=0)).to_frame()
    expected = apart.set_index(apart["job_id"].astype(str))["p_hat"].reindex(spjf.index.astype(str))
    assert len(spjf) == 171 and not expected.isna().any()
    np.testing.assert_allclose(spjf.to_numpy(float), expected.to_numpy(float), rtol=1e-9)
    assert spjf.nunique() > 50  # a real regression, not a constant


def test_a_plugin_predictor_runs_the_fairness_task_on_a_trace(plugin):
    from benchmark.tasks import traces

    out = plugin / "out"
    assert main(["run", "--task", "fairness", "--jobs", TRACE, "--predictor", PLUGIN, "--nodes", "2",
                 "--policies", "fifo,themis", "--no-mlflow", "--quiet", "--output", out]) == 0
    doc = json.loads((out / "results.json").read_text())
    rows = {r["policy"]: r for r in doc["rows"]}
    assert rows["themis"]["predictor"] == PLUGIN and rows["themis"]["p_hat_source"] == traces.LEARNED_SOURCE
    assert rows["fifo"]["predictor"] is None
    assert rows["themis"]["completed"] == rows["fifo"]["completed"] == 171
    assert _fits() == [doc["dataset"]["counts"]["train"]]


# ----- an unknown name in second position: one line, exit 2, nothing read, nothing fitted --------------
def _trap(*args, **kwargs):
    raise AssertionError("a trap: data was read or a model fitted before every name was resolved")


@pytest.fixture
def traps(monkeypatch):
    """Every way a task reads its jobs or fits a predictor raises."""
    from atlas_data import named
    from benchmark.tasks import inputs, traces
    from predictors import api
    from schedulers.cluster.scenarios import SCENARIOS

    for module, name in ((traces, "trace_split"), (traces, "fit_trace_method"), (inputs, "read_jobs_or_trace"),
                         (inputs, "learned_predictions"), (named, "resolve_dataset"), (api, "predict_test"),
                         (api, "fit_or_load")):
        monkeypatch.setattr(module, name, _trap)
    for scenario in list(SCENARIOS):
        monkeypatch.setitem(SCENARIOS, scenario, _trap)


SCHEDULING = ["run", "--task", "scheduling", "--objective", "total_completion"]
FAIRNESS = ["run", "--task", "fairness", "--nodes", "2"]


@pytest.mark.parametrize("argv, fragments", [
    # predictors: the built-in lgbm-meta first, then an unknown name or an import path that is no method
    (SCHEDULING + ["--jobs", TRACE, "--predictor", "lgbm-meta,bogus"], ["--predictor", "'bogus'"]),
    (SCHEDULING + ["--jobs", TRACE, "--predictor", "lgbm-meta,no_such_module_x:Ridge"],
     ["--predictor", "cannot import module 'no_such_module_x'"]),
    (SCHEDULING + ["--jobs", TRACE, "--predictor", "lgbm-meta,json:dumps2"], ["--predictor", "no attribute 'dumps2'"]),
    (SCHEDULING + ["--predictor", "lgbm-meta,bogus"], ["--predictor", "'bogus'"]),  # the default dataset
    (SCHEDULING + ["--jobs", TRACE, "--predictor", "lgbm-meta,collections:OrderedDict"],
     ["--predictor", "not an estimator"]),
    # policies, on every data source
    (SCHEDULING + ["--jobs", TRACE, "--predictor", "lgbm-meta", "--policies", "srpt,bogus"], ["--policies", "'bogus'"]),
    (SCHEDULING + ["--jobs", TRACE, "--policies", "srpt,no_such_module_x:Policy"], ["--policies", "no_such_module_x"]),
    (SCHEDULING + ["--data", "default", "--policies", "srpt,bogus"], ["--policies", "'bogus'"]),
    (FAIRNESS + ["--jobs", TRACE, "--predictor", "lgbm-meta", "--policies", "themis,bogus"], ["--policies", "'bogus'"]),
    (FAIRNESS + ["--jobs", TRACE, "--predictor", "no_such_module_x:Ridge"], ["--predictor", "no_such_module_x"]),
    (FAIRNESS + ["--jobs", TRACE, "--predictor", "bogus"], ["--predictor", "'bogus'"]),
    (FAIRNESS + ["--scenario", "venus", "--policies", "fifo,bogus"], ["--policies", "'bogus'"]),
    (FAIRNESS + ["--policies", "fifo,bogus"], ["--policies", "'bogus'"]),  # the default dataset
    (["run", "--task", "prediction", "--jobs", TRACE, "--methods", "lgbm-meta,bogus"], ["'bogus'"]),
    (["run", "--task", "prediction", "--jobs", TRACE, "--predictor", "lgbm-meta,no_such_module_x:Ridge"],
     ["no_such_module_x"]),
    (["robustness", "--scenario", "none", "--jobs", TRACE, "--predictor", "no_such_module_x:Ridge"],
     ["--predictor", "no_such_module_x"]),
    (["robustness", "--scenario", "venus", "--policies", "themis,bogus"], ["--policies", "'bogus'"]),
])
def test_an_unknown_name_exits_2_before_any_data_is_read_or_model_fitted(tmp_path, capsys, traps, argv, fragments):
    out = tmp_path / "out"
    exit_2_one_line(capsys, [*argv, "--no-mlflow", "--output", out] if argv[0] == "run" else [*argv, "--output", out],
                    *fragments)
    assert not out.exists()
