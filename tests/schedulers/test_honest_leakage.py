"""The honest protocol never reads a true size: not in p̂, not in the sample, not in a decision.

Engine level: every non-clairvoyant policy is run on an instance and on the same instance with
the true sizes of some jobs tripled. Until the first of those jobs would have completed, the
simulator produces the same events, so every decision (moves, rates, wake-ups) must be the same
— the only way a true size may reach a policy is a completion, i.e. the engine's own accounting.
Pipeline level: learned p̂ and the honest sample of a dataset are unchanged when the test
split's labels are replaced.
"""

from __future__ import annotations


import numpy as np
import pytest

from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policy import get_policy, policy_names, resolve_policy


class Recorder:
    """Wraps a policy and logs every decision with the event it answered."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.kind = inner.name, inner.kind
        self.needs_prediction, self.clairvoyant = inner.needs_prediction, inner.clairvoyant
        self.log = []

    def reset(self, view):
        self.inner.reset(view)

    def allocate(self, view):
        alloc = self.inner.allocate(view)
        if alloc is not None:
            self.log.append((view.now, tuple(view.arrived), tuple(view.completed), tuple(alloc.moves),
                             tuple(sorted(alloc.rates.items())), alloc.wake))
        return alloc


# the revising settings too: a revision reads the service received, never the size
REVISING = ["sprpt(revision='double')", "pspjf(revision='tsafrir')", "edf-p(revision='quantile')",
            "prr(revision='double')"]
HONEST = [p for p in policy_names("single") if not get_policy(p).clairvoyant] + REVISING


def _instance(seed):
    rng = np.random.default_rng(seed)
    n = 200
    submit = np.cumsum(rng.exponential(20.0, n))
    size = np.ceil(np.exp(rng.normal(3.0, 1.2, n)))
    p_hat = size * np.exp(rng.normal(0, 0.8, n))
    return submit, size, p_hat


def _make(name):
    cls = get_policy(resolve_policy(name, "single"))
    return cls(stretch=2.0) if name == "edf-p-ref" else cls()


@pytest.mark.parametrize("name", HONEST)
def test_decisions_do_not_depend_on_true_sizes_until_a_changed_job_completes(name):
    assert {"fifo", "spjf", "sprpt", "pspjf", "rr", "prr", "las", "las-ref", "edf-p"} <= set(HONEST)
    submit, size, p_hat = _instance(11)
    changed = np.arange(100, 200, 3)  # later jobs: decisions before their first completion are many
    bigger = size.copy()
    bigger[changed] *= 3.0
    a, b = (JobSet.from_arrays(submit, sizes, p_hat) for sizes in (size, bigger))
    a, b = (jobs.with_predictions(jobs.predicted, 0.8) for jobs in (a, b))  # the spread of p̂'s noise
    rec_a, rec_b = Recorder(_make(name)), Recorder(_make(name))
    done_a = simulate(a, rec_a).completion_time
    simulate(b, rec_b)
    t_star = done_a[changed].min()
    prefix_a = [e for e in rec_a.log if e[0] < t_star]
    prefix_b = [e for e in rec_b.log if e[0] < t_star]
    assert len(prefix_a) > 50  # the comparison covers many decisions
    assert prefix_a == prefix_b


def test_a_clairvoyant_policy_does_change_its_decisions():
    # the check above can fail: SRPT reads true sizes and decides differently at once
    submit, size, p_hat = _instance(11)
    bigger = size.copy()
    bigger[np.arange(100, 200, 3)] *= 3.0
    rec_a, rec_b = Recorder(get_policy("srpt")()), Recorder(get_policy("srpt")())
    done_a = simulate(JobSet.from_arrays(submit, size, p_hat), rec_a).completion_time
    simulate(JobSet.from_arrays(submit, bigger, p_hat), rec_b)
    t_star = done_a[np.arange(100, 200, 3)].min()
    assert [e for e in rec_a.log if e[0] < t_star] != [e for e in rec_b.log if e[0] < t_star]


def _honest_args(ds, objective, out):
    from benchmark.tasks.config import make

    return make("scheduling", {"objective": objective, "data": str(ds), "predictor": "single-stage",
                               "policies": "sprpt,las,edf-p", "n": 300, "output": str(out), "quiet": True,
                               "no_mlflow": True})


def test_honest_p_hat_and_sample_ignore_the_test_labels(tmp_path, monkeypatch):
    from predictors.synthetic import make_frame, write_dataset
    from benchmark.tasks.scheduling import execute

    frame = make_frame(2500, seed=3)
    garbage = frame.copy()
    test = garbage["split"] == "test"
    garbage.loc[test, "p_star"] = np.random.default_rng(0).uniform(1, 1e6, int(test.sum()))
    garbage.loc[test, "y"] = np.log1p(garbage.loc[test, "p_star"])
    write_dataset(frame, tmp_path / "a")
    write_dataset(garbage, tmp_path / "b")
    per_job = {}
    for name in ("a", "b"):
        execute(_honest_args(tmp_path / name, "max_stretch", tmp_path / f"out-{name}"))
        import pandas as pd

        pj = pd.read_parquet(tmp_path / f"out-{name}" / "per_job.parquet")
        per_job[name] = pj[pj["policy"] == "sprpt"].set_index("job_id")
    a, b = per_job["a"], per_job["b"]
    assert list(a.index) == list(b.index)  # the same sample
    assert not np.allclose(a["duration"], b["duration"])  # the labels did change
    np.testing.assert_array_equal(a["predicted_duration"].to_numpy(), b["predicted_duration"].to_numpy())
