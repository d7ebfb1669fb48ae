"""benchmark.api: every docstring example runs (doctest), and the API agrees with the command line."""

import doctest
import json

import pandas as pd
import pytest

from benchmark import api

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

FINDER = doctest.DocTestFinder()
EXAMPLES = [t for t in FINDER.find(api, "benchmark.api") if t.examples]


def test_every_public_function_has_an_example():
    documented = {t.name.rsplit(".", 1)[-1] for t in EXAMPLES}
    functions = {name for name in api.__all__ if callable(getattr(api, name)) and not isinstance(getattr(api, name), type)}
    helpers = {"method_names", "policy_names"}  # one-line lists; their use is shown in docs/api.md
    assert functions - helpers <= documented, sorted(functions - helpers - documented)


@pytest.mark.parametrize("test", EXAMPLES, ids=[t.name.rsplit(".", 1)[-1] for t in EXAMPLES])
def test_docstring_example(test, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may land in the working folder
    monkeypatch.setenv("ATLAS_BENCH_CACHE", str(tmp_path / "cache"))
    test.globs = {**test.globs, "folder": tmp_path / "work", "pd": pd}
    (tmp_path / "work").mkdir()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: pytest.fail(text, pytrace=False))
    assert runner.summarize(verbose=False).failed == 0
    assert sorted(p.name for p in tmp_path.iterdir()) in (["cache", "work"], ["work"])


def test_score_matches_the_scheduling_task(tmp_path):
    from benchmark.cli import main

    jobs = api.load_jobs("elasticflow:cluster05")
    table = api.score(jobs, "max_stretch", policies=["fifo", "srpt", "spjf"], noise=[0.5, 1], n=300, seed=4)
    out = tmp_path / "run"
    assert main(["run", "--task", "scheduling", "--objective", "max_stretch", "--jobs", "elasticflow:cluster05",
                 "--policies", "fifo,srpt,spjf", "--noise", "0.5,1", "--n", "300", "--seed", "4", "--output", str(out),
                 "--no-mlflow", "--quiet"]) == 0
    rows = {(r["policy"], r["predictor"]): r for r in json.loads((out / "results.json").read_text())["rows"]}
    assert len(table) == len(rows) == 4
    for _, row in table.iterrows():
        cli = rows[(row["policy"], None if pd.isna(row["predictor"]) else row["predictor"])]
        assert row["value"] == pytest.approx(cli["value"]) and row["reference"] == pytest.approx(cli["reference"])


def test_simulate_agrees_with_the_objective_rows():
    jobs = api.load_jobs("elasticflow:cluster05").head(200)
    per_job = api.simulate(jobs, "rr")
    table = api.score(jobs, "total_completion", policies=["rr"])
    offset = jobs["submit_time"].min()
    assert (per_job["completion_time"] - offset).sum() == pytest.approx(table.loc[0, "value"])
    assert (per_job["completion_time"] >= per_job["submit_time"] + per_job["duration"] - 1e-6).all()


def test_a_predictive_policy_without_predictions_is_refused():
    from atlas_data.errors import InputError

    jobs = pd.DataFrame({"job_id": ["a", "b"], "submit_time": [0.0, 1.0], "duration": [5.0, 1.0]})
    with pytest.raises(InputError, match="spjf.*predicted"):
        api.score(jobs, policies=["spjf"])
    with pytest.raises(InputError, match="unknown policy 'nope'"):
        api.simulate(jobs, "nope")


HAND = pd.DataFrame({"job_id": list("abcd"), "submit_time": [0.0, 0.0, 1.0, 2.0], "duration": [8.0, 2.0, 1.0, 4.0]})


