"""Jobs tables as prediction data: the `--jobs TRACE|FILE`, `--feature-columns` and `--train-jobs` inputs.

One place turns these options into a `TraceSplit` — the target's jobs table, the `SplitData` the
predictors are fitted on (train/validation of the target, or of `--train-jobs` for a transfer)
and the target's test part, which the scheduling and fairness tasks then schedule with its real
arrivals — and fits predictors on it (`fit_trace_method`, `trace_predictions`, and the predicted
spread of each p̂, `trace_prediction_spreads`), so that the prediction, scheduling and fairness
tasks and `benchmark transfer` cannot drift apart.
See docs/real-traces.md#10-predicting-durations-on-a-jobs-table.

May import atlas_data, predictors, schedulers.sampling and benchmark.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError

#: the p̂ source labels every table and results.json carries beside the predictor's name
NOISE_SOURCE = "noise (uses true sizes)"
LEARNED_SOURCE = "learned (fit on train/validation)"
TRANSFER_SOURCE = "learned on --train-jobs (transfer)"
COLUMN_SOURCE = "column predicted_duration"
CONTROL_SOURCE = "control (a learned p̂ permuted or made constant)"


@dataclass(frozen=True)
class TraceSplit:
    """A jobs table cut for prediction: what the predictors see and which jobs get scheduled."""

    split: object  # predictors.data.SplitData: train/val of the fit, test = the target's test part
    test_jobs: pd.DataFrame  # the target's test part as a jobs table, in submit order
    card: dict  # results.json `dataset`: source, feature columns, features, counts, split ranges
    key: tuple  # what the fit depends on (the in-process memo of fitted predictions)
    own_predictions: bool = False  # the target table brought its own predicted_duration (replaced by the fit)


def _file_key(spec: str, frame: pd.DataFrame | None = None) -> tuple:
    if frame is not None:  # a table in memory: its content is its identity
        return (str(spec), int(pd.util.hash_pandas_object(frame, index=False).sum()), tuple(map(str, frame.columns)))
    path = Path(spec)
    stat = path.stat() if path.is_file() else None
    return (str(path.resolve()), stat.st_mtime_ns if stat else None, stat.st_size if stat else None)


def _is_shipped(spec: str) -> bool:
    from atlas_data.adapters import is_shipped_trace_name

    return is_shipped_trace_name(spec) and not Path(spec).exists()


def load_with_features(spec: str, feature_columns, option: str = "--jobs", columns=None,
                       quiet: bool = True, frame: pd.DataFrame | None = None):
    """(jobs table with its feature columns, FeatureColumns, card) of a shipped trace, an SWF log or a
    jobs-table file (`feature_columns`: the `--feature-columns` names, or None; its columns renamed by
    `columns`, the `--columns` mapping or text), or of `frame`, a jobs
    table in memory that `spec` names; the card carries the table's content fingerprint."""
    from benchmark.tasks.inputs import with_fingerprint

    jobs, declared, card = _load_with_features(spec, feature_columns, option, columns, quiet, frame)
    return jobs, declared, with_fingerprint(card, jobs)


def _load_with_features(spec: str, feature_columns, option: str, columns, quiet: bool,
                        frame: pd.DataFrame | None = None):
    from atlas_data.adapters import shipped_feature_columns, shipped_trace, swf_feature_columns
    from atlas_data.jobs_features import check_feature_columns, read_jobs_with_features
    from atlas_data.jobs_table import COLUMNS
    from benchmark.tasks.inputs import column_map, is_swf, read_swf, refuse_columns

    names = list(feature_columns or ())
    map_option = "--train-columns" if option == "--train-jobs" else "--columns"
    mapping = column_map(columns, map_option)
    if frame is not None:
        jobs, declared = read_jobs_with_features(spec, names, mapping, map_option, frame=frame)
        return jobs, declared, {"source": "jobs", "path": str(spec), "feature_columns": declared.as_dict()}
    if _is_shipped(spec):
        refuse_columns(mapping, f"the shipped trace '{spec}'", map_option)
        if names:
            raise InputError(f"the shipped trace '{spec}' declares its own feature columns (docs/real-traces.md); "
                             "--feature-columns applies to files only", where="--feature-columns")
        jobs, card = shipped_trace(spec, with_features=True)
        return jobs, shipped_feature_columns(spec), card
    if is_swf(spec):
        refuse_columns(mapping, "an SWF log", map_option)
        imported, card = read_swf(spec, quiet)
        base = imported[list(COLUMNS)]
        if names:  # a chosen subset of the kept fields, checked like a file's columns
            declared, values = check_feature_columns(imported, base, names, str(spec))
            jobs = pd.concat([base, values], axis=1)
        else:
            declared = swf_feature_columns(imported)
            jobs = imported[list(COLUMNS) + [c for c in declared.names if c not in COLUMNS]]
        return jobs, declared, {**card, "feature_columns": declared.as_dict()}
    jobs, declared = read_jobs_with_features(spec, names, mapping, map_option)
    return jobs, declared, {"source": "jobs", "path": str(spec), "feature_columns": declared.as_dict()}


