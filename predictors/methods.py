"""The registry of prediction methods (names as on the command line) and `run_method`.

Each learned method is a `ThreeStage` of Stage-1 learners and one Stage-2 combiner:

| method            | Stage 1 (train)                                           | Stage 2 (validation)         |
|-------------------|-----------------------------------------------------------|------------------------------|
| `constant`        | train median of y                                         | none                         |
| `single-stage`    | LightGBM L2 on NAIVE features                             | none                         |
| `crr++`           | LightGBM Huber on NAIVE features                          | linear recalibration a + b·ŷ |
| `hras`            | recency models (LightGBM L2, half-lives ∞/28 d/7 d) + signature stats | weights ∝ 1/MAE²  |
| `quantile-median` | LightGBM quantile α = 0.1, 0.5, 0.9                       | none (raw Q0.1–Q0.9 interval)|
| `cqr-stack`       | quantiles 0.1/0.5/0.9 + L2 + Huber                        | CQR interval + NNLS stacking |
| `isotonic`        | LightGBM L2                                               | isotonic calibration         |
| `two-stage`       | three duration bands (fewer on ties): classifier + one expert per band | none            |
| `lgbm-meta`       | quantiles, L2, Huber, regularised L2, two-stage, recency, signature stats (+ support counts as context) | LightGBM meta-model boosted from the NNLS stack, cross-fitted in validation |
| `lgbm-asym`       | as `lgbm-meta`, plus LightGBM with an asymmetric squared loss (under-prediction 4× costlier: the 0.8-expectile) | `lgbm-meta`'s meta-model fitted with the same asymmetric loss |
| `lgbm-rank`       | LightGBM ranker (rank_xendcg, shortest jobs on top) on groups of 200 consecutive train jobs | strictly increasing isotonic map score → y |
| `lgbm-meta-matched` | as `lgbm-meta`                                          | `lgbm-meta`'s meta-model, then ŷ given the spread of y (SpreadMatched) |
| `oracle`          | reference: p̂ = p (reads test labels, nothing is fitted)   |                              |

NAIVE features: the paper's naive baselines do not use the recurrence signature or history;
here they get resources + calendar + label-encoded categoricals (user, group, workload, GPU
spec) — nothing derived from earlier jobs (`feature_groups` sorts the dataset's feature names by
name tokens).
Every other method uses all model features except frozen train statistics (see
`stage1.is_frozen_train_statistic`), which reach Stage 2 as their own columns. A name that is not
in the registry but looks like an import path ("package.module:Obj") is a user's plugin
(predictors.plugins: a scikit-learn regressor, a ThreeStage or a build function, found through
the one plugin route of atlas_data.plugins); `register_method` adds a named method, and installed
packages can add theirs through the `atlas_bench.plugins` entry-point group. Exceptions raised
while fitting or predicting a method that is not built in are reported as the plugin's (exit 2).

Every Stage-1 LightGBM model picks its number of trees by early stopping on the latest 10 % of
train (by submit time), never on validation. CQR uses the paper's margin k = Q60(max(r, 0)); on
data where the raw Q0.1–Q0.9 interval already covers more than 60 % of validation jobs, k = 0 and
the interval is the raw one (`CQRStack(score_quantile=...)` changes it).

May import numpy, scikit-learn (clone), atlas_data.errors and predictors.*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from sklearn.base import clone

from atlas_data.errors import InputError
from atlas_data.plugins import load_entry_points, user_code
from predictors.data import SplitData
from predictors.framework import Prediction, ThreeStage
from predictors.plugins import check_plugin, looks_like_import_path, plugin_method
from predictors.references import REFERENCE_METHODS
from predictors.stage1 import (
    ConstantLearner,
    FeatureLearner,
    LGBMLearner,
    RankLearner,
    SignatureStatsLearner,
    TwoStageLearner,
    is_frozen_train_statistic,
)
from predictors.stage2 import (
    CQRStack,
    IsotonicCalibrator,
    LinearCalibrator,
    MetaStacker,
    Passthrough,
    RecencyWeighting,
    SpreadMatched,
)


_TOKENS = {
    "signature": ("sig", "recur", "prior_", "shrunk", "target"),
    "history": ("hist", "ewm", "expanding", "rolling", "lag", "prev", "last_", "recent"),
    "categorical": ("_code", "_enc", "_id", "_le", "user", "group", "workload", "gpu_type", "gpu_spec"),
    "calendar": ("hour", "dow", "day", "weekend", "week", "month", "minute", "calendar"),
}


def feature_groups(features) -> dict[str, list[str]]:
    """Sort feature names into signature / history / categorical / calendar / resources.

    First matching group wins, in that order; everything else counts as a resource request.
    """
    groups = {name: [] for name in (*_TOKENS, "resources")}
    for f in features:
        low = f.lower()
        for group, tokens in _TOKENS.items():
            if any(t in low for t in tokens):
                groups[group].append(f)
                break
        else:
            groups["resources"].append(f)
    return groups


def naive_features(features) -> list[str]:
    """Resources + calendar + label-encoded categoricals: no recurrence signature, no counts of
    earlier submissions, no history or train statistics of the label."""
    g = feature_groups(features)
    return g["resources"] + g["calendar"] + g["categorical"] or list(features)


@dataclass(frozen=True)
class MethodConfig:
    """Knobs shared by all methods: seed, trees per LightGBM model (small in tests), threads."""

    seed: int = 0
    n_estimators: int = 300
    n_jobs: int | None = None


@dataclass(frozen=True)
class MethodSpec:
    name: str
    description: str
    build: Callable[[tuple, MethodConfig], ThreeStage] | None
    interval: bool = False
    leaderboard: bool = True  # a built-in entry of the leaderboards (leaderboards.builtin)


def _lgbm(cfg: MethodConfig, **kw) -> LGBMLearner:
    return LGBMLearner(n_estimators=cfg.n_estimators, seed=cfg.seed, n_jobs=cfg.n_jobs, **kw)


def _quantiles(cfg: MethodConfig) -> dict:
    return {f"q{int(a * 100)}": _lgbm(cfg, objective="quantile", alpha=a) for a in (0.1, 0.5, 0.9)}


def _two_stage(cfg: MethodConfig, **kw) -> TwoStageLearner:
    return TwoStageLearner(n_estimators=cfg.n_estimators, seed=cfg.seed, n_jobs=cfg.n_jobs, **kw)


def _recency(cfg: MethodConfig) -> dict:
    return {
        "rec_all": _lgbm(cfg),
        "rec_28d": _lgbm(cfg, half_life_days=28.0),
        "rec_7d": _lgbm(cfg, half_life_days=7.0),
    }


def _train_statistics(features) -> dict:
    """The dataset's own frozen train statistics of y (e.g. sig_train_mean_eb) as Stage-1 outputs."""
    cols = [f for f in features if is_frozen_train_statistic(f) and any(t in f.lower() for t in ("mean", "ewm"))]
    return {f"stat_{c}": FeatureLearner(c) for c in cols}


