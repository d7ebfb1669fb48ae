"""The value of prediction (benchmark.value) on hand-made result rows, and end to end through
`run --task scheduling --controls`: its ends (the clairvoyant p̂ scores 1, a constant p̂ on a policy
that then ties like fifo scores fifo's value), the controls, and which policies use what p̂ knows."""

import json

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from benchmark.value import CEILING_BINS, CONSTANT, PERMUTED, control_predictions, value_of_prediction
from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policies.distribution import CalibrationCeiling
from schedulers.policies.single import SRPT

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def _rows():
    return [
        {"policy": "fifo", "predictor": None, "ratio": 3.0},
        {"policy": "las", "predictor": None, "ratio": 2.0},  # best blind
        {"policy": "srpt", "predictor": None, "ratio": 1.0},  # clairvoyant
        {"policy": "sprpt", "predictor": "m", "ratio": 1.5},
        {"policy": "gittins", "predictor": "m", "ratio": 1.75},
        {"policy": "sprpt", "predictor": "m" + PERMUTED, "ratio": 2.5},
        {"policy": "gittins", "predictor": "m" + PERMUTED, "ratio": 1.5},
        {"policy": "sprpt", "predictor": "m" + CONSTANT, "ratio": 2.2},
        {"policy": "gittins", "predictor": "m" + CONSTANT, "ratio": 2.0},
        {"policy": "sprpt", "predictor": "noise:0", "ratio": 1.0},
        {"policy": "sprpt", "predictor": "noise:1", "ratio": 1.4},
        {"policy": "sprpt", "predictor": "noise:2", "ratio": 1.8},
    ]


def test_value_by_hand():
    (record,) = value_of_prediction(_rows(), ["srpt"])
    assert record["p_hat"] == "m"
    assert (record["best_blind"], record["best_blind_policy"]) == (2.0, "las")
    assert (record["best_learned"], record["best_learned_policy"]) == (1.5, "sprpt / m")
    assert record["value"] == pytest.approx((2.0 - 1.5) / (2.0 - 1.0))
    # the best row on each control: permuted 1.5 (gittins), constant 2.0 (gittins)
    assert record["controls"] == {"permuted": pytest.approx(0.5), "constant": pytest.approx(0.0)}
    # sprpt is worse on both controls than on m; gittins is better on the permuted one: it does not use m
    assert record["learned_policies"] == ["sprpt"]
    assert record["consistency"] == pytest.approx(1.0)  # noise:0 is p itself
    assert record["robustness"] == pytest.approx(0.0)  # the worst of noise (0.2 at σ 2) and the controls
    assert record["smoothness"] == pytest.approx(0.4)  # 1.0, 1.4, 1.8 over σ 0, 1, 2


def test_no_value_without_a_learned_label_or_a_gap():
    assert value_of_prediction([r for r in _rows() if not str(r["predictor"] or "").startswith("m")], ["srpt"]) == []
    rows = [{"policy": "las", "predictor": None, "ratio": 1.0}, {"policy": "srpt", "predictor": None, "ratio": 1.0},
            {"policy": "sprpt", "predictor": "m", "ratio": 1.0}]
    assert value_of_prediction(rows, ["srpt"])[0]["value"] is None  # no gap to close: no verdict


def test_controls_keep_the_values_and_drop_the_order():
    p_hat = np.array([5.0, 1.0, 3.0, 2.0, 4.0])
    controls = control_predictions(p_hat, seed=0)
    assert sorted(controls[PERMUTED]) == sorted(p_hat) and not np.array_equal(controls[PERMUTED], p_hat)
    assert controls[CONSTANT].tolist() == [3.0] * 5
    assert np.array_equal(control_predictions(p_hat, seed=0)[PERMUTED], controls[PERMUTED])  # seeded


def test_a_run_with_controls_reports_the_value(tmp_path):
    rng = np.random.default_rng(2)
    n = 300
    size = np.ceil(rng.lognormal(3.0, 1.5, n))
    table = pd.DataFrame({"job_id": np.arange(n), "submit_time": np.sort(rng.uniform(0, size.sum() / 1.5, n)),
                          "duration": size, "predicted_duration": size * np.exp(0.3 * rng.standard_normal(n))})
    jobs = tmp_path / "jobs.csv"
    table.to_csv(jobs, index=False)
    out = tmp_path / "out"
    # a jobs table's own p̂ is not a learned one: no controls, but the value of the column is stated
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs),
                 "--policies", "fifo,las,srpt,sprpt,sprpt(revision=double)", "--output", str(out), "--quiet",
                 "--no-mlflow"]) == 0
    doc = json.loads((out / "results.json").read_text())
    (record,) = doc["value_of_prediction"]
    ratio = {(r["policy"], r["predictor"]): r["ratio"] for r in doc["rows"]}
    blind = min(ratio[("fifo", None)], ratio[("las", None)])
    best = min(ratio[("sprpt", "column")], ratio[("sprpt(revision='double')", "column")])
    assert record["p_hat"] == "column" and record["value"] == pytest.approx((blind - best) / (blind - 1.0))
    assert record["value"] > 0.5  # p̂ within exp(0.3 Z) of p: most of the gap closed
    assert record["controls"] == {}


