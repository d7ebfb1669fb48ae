"""`benchmark run --task scheduling` end to end: outputs, and bad input as exit 2 + one line."""

import json

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main

# the commands' figures are not rendered but where a test looks at them (figures_rendered; tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def _jobs_csv(tmp_path, rows=None, name="jobs.csv", **columns):
    frame = pd.DataFrame(rows or {"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2], "duration": [3, 1, 2, 1]})
    for key, value in columns.items():
        frame[key] = value
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def _run(*argv):
    return main(["run", "--task", "scheduling", "--no-mlflow", *map(str, argv)])


@pytest.mark.figures_rendered  # looks at the PNGs
def test_total_completion_outputs(tmp_path, capsys):
    jobs = _jobs_csv(tmp_path)
    out = tmp_path / "out"
    assert _run("--objective", "total_completion", "--jobs", jobs, "--noise", "0,1", "--output", out) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["task"] == "scheduling" and doc["objective"] == "total_completion" and doc["n_jobs"] == 4
    rows = {(r["policy"], r["predictor"]): r for r in doc["rows"]}
    # SRPT is the reference: ΣC = 1 + 3 + 4 + 7 = 15 (hand schedule in test_single_machine_hand)
    assert rows[("srpt", None)]["value"] == 15 and rows[("srpt", None)]["ratio"] == 1
    assert rows[("fifo", None)]["value"] == 20 and rows[("fifo", None)]["ratio"] == pytest.approx(20 / 15)
    assert ("spjf", "noise:0") in rows and ("spjf", "noise:1") in rows and ("spjf", None) not in rows
    # σ = 0 gives p̂ = p: SPJF is then SJF
    assert rows[("spjf", "noise:0")]["value"] == rows[("sjf", None)]["value"]
    per_job = pd.read_parquet(out / "per_job.parquet")
    assert set(per_job["policy"]) >= {"fifo", "srpt", "rr", "las", "prr"}
    assert len(per_job[(per_job.policy == "fifo")]) == 4
    csv = pd.read_csv(out / "results.csv")
    assert len(csv) == len(doc["rows"])
    for png in ("ratios.png", "stretch_cdf.png", "robustness.png"):
        assert (out / png).stat().st_size > 1000
    assert "total completion" in capsys.readouterr().out


def test_max_stretch_and_makespan_rows(tmp_path):
    jobs = _jobs_csv(tmp_path)
    out = tmp_path / "ms"
    assert _run("--objective", "max_stretch", "--jobs", jobs, "--policies", "fifo,edf,srpt", "--output", out, "--quiet") == 0
    doc = json.loads((out / "results.json").read_text())
    rows = {r["policy"]: r for r in doc["rows"]}
    # S*: SRPT's schedule (C = 7,1,3,4) has stretches 7/3, 1, 1, 2 → max 7/3; S* ≤ 7/3 within 1e-4
    assert rows["edf"]["ratio"] <= 1 + 1e-4 and rows["edf"]["reference"] == pytest.approx(doc["reference"]["s_star"])
    assert rows["fifo"]["value"] == pytest.approx(5.0)  # j3: (7 - 2) / 1
    assert {"median_ratio", "p99_ratio"} <= set(rows["fifo"])
    out = tmp_path / "mk"
    assert _run("--objective", "makespan", "--jobs", jobs, "--policies", "lpt,spt", "--machines", "2,3", "--output", out, "--quiet") == 0
    doc = json.loads((out / "results.json").read_text())
    lpt = [r for r in doc["rows"] if r["policy"] == "lpt"]
    # sizes 3,1,2,1 on 2 machines: bound max(7/2, 3) = 3.5, optimum 4 ({3,1},{2,1}) = LPT
    assert [r["machines"] for r in lpt] == [2, 3]
    assert lpt[0]["reference"] == 3.5 and lpt[0]["opt"] == 4 and lpt[0]["value"] == 4
    assert lpt[1]["reference"] == 3 and lpt[1]["value"] == 3


def test_sampling_is_a_seeded_window(tmp_path):
    n = 50
    jobs = _jobs_csv(tmp_path, {"job_id": [f"j{i:03d}" for i in range(n)], "submit_time": np.arange(n) * 2.0,
                                "duration": np.arange(n) % 7 + 1.0})
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run("--objective", "total_completion", "--jobs", jobs, "--n", 10, "--seed", 4, "--policies", "fifo", "--output", a, "--quiet") == 0
    assert _run("--objective", "total_completion", "--jobs", jobs, "--n", 10, "--seed", 4, "--policies", "fifo", "--output", b, "--quiet") == 0
    ids_a = pd.read_parquet(a / "per_job.parquet")["job_id"].tolist()
    assert ids_a == pd.read_parquet(b / "per_job.parquet")["job_id"].tolist()
    numbers = [int(i[1:]) for i in ids_a]
    assert numbers == list(range(numbers[0], numbers[0] + 10))  # consecutive in submit order


BAD = [
    ("missing column", {"job_id": ["a"], "submit_time": [0]}, {}, "duration"),
    ("duplicate id", {"job_id": ["a", "a"], "submit_time": [0, 1], "duration": [1, 2]}, {}, "duplicate"),
    ("non-positive duration", {"job_id": ["a", "b"], "submit_time": [0, 1], "duration": [1, 0]}, {}, "duration"),
    ("non-finite duration", {"job_id": ["a", "b"], "submit_time": [0, 1], "duration": [1, float("inf")]}, {}, "duration"),
]


@pytest.mark.parametrize("label,rows,extra,word", BAD, ids=[b[0] for b in BAD])
def test_bad_jobs_file_exits_2_with_one_line(tmp_path, capsys, label, rows, extra, word):
    jobs = _jobs_csv(tmp_path, rows)
    out = tmp_path / "never"
    assert _run("--objective", "total_completion", "--jobs", jobs, "--output", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "jobs.csv" in err[0] and word in err[0] and "Traceback" not in err[0]
    assert not out.exists()


def test_unknown_policy_and_missing_predictions(tmp_path, capsys):
    jobs = _jobs_csv(tmp_path)
    assert _run("--objective", "total_completion", "--jobs", jobs, "--policies", "fifo,nope") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown policy 'nope'" in err[0] and "--policies" in err[0]
    assert _run("--objective", "total_completion", "--jobs", jobs, "--policies", "spjf") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "predict" in err[0] and "jobs.csv" in err[0]
    # a predicted_duration column makes the same call valid
    with_pred = _jobs_csv(tmp_path, name="pred.csv", predicted_duration=[1, 2, 3, 4])
    assert _run("--objective", "total_completion", "--jobs", with_pred, "--policies", "spjf", "--output", tmp_path / "p", "--quiet") == 0
    doc = json.loads((tmp_path / "p" / "results.json").read_text())
    assert doc["rows"][0]["predictor"] == "column"


def test_bad_options_exit_2(tmp_path, capsys):
    jobs = _jobs_csv(tmp_path)
    assert _run("--objective", "total_completion", "--jobs", jobs, "--noise", "abc") == 2
    assert _run("--objective", "makespan", "--jobs", jobs, "--machines", "0") == 2
    assert _run("--jobs", jobs) == 2  # no objective
    assert _run("--objective", "total_completion", "--jobs", tmp_path / "missing.csv") == 2
    assert _run("--objective", "total_completion", "--jobs", jobs, "--prr-lambda", "1.5") == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 5 and all(line.startswith("error:") for line in lines)
    assert "--prr-lambda" in lines[-1]


def test_user_policy_plugged_in_by_module(tmp_path, monkeypatch):
    (tmp_path / "longest_first_plugin.py").write_text(
        "import heapq\n"
        "from schedulers.policy import IDLE, Allocation, Policy, register\n"
        "@register\n"
        "class LongestPredictedFirst(Policy):\n"
        "    name = 'test-lpjf'\n"
        "    needs_prediction = True\n"
        "    def reset(self, view):\n"
        "        self.g, self.q, self.run = view.new_group(1.0), [], IDLE\n"
        "    def allocate(self, view):\n"
        "        a = Allocation()\n"
        "        for j in view.arrived:\n"
        "            heapq.heappush(self.q, (-view.jobs.predicted[j], j))\n"
        "        if self.run != IDLE and view.is_done(self.run):\n"
        "            self.run = IDLE\n"
        "        if self.run == IDLE and self.q:\n"
        "            self.run = heapq.heappop(self.q)[1]\n"
        "            a.assign(self.run, self.g)\n"
        "        return a\n"
    )
    jobs = _jobs_csv(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "plug"
    assert _run("--objective", "total_completion", "--jobs", jobs, "--noise", "0", "--plugins", "longest_first_plugin",
                "--policies", "test-lpjf", "--output", out, "--quiet") == 0
    row = json.loads((out / "results.json").read_text())["rows"][0]
    # longest predicted (= true, σ=0) first, non-preemptive: j0 (3) [0,3], then j2 (2) [3,5],
    # then j1, j3 (1 each, index order) [5,6], [6,7] → ΣC = 3 + 5 + 6 + 7 = 21
    assert row["policy"] == "test-lpjf" and row["value"] == 21


def test_random_sample_is_seeded_scattered_and_in_submit_order(tmp_path):
    n = 60
    jobs = _jobs_csv(tmp_path, {"job_id": [f"j{i:03d}" for i in range(n)], "submit_time": np.arange(n) * 2.0,
                                "duration": np.arange(n) % 7 + 1.0})
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert _run("--objective", "total_completion", "--jobs", jobs, "--n", 12, "--sample", "random", "--seed", 5,
                    "--policies", "fifo", "--output", out, "--quiet") == 0
        runs.append(pd.read_parquet(out / "per_job.parquet")["job_id"].tolist())
        assert json.loads((out / "results.json").read_text())["dataset"]["sample"] == "random"
    numbers = [int(i[1:]) for i in runs[0]]
    assert runs[0] == runs[1] and len(set(numbers)) == 12
    assert numbers == sorted(numbers) and numbers[-1] - numbers[0] > 11  # scattered, not a window


@pytest.mark.parametrize("lam,twin", [(0.0, "rr"), (1.0, "pspjf")])
def test_prr_lambda_interpolates_between_rr_and_pspjf(tmp_path, lam, twin):
    # λ = 0: everyone gets 1/k (RR); λ = 1: only the smallest-predicted job runs (PSPJF)
    jobs = _jobs_csv(tmp_path, predicted_duration=[2.5, 3, 1.5, 2])
    out = tmp_path / f"prr{lam}"
    assert _run("--objective", "total_completion", "--jobs", jobs, "--policies", f"prr,{twin}", "--prr-lambda", lam,
                "--output", out, "--quiet") == 0
    rows = {r["policy"]: r for r in json.loads((out / "results.json").read_text())["rows"]}
    assert rows["prr"]["value"] == pytest.approx(rows[twin]["value"], rel=1e-12)


@pytest.mark.parametrize("task, argv, option, users", [
    ("scheduling", ["--objective", "total_completion", "--nodes", "4"], "--nodes", "fairness"),
    ("fairness", ["--objective", "makespan"], "--objective", "scheduling"),
    ("prediction", ["--lease", "60"], "--lease", "fairness"),
])
def test_an_option_the_task_does_not_read_is_exit_2(tmp_path, capsys, task, argv, option, users):
    out = tmp_path / "out"
    assert main(["run", "--task", task, *argv, "--output", str(out), "--no-mlflow", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {option}: {option} is not an option of --task {task} (it is read by --task {users})"]
    assert not out.exists()


def test_a_jobs_files_own_p_hat_replaced_by_noise_is_said_in_one_line(tmp_path, capsys):
    jobs = _jobs_csv(tmp_path, predicted_duration=[2.5, 3, 1.5, 2])
    assert _run("--objective", "total_completion", "--jobs", jobs, "--noise", "0.5", "--policies", "spjf",
                "--output", tmp_path / "noise") == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "predicted_duration" in line]
    assert notes == ["the jobs table's own predicted_duration is not used: p̂ comes from --noise 0.5"]
    # the column alone is what runs: nothing to say
    assert _run("--objective", "total_completion", "--jobs", jobs, "--policies", "spjf", "--output", tmp_path / "own") == 0
    assert "predicted_duration is not used" not in capsys.readouterr().err