def _context(features) -> dict:
    """Support counts and the recurrence flag as `ctx_*` inputs of the meta model (not stacked)."""
    cols = [f for f in features if "count" in f.lower() or "prior_submits" in f.lower()]
    return {f"ctx_{c}": FeatureLearner(c, fill=0.0) for c in cols} | {"ctx_is_recurrent": FeatureLearner("is_recurrent", fill=0.0)}


def _build_constant(features, cfg):
    return ThreeStage({"main": ConstantLearner()}, Passthrough("main"))


def _build_single_stage(features, cfg):
    return ThreeStage({"main": _lgbm(cfg, features=naive_features(features))}, Passthrough("main"))


def _build_crr(features, cfg):
    return ThreeStage(
        {"main": _lgbm(cfg, objective="huber", features=naive_features(features))}, LinearCalibrator("main")
    )


def _build_hras(features, cfg):
    return ThreeStage({**_recency(cfg), "sig": SignatureStatsLearner(), **_train_statistics(features)}, RecencyWeighting())


def _build_quantile_median(features, cfg):
    return ThreeStage(_quantiles(cfg), Passthrough("q50", lower="q10", upper="q90"))


def _build_cqr_stack(features, cfg):
    stage1 = {**_quantiles(cfg), "l2": _lgbm(cfg), "huber": _lgbm(cfg, objective="huber")}
    return ThreeStage(stage1, CQRStack(lower="q10", upper="q90", point_columns=["q50", "l2", "huber"]))


def _build_isotonic(features, cfg):
    return ThreeStage({"main": _lgbm(cfg)}, IsotonicCalibrator("main"))


def _build_two_stage(features, cfg):
    return ThreeStage({"main": _two_stage(cfg)}, Passthrough("main"))


ASYM_EXPECTILE = 0.8  # lgbm-asym: an under-prediction costs 0.8 / 0.2 = 4× an over-prediction of the same log size
RANK_GROUP_JOBS = 200  # lgbm-rank: train jobs per ranking group (consecutive in submit order)


def _build_lgbm_asym(features, cfg):
    meta = _build_lgbm_meta(features, cfg)
    stage1 = {**meta.stage1, "expectile": _lgbm(cfg, objective="expectile", alpha=ASYM_EXPECTILE)}
    return ThreeStage(stage1, clone(meta.stage2).set_params(objective="expectile", alpha=ASYM_EXPECTILE))


def _build_lgbm_rank(features, cfg):
    ranker = RankLearner(group_jobs=RANK_GROUP_JOBS, n_estimators=cfg.n_estimators, seed=cfg.seed, n_jobs=cfg.n_jobs)
    return ThreeStage({"score": ranker}, IsotonicCalibrator("score", strict=True))


def _build_lgbm_meta_matched(features, cfg):
    meta = _build_lgbm_meta(features, cfg)
    return ThreeStage(meta.stage1, SpreadMatched(meta.stage2))


