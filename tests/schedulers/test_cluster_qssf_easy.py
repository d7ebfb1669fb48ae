"""The prediction-driven cluster policies `qssf` (Helios's quasi-shortest-service-first) and `easy-p`
(EASY backfilling on p̂): hand-worked cases of each rule, run as Python and compiled (the same
kernel: the two runs are also compared bit for bit), and the two runs identical on a larger
workload with heterogeneous nodes and multi-node gangs.

Every case uses the default scheduling tick (10 s) and times on ticks; a job runs `size` seconds
from its start (no preemption, hence no cold start)."""

import numpy as np
import pytest

from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.scenarios import venus
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import PolicyError, get_policy

pytest.importorskip("numba")


def _run(monkeypatch, jit, name, submit, size, predicted, gpus, **cluster):
    """`cluster`: the simulator's cluster (ClusterSettings.of's keywords)."""
    monkeypatch.setenv("ATLAS_BENCH_JIT", jit)
    jobs = JobSet.from_arrays(submit, size, predicted, gpus=gpus)
    return simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=ClusterSettings.of(**cluster))


def _both(monkeypatch, same_run, name, *args, **kwargs):
    """The run as Python and compiled, checked identical; the Python one."""
    python = _run(monkeypatch, "off", name, *args, **kwargs)
    compiled = _run(monkeypatch, "on", name, *args, **kwargs)
    assert (python.loop, compiled.loop) == ("Python", "compiled")
    same_run(python, compiled)
    return python


def _times(run):
    return run.jobs["start_time"].tolist(), run.jobs["completion_time"].tolist()


def test_flags():
    for name in ("qssf", "easy-p"):
        cls = get_policy(name, "cluster")
        assert cls.needs_prediction and not cls.preemptive and not cls.work_conserving
        with pytest.raises(PolicyError, match="needs predicted durations"):
            simulate_fairness(JobSet.from_arrays([0], [10.0]), cls())


# ----- qssf --------------------------------------------------------------------------------------
def test_qssf_smallest_gpu_service_first_and_the_blocked_head_holds_back_the_rest(monkeypatch, same_run):
    # one 8-GPU node, all submitted at 0, p̂ = p; service gpus × p̂:
    #   A 8 GPUs 100 s → 800, B 4 GPUs 50 s → 200, C 2 GPUs 300 s → 600, D 8 GPUs 20 s → 160,
    #   E 1 GPU 1000 s → 1000.  Order D, B, C, A, E.
    # 0: D starts (8 GPUs); B does not fit: stop (the rest wait).          D 0-20
    # 20: B starts (4), C starts (2); A (8) does not fit: stop — E (1 GPU) would fit on the 2 free
    #     GPUs but waits behind A (the authors' simulator stops at the first misfit).  B 20-70, C 20-320
    # 70: B done, 6 free: A still does not fit, E waits.  320: C done, A starts (8 free): A 320-420
    # 420: E starts.  E 420-1420
    size = [100, 50, 300, 20, 1000]
    run = _both(monkeypatch, same_run, "qssf", [0] * 5, size, size, [8, 4, 2, 8, 1], nodes=1, gpus_per_node=8)
    assert _times(run) == ([320, 20, 20, 0, 420], [420, 70, 320, 20, 1420])
    assert run.metrics["work_conservation_gaps"] == 2  # E left waiting while it fits: at 20 and 70
    assert run.metrics["preemptions"] == 0


def test_qssf_ranks_by_gpus_times_p_hat_not_by_p_hat(monkeypatch, same_run):
    # one 8-GPU node: U (8 GPUs, p̂ 100 s: service 800) and V (1 GPU, p̂ 500 s: service 500), both at 0.
    # V first although its p̂ is longer: V 0-500; U needs the whole node: U 500-600.
    run = _both(monkeypatch, same_run, "qssf", [0, 0], [100, 500], [100, 500], [8, 1], nodes=1, gpus_per_node=8)
    assert _times(run) == ([500, 0], [600, 500])
    # wrong p̂ reverses it: U predicted 10 s (service 80) goes first: U 0-100, V 100-600
    run = _both(monkeypatch, same_run, "qssf", [0, 0], [100, 500], [10, 500], [8, 1], nodes=1, gpus_per_node=8)
    assert _times(run) == ([0, 100], [100, 600])