def _family(spec: str) -> str:
    """Traces of one family share a clock and job ids: a shipped trace kind, or one file."""
    return spec.split(":", 1)[0] if _is_shipped(spec) else str(Path(spec).resolve())


def _share_jobs(source: pd.DataFrame, target: pd.DataFrame) -> bool:
    """Whether two tables hold one same job (job_id, submit_time and duration alike): two files of
    one trace (the v2023 openb pod lists, a CSV and the parquet imported from it) share a clock."""
    key = ["job_id", "submit_time", "duration"]
    a, b = (t[key].astype({"job_id": str, "submit_time": float, "duration": float}) for t in (source, target))
    return not a.merge(b, on=key, how="inner").empty


def trace_split(spec: str, *, feature_columns: tuple[str, ...] | None = None, train_spec: str | None = None,
                n: int | None = None, seed: int = 0, columns=None, train_columns=None,
                quiet: bool = True, frame: pd.DataFrame | None = None) -> TraceSplit:
    """The target `spec`'s prediction data; with `train_spec`, a model is fitted there instead.

    `feature_columns` are the `--feature-columns` names; `columns` (the `--columns` mapping a typed
    configuration holds, or its text) renames the target file's columns, `train_columns` (the same of
    `--train-columns`) those of a `--train-jobs` file;
    `frame` is the target table in memory (`spec` names it)."""
    from atlas_data.jobs_features import jobs_dataset, transfer_dataset
    from atlas_data.split import split_ranges
    from benchmark.tasks.inputs import column_map
    from predictors.data import SplitData
    from schedulers.sampling import sample_window

    mapping_text = tuple(column_map(columns).items())  # one key for the text and its parsed pairs
    jobs, columns, card = load_with_features(spec, feature_columns, columns=mapping_text, quiet=quiet, frame=frame)
    n_total = int(len(jobs))
    if n is not None:
        jobs = sample_window(jobs, n, seed)
    key = (_file_key(spec, frame) if frame is not None or not _is_shipped(spec) else spec, columns, n,
           seed if n is not None else None,
           mapping_text)
    card = {**card, "n_total": n_total, "sample": "window" if len(jobs) < n_total else "all"}  # n_total: before --n
    if train_spec is None:
        ds = jobs_dataset(jobs, columns, where=str(spec))
        frame = ds.frame
    else:
        if feature_columns is not None and _is_shipped(train_spec):
            raise InputError(f"names columns of the --jobs file, which --train-jobs {train_spec} (a shipped trace with its "
                             "own feature columns, docs/real-traces.md) cannot supply: train on a file that has them",
                             where="--feature-columns")
        source, source_columns, source_card = load_with_features(train_spec, feature_columns, "--train-jobs",
                                                                 columns=train_columns, quiet=quiet)
        same = (frame is None and _family(train_spec) == _family(spec)) or _share_jobs(source, jobs)
        train_ds, ds, notes = transfer_dataset(source, source_columns, jobs, columns, same_clock=same)
        test = ds.frame[ds.frame["split"] == "test"]
        fit = train_ds.frame
        if set(fit["job_id"]) & set(test["job_id"]):  # different families may reuse ids
            fit = fit.assign(job_id="train:" + fit["job_id"].astype(str))
        frame = pd.concat([fit, test], ignore_index=True)
        card["transfer"] = {"train_jobs": str(train_spec), "train_source": source_card.get("source"),
                            "train_counts": train_ds.card()["counts"], **notes}
        key = key + (("train", _file_key(train_spec) if not _is_shipped(train_spec) else train_spec,
                      tuple(column_map(train_columns, "--train-columns").items())),)
    card.update(ds.card())
    card["features"] = list(ds.features)
    card["counts"] = {s: int((frame["split"] == s).sum()) for s in ("train", "val", "test")}
    card["splits"] = split_ranges(frame)  # with --train-jobs, train and validation are the training file's
    split = SplitData(frame, ds.features)
    test_ids = frame.loc[frame["split"] == "test", "job_id"].astype(str)
    test_jobs = jobs[jobs["job_id"].astype(str).isin(set(test_ids))]
    test_jobs = test_jobs.sort_values(["submit_time", "job_id"], kind="stable").reset_index(drop=True)
    base = [c for c in ("job_id", "submit_time", "duration", "gpus", "tenant", "weight") if c in test_jobs.columns]
    return TraceSplit(split, test_jobs[base], card, key, own_predictions="predicted_duration" in jobs.columns)


