"""Stage 1 base learners: fitted on the train split only, each predicts y = log1p(p*).

Every learner is a scikit-learn regressor (`fit(X, y)` / `predict(X)`, constructor parameters
stored unchanged, learned state ending in `_`), so `sklearn.base.clone` works and a user's own
regressor can take any learner's place. X is the frame handed out by `predictors.data.SplitData`:
the numeric model features plus the context columns (`submit_time`, `user`, `group`,
`is_recurrent`). A learner uses `features` (None = every numeric model feature) and only reads
context columns where its idea requires it (recency weights, signature keys).

May import numpy, pandas, scipy, scikit-learn, lightgbm and predictors.data.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone

from predictors.data import CONTEXT_COLUMNS

DAY_S = 86_400.0


def default_n_jobs(n_rows: int | None = None) -> int:
    """Threads for LightGBM: at most 2 (the machines are shared), never more than the idle CPUs.

    OpenMP threads spin-wait: on a busy shared machine two threads were measured 4–7× slower
    than one (210 k rows), and on small problems too. So: one thread below 100 k rows or when
    the 1-minute load average leaves no second CPU idle; otherwise min(2, CPUs).
    `ATLAS_N_JOBS` overrides.
    """
    env = os.environ.get("ATLAS_N_JOBS")
    if env:
        return max(1, int(env))
    cpus = os.cpu_count() or 1
    if n_rows is not None and n_rows < 100_000:
        return 1
    try:
        idle = cpus - os.getloadavg()[0]
    except OSError:
        idle = cpus
    return max(1, min(2, cpus, int(idle + 0.5)))


def is_frozen_train_statistic(name: str) -> bool:
    """Features such as `sig_train_mean_eb`: label statistics over train jobs only.

    On a train row such a statistic is as fresh as the history features (both use the train jobs
    finished before it), but on validation/test rows it is frozen at the end of train. A learner
    fitted on train cannot see that difference and over-trusts it, so Stage-1 learners leave these
    out by default; Stage 2, fitted on validation where they are out of sample, may use them
    through `FeatureLearner`.
    """
    return "train_" in name.lower()


def model_features(X: pd.DataFrame, features=None) -> list[str]:
    if features is not None:
        return list(features)
    return [
        c
        for c in X.columns
        if c not in CONTEXT_COLUMNS and pd.api.types.is_numeric_dtype(X[c]) and not is_frozen_train_statistic(c)
    ]


def _time_holdout(X: pd.DataFrame, fraction: float) -> np.ndarray | None:
    """Boolean mask of the latest `fraction` of train rows by submit time (None if too few)."""
    n_hold = int(len(X) * fraction)
    if fraction <= 0 or n_hold < 50 or len(X) - n_hold < 50:
        return None
    order = np.argsort(X["submit_time"].to_numpy(float), kind="stable")
    mask = np.zeros(len(X), bool)
    mask[order[-n_hold:]] = True
    return mask


REFIT_BELOW_ROWS = 100_000


def _group_sizes(groups: np.ndarray) -> np.ndarray:
    """Run lengths of consecutive equal group ids (LightGBM's `group` argument of a ranker)."""
    if not len(groups):
        return np.empty(0, int)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    return np.diff(np.r_[starts, len(groups)])


def fit_lgbm(make, M: np.ndarray, y: np.ndarray, weights, holdout: np.ndarray | None, n_estimators: int,
             eval_metric=None, groups: np.ndarray | None = None):
    """Fit a LightGBM model made by `make(n_trees)`; with a holdout (rows of train only), pick the
    number of trees by early stopping on it, then refit on all rows with that many trees — on
    train sets below REFIT_BELOW_ROWS only: above, the early-stopped model is kept, as the refit
    would double the cost for 10 % more rows. `eval_metric`: the early-stopping metric of a custom
    objective or of a ranker; `groups`: a ranker's query id per row (rows of one query consecutive)."""
    import lightgbm as lgb

    def group_kw(rows):
        return {} if groups is None else {"group": _group_sizes(groups[rows])}

    everything = np.ones(len(y), bool)
    if holdout is None:
        return make(n_estimators).fit(M, y, sample_weight=weights, **group_kw(everything)), n_estimators
    keep = ~holdout
    w_keep = None if weights is None else weights[keep]
    w_hold = None if weights is None else weights[holdout]
    extra = {} if eval_metric is None else {"eval_metric": eval_metric}
    if groups is not None:
        extra["eval_group"] = [_group_sizes(groups[holdout])]
    probe = make(n_estimators)
    probe.fit(
        M[keep], y[keep], sample_weight=w_keep, **group_kw(keep),
        eval_X=(M[holdout],), eval_y=(y[holdout],),
        **({"eval_sample_weight": [w_hold]} if w_hold is not None else {}), **extra,
        callbacks=[lgb.early_stopping(max(10, n_estimators // 10), verbose=False)],
    )
    best = int(probe.best_iteration_ or n_estimators)
    if len(y) >= REFIT_BELOW_ROWS:
        return probe, best  # LightGBM's predict() uses the best iteration of an early-stopped model
    # More rows in the refit support slightly more trees.
    n_trees = max(1, min(n_estimators, int(round(best * len(y) / max(1, keep.sum())))))
    return make(n_trees).fit(M, y, sample_weight=weights, **group_kw(everything)), n_trees


def feature_matrix(X: pd.DataFrame, columns: list[str]) -> np.ndarray:
    return X[columns].to_numpy(dtype=np.float32, na_value=np.nan)


def recency_weights(submit_time: np.ndarray, half_life_s: float | None) -> np.ndarray | None:
    """Time-decay sample weights 2^(−age/half_life), age measured from the latest train job."""
    if not half_life_s:
        return None
    age = float(np.max(submit_time)) - np.asarray(submit_time, float)
    return np.power(0.5, age / float(half_life_s))


def _lgbm_params(est, objective: str, n_rows: int | None = None, n_estimators: int | None = None, **extra) -> dict:
    params = dict(
        objective=objective,
        n_estimators=n_estimators or est.n_estimators,
        learning_rate=est.learning_rate,
        num_leaves=est.num_leaves,
        min_child_samples=est.min_child_samples,
        reg_lambda=est.reg_lambda,
        subsample=est.subsample,
        subsample_freq=1 if est.subsample < 1 else 0,
        colsample_bytree=est.colsample_bytree,
        random_state=est.seed,
        n_jobs=est.n_jobs or default_n_jobs(n_rows),
        deterministic=True,
        force_row_wise=True,
        verbose=-1,
    )
    params.update(extra)
    return params


def expectile_weights(u: np.ndarray, tau: float) -> np.ndarray:
    """Weights of the asymmetric squared loss w·u², u = y − ŷ: τ where ŷ < y (under-prediction), else 1 − τ."""
    return np.where(u > 0, tau, 1.0 - tau)


def expectile(r: np.ndarray, tau: float, iterations: int = 100) -> float:
    """The tau-expectile of r: the c minimising Σ w·(r − c)² (expectile_weights of r − c), i.e. the
    weighted mean of r with its own weights (iterated to a fixed point; exact after finitely many steps)."""
    r = np.asarray(r, float)
    c = float(np.mean(r))
    for _ in range(iterations):
        w = expectile_weights(r - c, tau)
        new = float(np.sum(w * r) / np.sum(w))
        if new == c:
            break
        c = new
    return c


def no_usable_feature(exc: Exception) -> bool:
    """Whether LightGBM refused to fit because no feature can be split (too few rows per leaf, constant
    columns): with a built-in objective it fits constant trees, with a custom objective it stops here."""
    return "num_features()) > (0)" in str(exc)


def expectile_objective(tau: float):
    """LightGBM custom objective of L = w·(y − ŷ)² (expectile_weights): gradient and Hessian in ŷ."""

    def objective(y_true, y_pred, weight=None):
        u = np.asarray(y_true, float) - np.asarray(y_pred, float)
        w = expectile_weights(u, tau) * (1.0 if weight is None else np.asarray(weight, float))
        return -2.0 * w * u, 2.0 * w

    return objective


def expectile_metric(tau: float):
    """The mean asymmetric squared loss (lower is better): the early-stopping metric of `expectile`."""

    def metric(y_true, y_pred, weight=None):
        u = np.asarray(y_true, float) - np.asarray(y_pred, float)
        w = np.ones_like(u) if weight is None else np.asarray(weight, float)
        return "expectile", float(np.sum(w * expectile_weights(u, tau) * u * u) / np.sum(w)), False

    return metric


class LGBMLearner(RegressorMixin, BaseEstimator):
    """LightGBM regressor on y: objective 'l2', 'huber', 'quantile' (with `alpha`) or 'expectile'.

    'expectile' is the asymmetric squared loss L = w·(y − ŷ)² with w = `alpha` when ŷ < y (an
    under-prediction) and 1 − `alpha` otherwise (a LightGBM custom objective; its minimiser is the
    `alpha`-expectile of y given x, above the conditional mean for alpha > 0.5). It boosts from the
    train mean of y (LightGBM starts a custom objective at 0) and early-stops on the same loss.

    `reg_lambda` > 0 gives the regularised regressor; `half_life_days` makes it a recency model
    (train rows weighted by 2^(−age/half-life) in submit time). `holdout_fraction` > 0 picks the
    number of trees by early stopping on the latest part of *train* (never validation), then
    refits on all train rows.
    """

    reads_frame = True  # reads the input frame's columns by name (context included)

    def __init__(
        self,
        objective: str = "l2",
        alpha: float = 0.5,
        features=None,
        half_life_days: float | None = None,
        n_estimators: int = 300,
        learning_rate: float = 0.05,
        num_leaves: int = 63,
        min_child_samples: int = 20,
        reg_lambda: float = 0.0,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
        huber_delta: float = 1.0,
        holdout_fraction: float = 0.1,
        seed: int = 0,
        n_jobs: int | None = None,
    ):
        self.holdout_fraction = holdout_fraction
        self.objective = objective
        self.alpha = alpha
        self.features = features
        self.half_life_days = half_life_days
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.reg_lambda = reg_lambda
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.huber_delta = huber_delta
        self.seed = seed
        self.n_jobs = n_jobs

    def fit(self, X: pd.DataFrame, y):
        import lightgbm as lgb

        self.features_ = model_features(X, self.features)
        extra = {}
        objective, metric = self.objective, None
        y = np.asarray(y, float)
        self.offset_ = 0.0
        if self.objective == "quantile":
            extra["alpha"] = self.alpha
        elif self.objective == "huber":
            extra["alpha"] = self.huber_delta  # LightGBM names Huber's delta `alpha`
        elif self.objective == "expectile":
            if not 0.0 < self.alpha < 1.0:
                raise ValueError(f"expectile alpha must be in (0, 1), got {self.alpha}")
            objective, metric = expectile_objective(self.alpha), expectile_metric(self.alpha)
            self.offset_ = float(np.mean(y))
        elif self.objective != "l2":
            raise ValueError(f"unknown objective {self.objective!r}")
        weights = None
        if self.half_life_days:
            weights = recency_weights(X["submit_time"].to_numpy(float), self.half_life_days * DAY_S)
        make = lambda n: lgb.LGBMRegressor(**_lgbm_params(self, objective, len(X), n_estimators=n, **extra))  # noqa: E731
        try:
            self.model_, self.n_trees_ = fit_lgbm(
                make, feature_matrix(X, self.features_), y - self.offset_, weights,
                _time_holdout(X, self.holdout_fraction), self.n_estimators, eval_metric=metric,
            )
        except lgb.basic.LightGBMError as exc:
            if metric is None or not no_usable_feature(exc):
                raise
            self.model_, self.n_trees_ = None, 0  # nothing to split on: the offset alone
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        if self.model_ is None:
            return np.full(len(X), self.offset_)
        return self.offset_ + self.model_.predict(feature_matrix(X, self.features_))


class RankLearner(RegressorMixin, BaseEstimator):
    """LightGBM ranker: a score that orders jobs by size, learned within groups of train jobs.

    The train jobs, in submit order, are cut into groups of `group_jobs` consecutive jobs (windows
    of time: the jobs a scheduler has to order against each other). A job's relevance is its level
    among `n_levels` equal-count levels of the train labels, the *shortest* jobs the most relevant
    (level n_levels − 1): a ranking objective is most exact at the top of its list, and a
    size-based scheduler's first picks are the shortest jobs. The model (`objective`:
    'rank_xendcg', or 'lambdarank' with every position of a group counted) learns a score whose
    order within each group follows the relevance; `predict` returns minus that score, which grows
    with the size — a score, not seconds: a Stage-2 map fitted on validation (a monotone
    `IsotonicCalibrator`) turns it into ŷ. It fits `n_estimators` trees, without early stopping:
    on the latest 10 % of train, every ranking measure tried (NDCG over a group, the Spearman
    correlation, the batch completion time of each group in score order) stopped after 1–37 trees
    on the Philly, openb and ElasticFlow traces (1–4 on Philly), which leaves the score a few dozen
    distinct values — ties that a size-based scheduler serves in submit order.
    """

    reads_frame = True

    def __init__(
        self,
        objective: str = "rank_xendcg",
        group_jobs: int = 200,
        n_levels: int = 16,
        features=None,
        n_estimators: int = 300,
        learning_rate: float = 0.05,
        num_leaves: int = 63,
        min_child_samples: int = 20,
        reg_lambda: float = 0.0,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
        seed: int = 0,
        n_jobs: int | None = None,
    ):
        self.objective = objective
        self.group_jobs = group_jobs
        self.n_levels = n_levels
        self.features = features
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.reg_lambda = reg_lambda
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.seed = seed
        self.n_jobs = n_jobs

    def fit(self, X: pd.DataFrame, y):
        import lightgbm as lgb

        if self.objective not in ("rank_xendcg", "lambdarank"):
            raise ValueError(f"unknown ranking objective {self.objective!r}")
        if not 2 <= self.n_levels <= 31:  # LightGBM's default label gains stop at 31 levels
            raise ValueError(f"n_levels must be in 2..31, got {self.n_levels}")
        y = np.asarray(y, float)
        self.features_ = model_features(X, self.features)
        order = np.argsort(X["submit_time"].to_numpy(float), kind="stable")
        X, y = X.iloc[order], y[order]
        relevance = relevance_levels(-y, self.n_levels)  # the shortest jobs on top
        groups = np.arange(len(y)) // max(2, int(self.group_jobs))
        extra = {}
        if self.objective == "lambdarank":
            extra["lambdarank_truncation_level"] = int(self.group_jobs)
        make = lambda n: lgb.LGBMRanker(**_lgbm_params(self, self.objective, len(X), n_estimators=n, **extra))  # noqa: E731
        self.model_, self.n_trees_ = fit_lgbm(make, feature_matrix(X, self.features_), relevance, None, None,
                                              self.n_estimators, groups=groups)
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return -self.model_.predict(feature_matrix(X, self.features_))


def relevance_levels(y: np.ndarray, n_levels: int) -> np.ndarray:
    """Integer levels 0..n_levels−1 of y: the level of a job is ⌊n_levels × (its mid-rank among y) / n⌋,
    so the levels hold equal counts and tied sizes share a level."""
    from scipy.stats import rankdata

    y = np.asarray(y, float)
    if not len(y):
        return np.empty(0, int)
    mid = rankdata(y, method="average") - 0.5  # in (0, n)
    return np.minimum((mid * n_levels / len(y)).astype(int), n_levels - 1)


class ConstantLearner(RegressorMixin, BaseEstimator):
    """Predicts one number learned on train: the median of y (= log1p of the median p*)."""

    reads_frame = True  # reads the input frame's columns by name (context included)

    def __init__(self, statistic: str = "median"):
        self.statistic = statistic

    def fit(self, X, y):
        y = np.asarray(y, float)
        self.value_ = float(np.median(y) if self.statistic == "median" else np.mean(y))
        return self

    def predict(self, X) -> np.ndarray:
        return np.full(len(X), self.value_)


class SignatureStatsLearner(RegressorMixin, BaseEstimator):
    """Mean y per recurrence signature with empirical-Bayes shrinkage (λ = 5, docs/data-formats.md).

    Keys are tried from the finest (`keys[0]`, default `group`) to the coarsest; each level
    shrinks toward the next one: μ̄ = (n μ + λ μ_parent)/(n + λ), the top parent being the train
    mean. An unseen key falls back to its parent's estimate.
    """

    reads_frame = True  # reads the input frame's columns by name (context included)

    def __init__(self, keys=("group", "user"), shrinkage: float = 5.0):
        self.keys = keys
        self.shrinkage = shrinkage

    def fit(self, X: pd.DataFrame, y):
        y = pd.Series(np.asarray(y, float), index=X.index)
        self.global_mean_ = float(y.mean())
        self.tables_ = []
        # Coarsest first: each finer level needs its parent's estimate per row.
        parent = pd.Series(self.global_mean_, index=X.index)
        tables = []
        for key in reversed(list(self.keys)):
            k = X[key].astype(str)
            stats = pd.DataFrame({"k": k, "y": y, "prior": parent}).groupby("k", sort=False).agg(
                n=("y", "size"), s=("y", "sum"), prior=("prior", "mean")
            )
            est = (stats["s"] + self.shrinkage * stats["prior"]) / (stats["n"] + self.shrinkage)
            tables.append((key, est))
            parent = k.map(est).astype(float)
        self.tables_ = tables
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        out = np.full(len(X), self.global_mean_)
        for key, est in self.tables_:  # coarse to fine: finer known keys overwrite
            mapped = X[key].astype(str).map(est).to_numpy(dtype=float, na_value=np.nan)
            out = np.where(np.isnan(mapped), out, mapped)
        return out


class FeatureLearner(RegressorMixin, BaseEstimator):
    """A statistic the dataset already carries (e.g. `sig_train_mean_eb`, the EB-shrunk train mean
    of y per recurrence signature) used as a prediction of y; missing values -> train mean of y.
    Nothing but that mean is fitted here: the statistic was fitted on train by the pipeline.
    With `fill` set, the column is context for Stage 2 (e.g. a support count), missing -> fill."""

    reads_frame = True  # reads the input frame's columns by name (context included)

    def __init__(self, column: str = "sig_train_mean_eb", fill: float | None = None):
        self.column = column
        self.fill = fill

    def fit(self, X: pd.DataFrame, y):
        self.fallback_ = float(np.mean(np.asarray(y, float))) if self.fill is None else float(self.fill)
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        v = X[self.column].astype(float).to_numpy(dtype=float, na_value=np.nan)
        return np.where(np.isfinite(v), v, self.fallback_)


MIN_BAND_JOBS = 2  # the fewest train jobs LightGBM fits a band's expert on


def duration_bands(y: np.ndarray, n_bands: int) -> tuple[np.ndarray, np.ndarray]:
    """Cut points and band labels 0..k−1 of the train labels y, cut at the (n_bands)-quantiles of y.

    Band b holds the y in [edge_{b−1}, edge_b) (band 0 everything below the first edge, the last
    band everything from the last edge up). Tied durations make cut points coincide (70 % of jobs
    at the same shortest duration puts both tertile edges there) or fall at the smallest y, which
    would leave bands with no job or a single one: only distinct edges are kept, and while a band
    holds fewer than MIN_BAND_JOBS train jobs it joins the band below it (the lowest band joins
    the one above). So k ≤ n_bands bands, labelled in duration order; without ties (and with at
    least MIN_BAND_JOBS train jobs per band) k = n_bands and the edges are the plain quantiles.
    """
    y = np.asarray(y, float)
    edges = np.unique(np.quantile(y, np.linspace(0, 1, n_bands + 1)[1:-1]))
    while len(edges):
        counts = np.bincount(np.searchsorted(edges, y, side="right"), minlength=len(edges) + 1)
        small = np.flatnonzero(counts < MIN_BAND_JOBS)
        if not len(small):
            break
        edges = np.delete(edges, max(small[0] - 1, 0))  # drop the edge between it and its neighbour
    return edges, np.searchsorted(edges, y, side="right")


class TwoStageLearner(RegressorMixin, BaseEstimator):
    """Classifier into duration bands (train-y tertiles) + one LightGBM L2 expert per band.

    `routing='soft'` returns Σ_b P(b|x)·expert_b(x); 'hard' uses the most probable band's expert.
    The bands come from the train labels only (`duration_bands`); when ties leave fewer than
    `n_bands` of them (`n_bands_`), the classifier is binary for two bands and skipped for one
    (every job in that band with probability 1). The classifier stops early on the time holdout
    only if the train rows before it hold every band (a band seen only in the holdout cannot be a
    class of the early-stopping fit).
    """

    reads_frame = True  # reads the input frame's columns by name (context included)

    def __init__(
        self,
        n_bands: int = 3,
        routing: str = "soft",
        features=None,
        n_estimators: int = 300,
        learning_rate: float = 0.05,
        num_leaves: int = 63,
        min_child_samples: int = 20,
        reg_lambda: float = 0.0,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
        holdout_fraction: float = 0.1,
        seed: int = 0,
        n_jobs: int | None = None,
    ):
        self.holdout_fraction = holdout_fraction
        self.n_bands = n_bands
        self.routing = routing
        self.features = features
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.reg_lambda = reg_lambda
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.seed = seed
        self.n_jobs = n_jobs

    def fit(self, X: pd.DataFrame, y):
        import lightgbm as lgb

        y = np.asarray(y, float)
        self.features_ = model_features(X, self.features)
        M = feature_matrix(X, self.features_)
        self.edges_, band = duration_bands(y, self.n_bands)
        self.n_bands_ = len(self.edges_) + 1
        holdout = _time_holdout(X, self.holdout_fraction)
        if self.n_bands_ == 1:
            self.classifier_ = None  # a single band: P(band 0 | x) = 1
        else:
            objective = "binary" if self.n_bands_ == 2 else "multiclass"
            make = lambda n: lgb.LGBMClassifier(**_lgbm_params(self, objective, len(M), n_estimators=n))  # noqa: E731
            # early stopping fits on the rows before the holdout: they must hold every band
            clf_holdout = holdout
            if holdout is not None and len(np.unique(band[~holdout])) < self.n_bands_:
                clf_holdout = None
            self.classifier_, _ = fit_lgbm(make, M, band, None, clf_holdout, self.n_estimators)
        self.experts_ = []
        for b in range(self.n_bands_):
            rows = band == b
            make = lambda n: lgb.LGBMRegressor(**_lgbm_params(self, "l2", int(rows.sum()), n_estimators=n))  # noqa: E731
            sub_holdout = None if holdout is None else holdout[rows]
            if sub_holdout is not None and (sub_holdout.sum() < 20 or (~sub_holdout).sum() < 20):
                sub_holdout = None
            expert, _ = fit_lgbm(make, M[rows], y[rows], None, sub_holdout, self.n_estimators)
            self.experts_.append(expert)
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        M = feature_matrix(X, self.features_)
        proba = np.zeros((len(M), self.n_bands_))
        if self.classifier_ is None:
            proba[:, 0] = 1.0
        else:
            proba[:, self.classifier_.classes_] = self.classifier_.predict_proba(M)
        experts = np.column_stack([e.predict(M) for e in self.experts_])
        if self.routing == "hard":
            return experts[np.arange(len(M)), proba.argmax(axis=1)]
        return (proba * experts).sum(axis=1)


class SklearnLearner(RegressorMixin, BaseEstimator):
    """Any scikit-learn regressor as a Stage-1 learner on y: it is handed numbers only.

    The numeric model features (missing values imputed by the train median, since most sklearn
    models reject NaN) plus the context columns a plain regressor can use: `user` and `group` as
    integer codes of the train values (a value not seen in train is -1) and `is_recurrent` as 0/1.
    `submit_time` is left out: absolute time does not carry from train to test. The estimator gets
    a DataFrame (column names, job_id index), so both array- and frame-minded models work.
    """

    reads_frame = True
    CODED_CONTEXT = ("user", "group")

    def __init__(self, estimator=None, features=None, context: bool = True):
        self.estimator = estimator
        self.features = features
        self.context = context

    def _numbers(self, X: pd.DataFrame) -> pd.DataFrame:
        out = pd.DataFrame(feature_matrix(X, self.features_).astype(np.float64), index=X.index, columns=self.features_)
        out = out.fillna(self.medians_)
        for column, categories in self.codes_.items():
            out[f"{column}_code"] = pd.Categorical(X[column].astype(str), categories=categories).codes.astype(np.float64)
        if self.context and "is_recurrent" in X.columns:
            out["is_recurrent"] = X["is_recurrent"].astype(np.float64).to_numpy()
        return out

    def fit(self, X: pd.DataFrame, y):
        if self.estimator is None:
            raise ValueError("SklearnLearner needs an estimator")
        self.features_ = model_features(X, self.features)
        medians = pd.DataFrame(feature_matrix(X, self.features_).astype(np.float64), columns=self.features_).median()
        self.medians_ = medians.fillna(0.0)  # a column without any value becomes 0
        self.codes_ = ({c: pd.Index(sorted(X[c].astype(str).unique())) for c in self.CODED_CONTEXT if c in X.columns}
                       if self.context else {})
        self.model_ = clone(self.estimator).fit(self._numbers(X), np.asarray(y, float))
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(self.model_.predict(self._numbers(X)), float).ravel()


def as_stage1_learner(estimator):
    """A learner ThreeStage can hand its input frame: ours as they are, any other regressor wrapped."""
    return estimator if getattr(estimator, "reads_frame", False) else SklearnLearner(estimator)