def test_qssf_ties_go_to_fewer_gpus_then_to_the_earlier_job(monkeypatch, same_run):
    # one 4-GPU node, all at 0, every service 200: Q (4 GPUs, 50 s), R (4 GPUs, 50 s), P (2 GPUs, 100 s).
    # Order (service, gpus, job): P, Q, R.  P 0-100; Q does not fit next to P: stop.  Q 100-150, R 150-200
    # (by job index alone it would be Q 0-50, R 50-100, P 100-200)
    run = _both(monkeypatch, same_run, "qssf", [0, 0, 0], [50, 50, 100], [50, 50, 100], [4, 4, 2],
                nodes=1, gpus_per_node=4)
    assert _times(run) == ([100, 150, 0], [150, 200, 100])


# ----- easy-p ------------------------------------------------------------------------------------
def test_easy_backfills_what_ends_by_the_shadow_time_or_fits_the_extra_gpus(monkeypatch, same_run):
    # one 8-GPU node, all at 0, in submit order:
    #   J0 4 GPUs, p = p̂ = 1000;  J1 2 GPUs, p = p̂ = 300;  J2 7 GPUs (the head), p = 100;
    #   J3 1 GPU, p = p̂ = 2000;   J4 1 GPU, p = p̂ = 2000;   J5 1 GPU, p = p̂ = 1000.
    # 0: FIFO starts J0 and J1 (2 GPUs left); J2 needs 7: it is the head. Shadow: J1's predicted end
    #    (300) frees 4, J0's (1000) frees 8 ≥ 7: shadow 1000, extra GPUs at the shadow 8 − 7 = 1.
    #    J3 ends at 2000 > 1000 but takes the extra GPU (8 − 1 = 7 still hold J2): starts.
    #    J4 likewise would leave 6 < 7 at the shadow: it would delay the head, refused.
    #    J5 is predicted to end at 1000, the shadow time itself (≤): starts on the last free GPU.
    # 300: J1 done (2 free). Shadow: J0 and J5 (both 1000) → 7: shadow 1000, extra 0: J4 refused
    #    again (a gap: it fits now).
    # 1000: J0 and J5 done, 7 free: J2 starts (1000-1100), nothing left for J4.  1100: J4 (1100-3100).
    size = [1000, 300, 100, 2000, 2000, 1000]
    run = _both(monkeypatch, same_run, "easy-p", [0] * 6, size, size, [4, 2, 7, 1, 1, 1], nodes=1, gpus_per_node=8)
    assert _times(run) == ([0, 0, 1000, 0, 1100, 0], [1000, 300, 1100, 2000, 3100, 1000])
    assert run.metrics["work_conservation_gaps"] == 1  # J4 refused while it fits: at 300
    # FIFO has none of these backfills: J2 blocks everything behind it until 1000 (J3 then takes the
    # GPU J2 leaves; J4 and J5 wait for J2)
    fifo = _both(monkeypatch, same_run, "fifo", [0] * 6, size, size, [4, 2, 7, 1, 1, 1], nodes=1, gpus_per_node=8)
    assert fifo.jobs["start_time"].tolist() == [0, 0, 1000, 1000, 1100, 1100]


