"""Split boundaries: 70/15/15 by submit time, ties to the later split, thresholds from submit times only."""

import numpy as np
import pandas as pd
import pytest

from atlas_data.errors import InputError
from atlas_data.split import assign_split, split_boundaries, split_ranges


def test_boundaries_twenty_jobs():
    submit = np.arange(20, dtype=float)[::-1]  # order must not matter
    t_val, t_test = split_boundaries(submit)
    assert (t_val, t_test) == (14.0, 17.0)
    jobs = pd.DataFrame({"submit_time": submit})
    out = assign_split(jobs, t_val, t_test)
    counts = out["split"].value_counts().to_dict()
    assert counts == {"train": 14, "val": 3, "test": 3}
    assert split_ranges(out) == {"train": [0.0, 13.0], "val": [14.0, 16.0], "test": [17.0, 19.0]}


def test_ties_at_a_boundary_go_to_the_later_split():
    submit = np.array([0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 8, 9], dtype=float)  # n=12: s[8]=7, s[10]=8
    t_val, t_test = split_boundaries(submit)
    assert (t_val, t_test) == (7.0, 8.0)
    out = assign_split(pd.DataFrame({"submit_time": submit}), t_val, t_test)
    assert list(out["split"]) == ["train"] * 7 + ["val"] * 3 + ["test"] * 2
    # no submit instant is shared across splits
    assert out.groupby("submit_time")["split"].nunique().max() == 1


def test_empty_split_is_an_input_error():
    submit = np.array([5.0, 5.0, 5.0, 5.0])
    t_val, t_test = split_boundaries(submit)
    with pytest.raises(InputError):
        assign_split(pd.DataFrame({"submit_time": submit}), t_val, t_test)
    with pytest.raises(InputError):
        split_boundaries([1.0, 2.0])


def test_build_split_is_70_15_15_and_ordered(small_dataset):
    ds, card = small_dataset
    n = card["counts"]["kept"]
    for name, share in (("train", 0.70), ("val", 0.15), ("test", 0.15)):
        assert abs(card["counts"][name] / n - share) < 0.02
    r = card["splits"]
    assert r["train"][1] < r["val"][0] <= r["val"][1] < r["test"][0]
    assert ds.loc[ds.split == "train", "submit_time"].max() < card["split_thresholds"]["val_from"]
    assert ds.loc[ds.split == "test", "submit_time"].min() >= card["split_thresholds"]["test_from"]
