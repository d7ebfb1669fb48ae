"""The value of prediction: how much of the way from the best blind policy to the clairvoyant optimum a
learned p̂ takes a scheduler, per run, objective and p̂ source (docs/evaluation-protocol.md#the-value-of-prediction).

For a p̂ label L (a learned predictor, a jobs table's column) of one scheduling run:

    value(L) = (best blind − best on L) / (best blind − clairvoyant)

on the run's ratio column (lower is better): *best blind* is the best policy that reads neither p̂
nor true sizes (fifo, rr, las, …), *clairvoyant* the best that reads true sizes (srpt for ΣC, edf at S*
for max stretch: ratio 1 by construction), *best on L* the best policy that reads L. 1 = as good as
knowing the sizes, 0 = no better than not predicting, < 0 = predictions hurt. Beside it:
- `controls`: the same with p̂ permuted among the jobs (`L~permuted`) and one constant p̂
  (`L~constant`), when the run has them (`--controls`): a policy whose result does not get worse
  with them does not use what L knows. `learned_policies` lists the policies that are worse on both
  controls than on L.
- with noise p̂ = p·exp(σZ) in the same run: `consistency` (value at σ = 0), `robustness` (the worst
  value over every σ and the controls) and `smoothness` (the slope of the best ratio over σ, least
  squares).
- `ceiling` and `blind_ceiling` (ΣC runs with `--controls`): the value that Gittins on the *exact*
  size distribution of the scheduled jobs reaches, within each of CEILING_BINS p̂-quantile bins and
  within one bin (schedulers.policies.distribution.CalibrationCeiling). They read true sizes: not
  results, but how much a policy that knew perfectly how sizes spread given p̂'s bin could take from
  this p̂ (`ceiling`), and from no p̂ at all (`blind_ceiling`). A learned p̂ whose best policy is far
  below its ceiling is wasted by the policies; one whose ceiling is low carries little information.
Pure functions of result rows and ratios, computed in every scheduling run (benchmark.tasks.scheduling);
the table of many runs' values is benchmark.experiments.value. May import the standard library and numpy.
"""

from __future__ import annotations

import math

import numpy as np

PERMUTED, CONSTANT = "~permuted", "~constant"
#: p̂-quantile bins of the calibration ceiling: each bin keeps an eighth of the jobs, so its size
#: distribution is a distribution, not a list of sizes (with one job per bin the ceiling is SRPT)
CEILING_BINS = 8


def is_control(label) -> bool:
    """Whether a p̂ label is a control of another (`L~permuted`, `L~constant`)."""
    return str(label or "").endswith((PERMUTED, CONSTANT))


def _best(rows, keep) -> tuple[float, str | None]:
    best = (math.inf, None)
    for row in rows:
        ratio = row.get("ratio")
        if ratio is not None and math.isfinite(ratio) and keep(row) and ratio < best[0]:
            best = (float(ratio), row["policy"] + (f" / {row['predictor']}" if row.get("predictor") else ""))
    return best


def _value(blind: float, learned: float, clairvoyant: float) -> float | None:
    if not (math.isfinite(blind) and math.isfinite(learned) and math.isfinite(clairvoyant)) or blind <= clairvoyant:
        return None
    return (blind - learned) / (blind - clairvoyant)


def value_of_prediction(rows: list[dict], clairvoyant_policies) -> list[dict]:
    """One record per p̂ label that is neither noise nor a control (see the module docstring); `rows`
    are a run's result rows (policy, predictor, ratio), `clairvoyant_policies` the names that read true
    sizes."""
    clairvoyant_policies = set(clairvoyant_policies)
    blind, blind_by = _best(rows, lambda r: not r.get("predictor") and r["policy"] not in clairvoyant_policies)
    clair, _ = _best(rows, lambda r: not r.get("predictor") and r["policy"] in clairvoyant_policies)
    labels = [label for label in dict.fromkeys(r.get("predictor") for r in rows)
              if label and not label.startswith("noise:") and not is_control(label)]
    noise = sorted({float(r["predictor"].split(":", 1)[1]) for r in rows if str(r.get("predictor") or "").startswith("noise:")})
    out = []
    for label in labels:
        learned, learned_by = _best(rows, lambda r, L=label: r.get("predictor") == L)
        record = {"p_hat": label, "best_blind": blind, "best_blind_policy": blind_by, "clairvoyant": clair,
                  "best_learned": learned, "best_learned_policy": learned_by,
                  "value": _value(blind, learned, clair)}
        controls = {}
        for suffix in (PERMUTED, CONSTANT):
            control, _ = _best(rows, lambda r, L=label + suffix: r.get("predictor") == L)
            if math.isfinite(control):
                controls[suffix.lstrip("~")] = _value(blind, control, clair)
        record["controls"] = controls
        record["learned_policies"] = _learned_policies(rows, label) if len(controls) == 2 else None
        record.update(_noise_columns(rows, noise, blind, clair, [v for v in controls.values() if v is not None]))
        out.append(record)
    return out


def ceilings(record: dict, ratios: dict[str, float]) -> dict:
    """`ceiling` and `blind_ceiling` of one value record from the ceilings' ratios (module docstring)."""
    return {key: _value(record["best_blind"], ratio, record["clairvoyant"]) for key, ratio in ratios.items()}


def _learned_policies(rows: list[dict], label: str) -> list[str]:
    """The policies whose ratio on `label` is below their ratio on both of its controls."""
    ratio = {(r["policy"], r.get("predictor")): r.get("ratio") for r in rows}
    learned = []
    for policy in dict.fromkeys(r["policy"] for r in rows if r.get("predictor") == label):
        own = ratio.get((policy, label))
        others = [ratio.get((policy, label + s)) for s in (PERMUTED, CONSTANT)]
        if own is not None and all(o is not None and own < o for o in others):
            learned.append(policy)
    return learned


def _noise_columns(rows, noise: list[float], blind: float, clair: float, control_values: list[float]) -> dict:
    if not noise:
        return {"consistency": None, "robustness": min(control_values) if control_values else None, "smoothness": None}
    best = [_best(rows, lambda r, s=s: r.get("predictor") == f"noise:{s:g}")[0] for s in noise]
    values = [_value(blind, b, clair) for b in best]
    consistency = values[0] if noise[0] == 0.0 else None
    finite = [v for v in values + control_values if v is not None]
    slope = float(np.polyfit(noise, best, 1)[0]) if len(noise) > 1 and all(map(math.isfinite, best)) else None
    return {"consistency": consistency, "robustness": min(finite) if finite else None, "smoothness": slope}


def control_predictions(p_hat: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """The controls of one p̂: permuted among the jobs (seeded) and constant (its median). Neither reads a
    true size: they keep p̂'s values and drop what p̂ says about each job."""
    rng = np.random.default_rng([seed, 0xC0E7])
    return {PERMUTED: rng.permutation(p_hat), CONSTANT: np.full(len(p_hat), float(np.median(p_hat)))}
