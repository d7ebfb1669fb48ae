"""Plain O(n²) simulators of rr, prr and las: every event touches every active job.

They exist for two reasons: as an independent oracle the engine is tested against, and as the
peer that `benchmark perf` measures the engine's speed-up over (docs/performance.md). Same semantics as the
policies in schedulers.policies.single, none of the engine's data structures. Pure Python.
"""

from __future__ import annotations

import math


def simulate_naive(policy: str, submit, size, predicted=None, lam: float = 0.7) -> list[float]:
    """Completion times of `policy` ∈ {rr, prr, las}; jobs given in (submit, id) order."""
    n = len(size)
    remaining = [float(p) for p in size]
    attained = [0.0] * n
    completion = [math.nan] * n
    active: list[int] = []
    now, nxt = 0.0, 0
    while nxt < n or active:
        if not active:
            now = max(now, submit[nxt])
        while nxt < n and submit[nxt] <= now:
            active.append(nxt)
            nxt += 1
        rates = _rates(policy, active, attained, predicted, lam)
        # time until the next completion, arrival, or (las) level crossing
        dt = math.inf
        for j in active:
            if rates[j] > 0:
                dt = min(dt, remaining[j] / rates[j])
        if nxt < n:
            dt = min(dt, submit[nxt] - now)
        if policy == "las":
            low = min(attained[j] for j in active)
            higher = [attained[j] for j in active if attained[j] > low + 1e-9 * max(1.0, low)]
            if higher:
                k = sum(1 for j in active if rates[j] > 0)
                dt = min(dt, (min(higher) - low) * k)
        now += dt
        still = []
        for j in active:
            served = rates[j] * dt
            remaining[j] -= served
            attained[j] += served
            if remaining[j] <= 1e-9 * max(1.0, size[j]):
                completion[j] = now
            else:
                still.append(j)
        active = still
    return completion


def _rates(policy: str, active: list[int], attained: list[float], predicted, lam: float) -> dict[int, float]:
    k = len(active)
    if policy == "rr":
        return {j: 1.0 / k for j in active}
    if policy == "prr":
        favourite = min(active, key=lambda j: (predicted[j], j))
        rates = {j: (1.0 - lam) / k for j in active}
        rates[favourite] += lam
        return rates
    if policy == "las":
        low = min(attained[j] for j in active)
        tied = {j for j in active if attained[j] <= low + 1e-9 * max(1.0, low)}
        return {j: (1.0 / len(tied) if j in tied else 0.0) for j in active}
    raise ValueError(policy)
