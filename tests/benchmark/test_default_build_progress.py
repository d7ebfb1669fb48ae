"""The default dataset's first build, started by a task with neither --jobs nor --data, shows progress."""

import json

from benchmark.cli import main


def test_prediction_on_the_default_dataset_reports_the_build(small_default, tmp_path, capsys):
    assert not small_default.exists()
    out = tmp_path / "run"
    assert main(["run", "--task", "prediction", "--methods", "constant", "--output", str(out), "--no-mlflow"]) == 0
    err = capsys.readouterr().err
    assert "[default dataset] building 3,000 synthetic jobs (seed 1) once into" in err
    assert "[default dataset 5/5] written:" in err
    assert json.loads((out / "results.json").read_text())["dataset"]["path"] == str(small_default)
