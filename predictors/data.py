"""Loading an ATLAS dataset and handing out its splits so that each stage sees only its own.

`SplitData` is the structural guarantee of the three-stage framework: it holds the frame, and
the only ways to get rows out are `train()` and `val()` (features + labels), `test_inputs()`
(features only: the label columns are physically dropped) and `test_truth()` (labels, for
scoring and for the `oracle` reference only). Row order inside a split is submit order; rows
are indexed by `job_id` so that spy estimators in tests can check what they were shown.

May import atlas_data, numpy and pandas.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.portable import log1p

LABEL_COLUMNS = ("p_star", "y")
# Submit-time information a learner may use besides the numeric model features: recency
# models need `submit_time`, signature statistics need the raw `user`/`group` keys.
CONTEXT_COLUMNS = ("submit_time", "user", "group", "is_recurrent")
REQUIRED_COLUMNS = ("job_id", "split", "p_star") + CONTEXT_COLUMNS
SPLITS = ("train", "val", "test")


def load_dataset(ds_dir: Path | str) -> tuple[pd.DataFrame, dict]:
    """(frame, card) of a dataset folder (atlas_data's loader, which also checks the fingerprint)."""
    from atlas_data.build import load_dataset as _load

    ds_dir = Path(ds_dir)
    frame, card = _load(ds_dir)
    check_frame(frame, card, where=str(ds_dir))
    return frame, dict(card)


def default_dataset_dir(quiet: bool = True) -> Path:
    """The embedded default dataset (built once and cached by atlas_data; progress on stderr unless quiet)."""
    from atlas_data.named import ensure_named_dataset

    return Path(ensure_named_dataset("default", quiet=quiet))


def check_frame(frame: pd.DataFrame, card: dict, where: str = "dataset") -> None:
    """Clear one-line errors for a frame that breaks the dataset contract."""
    if "features" not in card or not card["features"]:
        raise InputError("dataset card has no 'features' list", path=where)
    missing = [c for c in REQUIRED_COLUMNS + tuple(card["features"]) if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", path=where)
    bad_split = sorted(set(frame["split"].astype(str).unique()) - set(SPLITS))
    if bad_split:
        raise InputError(f"column split: unknown value(s) {bad_split}", path=where)
    for s in SPLITS:
        if not (frame["split"] == s).any():
            raise InputError(f"column split: no '{s}' rows", path=where)
    p = frame["p_star"].to_numpy(dtype=float)
    if not np.all(np.isfinite(p) & (p > 0)):
        row = int(np.flatnonzero(~(np.isfinite(p) & (p > 0)))[0])
        raise InputError(f"row {row}: column p_star must be finite and > 0", path=where)
    if frame["job_id"].duplicated().any():
        dup = frame.loc[frame["job_id"].duplicated(), "job_id"].iloc[0]
        raise InputError(f"column job_id: duplicate id {dup!r}", path=where)


@dataclass(frozen=True)
class Labelled:
    """Rows of train or validation: inputs X (features + context, no labels) and y = log1p(p*)."""

    X: pd.DataFrame
    y: np.ndarray


@dataclass(frozen=True)
class Unlabelled:
    """Rows of the test split as Stage 3 sees them: inputs only."""

    X: pd.DataFrame


class SplitData:
    """A dataset frame cut into train / val / test views; see the module docstring."""

    def __init__(self, frame: pd.DataFrame, features: list[str] | tuple[str, ...], fingerprint: str | None = None):
        self.features = tuple(features)
        self.fingerprint = fingerprint
        frame = frame.sort_values(["submit_time", "job_id"], kind="stable")
        frame = frame.set_index(frame["job_id"].astype(str).rename("job_id"), drop=False)
        self._inputs = {}
        self._labels = {}
        input_cols = list(dict.fromkeys(self.features + CONTEXT_COLUMNS))
        for s in SPLITS:
            part = frame[frame["split"] == s]
            X = part[input_cols].copy()
            X["is_recurrent"] = X["is_recurrent"].astype(bool)
            self._inputs[s] = X
            y = part["y"].to_numpy(float) if "y" in part.columns else log1p(part["p_star"].to_numpy(float))
            self._labels[s] = pd.DataFrame(
                {"p_star": part["p_star"].to_numpy(float), "y": y, "is_recurrent": X["is_recurrent"].to_numpy()},
                index=X.index,
            )

    @classmethod
    def from_folder(cls, ds_dir: Path | str) -> tuple["SplitData", dict]:
        frame, card = load_dataset(ds_dir)
        return cls(frame, card["features"], card.get("fingerprint")), card

    def counts(self) -> dict[str, int]:
        return {s: len(self._inputs[s]) for s in SPLITS}

    def train(self) -> Labelled:
        return Labelled(self._inputs["train"].copy(), self._labels["train"]["y"].to_numpy().copy())

    def val(self) -> Labelled:
        return Labelled(self._inputs["val"].copy(), self._labels["val"]["y"].to_numpy().copy())

    def test_inputs(self) -> Unlabelled:
        X = self._inputs["test"].copy()
        assert not set(LABEL_COLUMNS) & set(X.columns)
        return Unlabelled(X)

    def test_truth(self) -> pd.DataFrame:
        """Test labels (job_id index; p_star, y, is_recurrent). For scoring and `oracle` only."""
        return self._labels["test"].copy()

    def train_label_median_s(self) -> float:
        return float(np.median(self._labels["train"]["p_star"]))
