"""Paired ranking of leaderboard entries: compare entries on the scoring windows they share (docs/leaderboards.md).

Every entry of a table (one track, one dataset) is scored on the same disjoint windows of the test
split (leaderboards.score.score_windows), so two entries are compared window by window, not through
their marginal intervals (which mostly measure how hard each window is):

- per-window values: the scheduling track's log score_k (`scheduling.score.values`; lower is
  better), the prediction track's Cov@25 per window (`prediction.windows.cov25`; higher is better);
- for a pair (a, b), d_k = a's advantage on window k: log score_k(b) − log score_k(a), or
  Cov@25_k(a) − Cov@25_k(b); windows where either value is missing are left out (n windows remain);
- the Wilcoxon signed-rank test of "d is symmetric about 0", two-sided and exact: with the n(n+1)/2
  Walsh averages (d_i + d_j) / 2, i ≤ j, T = #{> 0} + ½ #{= 0}, and
  p = min(1, 2 · min(P(T₀ ≤ T), P(T₀ ≥ T))), T₀ the signed-rank statistic of n untied differences
  (`signed_rank_null`);
- Holm's correction over the m pairs of ranked entries of the table: p-values sorted ascending
  p_(1) ≤ … ≤ p_(m), adjusted p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j)); a pair is
  *separated* when p̃ ≤ ALPHA (0.05), which bounds the chance of any false separation in the table
  by 5 %;
- the effect: the Hodges–Lehmann estimate (median of the Walsh averages) and its interval
  [W_(k), W_(N+1−k)] at confidence 1 − ALPHA / m (the Bonferroni level), k the largest integer with
  P(T₀ ≤ k − 1) ≤ ALPHA / (2m) — the interval that inverts the same test. If it excludes 0 then
  p ≤ ALPHA / m, and Holm separates the pair; so two entries tie only when their interval covers 0
  (Holm may separate a pair whose interval touches 0: it is the more powerful of the two);
- rank = 1 + the number of ranked entries separated from it and better (estimate > 0 for them);
  entries sharing a rank are shown "=k"; the table is in (rank, score, name) order; entries without
  per-window values (no score) are ranked '–' at the end; reference entries (`oracle`) are not in
  the family and not ranked, listed after ('ref').

May import numpy and the standard library (entries are plain dicts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

ALPHA = 0.05


@lru_cache(maxsize=64)
def signed_rank_null(n: int) -> np.ndarray:
    """P(T₀ ≤ t) for t = 0 … n(n+1)/2: the exact null CDF of the signed-rank statistic of n untied differences.

    T₀ = Σ_i i·B_i with independent fair B_i ∈ {0, 1}: built one rank at a time (each step halves,
    so the probabilities never overflow, whatever n)."""
    pmf = np.zeros(n * (n + 1) // 2 + 1)
    pmf[0] = 1.0
    top = 0
    for i in range(1, n + 1):
        shifted = np.zeros_like(pmf)
        shifted[i:top + i + 1] = pmf[:top + 1]
        pmf = 0.5 * (pmf + shifted)
        top += i
    return np.cumsum(pmf)


def paired_test(d, level: float = ALPHA) -> dict:
    """Signed-rank test and Hodges–Lehmann interval (confidence 1 − level) of paired differences `d`.

    Returns {n, estimate, lo, hi, p}; lo / hi are None when n windows cannot reach that confidence
    (2 / 2ⁿ > level: the interval is unbounded), estimate None and p 1 without windows."""
    d = np.asarray([x for x in d if x is not None and math.isfinite(x)], np.float64)
    n = len(d)
    if n == 0:
        return {"n": 0, "estimate": None, "lo": None, "hi": None, "p": 1.0}
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2.0)
    cdf = signed_rank_null(n)
    big = len(walsh)  # N = n(n+1)/2
    t = float((walsh > 0).sum()) + 0.5 * float((walsh == 0).sum())

    def below(x: float) -> float:  # P(T₀ ≤ x)
        k = math.floor(x + 1e-9)
        return 0.0 if k < 0 else float(cdf[min(k, big)])

    # P(T₀ ≥ t) = P(T₀ ≤ N − t) by symmetry
    p = min(1.0, 2.0 * min(below(t), below(big - t)))
    # k: the largest with P(T₀ ≤ k − 1) ≤ level / 2 (k = 0: unbounded)
    k = int(np.searchsorted(cdf, level / 2.0, side="right"))
    lo = hi = None
    if k >= 1:
        lo, hi = float(walsh[k - 1]), float(walsh[big - k])
    return {"n": int(n), "estimate": float(np.median(walsh)), "lo": lo, "hi": hi, "p": float(p)}


def holm(pvalues: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order: max over the smaller ones of min(1, (m − j + 1) p_(j))."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for position, i in enumerate(order):
        running = max(running, min(1.0, (m - position) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def window_values(entry: dict, track: str) -> list | None:
    """The per-window values a track compares, oriented so that larger is better (None: the entry has none)."""
    if track == "scheduling":
        values = (((entry.get("scheduling") or {}).get("score") or {}).get("values"))
        if values is None:
            return None
        return [-math.log(v) if v is not None and v > 0 else None for v in values]
    values = (((entry.get("prediction") or {}).get("windows") or {}).get("cov25"))
    return None if values is None else list(values)


def _sort_key(entry: dict, track: str) -> tuple:
    """Within a rank: the track's score (Cov@25 higher first, then RMSLE; the scheduling score lower first), then name."""
    score = entry.get("score")
    if track == "prediction":
        rmsle = (entry.get("prediction") or {}).get("rmsle")
        return (score is None, -(score or 0.0), rmsle if rmsle is not None else math.inf, entry["name"].lower())
    return (score is None, score if score is not None else math.inf, entry["name"].lower())