def test_easy_trusts_p_hat_a_short_prediction_delays_the_head(monkeypatch, same_run):
    # one 8-GPU node, all at 0: J0 6 GPUs p = 1000; head H 8 GPUs p = 50; B 2 GPUs p = p̂ = 400.
    # With p̂ = p: shadow = J0's end 1000, B ends by then (400): B 0-400, H 1000-1050.
    # With J0's p̂ = 300 (too short) the shadow is 300: B (predicted end 400 > 300) would need extra
    # GPUs at the shadow (8 − 8 = 0): it waits, and then waits behind H: H 1000-1050, B 1050-1450.
    good = _both(monkeypatch, same_run, "easy-p", [0, 0, 0], [1000, 50, 400], [1000, 50, 400], [6, 8, 2],
                 nodes=1, gpus_per_node=8)
    assert _times(good) == ([0, 1000, 0], [1000, 1050, 400])
    short = _both(monkeypatch, same_run, "easy-p", [0, 0, 0], [1000, 50, 400], [300, 50, 400], [6, 8, 2],
                  nodes=1, gpus_per_node=8)
    assert _times(short) == ([0, 1000, 1050], [1000, 1050, 1450])


def test_easy_a_job_that_outlived_its_p_hat_is_predicted_to_end_now(monkeypatch, same_run):
    # one 8-GPU node: A 4 GPUs p = 1000 (p̂ 100), B 2 GPUs p = 1000 (p̂ 150), head H 6 GPUs p = 50, all
    # at 0; L 2 GPUs p = p̂ = 500 at 200.
    # 0: A, B start (2 free); H is the head (shadow 100: A's release gives 6; extra 0).
    # 200: L arrives; A and B have outlived their p̂: both are predicted to end now, so both are
    #    released at 200 together: 8 free at the shadow (200), extra 8 − 6 = 2: L (ends 700 > 200)
    #    takes the extra GPUs and starts.  (Ordered by their stale ends 100 < 150, A alone would
    #    already hold H, extra 0, and L would wait.)  L 200-700.
    # 1000: A, B done: H 1000-1050.
    run = _both(monkeypatch, same_run, "easy-p", [0, 0, 0, 200], [1000, 1000, 50, 500], [100, 150, 50, 500],
                [4, 2, 6, 2], nodes=1, gpus_per_node=8)
    assert _times(run) == ([0, 0, 1000, 200], [1000, 1000, 1050, 700])


def test_easy_the_shadow_time_is_where_the_heads_gang_has_a_placement_not_a_gpu_count(monkeypatch, same_run):
    # two 4-GPU nodes: X 3 GPUs p = p̂ = 100 (node 0), Y 3 GPUs p = p̂ = 2000 (node 1), all at 0; head
    # H 2 GPUs p = 50: 2 GPUs are free but one on each node, and a 2-GPU gang fits on one node, so H
    # waits. The shadow is X's end (100: node 0 then has 4 free), not now (a GPU count would say
    # 2 free ≥ 2 and give extra 0). K 1 GPU p = p̂ = 50 ends by 100: backfilled at 0 (node 0).
    # 50: K done.  100: X done: H on node 0 100-150.
    run = _both(monkeypatch, same_run, "easy-p", [0, 0, 0, 0], [100, 2000, 50, 50], [100, 2000, 50, 50],
                [3, 3, 2, 1], nodes=2, gpus_per_node=4)
    assert _times(run) == ([0, 0, 100, 0], [100, 2000, 150, 50])
    placed = run.allocations.set_index("job_id")["nodes"]
    assert placed.to_dict() == {"0000000": "0:3", "0000001": "1:3", "0000002": "0:2", "0000003": "0:1"}


# ----- Python and compiled: the same runs --------------------------------------------------------
@pytest.mark.parametrize("name", ["qssf", "easy-p"])
def test_python_and_compiled_runs_are_the_same(monkeypatch, same_run, name):
    frame = venus(seed=5, n_jobs=1200, days=2).jobs
    jobs = JobSet.from_frame(frame)
    jobs = jobs.with_predictions(jobs.size * np.exp(np.random.default_rng(1).normal(0, 1.0, jobs.n)))
    cluster = ClusterSettings.of(node_capacities=[2, 4, 8, 8, 16, 4, 8, 2, 8, 16, 8, 4], interval_s=30.0)
    runs = []
    for jit in ("off", "on"):
        monkeypatch.setenv("ATLAS_BENCH_JIT", jit)
        runs.append(simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=cluster))
    assert [r.loop for r in runs] == ["Python", "compiled"]
    assert runs[0].metrics["completed"] == jobs.n
    assert runs[0].metrics["work_conservation_gaps"] > 0  # the rule left fitting jobs waiting
    assert runs[0].allocations["nodes"].str.contains(",").any()  # multi-node gangs were placed
    same_run(*runs)


