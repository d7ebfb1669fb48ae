"""Built-in entries and the starter template, on the tiny hand-made dataset."""

import json

import pytest
import yaml

from benchmark.cli import main
from leaderboards.store import sha256_file

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def test_rebuild_builtin_and_template_round_trip(dataset, tmp_path, capsys, no_cpsat):
    ds, fingerprint, test = dataset
    entries = tmp_path / "entries"
    assert main(["leaderboard", "--rebuild-builtin", "--methods", "constant,oracle", "--data", str(ds),
                 "--entries-dir", str(entries), "--track", "scheduling", "--quiet"]) == 0
    board = capsys.readouterr().out
    names = sorted(p.relative_to(entries).as_posix() for p in entries.rglob("*.json"))
    assert names == [f"{t}/{m}-{fingerprint[:8]}.json" for t in ("prediction", "scheduling") for m in ("constant", "oracle")]
    oracle = json.loads((entries / "scheduling" / f"oracle-{fingerprint[:8]}.json").read_text())
    constant = json.loads((entries / "scheduling" / f"constant-{fingerprint[:8]}.json").read_text())
    assert oracle["reference"] is True and oracle["builtin"] is True and constant["reference"] is False
    assert oracle["prediction"]["rmsle"] == 0.0 and oracle["prediction"]["cov25"] == 1.0
    assert oracle["scheduling"]["total_completion"]["sprpt"]["ratio"]["mean"] == pytest.approx(1.0)
    # the constant predictor ties every job: SPJF = FIFO, which is worse than SJF (= oracle SPJF) here
    spjf = lambda e: e["scheduling"]["total_completion"]["spjf"]["ratio"]["mean"]  # noqa: E731
    assert spjf(constant) > spjf(oracle) >= 1.0
    # the constant method is the blind reference: its score is exactly 1; p̂ = p is far better
    assert constant["score"] == 1.0 and constant["score_interval"] == [1.0, 1.0]
    assert oracle["score_interval"][1] < 1.0
    assert board.index("| 1 | constant |") < board.index("| ref | oracle |")

    # the template is the constant method's predictions: submitting it reproduces the built-in numbers
    sub = tmp_path / "starter"
    assert main(["submit", "--template", str(sub), "--data", str(ds), "--track", "scheduling", "--quiet"]) == 0
    meta = yaml.safe_load((sub / "submission.yaml").read_text())
    assert meta["dataset_fingerprint"] == fingerprint and meta["track"] == "scheduling" and meta["name"] == "my-constant"
    # submitted unchanged, it is the built-in's predictions under a second name: refused
    capsys.readouterr()
    assert main(["submit", str(sub), "--track", "scheduling", "--data", str(ds), "--entries-dir", str(entries)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "already on the scheduling leaderboard as 'constant'" in err[0]
    assert not (entries / "scheduling" / f"my-constant-{fingerprint[:8]}.json").exists()

    # the template never overwrites an existing submission
    before = sha256_file(sub / "predictions.parquet")
    capsys.readouterr()
    assert main(["submit", "--template", str(sub), "--data", str(ds)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "already holds the output of an earlier `benchmark submit --template`" in err[0]
    assert sha256_file(sub / "predictions.parquet") == before  # untouched


def test_a_template_from_a_plugin_method_says_plugin_not_built_in(dataset, tmp_path):
    ds, fingerprint, _ = dataset
    plugin, builtin = tmp_path / "plugin", tmp_path / "builtin"
    assert main(["submit", "--template", str(plugin), "--data", str(ds), "--method", "sklearn.dummy:DummyRegressor",
                 "--quiet"]) == 0
    assert main(["submit", "--template", str(builtin), "--data", str(ds), "--quiet"]) == 0
    meta = yaml.safe_load((plugin / "submission.yaml").read_text())
    assert meta["name"] == "my-DummyRegressor"
    assert meta["description"].startswith("Starter submission: the plugin 'sklearn.dummy:DummyRegressor' predictor.")
    assert "built-in" not in meta["description"]
    assert yaml.safe_load((builtin / "submission.yaml").read_text())["description"].startswith(
        "Starter submission: the built-in 'constant' predictor.")
