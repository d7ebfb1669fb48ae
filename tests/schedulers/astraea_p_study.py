"""The ASTRAEA-P study (docs/fairness.md#astraea-p-what-predicted-durations-change): ASTRAEA-P's rule against ASTRAEA
on the Venus-like scenario under p̂ sources that carry size information or not.

p̂ sources (each seeded per scenario draw and p̂ draw): `exact` = p; `s1`, `s2` = p·exp(σZ);
`random` = median(p)·exp(2Z), independent of p; `permuted` = the true sizes shuffled over the jobs
(the right distribution, no information about which job is which); `constant` = median(p) for
every job. Each row is the mean over the scenario draws (and two p̂ draws for the noisy sources)
of avg slowdown, sharing-loss jobs % and tenant-loss intervals %.

Run as a script (`python -m tests.schedulers.astraea_p_study [variant ...]`, compiled simulator:
about a second per run once compiled); the slow test in test_astraea_p_band.py uses `measure`.
May import numpy, schedulers.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.scenarios import SCENARIOS
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import build_policy, get_policy

SCENARIO_DRAWS = (0, 1, 2)
P_HAT_DRAWS = (0, 1)
SOURCES = ("exact", "s1", "s2", "random", "permuted", "constant")
# name -> (policy, kernel settings replaced in its kernel_params()); the variants dropped in the
# study (docs/fairness.md) ran on the exploration's kernel, in this file's git history
VARIANTS = {
    "astraea": ("astraea", {}),
    "astraea-p": ("astraea-p", {}),
    "astraea-p revision none": ("astraea-p", {"rule": 0}),
    "astraea-p revision tsafrir": ("astraea-p", {"rule": 2}),
    "astraea-p band 0.5": ("astraea-p", {"band": 0.5}),
    "astraea-p band inf": ("astraea-p", {"band": 1e12}),
}

_scenarios: dict = {}


def scenario(draw: int):
    """(Scenario, JobSet) of the Venus-like scenario's draw `draw` (kept: built once per process)."""
    if draw not in _scenarios:
        sc = SCENARIOS["venus"](seed=draw)
        _scenarios[draw] = (sc, JobSet.from_frame(sc.jobs))
    return _scenarios[draw]


def p_hat(size: np.ndarray, source: str, draw: int, p_draw: int) -> np.ndarray:
    size = np.asarray(size, np.float64)
    median = float(np.median(size))
    rng = np.random.default_rng([draw, p_draw, 0x5EED])
    if source == "exact":
        return size.copy()
    if source == "constant":
        return np.full(len(size), median)
    if source == "random":
        return median * np.exp(2.0 * rng.standard_normal(len(size)))
    if source == "permuted":
        return rng.permutation(size)
    if source.startswith("s"):
        return size * np.exp(float(source[1:]) * rng.standard_normal(len(size)))
    raise ValueError(f"unknown p̂ source {source!r}")


def cluster_for(draw: int) -> ClusterSettings:
    """The cluster of scenario draw `draw` (its nodes and tenant weights), given to the simulator."""
    sc, jobs = scenario(draw)
    return ClusterSettings.of(node_capacities=[sc.gpus_per_node] * sc.nodes,
                              tenant_weights=np.array([sc.tenant_weights[t] for t in jobs.tenant_names]))


def policy_for(name: str, settings: dict | None = None):
    policy = build_policy(get_policy(name, "cluster"))
    if settings:
        params = policy.kernel_params()._replace(**settings)
        policy.kernel_params = lambda: params
    return policy


def run(name: str, source: str, draw: int, p_draw: int = 0, settings: dict | None = None):
    """The FairnessRun of policy `name` on scenario draw `draw` with p̂ from `source`."""
    jobs = scenario(draw)[1]
    return simulate_fairness(replace(jobs, predicted=p_hat(jobs.size, source, draw, p_draw)),
                             policy_for(name, settings), cluster=cluster_for(draw))


def measure(name: str, source: str, settings: dict | None = None, draws=SCENARIO_DRAWS) -> np.ndarray:
    """Rows (avg slowdown, sharing-loss %, tenant-loss %), one per (scenario draw, p̂ draw)."""
    p_draws = (0,) if source in ("exact", "constant") else P_HAT_DRAWS
    rows = []
    for draw in draws:
        for p_draw in p_draws:
            m = run(name, source, draw, p_draw, settings).metrics
            rows.append((m["avg_slowdown"], 100 * m["sharing_loss_jobs"], 100 * m["tenant_loss_intervals"]))
    return np.array(rows)


def main(names: list[str]) -> None:
    for variant in names or list(VARIANTS):
        name, settings = VARIANTS[variant]
        for source in SOURCES if name != "astraea" else ("exact",):
            mean = measure(name, source, settings).mean(axis=0)
            print(f"{variant:20s} {source:9s} {mean[0]:6.3f} {mean[1]:6.2f} {mean[2]:6.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
