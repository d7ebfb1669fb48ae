"""Online, causal run-time predictions for a whole job log: each job's p̂ from what had finished before.

A batch scheduler asks for a job's prediction when the job is submitted; all it may know then is the
submit-time fields of the job (its user, requested time, processors) and the run times of the jobs
that have **terminated** by then. `OnlineLGBM` answers under exactly that constraint, inside the
simulation (schedulers.backfill_events calls `predict(job, now)` at each submission and
`observe(job, now)` at each termination):

- **features** of a job, computed at its submission from the observed history only: log requested
  time, log processors; its user's last, second-to-last and mean log run time (over the last five),
  the median over the last twenty, the user's mean ratio run / requested time (last five), how many
  of the user's jobs have terminated; the last run time of the user's job with the same requested
  time and processors (a resubmission), and whether there is one; log seconds since the user's
  previous submission (missing values left to LightGBM's own handling);
- **the model**: LightGBM on log run time, refitted on every job terminated so far each
  `refit_every` terminations, from MIN_FIT_ROWS on (never on a job still running: its row enters the
  training set at its termination, with the features it had at its submission); before the first
  fit, EASY++'s own prediction (the two-job mean, else the requested time);
- **an asymmetric objective** (`expectile_objective`): squared error of log run time weighted α for an
  under-prediction and 1 − α for an over-prediction (α = `alpha` > 0.5: under-prediction costlier)
  — under-prediction is the costlier error for a backfilling scheduler (the job outlives its
  reservation; SC'15's E-Loss weighs it the same way), boosted from the α-quantile of the labels;
- the prediction, exp of the model's, is capped at the requested time and is at least 1 s.

`ONLINE_METHODS` names `online-lgbm` (α = 0.6) and the variants measured against it
(docs/hpc-backfilling.md), each a setting of the one class: `online-lgbm-aA` (α = A);
`features="sc15"` (`-sc15`: SC'15's further features — the submission's hour of the day and day
of the week, counted from the log's first second (not the wall clock: the log's times are relative),
the user's jobs submitted and not yet terminated, its third-last log run time, the
log ratio of this request to its previous one); `target="ratio"` (`-ratio`: the model learns log(run
/ requested), the prediction a fraction of the request); `target="residual"` (`-residual`: boosted
from each job's log of EASY++'s prediction instead of one constant); `use="select"` (`-select`: for
each user, whichever of EASY++'s prediction and the model's has had the smaller asymmetric loss on
the user's terminated jobs, over all users while they tie); `use="fill"` (`-fill`: EASY++'s
prediction where the user has two terminated jobs, the model's where EASY++ would fall back to the
requested time).

No feature, label, refit or choice reads a run time before that job's termination
(tests/predictors/test_online_jobs.py, for every variant). May import numpy, lightgbm and math.
"""

from __future__ import annotations

import math

import numpy as np

N_FEATURES = 11  # the base features; `features="sc15"` adds five more
MIN_FIT_ROWS = 50  # no fit on fewer terminated jobs: EASY++'s prediction until then
_BASE = dict(alpha=0.6, refit_every=2000, trees=120)
#: the online methods `reproduce hpc --protocol ... --predictor NAME` knows, with their settings:
#: `online-lgbm` and the variants measured against it (docs/hpc-backfilling.md#the-published-whole-log-tables)
ONLINE_METHODS = {
    "online-lgbm": dict(_BASE),
    **{f"online-lgbm-a{a}": dict(_BASE, alpha=a) for a in (0.5, 0.7, 0.8, 0.9)},
    "online-lgbm-sc15": dict(_BASE, features="sc15"),
    "online-lgbm-ratio": dict(_BASE, target="ratio"),
    "online-lgbm-ratio-a0.8": dict(_BASE, target="ratio", alpha=0.8),
    "online-lgbm-residual": dict(_BASE, target="residual"),
    "online-lgbm-select": dict(_BASE, use="select"),
    "online-lgbm-fill": dict(_BASE, use="fill"),
}
FEATURES = ("base", "sc15")
TARGETS = ("run", "ratio", "residual")
USES = ("model", "select", "fill")


