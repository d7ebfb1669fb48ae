"""Synthetic PAI generator: raw layout, reproducibility, and the character it is calibrated to."""

import hashlib

import numpy as np
import pyarrow.compute as pc
import pytest

from atlas_data.errors import InputError
from atlas_data.raw import COLUMNS, STEMS, bundled_header, read_raw_dir
from atlas_data.synth import synthesize, synthesize_to_dir


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_same_seed_byte_identical_other_seed_differs(tmp_path):
    a = _digests_dir(tmp_path / "a", 1500, 11)
    b = _digests_dir(tmp_path / "b", 1500, 11)
    c = _digests_dir(tmp_path / "c", 1500, 12)
    assert a == b
    assert a["pai_job_table.csv"] != c["pai_job_table.csv"]
    assert set(a) == {f"{STEMS[t]}{ext}" for t in STEMS for ext in (".csv", ".header")}


def _digests_dir(folder, n, seed):
    synthesize_to_dir(n, seed, folder)
    return _digests(folder)


def test_files_are_headerless_with_published_headers(tmp_path):
    synthesize_to_dir(500, 0, tmp_path)
    for table, stem in STEMS.items():
        header = (tmp_path / f"{stem}.header").read_text().strip().split(",")
        assert header == COLUMNS[table] == bundled_header(table)
        first = (tmp_path / f"{stem}.csv").read_text().splitlines()[0].split(",")
        assert len(first) == len(header) and first[0] != header[0]
        assert '"' not in (tmp_path / f"{stem}.csv").read_text()[:2000]
    raw = read_raw_dir(tmp_path)
    assert all(r.bad_rows == 0 for r in raw.reports.values())


def test_structure_matches_the_real_trace_character(small_raw):
    job, task, inst = small_raw["job"], small_raw["task"], small_raw["instance"]
    spec = small_raw["machine_spec"]
    assert spec.num_rows == 1897
    # placement on real machines, GPU types of the PAI cluster
    assert set(pc.unique(inst.column("machine")).to_pylist()) <= set(spec.column("machine").to_pylist())
    types = set(t for t in pc.unique(task.column("gpu_type")).to_pylist() if t)
    assert types <= {"P100", "T4", "V100", "V100M32", "MISC"} and {"P100", "T4", "MISC"} <= types
    statuses = job.column("status").to_pylist()
    share_failed = statuses.count("Failed") / len(statuses)
    assert 0.15 < share_failed < 0.5 and statuses.count("Terminated") / len(statuses) > 0.5
    # gang tasks whose instances end at different times
    df = inst.to_pandas()
    ends = df.dropna(subset=["end_time"]).groupby(["job_name", "task_name"])["end_time"].agg(["size", "nunique"])
    assert ((ends["size"] >= 2) & (ends["nunique"] >= 2)).sum() > 100
    inst_num = task.column("inst_num").to_numpy()
    assert inst_num[inst_num >= 2].sum() / inst_num.sum() > 0.7
    # retried (failed) instances inside successful jobs
    ok = set(job.filter(pc.equal(job.column("status"), "Terminated")).column("job_name").to_pylist())
    assert ((df["status"] == "Failed") & df["job_name"].isin(ok)).sum() > 0


def test_arrivals_are_diurnal_and_weekly(small_raw):
    t = small_raw["job"].column("start_time").to_numpy().astype(float)
    local = t + 8 * 3600
    hours = np.bincount(((local % 86400) // 3600).astype(int), minlength=24)
    assert hours[13:19].sum() / 6 > 1.8 * hours[2:7].sum() / 5
    dow = ((local // 86400 + 3) % 7).astype(int)
    by = np.bincount(dow, minlength=7)
    assert by[5:].mean() < 0.85 * by[:5].mean()
    assert 58 < (t.max() - t.min()) / 86400 < 62


def test_calibration_of_a_built_dataset(small_dataset):
    ds, card = small_dataset
    test = ds[ds.split == "test"]
    assert 0.65 < test["is_recurrent"].mean() < 0.95
    p = ds["p_star"].to_numpy()
    skew = ((p - p.mean()) ** 3).mean() / p.std() ** 3
    y = ds["y"].to_numpy()
    yskew = ((y - y.mean()) ** 3).mean() / y.std() ** 3
    assert skew > 4 and abs(yskew) < 0.8
    assert 0.5 < card["counts"]["kept"] / card["raw_stats"]["jobs"] < 0.8


def test_group_history_is_informative(small_dataset):
    ds, _ = small_dataset
    test = ds[(ds.split == "test") & (ds.hist_group_count >= 3)]
    assert len(test) > 0.4 * (ds.split == "test").sum()
    constant = np.sqrt(np.mean((test["y"] - ds.loc[ds.split == "train", "y"].mean()) ** 2))
    history = np.sqrt(np.mean((test["y"] - test["hist_group_ewma"]) ** 2))
    assert history < 0.6 * constant


def test_too_few_jobs_is_an_input_error():
    with pytest.raises(InputError):
        synthesize(3, 0)
