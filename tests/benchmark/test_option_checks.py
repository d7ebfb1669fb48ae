"""Options the fuzzer broke: every bad value is exit 2 with one line before any work, never exit 1
(an internal error) and never exit 0 after ignoring or dropping what the user gave.

Through `benchmark.cli.main` in-process, like test_hostile_inputs.py.
"""

import pytest

from benchmark.cli import main


def _exit_2_one_line(capsys, argv, *fragments):
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    for fragment in fragments:
        assert fragment in err[0], err[0]
    return err[0]


def _sweep_refused(tmp_path, capsys, text, *fragments):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    out = tmp_path / "never"
    line = _exit_2_one_line(capsys, ["sweep", config, "--output", out, "--no-mlflow"], "bad.yaml", *fragments)
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
    line = _exit_2_one_line(capsys, argv, "seed", ">= 0")
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
    _exit_2_one_line(capsys, ["run", "--task", "scheduling", "--objective", "total_completion", "--n", "200",
                              "--policies", "spjf", "--quiet", "--output", out],
                     "MLFLOW_TRACKING_URI", "no longer writes file stores")
    assert not out.exists() and not folder.exists()
    _exit_2_one_line(capsys, ["compare"], "MLFLOW_TRACKING_URI", "no longer writes file stores")
    config = tmp_path / "s.yaml"
    config.write_text("task: scheduling\nobjectives: [total_completion]\npolicies: [spjf]\nn: [200]\n")
    _exit_2_one_line(capsys, ["sweep", config, "--quiet", "--output", out], "no longer writes file stores")
    assert not out.exists() and not folder.exists()


def test_an_allowed_file_store_is_not_refused_by_the_check(tmp_path, monkeypatch):
    from benchmark.tracking import check_store_kind

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    check_store_kind(str(tmp_path / "store"))
    check_store_kind(f"sqlite:///{tmp_path / 'mlflow.db'}")