# ----- against independent event-by-event simulations on one node -------------------------------
def _qssf_one_node(submit, size, predicted, gpus, cap):
    """The Helios simulator's QSSF loop on one node of `cap` GPUs, every event on a tick: the start
    times (at each event: release, enqueue, sort by gpus × p̂, start until the first misfit)."""
    n = len(size)
    start = [None] * n
    end = {}
    waiting = []
    times = sorted(set(submit))
    while end or waiting or times:
        now = min(times[:1] + list(end.values()))
        times = [t for t in times if t > now]
        end = {j: e for j, e in end.items() if e != now}
        waiting += [j for j in range(n) if submit[j] == now]
        waiting.sort(key=lambda j: (gpus[j] * predicted[j], gpus[j], j))
        free = cap - sum(gpus[j] for j in end)
        while waiting and gpus[waiting[0]] <= free:
            j = waiting.pop(0)
            start[j], end[j], free = now, now + size[j], free - gpus[j]
    return start


def _easy_one_node(submit, size, predicted, gpus, cap):
    """EASY on one node of `cap` GPUs, every event on a tick: the start times. On one node a gang
    fits where its GPU count does, so the shadow time and the extra GPUs are counts here."""
    n = len(size)
    start = [None] * n
    end = {}  # running job -> its true end
    waiting = []
    times = sorted(set(submit))
    while end or waiting or times:
        now = min(times[:1] + list(end.values()))
        times = [t for t in times if t > now]
        end = {j: e for j, e in end.items() if e != now}
        waiting += [j for j in range(n) if submit[j] == now]
        free = cap - sum(gpus[j] for j in end)
        while waiting and gpus[waiting[0]] <= free:  # FIFO while the jobs fit
            j = waiting.pop(0)
            start[j], end[j], free = now, now + size[j], free - gpus[j]
        if len(waiting) > 1:
            head = gpus[waiting[0]]
            ends = {j: max(start[j] + predicted[j], now) for j in end}  # predicted ends, at least now

            def free_at(t):
                return free + sum(gpus[j] for j in end if ends[j] <= t)

            shadow = min(t for t in ends.values() if free_at(t) >= head)
            extra = free_at(shadow) - head
            for j in list(waiting[1:]):
                if gpus[j] > free:
                    continue
                if now + predicted[j] <= shadow:
                    pass
                elif gpus[j] <= extra:
                    extra -= gpus[j]
                else:
                    continue
                waiting.remove(j)
                start[j], end[j], free = now, now + size[j], free - gpus[j]
    return start


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name, reference", [("qssf", _qssf_one_node), ("easy-p", _easy_one_node)])
def test_the_rules_on_one_node_are_the_textbook_ones(monkeypatch, name, reference, seed):
    # 40 jobs on one 8-GPU node, submit times and sizes on the 10-s ticks, p̂ exact (even seeds) or
    # p·exp(Z) rounded to whole seconds (odd seeds): the Python run's start times are the reference's
    rng = np.random.default_rng(seed)
    n = 40
    submit = np.sort(rng.integers(0, 300, n)) * 10.0
    submit -= submit[0]  # (a JobSet starts at the first submit)
    size = rng.integers(1, 200, n) * 10.0
    predicted = size if seed % 2 == 0 else np.maximum(np.round(size * np.exp(rng.normal(0, 1.0, n))), 1.0)
    gpus = rng.choice([1, 2, 3, 4, 8], n)
    expected = reference(submit.tolist(), size.tolist(), predicted.tolist(), gpus.tolist(), 8)
    run = _run(monkeypatch, "off", name, submit, size, predicted, gpus, nodes=1, gpus_per_node=8)
    assert run.jobs["start_time"].tolist() == expected
    assert run.metrics["work_conservation_gaps"] > 0  # a fitting job was held back: the rule was exercised