def online_predictor(name: str, jobs: dict, seed: int = 0) -> "OnlineLGBM":
    """The online method `name` (ONLINE_METHODS) on a job log {submit, run, requested, procs, user}."""
    return OnlineLGBM(jobs["submit"], jobs["run"], jobs["requested"], jobs["procs"], jobs["user"], seed=seed,
                      **ONLINE_METHODS[name])


class OnlineLGBM:
    """The online predictor (module docstring) over a job log given as arrays in file order:
    `requested` (s), `procs`, `user`, `submit` (s) and `run` — the run time read only through
    `observe`, at the job's termination."""

    def __init__(self, submit, run, requested, procs, user, *, refit_every: int = 2000, alpha: float = 0.6,
                 seed: int = 0, trees: int = 120, features: str = "base", target: str = "run", use: str = "model"):
        if features not in FEATURES or target not in TARGETS or use not in USES:
            raise ValueError(f"features in {FEATURES}, target in {TARGETS}, use in {USES}")
        self.submit = np.asarray(submit).tolist()
        self._run = np.asarray(run).tolist()
        self.requested = np.asarray(requested).tolist()
        self.procs = np.asarray(procs).tolist()
        self.user = np.asarray(user).tolist()
        self.refit_every, self.alpha, self.seed, self.trees = int(refit_every), float(alpha), int(seed), int(trees)
        self.features_kind, self.target, self.use = features, target, use
        self.history: dict[int, list[float]] = {}  # user → observed log run times, oldest first
        self.runs: dict[int, list[int]] = {}       # user → observed run times (s), oldest first
        self.ratio: dict[int, list[float]] = {}    # user → observed run / requested
        self.same: dict[tuple, float] = {}         # (user, requested, procs) → last observed log run time
        self.last_submit: dict[int, int] = {}
        self.last_request: dict[int, int] = {}     # user → requested time of its previous submission
        self.in_flight: dict[int, int] = {}        # user → its jobs submitted and not terminated
        self.rows: dict[int, list[float]] = {}     # job → its features at submission (+ its start, residual)
        self.both: dict[int, tuple[int, int]] = {}  # job → (EASY++'s, the model's) prediction (use="select")
        self.loss: dict[int, list[float]] = {}     # user → the two predictors' losses on its terminated jobs
        self.total_loss = [0.0, 0.0]               # the same over every user
        self.x: list[list[float]] = []
        self.y: list[float] = []
        self.model = None
        self.base = 0.0
        self.fits = 0
        self.pending = 0

    def two_job_mean(self, job: int) -> int:
        """EASY++'s prediction from what has terminated: the mean (rounded down) of the user's two last
        run times, capped at the requested time; the requested time while the user has fewer than two."""
        last = self.runs.get(self.user[job], [])
        req = self.requested[job]
        return int(req) if len(last) < 2 else int(min(req, (last[-1] + last[-2]) // 2))

    def features(self, job: int, now: int) -> list[float]:
        u = self.user[job]
        h = self.history.get(u, [])
        r = self.ratio.get(u, [])
        key = (u, self.requested[job], self.procs[job])
        gap = now - self.last_submit[u] if u in self.last_submit else -1
        nan = math.nan
        row = [math.log(max(self.requested[job], 1)), math.log(max(self.procs[job], 1)),
               h[-1] if h else nan, h[-2] if len(h) > 1 else nan, float(np.mean(h[-5:])) if h else nan,
               float(np.mean(r[-5:])) if r else nan, float(len(h)), self.same.get(key, nan),
               1.0 if key in self.same else 0.0, math.log1p(gap) if gap >= 0 else nan,
               float(np.median(h[-20:])) if h else nan]
        if self.features_kind == "sc15":  # SC'15's further features: the clock, the user's load, one more run
            last_req = self.last_request.get(u)
            row += [(now % 86400) / 3600.0, float((now // 86400) % 7), float(self.in_flight.get(u, 0)),
                    h[-3] if len(h) > 2 else nan,
                    math.log(max(self.requested[job], 1)) - math.log(max(last_req, 1)) if last_req else nan]
        return row

    def model_prediction(self, job: int, row: list[float], start: float) -> int:
        """The model's p̂ (EASY++'s before the first fit), capped at the requested time, at least 1 s."""
        req = self.requested[job]
        if self.model is None:  # EASY++'s prediction until the first fit
            return self.two_job_mean(job)
        # the booster (no wrapper checks); a custom objective's raw score leaves out the init score
        log_p = self.base + float(self.model.predict(np.array([row]), num_threads=1)[0])
        if self.target == "ratio":
            log_p += row[0]  # the fraction of the requested time, from log requested time
        elif self.target == "residual":
            log_p += start   # boosted from log(EASY++'s prediction)
        return int(max(1, min(req, round(math.exp(log_p)))))

    def predict(self, job: int, now: int) -> int:
        row = self.features(job, now)
        u = self.user[job]
        easy_pp = self.two_job_mean(job)
        start = math.log(max(easy_pp, 1))
        self.rows[job] = row + [start] if self.target == "residual" else row
        self.last_submit[u] = now
        self.last_request[u] = self.requested[job]
        self.in_flight[u] = self.in_flight.get(u, 0) + 1
        model = self.model_prediction(job, row, start)
        if self.use == "fill":  # EASY++'s two-job mean where it has the user's two runs, the model where not
            return easy_pp if len(self.runs.get(u, [])) >= 2 else model
        if self.use == "select":  # per user, the one of the two with the smaller loss on its terminated jobs
            self.both[job] = (easy_pp, model)
            loss = self.loss.get(u)
            if loss is None or loss[0] == loss[1]:
                loss = self.total_loss
            return model if loss[1] < loss[0] else easy_pp
        return model

    def observe(self, job: int, now: int) -> None:
        run = self._run[job]  # the job has terminated: its run time is known from now on
        u = self.user[job]
        log_run = math.log(max(run, 1))
        self.in_flight[u] -= 1
        if self.use == "select":
            loss = self.loss.setdefault(u, [0.0, 0.0])
            for i, p in enumerate(self.both.pop(job)):
                e = log_run - math.log(max(p, 1))
                w = self.alpha if e > 0 else 1 - self.alpha
                loss[i] += w * e * e
                self.total_loss[i] += w * e * e
        self.history.setdefault(u, []).append(log_run)
        self.runs.setdefault(u, []).append(int(run))
        self.ratio.setdefault(u, []).append(run / max(self.requested[job], 1))
        self.same[(u, self.requested[job], self.procs[job])] = log_run
        self.x.append(self.rows.pop(job))
        self.y.append(log_run)
        self.pending += 1
        if self.pending >= self.refit_every and len(self.y) >= MIN_FIT_ROWS:
            self.refit()

    def refit(self) -> None:
        import lightgbm as lgb

        self.pending = 0
        self.fits += 1
        params = dict(objective=expectile_objective(self.alpha), learning_rate=0.1, num_leaves=31,
                      min_data_in_leaf=20, seed=self.seed, num_threads=1, verbose=-1, deterministic=True)
        x, y = np.array(self.x), np.array(self.y)
        if self.target == "residual":  # each row boosted from its own start: log(EASY++'s prediction)
            self.base = 0.0
            data = lgb.Dataset(np.ascontiguousarray(x[:, :-1]), y, init_score=np.ascontiguousarray(x[:, -1]))
        else:
            if self.target == "ratio":
                y = y - x[:, 0]
            self.base = float(np.quantile(y, self.alpha))
            data = lgb.Dataset(x, y, init_score=np.full(len(y), self.base))
        self.model = lgb.train(params, data, num_boost_round=self.trees)


def expectile_objective(alpha: float):
    """The asymmetric squared loss of log run time: an under-prediction (p̂ < y) weighs α, an
    over-prediction 1 − α (α > 0.5: under-prediction costlier); LightGBM's gradient and Hessian."""

    def objective(preds, data):
        y = data.get_label()
        w = np.where(preds < y, alpha, 1.0 - alpha)
        return 2.0 * w * (preds - y), 2.0 * w

    return objective
