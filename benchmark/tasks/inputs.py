"""Inputs shared by the `run` tasks: option lists, p̂ sources and the policy list (sampling: schedulers.sampling).

One rule each, so that the scheduling and fairness tasks (and the leaderboards) cannot drift
apart: the same seeded noise draw, the same sample, the same learned-p̂ lookup, the same
refusal of a predictive policy without p̂, and one resolution of every name a run is given
(`resolve_names`: predictors and policies, built-in or a plugin's `package.module:Obj`), made before
any data is read or any model fitted. May import atlas_data, predictors and schedulers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from benchmark.progress import say
from schedulers.policy import get_policy, resolve_policy, split_policy_list

#: p̂ of a run on an ATLAS dataset that names no p̂ source (--predictor / --noise)
DEFAULT_PREDICTOR = "lgbm-meta"


def csv_list(text: str | None, what: str, convert=str) -> list:
    """Items of a comma-separated option (`--what`); None = not given = [].

    A bad item, an empty item (`1,,2`, a trailing comma, or an empty value) and an item given twice
    (`5,5`, `0,0.0`) are InputErrors naming the option: nothing the user wrote is skipped, merged or
    run twice silently (a sweep config refuses duplicates the same way).
    """
    if text is None:
        return []
    option = f"--{what}"
    raw = [t.strip() for t in str(text).split(",")]
    if not any(raw):
        raise InputError(f"no value given (got {text!r})", where=option)
    if "" in raw:
        raise InputError(f"an empty item in {text!r} (a comma too many?)", where=option)
    try:
        items = [convert(t) for t in raw]
    except argparse.ArgumentTypeError as exc:  # a converter of benchmark.options: its message says what is wrong
        raise InputError(str(exc), where=option) from None
    except ValueError:
        raise InputError(f"cannot read {what} from {text!r}", where=option) from None
    for i, item in enumerate(items):
        if item in items[:i]:
            raise InputError(f"{raw[i]!r} is given twice in {text!r}", where=option)
    return items


def column_map(columns, option: str = "--columns") -> dict[str, str]:
    """{jobs-table column: file column} of a `--columns` value: its text, read here, or the mapping a
    typed configuration parsed from it already (benchmark.tasks.config.ColumnMap; or its pairs)."""
    from atlas_data.jobs_table import parse_column_map

    return parse_column_map(columns, option) if columns is None or isinstance(columns, str) else dict(columns)


def policy_items(text: str, option: str = "--policies") -> list[str]:
    """The items of a `--policies` value (commas inside parentheses belong to the item); an empty
    item is an InputError naming the option, as in csv_list."""
    if not text.strip():
        raise InputError(f"no value given (got {text!r})", where=option)
    items = split_policy_list(text)
    depth, commas = 0, 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        commas += ch == "," and depth == 0
    if len(items) != commas + 1:
        raise InputError(f"an empty item in {text!r} (a comma too many?)", where=option)
    return items


def with_fingerprint(card: dict, table: pd.DataFrame) -> dict:
    """`card` with the content fingerprint of the jobs read (atlas_data.build.content_fingerprint), unless
    it has one (an ATLAS dataset's card): MLflow logs the input under it (benchmark.tracking)."""
    if card.get("fingerprint") or "job_id" not in table.columns or "submit_time" not in table.columns:
        return card
    from atlas_data.build import content_fingerprint

    return {**card, "fingerprint": content_fingerprint(table)}


def read_jobs_or_trace(spec: str, columns: str | None = None, quiet: bool = False,
                       frame: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    table, card = _read_jobs_or_trace(spec, columns, quiet, frame)
    return table, with_fingerprint(card, table)


def _read_jobs_or_trace(spec: str, columns: str | None = None, quiet: bool = False,
                        frame: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    """`--jobs`: a jobs table file (its columns renamed by `--columns`), a Standard Workload Format
    log (`.swf`, `.swf.gz`), or — when no such file exists — a trace shipped with the package by
    name (`openb`, `philly`, `philly:<vc>`, `elasticflow`, `elasticflow:<cluster>`). `frame`: a jobs
    table in memory (the API's `jobs=DataFrame`), read as a file would be; `spec` names it."""
    from atlas_data.adapters import is_shipped_trace_name, shipped_trace
    from atlas_data.jobs_table import COLUMNS, PREDICTION_COLUMN, read_jobs_source, validate_jobs

    mapping = column_map(columns)
    if frame is None and is_shipped_trace_name(spec) and not Path(spec).exists():
        refuse_columns(mapping, f"the shipped trace '{spec}'")
        return shipped_trace(spec)
    if frame is None and is_swf(spec):
        refuse_columns(mapping, "an SWF log")
        jobs, card = read_swf(spec, quiet)
        return jobs[list(COLUMNS)], card
    source, places = read_jobs_source(spec, mapping, frame=frame)
    unused = [str(c) for c in source.columns if c not in COLUMNS and c != PREDICTION_COLUMN]
    table = validate_jobs(source, str(spec), places=places)
    card = {"source": "jobs", "path": str(spec)}
    if unused:  # read, not used: said (and kept in results.json), never dropped silently
        card["unused_columns"] = unused
        say(f"note: {spec}: {len(unused)} column(s) not used by this task: {', '.join(unused)}", quiet)
    return table, card


def is_swf(spec: str) -> bool:
    from atlas_data.adapters import is_swf_path

    return is_swf_path(spec)


def refuse_columns(mapping: dict, what: str, option: str = "--columns") -> None:
    if mapping:
        raise InputError(f"{option} applies to a jobs-table file; {what} has fixed columns", where=option)


def read_swf(spec: str, quiet: bool) -> tuple[pd.DataFrame, dict]:
    """An SWF log as a jobs table with its kept fields (`atlas_data.adapters.import_swf`), and its card.

    What was read, kept and dropped goes to stderr; with --quiet only one line, and only when rows were
    dropped, since a run never drops input silently."""
    from atlas_data.adapters import import_swf

    jobs, report = import_swf(spec)
    lines = report.summary_lines() if not quiet else [report.dropped_line()] if report.dropped_total else []
    for line in lines:
        say(line)
    card = {"source": "swf", "path": str(spec), "rows_read": report.rows_read, "dropped": report.dropped}
    return jobs, card


#: the largest noise level σ (docs/evaluation-protocol.md#p-sources): |Z| < 8.3 for any job count
#: a run can hold (P(|Z| ≥ 8.3) ≈ 10⁻¹⁶), so exp(σZ) stays within 10^±36 and p̂ = p·exp(σZ) a finite,
#: positive, normal float for every duration in (0, 10¹²] s, sums of p̂ included; and beyond σ ≈ 3
#: p̂ already carries next to nothing of p (the robustness curve has flattened)
MAX_NOISE = 10.0


def check_noise_levels(sigmas: list[float], option: str = "--noise") -> None:
    """σ finite, >= 0 and at most MAX_NOISE; else an InputError naming `option`."""
    for s in sigmas:
        if not (0 <= s <= MAX_NOISE):
            raise InputError(f"noise levels σ must be from 0 to {MAX_NOISE:g} (p̂ = p·exp(σZ) would overflow or "
                             f"underflow beyond that; docs/evaluation-protocol.md), got {s!r}", where=option)


def noise_level(text: str) -> float:
    """One item of `--noise`: a number from 0 to MAX_NOISE, quoted as written when it is not."""
    from benchmark.options import read_float

    return read_float(text, 0.0, MAX_NOISE, "a noise level σ")


def noise_predictions(size: np.ndarray, sigmas: list[float], seed: int, draw: int = 0) -> dict[str, np.ndarray]:
    """p̂ = p·exp(σZ) per σ, labelled `noise:σ`; one seeded Z per job shared by every σ.

    `draw` > 0 gives other, independent Z for the same seed (`benchmark robustness --repeats`)."""
    check_noise_levels(sigmas)
    z = np.random.default_rng([seed, 0x5EED] + ([draw] if draw else [])).standard_normal(len(size))
    out = {}
    for s in sigmas:
        with np.errstate(over="ignore", under="ignore"):  # judged below, not warned
            p_hat = size * np.exp(s * z)
        if not (np.isfinite(p_hat).all() and (p_hat > 0).all()):  # never reached within the bound: checked anyway
            raise InputError(f"σ = {s:g} gives a p̂ that is not a finite positive number", where="--noise")
        out[f"noise:{s:g}"] = p_hat
    return out


def learned_predictions(ds_dir: str | Path, method: str, job_ids, *, seed: int, quiet: bool) -> np.ndarray:
    """p̂ of a predictor method (fitted on the dataset's train/val splits) for `job_ids`, in that order."""
    from predictors.api import predict_test
    from predictors.methods import check_method_name

    check_method_name(method, where="--predictor")  # a registered name or a plugin's import path
    p_hat = predict_test(Path(ds_dir), method, seed=seed, quiet=quiet)
    lookup = p_hat.set_index(p_hat["job_id"].astype(str))["p_hat"]
    predicted = lookup.reindex(pd.Index(job_ids).astype(str)).to_numpy(np.float64)
    if np.isnan(predicted).any():
        raise InputError(f"predictor '{method}' did not predict every job", path=str(ds_dir), where="--predictor")
    return predicted


def learned_spread(ds_dir: str | Path, method: str, job_ids, *, seed: int, quiet: bool) -> np.ndarray | None:
    """The predicted spread σ (log S ~ N(ln p̂, σ²), calibrated on the dataset's validation split) of a
    predictor method for `job_ids`, in that order, from the same fit as `learned_predictions`; None
    for a method that fits none (a plugin's own ThreeStage without one)."""
    from predictors.api import predict_test

    frame = predict_test(Path(ds_dir), method, seed=seed, quiet=quiet)
    if "log_sd" not in frame.columns:
        return None
    lookup = frame.set_index(frame["job_id"].astype(str))["log_sd"]
    spread = lookup.reindex(pd.Index(job_ids).astype(str)).to_numpy(np.float64)
    return None if np.isnan(spread).any() else spread


def resolve_policies(text: str | tuple, kind: str, option: str = "--policies") -> list[str]:
    """The registered names of a `--policies` value's items (`schedulers.policy.resolve_policy`: a
    name, a plugin's `package.module:Class`, either with `(param=value, ...)`), given as its text or
    as the tuple of items a typed configuration holds; an item that resolves to a name given before
    is an InputError naming `option`."""
    items = list(text) if isinstance(text, tuple) else policy_items(text, option)  # a tuple: parsed already
    chosen = [resolve_policy(item, kind) for item in items]
    for i, name in enumerate(chosen):
        if name in chosen[:i]:
            raise InputError(f"policy '{items[i]}' is given twice in {','.join(items)!r}", where=option)
    return chosen


def resolve_names(*, predictors: str | tuple | None = None, policies: str | tuple | None = None,
                  kind: str | None = None, one_predictor: bool = False) -> tuple[list[str], list[str] | None]:
    """(predictor names, policy names or None = the task's defaults): every name a run is given,
    resolved — a plugin imported and checked — before any data is read or any model fitted, for
    every data source (a dataset, --jobs, a scenario). The first bad name is an InputError naming
    its option, so `--predictor lgbm-meta,typo` fails before lgbm-meta is fitted.

    `predictors` and `policies` are the options' text or the items a typed configuration holds;
    `one_predictor`: the task takes one predictor (fairness)."""
    methods = list(predictors) if isinstance(predictors, tuple) else csv_list(predictors, "predictor")
    if one_predictor and len(methods) > 1:
        raise InputError("the fairness task takes one predictor", where="--predictor")
    if methods:  # the predictors' registry imports scikit-learn: not for a run that fits none
        from predictors.methods import check_method_name
    for method in methods:
        check_method_name(method, where="--predictor")
    return methods, (resolve_policies(policies, kind) if policies is not None else None)


def note_unused_predictions(has_column: bool, source: str, quiet: bool) -> None:
    """One line when a jobs table's own p̂ (its `predicted_duration` column) is replaced by `source`
    (the option that gives p̂ instead): a run must not silently schedule on other p̂ than the file's."""
    if has_column:
        say(f"the jobs table's own predicted_duration is not used: p̂ comes from {source}", quiet)


def choose_policies(requested: tuple | None, kind: str, defaults, *, have_predictions: bool, source: str,
                    task: str, quiet: bool, have_spreads: bool = True) -> list[str]:
    """The policies to run: `requested` (validated) or `defaults`; predictive ones need p̂.

    Named predictive policies without p̂ are refused (exit 2); default ones are skipped with a note.
    The requested items go through `resolve_policies` (the task resolved them once already, with
    `resolve_names`, before reading any data: resolving a name again gives the same name).
    """
    if requested is not None:
        chosen = resolve_policies(requested, kind)
        needing = [p for p in chosen if get_policy(p, kind).needs_prediction]
        if needing and not have_predictions:
            raise InputError(
                f"policy '{needing[0]}' needs predicted durations: column 'predicted_duration' is missing "
                "(add it, or use --predictor NAME to learn it, or --noise σ)",
                path=source, where="--policies",
            )
        spread = [p for p in chosen if getattr(get_policy(p, kind), "needs_spread", False)]
        if spread and not have_spreads:
            raise InputError(
                f"policy '{spread[0]}' needs a predicted distribution per job: p̂ from a jobs table needs a "
                "'predicted_log_sd' column (σ of ln p around ln p̂), or use --predictor NAME or --noise σ",
                path=source, where="--policies",
            )
        return chosen
    chosen = [resolve_policy(p, kind) for p in defaults]  # a default may be a setting: sprpt(revision='double')
    if not have_predictions:
        dropped = [p for p in chosen if get_policy(p, kind).needs_prediction]
        chosen = [p for p in chosen if p not in dropped]
        say(f"no predictions (no predicted_duration, --predictor or --noise): skipping {', '.join(dropped)}", quiet)
    elif not have_spreads:
        dropped = [p for p in chosen if getattr(get_policy(p, kind), "needs_spread", False)]
        chosen = [p for p in chosen if p not in dropped]
        if dropped:
            say(f"p̂ without a predicted spread (a jobs table without predicted_log_sd): skipping {', '.join(dropped)}",
                quiet)
    return chosen