@pytest.mark.parametrize("predictions, error, message", [
    # a p̂ a jobs table would refuse: ran floored at 1 s (spjf then scored 1.63 instead of failing)
    ({"x": [8.0, -5.0, 1.0, 4.0]}, "InputError", "predictions 'x': row 2: p_hat must be > 0, got -5"),
    ({"x": [8.0, float("inf"), 1.0, 4.0]}, "InputError", "predictions 'x': row 2: p_hat must be finite"),
    ({"x": [8.0, float("nan"), 1.0, 4.0]}, "InputError", "predictions 'x': row 2: p_hat is missing/NaN"),
    ({"x": [1.0, 2.0, 3.0]}, "ValueError", "predictions 'x': 3 values for 4 jobs"),
    # pandas' own errors before: KeyError 'p_hat', "cannot reindex on an axis with duplicate labels"
    ({"x": pd.DataFrame({"job_id": list("abcd"), "pred": [1.0, 2, 3, 4]})}, "InputError",
     "predictions 'x': column 'p_hat': required column is missing (columns present: job_id, pred)"),
    ({"x": pd.DataFrame({"job_id": list("abcdd"), "p_hat": [1.0, 2, 3, 4, 5]})}, "InputError",
     "predictions 'x': row 5: duplicate job_id 'd': row 4 and row 5"),
    ({"x": pd.DataFrame({"job_id": list("abc"), "p_hat": [1.0, 2, 3]})}, "InputError",
     "predictions 'x' have no p̂ for 1 of the 4 jobs (job_id 'd', …)"),
    # a frame instead of {label: frame}: its columns were taken as two p̂ sources
    (pd.DataFrame({"job_id": list("abcd"), "p_hat": [1.0, 2, 3, 4]}), "TypeError", "predictions must be a dict"),
])
def test_bad_predictions_are_refused_naming_the_problem(predictions, error, message):
    with pytest.raises(Exception) as info:
        api.score(HAND, "total_completion", policies=["spjf"], predictions=predictions)
    assert type(info.value).__name__ == error and message in str(info.value)


def test_predictions_match_the_jobs_ids_as_the_jobs_table_writes_them():
    jobs = HAND.assign(job_id=[1, 2, 3, 4])
    by_float_ids = pd.DataFrame({"job_id": [4.0, 3.0, 2.0, 1.0], "p_hat": [4.0, 1.0, 2.0, 8.0]})  # was: "miss some"
    table = api.score(jobs, "total_completion", policies=["spjf"], predictions={"x": by_float_ids})
    assert table.loc[0, "value"] == 27.0  # b (2) at 0 -> 2, c -> 3, d -> 7, a -> 15


@pytest.mark.parametrize("call, error, message", [
    (lambda: api.simulate(HAND.to_numpy(), "srpt"), TypeError, "jobs must be a pandas DataFrame, a file path or a "
                                                               "shipped trace name, got ndarray"),
    (lambda: api.fairness(HAND.to_dict("list"), nodes=1), TypeError, "got dict"),
    (lambda: api.simulate(HAND, "lpt", machines=0), ValueError, "machines must be whole numbers >= 1, got 0"),
    (lambda: api.score(HAND, "total_completion", n=2.5), "InputError", "--n must be a whole number, got 2.5"),
    # was: the window, silently
    (lambda: api.score(HAND, "total_completion", n=2, sample="rand"), "InputError", "sample must be window or random"),
])
def test_arguments_of_the_wrong_kind_are_refused_naming_them(call, error, message):
    with pytest.raises(Exception) as info:
        call()
    assert (type(info.value).__name__ if isinstance(error, str) else type(info.value)) == error
    assert message in str(info.value)


def test_data_of_the_wrong_kind_is_a_type_error_naming_it():
    # a DataFrame's text was taken for a path: OSError "File name too long" with the frame printed
    for call in (lambda: api.predict(HAND, "constant"), lambda: api.test_jobs(HAND),
                 lambda: api.prediction_scores(HAND, {})):
        with pytest.raises(TypeError, match="data must be a dataset .* got DataFrame: to learn from a jobs table"):
            call()
    with pytest.raises(TypeError, match="data must be a dataset .* got DataFrame \\(a jobs table goes in the first"):
        api.fairness(data=FAIR, policies=["fifo"], nodes=1, gpus_per_node=8)


def test_load_jobs_maps_the_columns_of_a_dataframe_too():
    frame = pd.DataFrame({"id": ["a", "b"], "submit": [0.0, 1.0], "runtime": [5.0, 6.0], "num_gpu": [4, 2]})
    jobs = api.load_jobs(frame, columns={"job_id": "id", "submit_time": "submit", "duration": "runtime", "gpus": "num_gpu"})
    assert jobs["gpus"].tolist() == [4, 2]  # the mapping was ignored for a DataFrame (a missing job_id, or 1 GPU each)
    with pytest.raises(Exception, match="columns maps gpus to 'gpu', which the file does not have"):
        api.load_jobs(frame, columns="gpus=gpu")