def test_controls_run_beside_a_learned_p_hat(tmp_path):
    out = tmp_path / "out"
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", "elasticflow:cluster05",
                 "--predictor", "hras", "--controls", "--policies", "fifo,las,srpt,sprpt(revision=double),gittins",
                 "--output", str(out), "--quiet", "--no-mlflow"]) == 0
    doc = json.loads((out / "results.json").read_text())
    labels = {r["predictor"] for r in doc["rows"] if r["predictor"]}
    assert labels == {"hras", "hras" + PERMUTED, "hras" + CONSTANT}
    assert doc["p_hat_sources"]["hras" + PERMUTED].startswith("control")
    (record,) = doc["value_of_prediction"]
    assert set(record["controls"]) == {"permuted", "constant"}
    assert isinstance(record["learned_policies"], list)
    # the calibration ceilings: diagnostics beside the value, never result rows
    assert not any("ceiling" in r["policy"] for r in doc["rows"])
    ratio = {(r["policy"], r["predictor"]): r["ratio"] for r in doc["rows"]}
    blind = min(ratio[("fifo", None)], ratio[("las", None)])
    per_job = pd.read_parquet(out / "per_job.parquet")
    learned = per_job[(per_job["policy"] == "gittins") & (per_job["predictor"] == "hras")].sort_values("job_id")
    jobs = JobSet.from_arrays(learned["submit_time"].to_numpy(), learned["duration"].to_numpy(),
                              learned["predicted_duration"].to_numpy())
    srpt = simulate(jobs, SRPT()).completion_time.sum()
    for key, bins in (("ceiling", CEILING_BINS), ("blind_ceiling", 1)):
        ceiling = simulate(jobs, CalibrationCeiling(bins)).completion_time.sum() / srpt
        assert record[key] == pytest.approx((blind - ceiling) / (blind - 1.0), rel=1e-9)
    assert record["blind_ceiling"] < record["ceiling"] < 1.0


def test_value_command_collects_each_tables_record_and_writes_its_block(tmp_path, capsys):
    readme = tmp_path / "results.md"
    readme.write_text("# r\n\n<!-- value:start -->\nold\n<!-- value:end -->\n\ntail\n", encoding="utf-8")
    out = tmp_path / "value"
    assert main(["value", "--jobs", "elasticflow:cluster10,elasticflow:cluster06", "--predictor", "hras",
                 "--objectives", "total_completion", "--output", str(out), "--readme", str(readme), "--quiet",
                 "--no-mlflow"]) == 0
    doc = json.loads((out / "value.json").read_text())
    assert [(r["trace"], r["objective"]) for r in doc["records"]] == [
        ("elasticflow:cluster10", "total_completion"), ("elasticflow:cluster06", "total_completion")]
    for k, record in enumerate(doc["records"]):
        run = json.loads(next(out.glob(f"0{k + 1}-*-total_completion")).joinpath("results.json").read_text())
        (own,) = run["value_of_prediction"]
        assert record["value"] == own["value"] and record["ceiling"] == own["ceiling"]
    summary = doc["summary"]["total_completion"]
    values = [r["value"] for r in doc["records"]]
    assert summary["tables"] == 2 and summary["mean_value"] == pytest.approx(sum(values) / 2)
    assert summary["not_worse"] == sum(r["best_learned"] <= r["best_blind"] for r in doc["records"])
    text = readme.read_text(encoding="utf-8")
    assert "old" not in text and text.endswith("<!-- value:end -->\n\ntail\n")
    assert "| `elasticflow:cluster06` | ΣC_j / SRPT | hras |" in text
    assert f"on {summary['not_worse']} of 2 tables; mean value {summary['mean_value']:+.2f}" in text


@pytest.mark.parametrize("argv, message", [
    (["--objectives", "makespan"], "--objectives"),
    (["--jobs", "openb,openb"], "named twice"),
    (["--predictor", "lgbm-meta,hras"], "one predictor"),
    (["--predictor", "oracle"], "reads the true sizes"),
    (["--predictor", "noise:0.5"], "--predictor"),
])
def test_value_command_refuses_bad_options_before_any_run(tmp_path, capsys, argv, message):
    out = tmp_path / "value"
    assert main(["value", "--output", str(out), "--quiet", "--no-mlflow", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_value_command_leaves_nothing_when_a_run_fails(tmp_path, capsys):
    out = tmp_path / "value"
    missing = tmp_path / "absent.csv"
    # the first table runs, the second is refused by its run: exit 2, and no half-made folder
    assert main(["value", "--jobs", f"elasticflow:cluster10,{missing}", "--predictor", "hras",
                 "--objectives", "total_completion", "--output", str(out), "--quiet", "--no-mlflow"]) == 2
    assert str(missing) in capsys.readouterr().err
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".value")]


def test_value_command_logs_each_run_from_its_final_folder(tmp_path):
    import mlflow

    out = tmp_path / "value"
    assert main(["value", "--jobs", "elasticflow:cluster10", "--predictor", "hras", "--objectives", "total_completion",
                 "--output", str(out), "--quiet"]) == 0
    runs = mlflow.search_runs(search_all_experiments=True)
    outputs = set(runs.get("params.output", pd.Series(dtype=object)).dropna())
    assert str(out / "01-elasticflow-cluster10-total_completion") in outputs
    assert not any(".tmp" in o for o in outputs)
