"""The scheduling leaderboard's ASTRAEA-P columns tell predictors apart, on a small contended instance.

Real runs of astraea-p and astraea (leaderboards.score.score_fairness): p̂ = p must separate from
the constant p̂ (intervals that do not overlap), a p̂ that orders jobs backwards must be worse than
the constant one, the render must show the columns, and an entry of the previous schema (other
fairness figures) is refused by name, then replaced by a rebuild.
"""

import json

import numpy as np
import pandas as pd
import pytest

from atlas_data.build import FINGERPRINT_KIND, content_fingerprint
from atlas_data.errors import InputError
from benchmark.cli import main
from leaderboards.schema import ENTRY_SCHEMA
from leaderboards.score import GPUS_PER_NODE, WINDOWS, fairness_jobs, fairness_window_jobs, score_fairness
from leaderboards.store import load_entries, write_entry
from schedulers.sampling import sample_window

N_TRAIN, N_VAL, N_TEST = 40, 20, 240
GANG = 16  # one job asks for two nodes' worth of GPUs: the cluster is one node, so it is capped


def contended(seed: int = 1) -> pd.DataFrame:
    """Bursts of 20 jobs within 100 s every 3,000 s, sizes lognormal (median ~150 s, heavy tail),
    4 tenants, 1-4 GPUs: the offered load is about one 8-GPU node, but each burst queues, so the
    order p̂ gives matters. The last N_TEST jobs are the test split."""
    n = N_TRAIN + N_VAL + N_TEST
    rng = np.random.default_rng(seed)
    p_star = np.maximum(5.0, np.exp(rng.normal(5.0, 1.5, n))).round(1)
    submit = np.sort((np.arange(n) // 20) * 3000.0 + rng.uniform(0, 100, n)).round(1)
    gpus = rng.choice([1, 1, 2, 4], n)
    gpus[N_TRAIN + N_VAL + N_TEST // 2 - 1] = GANG  # mid-split: in (almost) every window
    return pd.DataFrame({
        "job_id": [f"t{i:04d}" for i in range(n)], "submit_time": submit,
        "user": [f"u{k}" for k in rng.integers(0, 4, n)], "group": "g", "is_recurrent": True,
        "log_gpu": np.log1p(gpus.astype(float)), "p_star": p_star, "y": np.log1p(p_star),
        "split": ["train"] * N_TRAIN + ["val"] * N_VAL + ["test"] * N_TEST,
    })


def _test(frame):
    return frame[frame["split"] == "test"].reset_index(drop=True)


def _fair(test, p_hat):
    return score_fairness(pd.DataFrame({"job_id": test["job_id"], "p_hat": np.asarray(p_hat, float)}), test)


def _span(summary):
    return summary["lo"], summary["hi"]


@pytest.fixture(scope="module")
def runs():
    test = _test(contended())
    p = test["p_star"].to_numpy(float)
    noisy = p * np.exp(0.7 * np.random.default_rng(0).standard_normal(len(p)))
    return test, {"oracle": _fair(test, p), "constant": _fair(test, np.full(len(p), 120.0)), "noisy": _fair(test, noisy),
                  "reversed": _fair(test, 1e5 / p)}


def test_oracle_separates_from_constant(runs):
    test, fair = runs
    const = fair["constant"]
    # astraea-p with one p̂ for every job is astraea: the constant predictor is exactly 1 and 0, every window
    for key, neutral in (("slowdown_ratio", 1.0), ("jct_ratio", 1.0), ("tenant_loss_delta", 0.0), ("sharing_loss_delta", 0.0)):
        assert const[key]["values"] == [neutral] * WINDOWS and _span(const[key]) == (neutral, neutral), key
    # p̂ = p: the whole slowdown and JCT intervals below the constant's 1 (not a lucky mean)
    oracle = fair["oracle"]
    assert oracle["slowdown_ratio"]["hi"] < 0.9 and oracle["jct_ratio"]["hi"] < 0.95
    assert all(v < 1.0 for v in oracle["slowdown_ratio"]["values"])
    # noisy sizes sit below the constant too; sizes ordered backwards are worse than knowing nothing
    assert fair["noisy"]["slowdown_ratio"]["hi"] < 1.0
    assert fair["reversed"]["slowdown_ratio"]["lo"] > 1.2 and fair["reversed"]["jct_ratio"]["lo"] > 1.0
    assert fair["reversed"]["slowdown_ratio"]["lo"] > oracle["slowdown_ratio"]["hi"]


def test_windows_cluster_and_capped_gang(runs):
    test, fair = runs
    oracle = fair["oracle"]
    n = fairness_window_jobs(len(test))
    assert n == N_TEST // 2 == oracle["n_jobs"] and oracle["target_load"] == 1.0
    table = fairness_jobs(pd.DataFrame({"job_id": test["job_id"], "p_hat": 1.0}), test)
    for k, window in enumerate(oracle["windows"]):
        jobs = sample_window(table, n, k)
        load = float((jobs["gpus"] * jobs["duration"]).sum() / (jobs["submit_time"].max() - jobs["submit_time"].min()))
        nodes = int(np.ceil(load / GPUS_PER_NODE))
        # the cluster follows the load, not the 16-GPU gang, which is capped at the cluster's GPUs
        assert window["cluster"] == f"{nodes} x {GPUS_PER_NODE} GPUs" and nodes * GPUS_PER_NODE < GANG
        assert window["gpus_capped"] == int((jobs["gpus"] > nodes * GPUS_PER_NODE).sum())
        assert window["slowdown_ratio"] == pytest.approx(window["astraea-p"]["avg_slowdown"] / window["astraea"]["avg_slowdown"])
        assert window["tenant_loss_share"] == "eq8" and window["fair_share"] == "eq16"
    assert sum(w["gpus_capped"] for w in oracle["windows"]) >= 1


def _dataset(folder):
    frame = contended()
    folder.mkdir(parents=True)
    frame.to_parquet(folder / "atlas.parquet", index=False)
    card = {"source": "contended test dataset", "features": ["log_gpu"],
            "counts": {"kept": len(frame), "train": N_TRAIN, "val": N_VAL, "test": N_TEST},
            "fingerprint": content_fingerprint(pd.read_parquet(folder / "atlas.parquet")), "fingerprint_kind": FINGERPRINT_KIND}
    (folder / "dataset.json").write_text(json.dumps(card))
    return folder, card["fingerprint"]


def test_board_shows_the_column_and_old_entries_are_refused_then_rebuilt(tmp_path, capsys, no_cpsat):
    ds, fingerprint = _dataset(tmp_path / "ds")
    entries = tmp_path / "entries"
    args = ["leaderboard", "--rebuild-builtin", "--methods", "constant,oracle", "--data", str(ds), "--entries-dir",
            str(entries), "--track", "scheduling", "--quiet"]
    assert main(args) == 0
    board = capsys.readouterr().out
    header = next(line for line in board.splitlines() if line.startswith("| # |"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    assert "ASTRAEA-P slowdown" in cols and "ASTRAEA-P JCT" in cols
    oracle_row = next(line for line in board.splitlines() if line.startswith("| ref | oracle |"))
    constant_row = next(line for line in board.splitlines() if line.startswith("| 1 | constant |"))
    path = entries / "scheduling" / f"oracle-{fingerprint[:8]}.json"
    oracle = json.loads(path.read_text())
    fair = oracle["scheduling"]["fairness"]
    assert oracle["schema"] == ENTRY_SCHEMA and fair["slowdown_ratio"]["hi"] < 1.0
    cells = [c.strip() for c in oracle_row.strip("|").split("|")]
    assert cells[cols.index("ASTRAEA-P slowdown")] == f"{fair['slowdown_ratio']['mean']:.3f}"
    assert [c.strip() for c in constant_row.strip("|").split("|")][cols.index("ASTRAEA-P slowdown")] == "1.000"

    # an entry of the previous schema (other fairness figures) is named, with what to do
    path.write_text(json.dumps(dict(oracle, schema=ENTRY_SCHEMA - 1)))
    with pytest.raises(InputError, match=rf"oracle-{fingerprint[:8]}.json: entry of schema {ENTRY_SCHEMA - 1} .*submit it again"):
        load_entries(entries, "scheduling")
    assert main(["leaderboard", "--entries-dir", str(entries), "--track", "scheduling"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"entry of schema {ENTRY_SCHEMA - 1}" in err[0]
    # ... and storing the entry again (what a rebuild or a new submit does) replaces it, whatever its schema
    assert write_entry(oracle, entries) == (path, True)
    assert json.loads(path.read_text())["schema"] == ENTRY_SCHEMA
    assert len(load_entries(entries, "scheduling")) == 2
