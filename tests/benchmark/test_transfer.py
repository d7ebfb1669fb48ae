"""`benchmark transfer`: each cluster predicted by its own history and by the other clusters."""

import json

import pandas as pd

from benchmark.cli import main
from benchmark.experiments.transfer import END, START


def test_transfer_table_for_one_cluster_and_its_readme_block(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{START}\nold\n{END}\noutro\n")
    out = tmp_path / "tr"
    assert main(["transfer", "--clusters", "10", "--method", "single-stage", "--output", str(out),
                 "--readme", str(readme), "--quiet"]) == 0
    assert "cluster10" in capsys.readouterr().out
    doc = json.loads((out / "transfer.json").read_text())
    assert doc["trace"] == "elasticflow" and doc["method"] == "single-stage" and len(doc["rows"]) == 1
    row = doc["rows"][0]
    assert row["cluster"] == "cluster10" and row["jobs"] == 260 and row["own_train_jobs"] + row["test_jobs"] == 260
    # the other nine clusters, less what finished after cluster10's test part began
    assert 260 < row["transfer_train_jobs"] <= 69_351 - 260
    for source in ("own", "transfer"):
        assert 0 <= row[f"{source}_cov25"] <= 1 and row[f"{source}_rmsle"] > 0
        # SRPT is optimal for ΣC_j: no p̂ beats it
        assert row[f"spjf_{source}_ratio"] >= 1 - 1e-12 and row[f"sprpt_{source}_ratio"] >= 1 - 1e-12
    assert row["srpt_ratio"] == 1 and row["fifo_ratio"] > 1
    assert len(pd.read_csv(out / "transfer.csv")) == 1
    text = readme.read_text()
    assert "old" not in text and "| cluster10 | 39 |" in text and text.endswith(END + "\noutro\n")
    assert (out / "transfer.md").read_text().strip() == text.split(START)[1].split(END)[0].strip()


def test_unknown_cluster_and_readme_without_markers_exit_2(tmp_path, capsys):
    assert main(["transfer", "--clusters", "cluster42", "--output", str(tmp_path / "a"), "--quiet"]) == 2
    assert "no cluster 'cluster42'" in capsys.readouterr().err
    readme = tmp_path / "README.md"
    readme.write_text("nothing\n")
    assert main(["transfer", "--clusters", "10", "--readme", str(readme), "--output", str(tmp_path / "b"), "--quiet"]) == 2
    assert "transfer:start" in capsys.readouterr().err and not (tmp_path / "b").exists()


def test_bad_clusters_and_min_jobs_name_their_option(tmp_path, capsys):
    # fuzzing: an unknown cluster was blamed on --jobs, an empty list on --min-jobs, and a
    # negative --min-jobs was accepted
    out = tmp_path / "o"
    assert main(["transfer", "--clusters", "nosuch", "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --clusters: no cluster 'nosuch'") and "cluster01" in err and "--jobs" not in err
    assert main(["transfer", "--clusters", ",", "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --clusters: names no cluster") and "cluster10" in err and "--min-jobs" not in err
    assert main(["transfer", "--min-jobs", "-1", "--output", str(out), "--quiet"]) == 2
    assert capsys.readouterr().err == ("error: benchmark transfer: argument --min-jobs: a number of jobs must be an "
                                       "integer >= 0, got '-1'\n")
    assert not out.exists()


def test_a_named_cluster_below_min_jobs_is_refused_not_run(tmp_path, capsys):
    # --min-jobs was silently ignored with --clusters: cluster10 (260 jobs) ran under --min-jobs 1000
    out = tmp_path / "o"
    assert main(["transfer", "--clusters", "10", "--min-jobs", "1000", "--output", str(out), "--quiet"]) == 2
    assert capsys.readouterr().err == "error: --clusters: cluster 'cluster10' has 260 jobs, fewer than --min-jobs 1000\n"
    assert not out.exists()
