"""EASY backfilling as the pyss event simulator runs it: the semantics of the SC'15 / TPDS'07 tables.

Gaussier, Glesser, Reis & Trystram (SC'15) ran their schedulers on pyss, the Python scheduler
simulator of Tsafrir's group (predictsim, `simulation/pyss/src/schedulers/`); the published cells
depend on its rules, which this module ports (the rules, not the code) onto one event loop:

- **events**: a job's submission, its termination (start + run time) and, when its prediction is
  shorter than its run time, the moment the prediction is over (start + prediction). At one instant
  they are handled in the order prediction-over, submissions, terminations (pyss `EVENTS_ORDER`),
  each kind in the order the events were made: submissions in file order, terminations and
  prediction-over events in the order the jobs started;
- **the machine** is a profile of processors: a running job holds its processors from its start to
  start + its prediction; a termination before that frees the rest, a prediction that is over is
  corrected (below) and the job holds its processors until the new prediction;
- **a scheduling pass** (at a submission and at a termination, never at a correction): the waiting
  jobs start in submit order while the first fits the processors free now; the first that does not,
  the head, reserves its processors at the earliest predicted end of running jobs at which it fits
  (the shadow time); every later waiting job — in submit order, or, with `sjbf`, in order of
  prediction (shortest first, submit order among equals) — starts now if it fits the profile with
  the reservation: it has the processors now and either ends (as predicted) by the shadow time or
  takes only the processors the head leaves over then (each such job reduces them);
- **submission check** (pyss `EasyBackfillScheduler`, the schedulers `easy`, `easy-sjbf` and EASY
  with a predictor): a submission runs the pass only if the processors free now hold the new job;
  EASY++ (pyss `EasyPlusPlusScheduler`) runs it at every submission;
- **predictions**, made once, at submission (`Predictor.predict`), from what the predictor has
  observed: the run times of jobs that have terminated (`Predictor.observe`, at their termination);
  the requested time is the prediction of `RequestedTime`;
- **corrections** of a prediction that is over (pyss `common_correctors`): `reqtime`, the requested
  time; `double`, twice the prediction (the `double` rule of schedulers.revision; not capped: the job
  is killed at its requested time, its reservation may hold longer); `tsafrir`, the first prediction
  plus 1, 5, 15, 30 min, 1, 2, 5, 10, 20, 50, 100 h at the successive corrections, capped at the
  requested time (their reading of Tsafrir et al. 2007: the increments add to the first
  prediction, not to the time received — schedulers.revision's `tsafrir` adds them to the time
  received).

Nothing here reads a job's run time before its termination except `Clairvoyant` (the perfect
prediction, by definition).

The loop has an event budget (`event_budget`: each job's submission and termination and the most
corrections its corrector can make, schedulers.jit's rule for every loop): a run that goes past it,
which only input breaking `simulate`'s contract can cause (a run time above the requested time
corrected to the requested time again and again), stops with EventBudgetExceeded (exit 2, one line
naming the policy) instead of spinning. May import numpy, heapq, schedulers.revision and
schedulers.jit.
"""

from __future__ import annotations

import heapq

import numpy as np

from schedulers.jit import EventBudgetExceeded, checkpoint
from schedulers.revision import DOUBLE, TSAFRIR_STEPS_S, next_estimate

PRED_OVER, SUBMIT, TERMINATE = 0, 1, 2  # pyss's order of events at one instant
CORRECTORS = ("reqtime", "double", "tsafrir")
#: the tsafrir corrector's cumulative increments over the first prediction (predictsim common_correctors)
TSAFRIR_OFFSETS_S = (0,) + tuple(int(step) for step in TSAFRIR_STEPS_S)  # the same steps, each from the first
#: the most corrections of one job's prediction: `reqtime` gives the requested time (≥ the run time) at
#: once, `tsafrir` steps through TSAFRIR_OFFSETS_S and then gives it, `double` at least doubles a
#: prediction of ≥ 1 s, which passes any run time below 2^63 s within 63 corrections
MAX_CORRECTIONS = {"reqtime": 1, "tsafrir": len(TSAFRIR_OFFSETS_S), "double": 63}
EXTRA_EVENTS = 4_096


def event_budget(n: int, corrector: str) -> int:
    """The most events `simulate` can take on `n` jobs with `corrector`: a submission and a
    termination per job, and its corrections."""
    return n * (2 + MAX_CORRECTIONS[corrector]) + EXTRA_EVENTS


class Predictor:
    """A prediction at submission from the terminations observed so far (the pyss predictor interface)."""

    def predict(self, job: int, now: int) -> int:
        raise NotImplementedError

    def observe(self, job: int, now: int) -> None:
        """Job `job` terminated at `now`: its run time may be read from now on."""


class RequestedTime(Predictor):
    """The user's requested time (the estimate EASY uses)."""

    def __init__(self, requested):
        self.requested = requested

    def predict(self, job, now):
        return int(self.requested[job])


class Clairvoyant(Predictor):
    """The job's true run time (perfect predictions; pyss `predictor_clairvoyant`)."""

    def __init__(self, run):
        self.run = run

    def predict(self, job, now):
        return int(self.run[job])