@dataclass
class PairedRanking:
    """The ranking of one table. `rows`: [(rank label, entry)] in table order; `pairs`: one dict per
    pair of ranked entries (see `paired_ranking`); `family`: m, the number of pairs Holm corrects for."""

    track: str
    rows: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    family: int = 0
    alpha: float = ALPHA

    def pairs_of(self, slug: str) -> list[dict]:
        """The pairs involving an entry, each turned so that `a` is that entry."""
        out = []
        for pair in self.pairs:
            if pair["a"] == slug:
                out.append(pair)
            elif pair["b"] == slug:
                out.append(flip(pair))
        return out


def flip(pair: dict) -> dict:
    """The same comparison seen from b: the advantage and its interval change sign."""
    neg = (lambda x: None if x is None else -x)
    verdict = {"better": "worse", "worse": "better"}.get(pair["verdict"], pair["verdict"])
    return {**pair, "a": pair["b"], "b": pair["a"], "estimate": neg(pair["estimate"]), "lo": neg(pair["hi"]),
            "hi": neg(pair["lo"]), "verdict": verdict}


def paired_ranking(entries: list[dict], track: str, *, alpha: float = ALPHA) -> PairedRanking:
    """Rank one table's entries (same track and dataset) by the paired rule of the module docstring.

    Each pair dict: a, b (slugs), windows (n), estimate (a's Hodges–Lehmann advantage: log score
    ratio b / a on the scheduling track, Cov@25 points on the prediction track; > 0: a better), lo,
    hi (its interval at confidence 1 − alpha / m; None when n windows cannot reach it), p (raw), p_holm,
    verdict ('better', 'worse', 'tie': a against b after Holm)."""
    ranked = [e for e in entries if not e.get("reference")]
    refs = sorted((e for e in entries if e.get("reference")), key=lambda e: _sort_key(e, track))
    values = [window_values(e, track) if e.get("score") is not None else None for e in ranked]
    comparable = [i for i, v in enumerate(values) if v is not None]
    index_pairs = [(i, j) for x, i in enumerate(comparable) for j in comparable[x + 1:]]
    m = len(index_pairs)
    tests = []
    for i, j in index_pairs:
        a, b = values[i], values[j]
        shared = [x - y for x, y in zip(a, b) if x is not None and y is not None] if len(a) == len(b) else []
        tests.append(paired_test(shared, alpha / max(m, 1)))
    adjusted = holm([t["p"] for t in tests])
    better_than = {i: 0 for i in comparable}
    pairs = []
    for (i, j), t, p_holm in zip(index_pairs, tests, adjusted):
        separated = p_holm <= alpha and t["estimate"] is not None and t["estimate"] != 0
        verdict = "tie" if not separated else ("better" if t["estimate"] > 0 else "worse")
        if verdict == "better":
            better_than[j] += 1
        elif verdict == "worse":
            better_than[i] += 1
        pairs.append({"a": ranked[i].get("slug"), "b": ranked[j].get("slug"), "windows": t["n"],
                      "estimate": t["estimate"], "lo": t["lo"], "hi": t["hi"], "p": t["p"], "p_holm": p_holm,
                      "verdict": verdict})
    numbers = [1 + better_than[i] if i in better_than else None for i in range(len(ranked))]
    order = sorted(range(len(ranked)), key=lambda i: (numbers[i] is None, numbers[i] or 0, _sort_key(ranked[i], track)))
    rows = []
    for i in order:
        n = numbers[i]
        rows.append(("–" if n is None else (f"={n}" if numbers.count(n) > 1 else str(n)), ranked[i]))
    rows += [("ref", e) for e in refs]
    return PairedRanking(track=track, rows=rows, pairs=pairs, family=m, alpha=alpha)
