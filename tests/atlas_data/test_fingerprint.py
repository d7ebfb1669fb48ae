"""The dataset fingerprint is a hash of content (names, dtypes, values in job order), not of file bytes."""

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from atlas_data.build import (
    FINGERPRINT_KIND,
    build_dataset,
    content_fingerprint,
    load_dataset,
    pipeline_modules,
)
from atlas_data.errors import InputError


def _frame():
    return pd.DataFrame({
        "job_id": ["b", "a", "c", "d"],
        "submit_time": [10.0, 10.0, 5.0, 20.0],
        "user": pd.array(["u1", "u2", None, "u1"], dtype=object),
        "is_recurrent": [True, False, True, False],
        "log_gpu": [0.0, np.nan, 1.5, -0.0],
        "n": np.array([1, 2, 3, 4], dtype=np.int64),
    })


def test_same_content_same_fingerprint_whatever_the_encoding(tmp_path):
    frame = _frame()
    fp = content_fingerprint(frame)
    assert len(fp) == 64
    # rows in another order, columns in another order, strings as Arrow strings: the same content
    shuffled = frame.iloc[[3, 0, 2, 1]][["n", "log_gpu", "user", "submit_time", "job_id", "is_recurrent"]]
    assert content_fingerprint(shuffled) == fp
    assert content_fingerprint(frame.astype({"job_id": "string[pyarrow]", "user": "string"})) == fp
    # written by different writers and settings: different bytes, same fingerprint
    table = pa.Table.from_pandas(frame, preserve_index=False)
    files = []
    for i, kw in enumerate([{"compression": "zstd"}, {"compression": "none", "use_dictionary": False},
                            {"compression": "snappy", "row_group_size": 1, "data_page_version": "2.0"}]):
        pq.write_table(table, tmp_path / f"{i}.parquet", **kw)
        files.append((tmp_path / f"{i}.parquet").read_bytes())
    assert len(set(files)) == 3
    assert {content_fingerprint(pd.read_parquet(tmp_path / f"{i}.parquet")) for i in range(3)} == {fp}


@pytest.mark.parametrize("change", ["value", "dtype", "name", "nan", "missing-string", "row"])
def test_any_content_change_moves_the_fingerprint(change):
    frame = _frame()
    other = frame.copy()
    if change == "value":
        other.loc[0, "log_gpu"] = 0.1
    elif change == "dtype":
        other["log_gpu"] = other["log_gpu"].astype(np.float32)
        other.loc[0, "log_gpu"] = np.float32(0.1)  # float32 of the same numbers would round differently
        frame.loc[0, "log_gpu"] = float(np.float32(0.1))
    elif change == "name":
        other = other.rename(columns={"n": "m"})
    elif change == "nan":
        other.loc[0, "log_gpu"] = np.nan
    elif change == "missing-string":
        other.loc[2, "user"] = ""
    else:
        other = other.iloc[:3]
    assert content_fingerprint(other) != content_fingerprint(frame)


def test_int_and_float_columns_are_different_content():
    frame = _frame()
    assert content_fingerprint(frame.astype({"n": np.float64})) != content_fingerprint(frame)


def test_build_writes_a_content_fingerprint_that_survives_rewriting(tmp_path):
    card = build_dataset(tmp_path / "ds", jobs=600, seed=3)
    assert card["fingerprint_kind"] == FINGERPRINT_KIND
    frame, loaded = load_dataset(tmp_path / "ds")
    assert loaded["fingerprint"] == content_fingerprint(frame) == card["fingerprint"]
    # another writer (no compression, tiny row groups) keeps the dataset valid
    pq.write_table(pq.read_table(tmp_path / "ds" / "atlas.parquet"), tmp_path / "ds" / "atlas.parquet",
                   compression="none", row_group_size=50)
    assert load_dataset(tmp_path / "ds")[1]["fingerprint"] == card["fingerprint"]
    # a changed value does not
    frame.loc[0, "p_star"] += 1.0
    frame.to_parquet(tmp_path / "ds" / "atlas.parquet", index=False)
    with pytest.raises(InputError, match="fingerprint mismatch"):
        load_dataset(tmp_path / "ds")


def test_a_card_from_before_content_fingerprints_is_checked_against_the_file(tmp_path):
    import hashlib

    build_dataset(tmp_path / "ds", jobs=600, seed=3)
    card_path = tmp_path / "ds" / "dataset.json"
    card = json.loads(card_path.read_text())
    del card["fingerprint_kind"]
    card["fingerprint"] = hashlib.sha256((tmp_path / "ds" / "atlas.parquet").read_bytes()).hexdigest()
    card_path.write_text(json.dumps(card))
    assert load_dataset(tmp_path / "ds")[1]["fingerprint"] == card["fingerprint"]
    card["fingerprint"] = "0" * 64
    card_path.write_text(json.dumps(card))
    with pytest.raises(InputError, match="fingerprint mismatch"):
        load_dataset(tmp_path / "ds")


def test_the_dataset_cache_key_covers_every_pipeline_module():
    # build imports these directly; synth lazily, inside a function; raw is imported by synth too
    assert {"build", "assemble", "labels", "split", "features", "raw", "synth"} <= set(pipeline_modules())
    assert "describe" not in pipeline_modules() and "adapters" not in pipeline_modules()


def test_the_dataset_cache_key_changes_with_any_pipeline_code(tmp_path):
    import shutil
    from pathlib import Path

    import atlas_data
    from atlas_data.build import pipeline_revision

    copy = tmp_path / "atlas_data"
    shutil.copytree(Path(atlas_data.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    base = pipeline_revision(copy)
    assert base == pipeline_revision()
    (copy / "describe.py").write_text((copy / "describe.py").read_text() + "\n# not part of the pipeline\n")
    assert pipeline_revision(copy) == base
    (copy / "features.py").write_text((copy / "features.py").read_text() + "\n# a pipeline edit\n")
    edited = pipeline_revision(copy)
    assert edited != base
    # a new module the pipeline starts to import is covered without any list to update
    (copy / "extra_step.py").write_text("X = 1\n")
    (copy / "labels.py").write_text((copy / "labels.py").read_text() + "\nfrom atlas_data.extra_step import X  # noqa\n")
    with_new = pipeline_revision(copy)
    (copy / "extra_step.py").write_text("X = 2\n")
    assert pipeline_revision(copy) != with_new
    # the bundled machine spec the generator reads is part of it too
    spec = copy / "resources" / "pai_machine_spec.csv"
    spec.write_text(spec.read_text() + "\n")
    assert pipeline_revision(copy) not in (base, edited, with_new)
