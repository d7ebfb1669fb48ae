"""`run --protocol paper` and `benchmark reproduce atlas` end to end, on small jobs tables."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from benchmark.experiments.atlas import END, ROWS, START

# the commands' figures are placeholders but where a test looks at them (figures_rendered; tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


@pytest.fixture
def jobs_file(tmp_path):
    rng = np.random.default_rng(5)
    n = 900
    size = np.ceil(np.exp(rng.normal(4.0, 1.5, n)))
    frame = pd.DataFrame({
        "job_id": np.arange(n), "submit_time": np.cumsum(rng.exponential(40.0, n)), "duration": size,
        "predicted_duration": size * np.exp(rng.normal(0, 1.0, n)),
    })
    path = tmp_path / "jobs.csv"
    frame.sample(frac=1.0, random_state=1).to_csv(path, index=False)  # a row order that is not submit order
    return path


def test_paper_protocol_labels_its_leaks_everywhere(tmp_path, jobs_file, capsys):
    out = tmp_path / "ms"
    code = main(["run", "--task", "scheduling", "--objective", "max_stretch", "--jobs", str(jobs_file),
                 "--protocol", "paper", "--no-mlflow", "--output", str(out)])
    assert code == 0
    captured = capsys.readouterr()
    assert "warning: --protocol paper reads true sizes" in captured.err and "clip-by-true-size" in captured.err
    assert "PAPER PROTOCOL" in captured.out and "leaks" in captured.out.splitlines()[1]
    doc = json.loads((out / "results.json").read_text())
    assert doc["protocol"] == "paper" and doc["options"]["sample_seed"] == 42
    assert [x["leak"] for x in doc["leaks"]] == ["clip-by-true-size", "edf-p-true-s-star"]
    rows = {r["policy"]: r for r in doc["rows"]}
    assert set(rows) == {"edf", "srpt", "fifo", "las-ref", "sprpt", "edf-p-ref"}
    assert rows["edf"]["ratio"] == pytest.approx(1.0) and rows["fifo"]["leaks"] == []
    assert doc["instances"][0]["n"] == 900 and doc["instances"][0]["load"] > 0  # 900 < 5,000: every job


def test_honest_protocol_reports_no_leaks_and_the_load(tmp_path, jobs_file, capsys):
    out = tmp_path / "tc"
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_file),
                 "--no-mlflow", "--quiet", "--output", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
    doc = json.loads((out / "results.json").read_text())
    frame = pd.read_csv(jobs_file)
    expected_load = frame["duration"].sum() / (frame["submit_time"].max() - frame["submit_time"].min())
    assert doc["protocol"] == "honest" and doc["leaks"] == [] and all(r["leaks"] == [] for r in doc["rows"])
    assert doc["instances"][0]["load"] == pytest.approx(expected_load)


def test_sample_seed_moves_the_sample_not_the_noise(tmp_path, jobs_file):
    docs = []
    for seed in (1, 2):
        out = tmp_path / f"s{seed}"
        assert main(["run", "--task", "scheduling", "--objective", "max_stretch", "--jobs", str(jobs_file),
                     "--protocol", "paper", "--n", "300", "--sample-seed", str(seed), "--policies", "srpt",
                     "--no-mlflow", "--quiet", "--output", str(out)]) == 0
        docs.append(pd.read_parquet(out / "per_job.parquet"))
    assert set(docs[0]["job_id"]) != set(docs[1]["job_id"])


@pytest.mark.figures_rendered  # looks at the figure
def test_reproduce_on_a_jobs_table_writes_table_figure_and_readme_block(tmp_path, jobs_file, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{START}\nold\n{END}\n\ntail\n")
    out = tmp_path / "rep"
    assert main(["reproduce", "atlas", "--jobs", str(jobs_file), "--output", str(out), "--readme", str(readme), "--quiet"]) == 0
    text = capsys.readouterr().out
    summary = json.loads((out / "reproduce-atlas.json").read_text())
    assert len(summary["rows"]) == len(ROWS) and all(r["why"] for r in summary["rows"])
    by_row = {r["row"]: r for r in summary["rows"]}
    assert by_row["SRPT"]["paper_protocol"] == pytest.approx(1.0) and by_row["SRPT"]["honest"] == pytest.approx(1.0)
    assert by_row["Meta-SPRPT ρ_max"]["leaks"] == ["clip-by-true-size"]
    # the honest column's SPRPT is the honest run's own row
    honest = json.loads((out / "honest-max_stretch" / "results.json").read_text())
    sprpt = [r for r in honest["rows"] if r["policy"] == "sprpt"][0]
    assert by_row["Meta-SPRPT ρ_max"]["honest"] == pytest.approx(sprpt["ratio"])
    assert (out / "reproduce-atlas.png").stat().st_size > 5000
    body = readme.read_text()
    assert "old" not in body and body.endswith("\n\ntail\n") and "| Meta-SPJF | 1.106 |" in body
    assert "| Meta-SPJF | 1.106 |" in text


@pytest.mark.parametrize("argv,message", [
    (["--jobs", "J", "--data", "default"], "either --jobs or --data"),
    (["--jobs", "J", "--readme", "nope.md"], "README file not found"),
    (["--jobs", "J", "--noise", "-1"], "argument --noise: a noise level σ must be >= 0, got '-1'"),
    (["--jobs", "missing.csv"], "missing.csv"),
])
def test_reproduce_bad_input_is_exit_2_and_one_line(tmp_path, jobs_file, capsys, argv, message):
    argv = [str(jobs_file) if a == "J" else str(tmp_path / a) if a.endswith((".md", ".csv")) else a for a in argv]
    assert main(["reproduce", "atlas", "--output", str(tmp_path / "o"), "--quiet", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_readme_without_markers_is_refused_before_any_work(tmp_path, jobs_file, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# no block\n")
    assert main(["reproduce", "atlas", "--jobs", str(jobs_file), "--readme", str(readme), "--output",
                 str(tmp_path / "o"), "--quiet"]) == 2
    assert "reproduce-atlas:start" in capsys.readouterr().err
    assert readme.read_text() == "# no block\n" and not (tmp_path / "o").exists()


def test_named_datasets_live_beside_the_default_in_the_cache(tmp_path, monkeypatch):
    from atlas_data import named
    from atlas_data.build import default_dataset_dir

    monkeypatch.setenv("ATLAS_BENCH_CACHE", str(tmp_path))
    assert named.named_dataset_dir("default") == default_dataset_dir()
    assert named.named_dataset_dir("paper-scale").name == default_dataset_dir().name.replace("default-", "paper-scale-")
    monkeypatch.setitem(named.NAMED_DATASETS, "tiny", {"jobs": 3000, "seed": 1})
    folder = named.resolve_dataset("tiny")
    assert (folder / "atlas.parquet").exists() and named.resolve_dataset("tiny") == folder
    assert named.resolve_dataset(str(tmp_path / "elsewhere")) == tmp_path / "elsewhere"


@pytest.mark.slow
def test_reproduce_on_the_default_dataset_lands_near_the_papers_sprpt(tmp_path, monkeypatch, capsys):
    """The done-when check on the embedded default dataset (built into a fresh cache, ≈ 30 s)."""
    monkeypatch.setenv("ATLAS_BENCH_CACHE", str(tmp_path / "cache"))
    assert main(["reproduce", "atlas", "--data", "default", "--output", str(tmp_path / "rep"), "--quiet"]) == 0
    rows = {r["row"]: r for r in json.loads((tmp_path / "rep" / "reproduce-atlas.json").read_text())["rows"]}
    # clip leak on: SPRPT within 10 % of the paper's 18.13; off (honest): more than 10x above
    assert rows["Meta-SPRPT ρ_max"]["paper_protocol"] == pytest.approx(18.13, rel=0.1)
    assert rows["Meta-SPRPT ρ_max"]["honest"] > 10 * rows["Meta-SPRPT ρ_max"]["paper_protocol"]
    # las-ref is far above exact LAS
    assert rows["LAS ρ_max"]["paper_protocol"] > 5 * rows["LAS ρ_max"]["honest"]
    for name, paper in (("SJF", 1.001), ("RR", 1.975), ("LPT", 1.0), ("SPT", 1.539)):
        assert rows[name]["paper_protocol"] == pytest.approx(paper, rel=0.1), name


def test_reproduce_on_a_shipped_real_trace(tmp_path, capsys):
    """`--jobs elasticflow:cluster10`: the real cluster's arrivals under both protocols."""
    from atlas_data.adapters import shipped_trace

    table, _ = shipped_trace("elasticflow:cluster10")
    size = np.maximum(table["duration"].to_numpy(np.float64), 1.0)
    expected_load = size.sum() / (table["submit_time"].max() - table["submit_time"].min())
    out = tmp_path / "rep"
    assert main(["reproduce", "atlas", "--jobs", "elasticflow:cluster10", "--noise", "0.5", "--output", str(out),
                 "--quiet"]) == 0
    summary = json.loads((out / "reproduce-atlas.json").read_text())
    assert "elasticflow:cluster10" in summary["source"] and summary["predictors"]["meta"] == "noise:0.5"
    for protocol in ("paper", "honest"):
        (instance,) = summary["instances"]["total_completion"][protocol]
        assert instance["n"] == len(table) == 260
        assert instance["load"] == pytest.approx(expected_load, rel=1e-9)
    by_row = {r["row"]: r for r in summary["rows"]}
    assert by_row["SRPT"]["honest"] == pytest.approx(1.0) and by_row["LPT"]["paper_protocol"] >= 1.0
    assert "| Meta-SPJF | 1.106 |" in capsys.readouterr().out
