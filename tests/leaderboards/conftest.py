"""A tiny hand-made ATLAS dataset folder (40 test jobs) and a valid submission folder on it."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from atlas_data.build import FINGERPRINT_KIND, content_fingerprint

N_TRAIN, N_VAL, N_TEST = 60, 20, 40


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_dataset(folder, seed: int = 7):
    """atlas.parquet + dataset.json: 120 jobs in submit order, last 40 = test. Returns (folder, frame)."""
    rng = np.random.default_rng(seed)
    n = N_TRAIN + N_VAL + N_TEST
    # arrivals every ~60 s, sizes lognormal around 100 s: load > 1, so the policies differ
    submit = np.cumsum(rng.exponential(60.0, n)).round(1)
    p_star = np.maximum(2.0, np.exp(rng.normal(4.6, 1.0, n))).round(1)
    frame = pd.DataFrame({
        "job_id": [f"j{i:04d}" for i in range(n)],
        "submit_time": submit,
        "user": [f"u{i % 3}" for i in range(n)],
        "group": [f"g{i % 5}" for i in range(n)],
        "is_recurrent": np.arange(n) % 4 != 0,
        "log_gpu": np.log1p(np.where(np.arange(n) % 7 == 0, 2.0, 1.0)),  # log1p(GPUs): every 7th job a 2-GPU gang
        "p_star": p_star,
        "y": np.log1p(p_star),
        "split": ["train"] * N_TRAIN + ["val"] * N_VAL + ["test"] * N_TEST,
    })
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(folder / "atlas.parquet", index=False)
    card = {
        "source": "hand-made test dataset",
        "counts": {"kept": n, "train": N_TRAIN, "val": N_VAL, "test": N_TEST},
        "features": ["log_gpu"],
        "fingerprint": content_fingerprint(pd.read_parquet(folder / "atlas.parquet")),
        "fingerprint_kind": FINGERPRINT_KIND,
    }
    (folder / "dataset.json").write_text(json.dumps(card, indent=2))
    return folder, frame


def write_submission(folder, *, fingerprint, preds: pd.DataFrame, track="prediction", **overrides):
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "name": "Tiny Test Method",
        "authors": ["A. Tester", "B. Tester"],
        "description": "p_hat = 1.1 p_star",
        "url": "https://example.org/tiny",
        "track": track,
        "dataset_fingerprint": fingerprint,
    }
    meta.update(overrides)
    meta = {k: v for k, v in meta.items() if v is not ...}
    (folder / "submission.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    preds.to_parquet(folder / "predictions.parquet", index=False)
    return folder


@pytest.fixture
def dataset(tmp_path):
    folder, frame = make_dataset(tmp_path / "ds")
    fingerprint = json.loads((folder / "dataset.json").read_text())["fingerprint"]
    test = frame[frame["split"] == "test"].reset_index(drop=True)
    return folder, fingerprint, test


@pytest.fixture
def good_preds(dataset):
    _, _, test = dataset
    return pd.DataFrame({"job_id": test["job_id"].astype(str), "p_hat": test["p_star"].to_numpy() * 1.1})


@pytest.fixture
def submission_writer():
    """`write_submission(folder, fingerprint=..., preds=..., **yaml overrides)` (a value of ... drops a key)."""
    return write_submission


@pytest.fixture
def no_cpsat(monkeypatch):
    """Skip the CP-SAT makespan optimum (seconds per 40-job instance on shared cores); the
    leaderboard ranks on the McNaughton-bound ratio, which does not need it."""
    monkeypatch.setattr("schedulers.normalisers.cpsat_feasible_size", lambda n, m: False)
