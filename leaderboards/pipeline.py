"""Submission end to end: dataset -> validate -> score -> entry -> store, and the starter template.

`submit(sub_dir, track, ds_dir, entries_dir)` is what `benchmark submit DIR` runs. Nothing is
written unless validation and scoring both succeed; the entry is then written atomically
(leaderboards.store). `write_template(out_dir, ds_dir, method)` writes a valid example submission
folder (submission.yaml + predictions.parquet of a method: a registered name or a plugin's
`package.module:Object`) to start from.

May import yaml, pandas, atlas_data, predictors.api, benchmark.tracking and leaderboards.*.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from atlas_data.portable import log1p
from leaderboards import score as scoring
from leaderboards.schema import PREDICTIONS_FILE, SUBMISSION_FILE, TRACKS, Submission
from leaderboards.store import (
    build_entry,
    check_entry_path,
    default_entries_dir,
    entry_path,
    resolve_target,
    sha256_file,
    sha256_predictions,
    write_entry,
)
from leaderboards.validate import validate_submission

TEMPLATE_COMMAND = "submit --template"


@dataclass(frozen=True)
class Dataset:
    path: Path
    card: dict
    test: pd.DataFrame
    default: bool
    blind_p_hat: float  # the scheduling score's blind reference: the train median (the `constant` method)

    @property
    def info(self) -> dict:
        return {
            "fingerprint": self.card.get("fingerprint"),
            "source": self.card.get("source"),
            "n_test": int(len(self.test)),
            "default": self.default,
        }


def resolve_dataset(ds_dir: Path | str | None, quiet: bool = True) -> Path:
    if ds_dir is not None:
        return Path(ds_dir)
    from atlas_data.build import ensure_default_dataset

    return Path(ensure_default_dataset(quiet=quiet))


def load_test(ds_dir: Path | str | None, quiet: bool = True) -> Dataset:
    """The dataset (default: the embedded default dataset) and its test split."""
    from atlas_data.build import default_dataset_dir, load_dataset

    path = resolve_dataset(ds_dir, quiet)
    frame, card = load_dataset(path)
    test = scoring.test_split(frame)
    if test.empty:
        raise InputError("the dataset has no test split rows", path=str(path))
    is_default = path.resolve() == default_dataset_dir().resolve()
    train = frame[frame["split"] == "train"]
    train_y = train["y"].to_numpy(float) if "y" in train.columns else log1p(train["p_star"].to_numpy(float))
    return Dataset(path, card, test, is_default, scoring.blind_p_hat(train_y))


def score_entry(submission: Submission, preds: pd.DataFrame, dataset: Dataset, *, seed: int = 0,
                file_sha256: str | None = None, builtin: bool = False, reference: bool = False,
                scheduling: dict | None = None) -> dict:
    """Score validated predictions for the submission's track and build the entry document."""
    prediction = scoring.score_prediction(preds, dataset.test, seed=seed)
    if submission.track == "scheduling" and scheduling is None:
        scheduling = scoring.score_scheduling(preds, dataset.test, blind_p_hat=dataset.blind_p_hat, seed=seed)
    return build_entry(
        submission, dataset=dataset.info, prediction=prediction, scheduling=scheduling,
        predictions_sha256=sha256_predictions(preds), predictions_file_sha256=file_sha256, seed=seed,
        builtin=builtin, reference=reference,
    )


def submit(sub_dir: Path | str, track: str, ds_dir: Path | str | None = None, entries_dir: Path | str | None = None,
           *, seed: int = 0, quiet: bool = True) -> tuple[dict, Path, bool]:
    """Validate, score and store one submission folder; return (entry, path, replaced)."""
    if track not in TRACKS:
        raise InputError(f"unknown track {track!r} (choose from {', '.join(TRACKS)})", where="--track")
    dataset = load_test(ds_dir, quiet)
    submission, preds = validate_submission(sub_dir, dataset.card, dataset.test["job_id"], track=track,
                                            ds_label=str(dataset.path))
    entries_dir = entries_dir if entries_dir is not None else default_entries_dir()
    # refuse a clobber or a duplicate before the (slow) scoring, not after it
    slug, _ = resolve_target({"track": track, "name": submission.name, "authors": list(submission.authors),
                              "dataset": {"fingerprint": submission.dataset_fingerprint},
                              "provenance": {"predictions_sha256": sha256_predictions(preds)}}, entries_dir)
    check_entry_path(entry_path(entries_dir, track, slug))
    entry = score_entry(submission, preds, dataset, seed=seed, file_sha256=sha256_file(Path(sub_dir) / PREDICTIONS_FILE))
    # decided again under the entries folder's lock: another submit may have written meanwhile
    path, replaced = write_entry(entry, entries_dir, note=None if quiet else _say)
    return entry, path, replaced


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def write_template(out_dir: Path | str, ds_dir: Path | str | None = None, *, method: str = "constant",
                   track: str = "prediction", seed: int = 0, quiet: bool = True) -> Path:
    """An example submission folder with a method's test predictions (a built-in one by default; a plugin's
    import path or registered name works too, and the description says which it is)."""
    import yaml

    from predictors.api import predict_test
    from predictors.methods import check_method_name, is_plugin_method

    check_method_name(method, where="--method")  # a registered name or a plugin's import path
    if track not in TRACKS:
        raise InputError(f"unknown track {track!r} (choose from {', '.join(TRACKS)})", where="--track")
    out_dir = Path(out_dir)
    # a template is edited by its user: never replaced, not even by a rerun (atlas_data.outputs)
    check_output_folder(out_dir, TEMPLATE_COMMAND, option="--template", replace_own=False)
    dataset = load_test(ds_dir, quiet)
    preds = predict_test(dataset.path, method, seed=seed, quiet=quiet)
    cols = [c for c in ("job_id", "p_hat", "lo", "hi") if c in preds.columns]
    preds = preds[cols].assign(job_id=preds["job_id"].astype(str))
    meta = {
        "name": f"my-{method.rpartition(':')[2] or method}",
        "authors": ["Your Name"],
        "description": f"Starter submission: the {'plugin' if is_plugin_method(method) else 'built-in'} '{method}' "
                       "predictor. Replace predictions.parquet with yours.",
        "url": "",
        "track": track,
        "dataset_fingerprint": dataset.card["fingerprint"],
    }
    header = ("# ATLAS-Bench leaderboard submission (docs/leaderboards.md). Keys: name, authors, description, url, track,\n"
              "# dataset_fingerprint (= 'fingerprint' in the dataset's dataset.json). predictions.parquet: job_id, p_hat\n"
              "# (seconds, > 0), optional lo, hi; exactly one row per test job. Then: benchmark submit DIR --track T\n")
    with output_folder(out_dir, TEMPLATE_COMMAND, option="--template", replace_own=False) as folder:
        preds.to_parquet(folder / PREDICTIONS_FILE, index=False)
        (folder / SUBMISSION_FILE).write_text(header + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
    return out_dir