class RecentMean(Predictor):
    """EASY++'s prediction (Tsafrir, Etsion & Feitelson, TPDS 2007; pyss `predictor_tsafrir`): the
    mean, rounded down, of the run times of the user's two last terminated jobs, capped at the
    requested time; the requested time while the user has fewer than two."""

    def __init__(self, run, requested, user):
        self.run, self.requested, self.user = run, requested, user
        self.last: dict[int, tuple[int, int | None]] = {}

    def predict(self, job, now):
        last, prev = self.last.get(int(self.user[job]), (None, None))
        if prev is None:
            return int(self.requested[job])
        return int(min(self.requested[job], (last + prev) // 2))

    def observe(self, job, now):
        u = int(self.user[job])
        self.last[u] = (int(self.run[job]), self.last.get(u, (None, None))[0])


def correct(corrector: str, predicted: int, first: int, corrections: int, requested: int) -> int:
    """The prediction after the `corrections`-th earlier correction of a job whose prediction
    `predicted` (first: `first`) is over (module docstring)."""
    if corrector == "reqtime":
        return int(requested)
    if corrector == "double":
        return int(next_estimate(DOUBLE, float(predicted), float(predicted), corrections, 0.0, float(first)))
    if corrections + 1 >= len(TSAFRIR_OFFSETS_S):
        return int(requested)
    return int(min(first + TSAFRIR_OFFSETS_S[corrections + 1], requested))


def simulate(submit, run, requested, procs, processors: int, predictor: Predictor | None = None,
             corrector: str = "reqtime", sjbf: bool = False, submit_check: bool = True, name: str = "easy") -> dict:
    """Run the jobs (arrays in file order: submit, run and requested times in whole seconds, run ≤
    requested, processors ≤ `processors`) under EASY backfilling on `predictor`'s predictions
    (default: the requested times). Returns {start, predicted (the first prediction of each job),
    corrections (how many corrections were made)}. Past its event budget (`event_budget`) the run
    stops with EventBudgetExceeded naming `name`, the policy."""
    submit = np.asarray(submit, dtype=np.int64)
    n = len(submit)
    run_l, req_l, procs_l = (np.asarray(a, dtype=np.int64).tolist() for a in (run, requested, procs))
    if corrector not in CORRECTORS:
        raise ValueError(f"unknown corrector {corrector!r}: expected one of {', '.join(CORRECTORS)}")
    if predictor is None:
        predictor = RequestedTime(req_l)
    start = [-1] * n
    pred = [0] * n
    first = [0] * n
    fixes = [0] * n
    pred_end = [0] * n
    running: list[int] = []
    queue: list[int] = []
    events = [(int(t), SUBMIT, i, i) for i, t in enumerate(submit.tolist())]
    heapq.heapify(events)
    counter = n
    corrections = 0

    def launch(j, now):
        nonlocal counter
        start[j] = now
        pred_end[j] = now + pred[j]
        running.append(j)
        heapq.heappush(events, (now + run_l[j], TERMINATE, counter, j))
        counter += 1
        if pred[j] < run_l[j]:
            heapq.heappush(events, (now + pred[j], PRED_OVER, counter, j))
            counter += 1

    def free_at(now):
        return processors - sum(procs_l[j] for j in running if pred_end[j] > now)

    def schedule(now):
        free = free_at(now)
        while queue and procs_l[queue[0]] <= free:
            j = queue.pop(0)
            launch(j, now)
            free -= procs_l[j]
        if len(queue) < 2:
            return
        head = queue[0]
        ends = sorted((pred_end[j], procs_l[j]) for j in running if pred_end[j] > now)
        avail, k, shadow = free, 0, now
        while avail < procs_l[head]:
            shadow = ends[k][0]
            while k < len(ends) and ends[k][0] == shadow:
                avail += ends[k][1]
                k += 1
        extra = avail - procs_l[head]
        tail = sorted(queue[1:], key=pred.__getitem__) if sjbf else queue[1:]
        for j in tail:
            p = procs_l[j]
            if p > free:
                continue
            past = now + pred[j] > shadow
            if past and p > extra:
                continue
            queue.remove(j)
            launch(j, now)
            free -= p
            if past:
                extra -= p

    budget = event_budget(n, corrector)
    done, check = 0, checkpoint(0, budget)
    while events:
        now, kind, _, j = heapq.heappop(events)
        done += 1
        if done == check:
            check = checkpoint(done, budget)
            if check < 0:
                raise EventBudgetExceeded(f"{name} on {n:,} jobs: pyss's EASY loop went past its budget of {budget:,} "
                                          f"events at time {now:,} s and was stopped (a run of these jobs takes fewer: "
                                          "a run time above its requested time is corrected without end)")
        if kind == SUBMIT:
            pred[j] = first[j] = max(1, int(predictor.predict(j, now)))
            queue.append(j)
            if not submit_check or free_at(now) >= procs_l[j]:
                schedule(now)
        elif kind == TERMINATE:
            predictor.observe(j, now)
            running.remove(j)
            schedule(now)
        else:  # the prediction is over: corrected, no scheduling pass
            pred[j] = correct(corrector, pred[j], first[j], fixes[j], req_l[j])
            fixes[j] += 1
            corrections += 1
            pred_end[j] = start[j] + pred[j]
            if pred[j] < run_l[j]:
                heapq.heappush(events, (pred_end[j], PRED_OVER, counter, j))
                counter += 1
    return {"start": np.array(start, dtype=np.int64), "predicted": np.array(first, dtype=np.int64),
            "corrections": corrections}


def bounded_slowdowns(submit, run, start, tau_s: int = 10) -> np.ndarray:
    """Each job's bounded slowdown max(1, (wait + run) / max(run, τ)), τ = 10 s."""
    run = np.asarray(run, dtype=np.float64)
    wait = np.asarray(start, dtype=np.float64) - np.asarray(submit, dtype=np.float64)
    return np.maximum(1.0, (wait + run) / np.maximum(run, tau_s))