# Fitted test predictions of this process, by (TraceSplit.key, method, seed): the demo and a sweep
# schedule the same trace under several objectives, and a Philly fit takes tens of seconds.
_FITS: OrderedDict = OrderedDict()
_FITS_KEEP = 64  # a Prediction holds only test-part arrays: 64 fits are a few MB


def fit_trace_method(ts: TraceSplit, method: str, *, seed: int = 0, quiet: bool = True):
    """`predictors.methods.run_method` on the trace's split, memoised in-process: the Prediction."""
    from predictors.methods import MethodConfig, check_method_name, run_method

    check_method_name(method)
    memo = (ts.key, method, seed)
    if memo in _FITS:
        _FITS.move_to_end(memo)
        return _FITS[memo]
    if not quiet:
        import sys

        sys.stderr.write(f"[predictors] fitting {method} on {ts.card.get('trace') or ts.card.get('path')} "
                         f"({ts.card['counts']['train']} train jobs, seed {seed})\n")
    try:
        pred = run_method(ts.split, method, MethodConfig(seed=seed))
    except InputError as exc:  # a method refusing the data (too few jobs): name the file it was fitted on
        if exc.path or exc.where:
            raise
        card = ts.card
        fitted_on = card["transfer"]["train_jobs"] if "transfer" in card else card.get("trace") or card.get("path")
        raise InputError(exc.problem, path=str(fitted_on)) from None
    _FITS[memo] = pred
    while len(_FITS) > _FITS_KEEP:
        _FITS.popitem(last=False)
    return pred


def trace_predictions(ts: TraceSplit, methods, job_ids, *, seed: int = 0, quiet: bool = True) -> dict[str, np.ndarray]:
    """p̂ (seconds) of each method for `job_ids` (jobs of the target's test part), in that order."""
    return _per_job(ts, methods, job_ids, "p_hat", seed=seed, quiet=quiet)


def trace_prediction_spreads(ts: TraceSplit, methods, job_ids, *, seed: int = 0,
                             quiet: bool = True) -> dict[str, np.ndarray]:
    """The predicted spread σ (`predicted_log_sd`: log S ~ N(ln p̂, σ²)) of each method for `job_ids`, in
    that order, from the same fits as `trace_predictions`: σ of ln p − ln p̂ on the validation jobs
    (predictors.stage2.LogSpread), never on the scheduled ones; 0 for the `oracle` reference."""
    return _per_job(ts, methods, job_ids, "log_sd", seed=seed, quiet=quiet)


def _per_job(ts: TraceSplit, methods, job_ids, column: str, *, seed: int, quiet: bool) -> dict[str, np.ndarray]:
    """One column of each method's fitted test-part frame (`Prediction.to_frame(spread=True)`) for `job_ids`."""
    from predictors.methods import check_method_name

    for method in methods:  # every name before the first fit (the tasks checked them before reading, too)
        check_method_name(method, where="--predictor")
    out = {}
    for method in methods:
        frame = fit_trace_method(ts, method, seed=seed, quiet=quiet).to_frame(spread=True)
        lookup = frame.set_index(frame["job_id"].astype(str))[column]
        values = lookup.reindex(pd.Index(job_ids).astype(str)).to_numpy(np.float64)
        if np.isnan(values).any():
            raise InputError(f"predictor '{method}' did not predict every job", where="--predictor")
        out[method] = values
    return out


def check_trace_options(config, *, needs_predictor: bool) -> None:
    """--feature-columns and --train-jobs need --jobs (and, where p̂ is their only use, --predictor)."""
    for option, value in (("--feature-columns", config.feature_columns), ("--train-jobs", config.train_jobs)):
        if value is None:
            continue
        if not config.jobs:
            raise InputError(f"{option} applies to --jobs TRACE|FILE (the jobs table to predict)", where=option)
        if needs_predictor and not config.predictor:
            raise InputError(f"{option} only shapes learned p̂: give --predictor NAME too", where=option)


def describe_data(card: dict) -> str:
    """One line for a printed report: which jobs were scheduled, and where p̂ was learned."""
    card = card or {}
    if card.get("name"):
        text = f"the ATLAS {card['name']} dataset ({card.get('source')}), test split"
    elif card.get("trace"):
        text = f"shipped trace {card['trace']}"
    else:
        from atlas_data.outputs import final_text  # noqa: PLC0415

        text = final_text(card.get("path") or card.get("source") or "jobs table")
    if card.get("scheduled"):
        text += f", {card['scheduled']}"
    if card.get("transfer"):
        text += f"; p̂ fitted on {card['transfer']['train_jobs']}"
    return text