def _build_lgbm_meta(features, cfg):
    stage1 = {
        **_quantiles(cfg),
        "l2": _lgbm(cfg),
        "huber": _lgbm(cfg, objective="huber"),
        "l2_reg": _lgbm(cfg, num_leaves=31, min_child_samples=100, reg_lambda=10.0),
        "two_stage": _two_stage(cfg),
        "rec_7d": _lgbm(cfg, half_life_days=7.0),
        "sig": SignatureStatsLearner(),
        **_train_statistics(features),
        **_context(features),
    }
    meta = MetaStacker(num_leaves=7, min_child_samples=100, seed=cfg.seed, n_jobs=cfg.n_jobs)
    return ThreeStage(stage1, meta)


METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        MethodSpec("single-stage", "LightGBM L2, naive features (resources + calendar + categoricals)", _build_single_stage),
        MethodSpec("crr++", "LightGBM Huber, naive features, linear recalibration on validation", _build_crr),
        MethodSpec("hras", "history/recency-aware: recency models weighted by validation MAE", _build_hras),
        MethodSpec("quantile-median", "LightGBM quantile median (raw 10–90% interval)", _build_quantile_median, True),
        MethodSpec("cqr-stack", "CQR intervals + NNLS stacking", _build_cqr_stack, True),
        MethodSpec("isotonic", "LightGBM L2 + isotonic calibration", _build_isotonic),
        MethodSpec("two-stage", "three duration bands + one expert each", _build_two_stage),
        MethodSpec("lgbm-meta", "LightGBM meta-stacking of all Stage-1 learners", _build_lgbm_meta),
        MethodSpec("lgbm-asym", "lgbm-meta fitted with an asymmetric loss (under-prediction 4x costlier)", _build_lgbm_asym,
                   leaderboard=False),
        MethodSpec("lgbm-rank", "LightGBM ranker on time windows + monotone map to seconds on validation", _build_lgbm_rank,
                   leaderboard=False),
        MethodSpec("lgbm-meta-matched", "lgbm-meta with the spread of its predictions matched to the sizes' on validation",
                   _build_lgbm_meta_matched, leaderboard=False),
        MethodSpec("oracle", "reference: p̂ = p", None),
        MethodSpec("constant", "reference: train median", _build_constant),
    )
}


def register_method(name: str, build: Callable[[tuple, MethodConfig], ThreeStage], description: str = "",
                    interval: bool = False) -> None:
    """Add a method under `name` (e.g. a user's own Stage-1/Stage-2 combination).

    `build(features, config)` returns an unfitted ThreeStage. Built-in names cannot be replaced.
    """
    if name in METHODS:
        raise ValueError(f"method {name!r} already exists")
    METHODS[name] = MethodSpec(name, description or name, build, interval)


BUILTIN_METHODS = tuple(METHODS)  # shipped with the package; everything registered later is a plugin
# the built-ins with a committed leaderboard entry: the LASched methods and references, not (yet) the
# methods trained for the decision (lgbm-asym, lgbm-rank, lgbm-meta-matched)
LEADERBOARD_METHODS = tuple(name for name, spec in METHODS.items() if spec.leaderboard)


def method_names() -> list[str]:
    load_entry_points()
    return list(METHODS)


def check_method_name(name: str, where: str | None = None) -> None:
    """The one check of a method name, made before any data is read: InputError unless it is
    registered or the import path of a usable plugin (imported and checked here, not fitted)."""
    load_entry_points()
    if name in METHODS:
        return
    if looks_like_import_path(name):
        check_plugin(name, where)
        return
    raise InputError(f"unknown prediction method '{name}' (choose from {', '.join(METHODS)}, or package.module:Object)",
                     where=where)


def is_plugin_method(name: str) -> bool:
    return name not in BUILTIN_METHODS


def build_method(name: str, features, config: MethodConfig = MethodConfig()) -> ThreeStage:
    check_method_name(name)
    if name in REFERENCE_METHODS:
        raise ValueError(f"{name!r} is a reference, not a fitted method")
    if name in METHODS:
        if not is_plugin_method(name):
            return METHODS[name].build(tuple(features), config)
        with user_code(f"method '{name}'"):
            built = METHODS[name].build(tuple(features), config)
        if not isinstance(built, ThreeStage):
            raise InputError(f"method '{name}': build(features, config) returned {type(built).__name__}, not a ThreeStage")
        return built
    return plugin_method(name, features, config)


def run_method(split: SplitData, name: str, config: MethodConfig = MethodConfig()) -> Prediction:
    """Fit `name` through the three stages on `split` and predict its test split."""
    check_method_name(name)
    if name == "oracle":
        # REFERENCE PATH — the only place outside scoring that reads test labels: p̂ = p.
        truth = split.test_truth()
        return Prediction(job_id=truth.index.to_numpy(), y_hat=np.log1p(truth["p_star"].to_numpy(float)))
    method = build_method(name, split.features, config)
    if not is_plugin_method(name):
        return method.fit(split).predict(split.test_inputs())
    with user_code(f"method '{name}'"):
        return method.fit(split).predict(split.test_inputs())


def is_interval_method(name: str) -> bool:
    return name in METHODS and METHODS[name].interval