def test_score_takes_policies_as_text_and_one_machine_count():
    # "srpt" was read letter by letter ("unknown policy 's'"); machines=2 raised "'int' object is not iterable"
    assert api.score(HAND, "total_completion", policies="srpt,fifo")["policy"].tolist() == ["srpt", "fifo"]
    table = api.score(HAND, "makespan", policies=["lpt"], machines=2)
    assert table[["machines", "value"]].values.tolist() == [[2, 8.0]]


def test_simulate_and_score_take_a_policy_as_policies_does(monkeypatch):
    import schedulers.policy
    import schedulers.policy_base

    schedulers.policy.policy_names()
    monkeypatch.setattr(schedulers.policy_base, "_REGISTRY", dict(schedulers.policy_base._REGISTRY))  # registrations stay here
    jobs = HAND.assign(predicted_duration=[8.0, 2.0, 1.0, 4.0])
    # package.module:Class with a setting: was KeyError / "unknown policy". Keys p̂ + α·r with α = 100:
    # a 8, b 2 (both at 0), c 101, d 204 -> b 0-2, a 2-10, c 10-11, d 11-15
    per_job = api.simulate(jobs, "examples.my_policy:SPJFAging(alpha=100)")
    assert per_job["completion_time"].tolist() == [10.0, 2.0, 11.0, 15.0]
    table = api.score(jobs, "total_completion", policies=["fifo", "examples.my_policy:SPJFAging(alpha=100)"])
    assert table["policy"].tolist() == ["fifo", "spjf-aging(alpha=100)"] and table["value"].tolist() == [44.0, 38.0]
    with pytest.raises(Exception, match="policy 'prr' has no parameter 'lamb' \\(it takes: lam, revision\\)"):
        api.simulate(jobs, "prr(lamb=0.5)")  # was: unknown policy 'prr(lamb=0.5)'
    with pytest.raises(TypeError, match="policy must be a name or 'package.module:Class' text, got type"):
        api.simulate(jobs, type(api.policy_names))
    with pytest.raises(Exception, match="policy 'srpt' is a single policy; objective makespan runs parallel ones"):
        api.score(jobs, "makespan", policies=["srpt"])  # was: KeyError 'srpt'
    with pytest.raises(Exception, match="policy 'spjf' needs predicted durations"):
        api.simulate(HAND, "spjf")  # was a PolicyError, not the documented InputError


def test_fairness_names_the_users_frame_not_its_temporary_file():
    from atlas_data.errors import InputError

    jobs = pd.DataFrame({"job_id": ["a", "b"], "submit_time": [0.0, 1.0], "duration": [50.0, 60.0], "gpus": [16, 1]})
    with pytest.raises(InputError) as info:
        api.fairness(jobs, policies=["fifo"], nodes=1, gpus_per_node=8)
    assert str(info.value).startswith("<DataFrame>: job 'a': asks for 16 GPUs, the cluster has 8")  # was /tmp/…/jobs.parquet


FAIR = pd.DataFrame({"job_id": ["a", "b"], "submit_time": [0.0, 1.0], "duration": [50.0, 60.0], "gpus": [2, 1]})


def test_fairness_results_name_the_users_frame_not_its_deleted_temporary_file(tmp_path):
    api.fairness(FAIR, policies=["fifo"], nodes=1, gpus_per_node=8, output=tmp_path / "out", quiet=True)
    text = (tmp_path / "out" / "results.json").read_text()
    doc = json.loads(text)
    assert doc["dataset"]["path"] == "<DataFrame>"  # was /tmp/atlas-fairness-…/jobs.parquet, deleted after the call
    assert "atlas-fairness-" not in text and doc["rows"][0]["policy"] == "fifo"


@pytest.mark.parametrize("options, error, message", [
    # keyword values skip argparse: these failed deep inside the task (KeyError 'bogus', "can't multiply
    # sequence by non-int of type 'float'", "'>' not supported between instances of 'str' and 'float'")
    ({"scenario": "bogus"}, ValueError, "fairness(): scenario must be one of philly, venus, got 'bogus'"),
    ({"nodes": 1.5}, TypeError, "fairness(): nodes must be a whole number, got 1.5"),
    ({"lease": "900"}, TypeError, "fairness(): lease must be a number, got '900'"),
    ({"fair_share": "eq3"}, ValueError, "fairness(): fair_share must be one of eq16, eq8, got 'eq3'"),
    ({"tenant_weights": {"a": 2}}, TypeError, "fairness(): tenant_weights must be text"),
    ({"seed": "x"}, ValueError, "fairness(): seed: not an integer: 'x'"),  # was: run, silently
])
def test_fairness_options_are_checked_as_the_command_line_parses_them(options, error, message):
    with pytest.raises(error) as info:
        api.fairness(None if "scenario" in options else FAIR, policies=["fifo"], **{"nodes": 1, "gpus_per_node": 8,
                                                                                      **options})
    assert message in str(info.value)


