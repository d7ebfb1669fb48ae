"""Leakage: stretching the durations of later jobs in the raw tables never changes earlier features."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from atlas_data.build import build_frame
from atlas_data.features import FEATURES, FORBIDDEN
from atlas_data.raw import RawTables


def _stretch_after(raw: dict, t: float) -> dict:
    """Multiply by 3 (plus 1 h) the instance durations of every job submitted at or after t."""
    job = raw["job"]
    late = pc.greater_equal(job.column("start_time").cast(pa.float64()), t)
    names = job.column("job_name").filter(late)
    inst = raw["instance"]
    hit = pc.is_in(inst.column("job_name"), value_set=names.combine_chunks())
    start = inst.column("start_time").cast(pa.float64())
    end = inst.column("end_time").cast(pa.float64())
    stretched = pc.add(start, pc.add(pc.multiply(pc.subtract(end, start), 3.0), 3600.0))
    new_end = pc.if_else(hit, stretched, end)
    out = dict(raw)
    out["instance"] = inst.set_column(inst.column_names.index("end_time"), "end_time", new_end)
    return out


def _build(raw):
    return build_frame(RawTables(dict(raw), {}), source="synthetic")


def test_stretching_test_jobs_leaves_train_and_val_features_unchanged(small_raw, small_dataset):
    ds, card = small_dataset
    t_test = card["split_thresholds"]["test_from"]
    ds2, card2 = _build(_stretch_after(small_raw, t_test))
    assert card2["split_thresholds"] == card["split_thresholds"]
    a = ds.set_index("job_id")
    b = ds2.set_index("job_id")
    early = a.index[a["split"] != "test"]
    assert (b.loc[early, "split"] == a.loc[early, "split"]).all()
    cols = FEATURES + ["is_recurrent", "p_star", "y"]
    assert a.loc[early, cols].equals(b.loc[early, cols])
    # the perturbation is real: test labels, and some test history features, did change
    late = a.index[a["split"] == "test"]
    assert (b.loc[late, "p_star"] > a.loc[late, "p_star"]).all()
    assert not a.loc[late, FEATURES].equals(b.loc[late, FEATURES])


@pytest.mark.parametrize("quantile", [0.3, 0.7])
def test_perturbing_labels_after_T_leaves_earlier_features_unchanged(small_raw, small_dataset, quantile):
    ds, _ = small_dataset
    t = float(np.quantile(ds["submit_time"], quantile))
    ds2, _ = _build(_stretch_after(small_raw, t))
    a = ds.set_index("job_id")
    b = ds2.set_index("job_id")
    before = a.index[a["submit_time"] < t]
    assert len(before) > 100
    assert a.loc[before, FEATURES].equals(b.loc[before, FEATURES])
    after = a.index[a["submit_time"] >= t]
    assert not a.loc[after, FEATURES].equals(b.loc[after, FEATURES])


def test_dataset_has_only_submit_time_columns(small_dataset):
    ds, card = small_dataset
    assert not set(FORBIDDEN) & set(ds.columns)
    assert list(ds.columns) == ["job_id", "submit_time", "user", "group", "is_recurrent", *card["features"],
                                "p_star", "y", "split"]
    assert all(np.issubdtype(ds[c].dtype, np.number) for c in card["features"])
    assert np.isfinite(ds[card["features"]].to_numpy()).all()
    assert np.allclose(ds["y"], np.log1p(ds["p_star"]))
    assert (ds["p_star"] > 0).all()
    assert ds["job_id"].is_unique


def test_leakage_through_raw_csv_files(tmp_path):
    """The same check end to end: edit the raw instance CSV on disk, rebuild with --source pai."""
    import pandas as pd

    from atlas_data.build import build_dataset, load_dataset
    from atlas_data.raw import COLUMNS
    from atlas_data.synth import synthesize_to_dir

    raw = tmp_path / "raw"
    synthesize_to_dir(2500, 4, raw)
    build_dataset(tmp_path / "a", source="pai", raw_dir=raw)
    a, card = load_dataset(tmp_path / "a")
    t_test = card["split_thresholds"]["test_from"]
    jobs = pd.read_csv(raw / "pai_job_table.csv", header=None, names=COLUMNS["job"])
    late = set(jobs.loc[jobs.start_time >= t_test, "job_name"])
    inst = pd.read_csv(raw / "pai_instance_table.csv", header=None, names=COLUMNS["instance"], keep_default_na=False,
                       dtype=str)
    hit = inst.job_name.isin(late) & (inst.end_time != "")
    inst.loc[hit, "end_time"] = (inst.loc[hit, "end_time"].astype(int) * 1 + 7200).astype(str)
    inst.to_csv(raw / "pai_instance_table.csv", header=False, index=False)
    build_dataset(tmp_path / "b", source="pai", raw_dir=raw)
    b, card_b = load_dataset(tmp_path / "b")
    assert card_b["fingerprint"] != card["fingerprint"]
    early_a = a[a.split != "test"].reset_index(drop=True)
    early_b = b[b.split != "test"].reset_index(drop=True)
    pd.testing.assert_frame_equal(early_a, early_b)
    assert (b.loc[b.split == "test", "p_star"].to_numpy() > a.loc[a.split == "test", "p_star"].to_numpy()).all()