def test_fairness_takes_whole_floats_and_numpy_numbers():
    import numpy as np

    result = api.fairness(FAIR, policies=["fifo"], nodes=np.int64(1), gpus_per_node=8.0, lease=np.float32(600))
    assert result.options["cluster"] == "1 x 8 GPUs" and result.metrics.loc["fifo", "completed"] == 2


def test_score_refuses_an_empty_or_repeated_policy_list_and_edf_a_non_positive_stretch():
    from atlas_data.errors import InputError

    with pytest.raises(ValueError, match="policies is empty"):
        api.score(HAND, policies=[])  # was: an empty frame without columns
    with pytest.raises(InputError, match="policy 'srpt' is given twice"):
        api.score(HAND, policies=["srpt", "srpt"])  # was: two identical rows
    with pytest.raises(ValueError, match="edf stretch must be > 0, got -2"):
        api.simulate(HAND, "edf", stretch=-2.0)  # was: deadlines before the releases, run


def test_test_jobs_refuses_a_tenant_column_it_cannot_use(tmp_path):
    from atlas_data.errors import InputError

    ds = api.build_dataset(tmp_path / "ds", jobs=600, seed=2)
    assert api.test_jobs(ds, tenant_column="user")["tenant"].nunique() > 1
    with pytest.raises(InputError, match="dataset has no column 'nope' for tenants"):
        api.test_jobs(ds, tenant_column="nope")  # was: every tenant 'default', silently
    with pytest.raises(InputError, match="tenant_column applies to a dataset"):
        api.test_jobs("elasticflow:cluster05", tenant_column="user")  # was: ignored


def test_an_estimator_never_sees_validation_or_test_labels(tmp_path):
    """Stage 1 is fitted on train rows only; Stage 2 on validation predictions; test is predicted."""
    from sklearn.dummy import DummyRegressor

    ds = api.build_dataset(tmp_path / "ds", jobs=1500, seed=3)
    seen = []

    class Spy(DummyRegressor):
        def fit(self, X, y, sample_weight=None):
            seen.append(("fit", len(X)))
            return super().fit(X, y, sample_weight)

        def predict(self, X, return_std=False):
            seen.append(("predict", len(X)))
            return super().predict(X)

    frame = api.predict(ds, Spy(strategy="median"), calibration="isotonic")
    counts = ds.card["counts"]
    assert seen == [("fit", counts["train"]), ("predict", counts["val"]), ("predict", counts["test"])]
    assert len(frame) == counts["test"]


def test_an_estimator_gives_the_same_p_hat_as_the_command_lines_plugin_route(tmp_path):
    """`predict(ds, Ridge())` and `--methods sklearn.linear_model:Ridge` are one method, not two."""
    from sklearn.linear_model import Ridge

    from predictors.api import predict_test

    ds = api.build_dataset(tmp_path / "ds", jobs=1500, seed=3)
    by_api = api.predict(ds, Ridge())
    by_cli = predict_test(ds.path, "sklearn.linear_model:Ridge", seed=0, cache=False)
    both = by_api.merge(by_cli, on="job_id", suffixes=("_api", "_cli"))
    assert len(both) == len(by_api) == len(by_cli)
    assert (both["p_hat_api"] == both["p_hat_cli"]).all()
    calibrated = api.predict(ds, Ridge(), calibration="linear")
    assert not (calibrated["p_hat"].to_numpy() == by_api["p_hat"].to_numpy()).all()


def test_predict_on_a_shipped_trace_uses_its_own_split():
    frame = api.predict("elasticflow:cluster05", "constant")
    jobs = api.test_jobs("elasticflow:cluster05")
    assert set(frame["job_id"]) == set(jobs["job_id"].astype(str))
    assert frame["p_hat"].nunique() == 1  # the train median


def test_docs_api_page_names_every_function_and_nothing_else():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    import re

    used = set(re.findall(r"\bapi\.([a-z_]+)\(", page))
    functions = {name for name in api.__all__ if not isinstance(getattr(api, name), type)}
    assert used == functions
